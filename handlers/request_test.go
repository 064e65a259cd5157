package handlers_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestParsePipeline checks the order and codes of Aviso's request parsing
// (docs/api.md) on the three endpoints.
func TestParsePipeline(t *testing.T) {
	s := startServer(t, testConfig, nil)
	cases := []struct {
		name, body, code, message string
	}{
		{"empty body", ``, "INVALID_JSON", "JSON parsing failed: EOF while parsing a value: the body is empty"},
		{"not json", `{"event_type":`, "INVALID_JSON", ""},
		{"unknown field before shape", `{"foo":1}`, "UNKNOWN_FIELD", "Request contains unknown fields: 'foo' (allowed: event_type, identifier, from_id, from_date, to_id, to_date, where, format, batch, payload)"},
		{"two unknown fields sorted", `{"zz":1,"aa":2,"event_type":"mars","identifier":{}}`, "UNKNOWN_FIELD", "Request contains unknown fields: 'aa', 'zz' (allowed: event_type, identifier, from_id, from_date, to_id, to_date, where, format, batch, payload)"},
		{"array", `[1,2]`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: expected a JSON object with event_type and identifier, found an array"},
		{"scalar", `42`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: expected a JSON object with event_type and identifier, found a number"},
		{"missing event_type", `{"identifier":{}}`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: missing field `event_type`"},
		{"missing identifier", `{"event_type":"mars"}`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: missing field `identifier`"},
		{"event_type number", `{"event_type":5,"identifier":{}}`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: invalid type for `event_type`: expected a string, found a number"},
		{"identifier array", `{"event_type":"mars","identifier":[]}`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: invalid type for `identifier`: expected an object, found an array"},
		{"from_id number", `{"event_type":"mars","identifier":{},"from_id":5}`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: invalid type for `from_id`: expected a string, found a number"},
		{"duplicate field", `{"event_type":"mars","event_type":"x","identifier":{}}`, "INVALID_REQUEST_SHAPE", "Request deserialization failed: duplicate field `event_type`"},
	}
	endpoints := []struct{ path, label string }{
		{"/api/v1/notification", "Invalid Notification Request"},
		{"/api/v1/watch", "Invalid Watch Request"},
		{"/api/v1/replay", "Invalid Replay Request"},
	}
	for _, ep := range endpoints {
		for _, c := range cases {
			t.Run(ep.path+"/"+c.name, func(t *testing.T) {
				r := s.do(t, http.MethodPost, ep.path, c.body)
				if r.Status != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %s", r.Status, r.Raw)
				}
				if r.Body["code"] != c.code || r.Body["error"] != ep.label {
					t.Fatalf("code %v error %v, want %s %s", r.Body["code"], r.Body["error"], c.code, ep.label)
				}
				want := c.message
				if ep.path == "/api/v1/notification" {
					// Notify has aviso's request model: the end cursors
					// are in it (refused later), herald's where and
					// format are not.
					want = strings.Replace(want, "to_date, where, format, batch, payload", "to_date, payload", 1)
				}
				if want != "" && r.Body["message"] != want {
					t.Fatalf("message %q\nwant    %q", r.Body["message"], want)
				}
				id := r.Header.Get("X-Request-ID")
				if !uuidRE.MatchString(id) || r.Body["request_id"] != id {
					t.Fatalf("request id header %q body %v", id, r.Body["request_id"])
				}
				if _, ok := r.Body["details"].(string); !ok {
					t.Fatalf("details missing: %s", r.Raw)
				}
			})
		}
	}
}

func TestUnknownEventType(t *testing.T) {
	s := startServer(t, testConfig, nil)
	for _, path := range []string{"/api/v1/notification", "/api/v1/watch", "/api/v1/replay"} {
		r := s.do(t, http.MethodPost, path, `{"event_type":"nope","identifier":{"point":"x"},"from_id":"bad"}`)
		want := `{"code":"UNKNOWN_EVENT_TYPE","configured_event_types":["cloud","dissemination","extreme","mars"],"error":"unknown_event_type","message":"unknown event type 'nope'","request_id":"` + r.Header.Get("X-Request-ID") + `"}`
		if r.Status != 400 || jsonString(r.Body) != want {
			t.Fatalf("%s: %d %s\nwant %s", path, r.Status, jsonString(r.Body), want)
		}
	}
}

func TestNotifySuccess(t *testing.T) {
	s := startServer(t, testConfig, nil)
	r := s.do(t, http.MethodPost, "/api/v1/notification",
		`{"event_type":"mars","identifier":{"class":"OD","expver":"","domain":"G","date":"2025-07-06","time":"9","stream":"enfo","step":"007"},"payload":{"b":[1, 2],"a":"x"}}`)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	if len(r.Body) != 4 || r.Body["status"] != "success" || r.Body["request_id"] != r.Header.Get("X-Request-ID") || r.Body["notification_id"] != "mars@1" {
		t.Fatalf("body %s", r.Raw)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(r.Body["processed_at"].(string)) {
		t.Fatalf("processed_at %v", r.Body["processed_at"])
	}
	st := s.open(t, "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`)
	evs := st.all(wait)
	if len(evs) != 4 {
		t.Fatalf("events %v", names(evs))
	}
	want := `{"data":{"identifier":{"class":"od","date":"20250706","domain":"g","expver":"0001","step":"7","stream":"enfo","time":"0900"},"payload":{"b":[1,2],"a":"x"}},"datacontenttype":"application/json","dataschema":"http://herald.test/schema/mars","id":"mars@1","source":"http://herald.test","specversion":"1.0","time":"` + evs[1].Data["time"].(string) + `","type":"int.ecmwf.aviso.mars"}`
	if evs[1].Raw != want {
		t.Fatalf("CloudEvent\n%s\nwant\n%s", evs[1].Raw, want)
	}
}

func TestNotifyValidation(t *testing.T) {
	s := startServer(t, testConfig, nil)
	full := `"class":"od","expver":"1","domain":"g","date":"20250101","time":"12","stream":"oper","step":"1"`
	cases := []struct {
		name, body, message string
	}{
		{"point", `{"event_type":"mars","identifier":{` + full + `,"point":"1,2"}}`,
			"identifier.point is only supported for watch/replay endpoints, not /notification"},
		{"undeclared", `{"event_type":"mars","identifier":{` + full + `,"zeta":"1","alpha":"2"}}`,
			"Unknown field 'alpha' provided for notify operation"},
		{"missing optional field", `{"event_type":"mars","identifier":{"class":"od"}}`,
			"required field 'expver' is missing: notify needs every declared identifier"},
		{"constraint object", `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250101","time":"12","stream":"oper","step":{"gte":1}}}`,
			"invalid value for identifier 'step': constraint objects are only allowed on watch and replay; notify needs a plain value"},
		{"null", `{"event_type":"mars","identifier":{"class":null,"expver":"1","domain":"g","date":"20250101","time":"12","stream":"oper","step":"1"}}`,
			"invalid value for identifier 'class': value cannot be null"},
		{"array", `{"event_type":"mars","identifier":{"class":["od"],"expver":"1","domain":"g","date":"20250101","time":"12","stream":"oper","step":"1"}}`,
			"invalid value for identifier 'class': arrays are not allowed; send a single value"},
		{"json 4.0 int", `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250101","time":"12","stream":"oper","step":4.0}}`, ""},
		{"payload required", `{"event_type":"dissemination","identifier":{"target":"x","date":"2025-01-01","polygon":[[0,0],[0,1],[1,1],[0,0]]}}`,
			"payload is required for event type 'dissemination'"},
		{"payload null", `{"event_type":"dissemination","identifier":{"target":"x","date":"2025-01-01","polygon":[[0,0],[0,1],[1,1],[0,0]]},"payload":null}`,
			"payload is required for event type 'dissemination'"},
		{"bad date", `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"2025-02-30","time":"12","stream":"oper","step":"1"}}`, ""},
		{"step out of range", `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250101","time":"12","stream":"oper","step":"1001"}}`, ""},
		{"unclosed polygon", `{"event_type":"dissemination","identifier":{"target":"x","date":"2025-01-01","polygon":"(0,0,0,1,1,1,1,0)"},"payload":1}`, ""},
		{"nested parens polygon", `{"event_type":"dissemination","identifier":{"target":"x","date":"2025-01-01","polygon":"((0,0,0,1,1,1,0,0))"},"payload":1}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, http.MethodPost, "/api/v1/notification", c.body)
			if r.Status != 400 || r.Body["code"] != "INVALID_NOTIFICATION_REQUEST" || r.Body["error"] != "Invalid Notification Request" {
				t.Fatalf("status %d body %s", r.Status, r.Raw)
			}
			if c.message != "" && r.Body["message"] != c.message {
				t.Fatalf("message %q\nwant    %q", r.Body["message"], c.message)
			}
		})
	}
	// The polygon messages name the field and the rule.
	r := s.do(t, http.MethodPost, "/api/v1/notification", cases[11].body)
	if msg := r.Body["message"].(string); !strings.Contains(msg, "'polygon'") || !strings.Contains(msg, "missing the closing") {
		t.Fatalf("unclosed polygon message %q", msg)
	}
	r = s.do(t, http.MethodPost, "/api/v1/notification", cases[12].body)
	if msg := r.Body["message"].(string); !strings.Contains(msg, "'polygon'") {
		t.Fatalf("nested polygon message %q", msg)
	}
}

func TestBodyLimit(t *testing.T) {
	s := startServer(t, testConfig, nil)
	big := `{"event_type":"mars","identifier":{},"payload":"` + strings.Repeat("x", 1<<20) + `"}`
	r := s.do(t, http.MethodPost, "/api/v1/notification", big)
	if r.Status != http.StatusRequestEntityTooLarge || r.Body["code"] != "PAYLOAD_TOO_LARGE" ||
		r.Body["message"] != "request body exceeds the limit of 1048576 bytes" {
		t.Fatalf("status %d body %.300s", r.Status, r.Raw)
	}
}

func TestNotFoundAndMethodNotAllowedCarryRequestID(t *testing.T) {
	s := startServer(t, testConfig, nil)
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/nope", 404},
		{http.MethodGet, "/api/v1/notification", 405},
		{http.MethodPut, "/api/v1/watch", 405},
		{http.MethodGet, "/health", 200},
	} {
		r := s.do(t, c.method, c.path, "")
		if r.Status != c.status || !uuidRE.MatchString(r.Header.Get("X-Request-ID")) {
			t.Fatalf("%s %s: status %d id %q", c.method, c.path, r.Status, r.Header.Get("X-Request-ID"))
		}
	}
	a := s.do(t, http.MethodGet, "/health", "")
	b := s.do(t, http.MethodGet, "/health", "")
	if a.Header.Get("X-Request-ID") == b.Header.Get("X-Request-ID") || a.Raw != "{\"status\":\"ok\"}\n" {
		t.Fatalf("ids %q %q body %q", a.Header.Get("X-Request-ID"), b.Header.Get("X-Request-ID"), a.Raw)
	}
}

func TestSchemaEndpoints(t *testing.T) {
	s := startServer(t, testConfig, nil)
	r := s.do(t, http.MethodGet, "/api/v1/schema", "")
	if r.Status != 200 || r.Body["total_schemas"] != float64(4) || jsonString(r.Body["event_types"]) != `["cloud","dissemination","extreme","mars"]` {
		t.Fatalf("list %s", r.Raw)
	}
	r = s.do(t, http.MethodGet, "/api/v1/schema/mars", "")
	want := `{"event_type":"mars","schema":{"identifier":{"class":{"description":"MARS class.","required":true,"type":"EnumHandler","values":["od","rd"]},"date":{"canonical_format":"%Y%m%d","required":false,"type":"DateHandler"},"domain":{"required":false,"type":"EnumHandler","values":["g","m"]},"expver":{"default":"1","required":false,"type":"ExpverHandler"},"step":{"range":[0,1000],"required":false,"type":"IntHandler"},"stream":{"max_length":16,"required":false,"type":"StringHandler"},"time":{"required":false,"type":"TimeHandler"}},"payload":{"required":false}},"status":"success"}`
	if r.Status != 200 || jsonString(r.Body) != want {
		t.Fatalf("mars schema\n%s\nwant\n%s", jsonString(r.Body), want)
	}
	r = s.do(t, http.MethodGet, "/api/v1/schema/extreme", "")
	want = `{"event_type":"extreme","schema":{"identifier":{"anomaly":{"range":[-100,100],"required":false,"type":"FloatHandler"},"region":{"max_length":null,"required":false,"type":"StringHandler"}},"payload":null},"status":"success"}`
	if jsonString(r.Body) != want {
		t.Fatalf("extreme schema\n%s\nwant\n%s", jsonString(r.Body), want)
	}
	r = s.do(t, http.MethodGet, "/api/v1/schema/nope", "")
	want = `{"available_types":["cloud","dissemination","extreme","mars"],"message":"Event type 'nope' not found","request_id":"` + r.Header.Get("X-Request-ID") + `","status":"error"}`
	if r.Status != 404 || jsonString(r.Body) != want {
		t.Fatalf("404 %d %s", r.Status, jsonString(r.Body))
	}
	// A malformed Authorization header is irrelevant to schema endpoints.
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/schema", nil)
	req.Header.Set("Authorization", "Garbage")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("schema with bad auth header: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestAdmin(t *testing.T) {
	s := startServer(t, testConfig, nil)
	s.notify(t, `{"event_type":"extreme","identifier":{"region":"eu","anomaly":1}}`)
	s.notify(t, `{"event_type":"extreme","identifier":{"region":"eu","anomaly":2}}`)
	for _, c := range []struct {
		id      string
		status  int
		message string
	}{
		{"nope", 400, "notification id must have the form <event_type>@<sequence>, e.g. mars@42"},
		{"@5", 400, "notification id has an empty event type or stream before '@'"},
		{"extreme@", 400, "notification id has an empty sequence after '@'"},
		{"extreme@0", 400, "notification id sequence must be greater than zero"},
		{"extreme@99", 404, "Notification not found"},
		{"EXTREME@1", 200, "Notification deleted"},
		{"extreme@1", 404, "Notification not found"},
	} {
		r := s.do(t, http.MethodDelete, "/api/v1/admin/notification/"+c.id, "")
		if r.Status != c.status || r.Body["message"] != c.message || r.Body["notification_id"] != c.id ||
			r.Body["request_id"] != r.Header.Get("X-Request-ID") || r.Body["success"] != (c.status == 200) {
			t.Fatalf("%s: %d %s", c.id, r.Status, r.Raw)
		}
	}
	evs := s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{"region":"eu"},"from_id":"0"}`).all(wait)
	if got := strings.Join(names(evs), " "); got != "replay-control:replay_started replay:extreme@2 replay-control:replay_completed connection-closing:end_of_stream" {
		t.Fatalf("after delete: %s", got)
	}
	r := s.do(t, http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"EXTREME"}`)
	if r.Status != 200 || r.Body["message"] != "Successfully wiped stream: EXTREME" || r.Body["success"] != true {
		t.Fatalf("wipe stream %d %s", r.Status, r.Raw)
	}
	r = s.do(t, http.MethodDelete, "/api/v1/admin/wipe/stream", `{"nope":1}`)
	if r.Status != 400 || r.Body["success"] != false {
		t.Fatalf("wipe stream bad body %d %s", r.Status, r.Raw)
	}
	s.notify(t, `{"event_type":"extreme","identifier":{"region":"eu","anomaly":3}}`)
	evs = s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{},"from_id":"0"}`).all(wait)
	if got := strings.Join(names(evs), " "); got != "replay-control:replay_started replay:extreme@3 replay-control:replay_completed connection-closing:end_of_stream" {
		t.Fatalf("after wipe: %s", got)
	}
	r = s.do(t, http.MethodDelete, "/api/v1/admin/wipe/all", "")
	if r.Status != 200 || r.Body["message"] != "Successfully wiped all data" {
		t.Fatalf("wipe all %d %s", r.Status, r.Raw)
	}
	evs = s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{},"from_id":"0"}`).all(wait)
	if got := strings.Join(names(evs), " "); got != "replay-control:replay_started replay-control:replay_completed connection-closing:end_of_stream" {
		t.Fatalf("after wipe all: %s", got)
	}
}
