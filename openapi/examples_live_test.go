package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/openapi"
	"github.com/herald-gateway/herald/openapi/openapitest"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
)

// TestNotifyExamplesSuitTheShippedConfig checks the examples a new user
// tries first (the docs page prefills notify with the first one) against
// the default config, configs/config.yaml: every notify request example,
// the Request schema's and the event_type parameter's name an event type
// it configures, and herald running it stores every notify example (200,
// as documented).
func TestNotifyExamplesSuitTheShippedConfig(t *testing.T) {
	// As shipped: the embedded JetStream (storing under a temporary
	// directory), which its storage_policy needs.
	cfg, err := configs.Load("../configs/config.yaml", []string{
		"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=" + t.TempDir(), "HERALD_APPLICATION__PORT=0"})
	if err != nil {
		t.Fatal(err)
	}
	var shipped []string
	for _, s := range cfg.NotificationSchema {
		shipped = append(shipped, s.Name)
	}
	sort.Strings(shipped)
	if !slices.Equal(shipped, []string{"alert", "mars", "sensor", "sensor_cbor"}) {
		t.Fatalf("the shipped config's event types are %v; the examples are written for alert, mars, sensor and sensor_cbor", shipped)
	}

	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Examples map[string]struct {
						Value json.RawMessage `json:"value"`
					} `json:"examples"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas struct {
				Request struct {
					Examples []struct {
						EventType string `json:"event_type"`
					} `json:"examples"`
					Properties struct {
						EventType struct{ Examples []string } `json:"event_type"`
					} `json:"properties"`
				} `json:"Request"`
			} `json:"schemas"`
			Parameters struct {
				EventType struct{ Example string } `json:"EventType"`
			} `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Spec(), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"the event_type parameter's example": doc.Components.Parameters.EventType.Example}
	for i, e := range doc.Components.Schemas.Request.Examples {
		names["Request example "+string(rune('0'+i))] = e.EventType
	}
	for i, e := range doc.Components.Schemas.Request.Properties.EventType.Examples {
		names["Request.event_type example "+string(rune('0'+i))] = e
	}
	examples := doc.Paths["/api/v1/notification"]["post"].RequestBody.Content["application/json"].Examples
	if len(examples) < 3 {
		t.Fatalf("only %d notify request examples", len(examples))
	}
	for name, e := range examples {
		var req struct {
			EventType string `json:"event_type"`
		}
		if err := json.Unmarshal(e.Value, &req); err != nil {
			t.Fatalf("notify example %s: %v", name, err)
		}
		names["notify example "+name] = req.EventType
	}
	for where, et := range names {
		if !slices.Contains(shipped, et) {
			t.Errorf("%s names event type %q, which configs/config.yaml does not configure", where, et)
		}
	}

	srv, err := server.New(context.Background(), cfg, server.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	for name, e := range examples {
		r := send(t, ts.URL, "POST", "/api/v1/notification", nil, e.Value)
		conform(t, r, "POST", "/api/v1/notification", 200)
		if t.Failed() {
			t.Logf("notify example %s: %s", name, r.body)
		}
	}
}

// startShipped runs herald on configs/config.yaml as `go run .` does, with
// its embedded JetStream storing under a temporary directory and a free
// port; a reload reads the file again with the same overrides.
func startShipped(t *testing.T) *httptest.Server {
	t.Helper()
	env := []string{"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=" + t.TempDir(), "HERALD_APPLICATION__PORT=0"}
	const path = "../configs/config.yaml"
	cfg, err := configs.Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{ConfigPath: path, Env: env, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	return ts
}

// sseEvent is one event of a text/event-stream.
type sseEvent struct {
	name string
	data map[string]any
}

// parseSSE reads the events of a documented text/event-stream example.
func parseSSE(t *testing.T, text string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSpace(text), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev.name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				if err := json.Unmarshal([]byte(v), &ev.data); err != nil {
					t.Fatalf("example event %q: %v", line, err)
				}
			}
		}
		out = append(out, ev)
	}
	return out
}

// without returns a copy of m without the named keys.
func without(m map[string]any, keys ...string) map[string]any {
	out := clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// streamExample names, for a watch or replay request example, the 200
// example of the same operation that documents its answer, and the first
// event's fields that may differ there besides timestamp and request_id.
type streamExample struct {
	response string
	differ   []string
}

// TestRequestExamplesWorkOnTheShippedConfig sends every request example of
// the document, verbatim, to herald running the shipped configs/config.yaml
// (`go run .`), in document order of a new user's first steps: the notify
// and batch examples are stored as their 200 examples say, the schema
// paths answer their examples for the event_type parameter's example, and
// every watch and replay example opens a text/event-stream (200) whose
// first event is the documented one (connection_established for a live
// watch, replay_started with a cursor); a replay ends with end_of_stream,
// delivers what the notify examples stored as its documented example shows
// (modulo ids and times) and matches the document's stream schema. The
// reload examples answer 200 (unchanged) and the wipe example wipes ALERT.
// The raw events examples sent to the notify examples' event type, which
// has no payload codec, answer the documented 400 naming that
// (TestEventsExamplesWorkOnTheTypedExample sends them to the default
// config's typed event type sensor).
func TestRequestExamplesWorkOnTheShippedConfig(t *testing.T) {
	ts := startShipped(t)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Examples map[string]struct {
						Value any `json:"value"`
					} `json:"examples"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]struct{ Example string } `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Spec(), &doc); err != nil {
		t.Fatal(err)
	}
	examples := func(path, method string) map[string]any {
		out := map[string]any{}
		for media, c := range doc.Paths[path][method].RequestBody.Content {
			for name, e := range c.Examples {
				if media != "application/json" {
					name = media + " " + name
				}
				out[name] = e.Value
			}
		}
		return out
	}
	seen := map[string]bool{}
	body := func(v any) []byte {
		if s, ok := v.(string); ok {
			return []byte(s)
		}
		return mustJSON(v)
	}
	decoded := func(r reply) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(r.body, &m)
		return m
	}

	// The batch first, then notify and polygon: the shipped alert keeps
	// only the newest notification per subject, so the history holds
	// notify's alert@2 and polygon's alert@3, as the replay examples show.
	for name, v := range examples("/api/v1/notifications", "post") {
		seen["batch "+name] = true
		r := send(t, ts.URL, "POST", "/api/v1/notifications", nil, body(v))
		conform(t, r, "POST", "/api/v1/notifications", 200)
		got := decoded(r)
		sameAsExample(t, r, "POST", "/api/v1/notifications", "stored", func(ex map[string]any) {
			ex["processed_at"] = got["processed_at"]
			ids, _ := got["ids"].([]any)
			want, _ := ex["ids"].([]any)
			if len(ids) == len(want) {
				for i := range ids {
					g, _ := ids[i].(string)
					w, _ := want[i].(string)
					if strings.Split(g, "@")[0] == strings.Split(w, "@")[0] {
						want[i] = g
					}
				}
			}
		})
	}
	notify := examples("/api/v1/notification", "post")
	for _, name := range []string{"notify", "no_payload", "polygon"} {
		seen["notify "+name] = true
		r := send(t, ts.URL, "POST", "/api/v1/notification", nil, body(notify[name]))
		conform(t, r, "POST", "/api/v1/notification", 200)
		got := decoded(r)
		sameAsExample(t, r, "POST", "/api/v1/notification", "stored", func(ex map[string]any) {
			ex["processed_at"] = got["processed_at"]
			if id, _ := got["notification_id"].(string); strings.HasPrefix(id, notify[name].(map[string]any)["event_type"].(string)+"@") {
				ex["notification_id"] = id
			}
		})
	}

	// Schemas.
	r := send(t, ts.URL, "GET", "/api/v1/schema", nil, nil)
	conform(t, r, "GET", "/api/v1/schema", 200)
	sameAsExample(t, r, "GET", "/api/v1/schema", "schemas", nil)
	et := doc.Components.Parameters["EventType"].Example
	r = send(t, ts.URL, "GET", "/api/v1/schema/"+et, nil, nil)
	conform(t, r, "GET", "/api/v1/schema/{event_type}", 200)
	sameAsExample(t, r, "GET", "/api/v1/schema/{event_type}", et, nil)

	// Watch and replay.
	documented := map[string]map[string]streamExample{
		"/api/v1/watch": {
			"live":    {response: "live_only"},
			"from_id": {response: "with_cursor"},
		},
		"/api/v1/replay": {
			// The document's replay starts at 42 of a longer history.
			"from_id":   {response: "replay", differ: []string{"from_sequence"}},
			"from_date": {response: "truncated"},
		},
	}
	for _, path := range []string{"/api/v1/watch", "/api/v1/replay"} {
		for name, v := range examples(path, "post") {
			seen[path+" "+name] = true
			req, _ := v.(map[string]any)
			s := openStream(t, ts.URL, path, body(v))
			if ct := s.resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("%s example %s: Content-Type %q", path, name, ct)
			}
			_, first := s.next(t)
			want := "connection_established"
			if req["from_id"] != nil || req["from_date"] != nil {
				want = "replay_started"
			}
			if first["type"] != want {
				t.Errorf("%s example %s: first event %v, want %s", path, name, first, want)
			}
			d, ok := documented[path][name]
			var docEvents []sseEvent
			if ok {
				text, _ := openapi.DocExample("POST", path, 200, "text/event-stream", d.response).(string)
				docEvents = parseSSE(t, text)
				skip := append([]string{"timestamp", "request_id"}, d.differ...)
				if g, w := without(first, skip...), without(docEvents[0].data, skip...); !reflect.DeepEqual(g, w) {
					t.Errorf("%s example %s: first event\n got %s\nwant %s (example %s)", path, name, mustJSON(g), mustJSON(w), d.response)
				}
			}
			if path == "/api/v1/watch" {
				s.cancel()
				continue
			}
			events := s.finish(t, path)
			if last := events[len(events)-1]["data"].(map[string]any); last["reason"] != "end_of_stream" {
				t.Errorf("replay example %s ended with %v", name, last)
			}
			var got, wantEvents []map[string]any
			for _, ev := range events {
				if ev["event"] == "replay" {
					got = append(got, without(ev["data"].(map[string]any), "id", "time"))
				}
			}
			for _, ev := range docEvents {
				if ev.name == "replay" {
					wantEvents = append(wantEvents, without(ev.data, "id", "time"))
				}
			}
			if len(got) == 0 && name != "range" { // range starts at 42, past a fresh store
				t.Errorf("replay example %s delivered nothing of what the notify examples stored", name)
			}
			if ok && (len(got) < len(wantEvents) || !reflect.DeepEqual(got[:len(wantEvents)], wantEvents)) {
				t.Errorf("replay example %s delivered\n%s\nwant first (example %s)\n%s", name, mustJSON(got), d.response, mustJSON(wantEvents))
			}
		}
	}

	// The raw events endpoint on an untyped event type;
	// TestEventsExamplesWorkOnTheTypedExample sends them to a typed one.
	for name, v := range examples("/api/v1/events/{event_type}", "post") {
		seen["events "+name] = true
		media := "application/json"
		if m, _, ok := strings.Cut(name, " "); ok {
			media = m
		}
		r := send(t, ts.URL, "POST", "/api/v1/events/"+et, map[string]string{"Content-Type": media}, body(v))
		conform(t, r, "POST", "/api/v1/events/{event_type}", 400)
		sameAsExample(t, r, "POST", "/api/v1/events/{event_type}", "untyped", func(ex map[string]any) {
			ex["message"] = strings.Replace(ex["message"].(string), "'mars'", "'"+et+"'", 1)
		})
	}

	// Admin: reload the unchanged file, delete the parameter's example id
	// (not stored: 404), wipe ALERT last.
	for name, v := range examples("/api/v1/admin/reload", "post") {
		seen["reload "+name] = true
		r := send(t, ts.URL, "POST", "/api/v1/admin/reload", nil, body(v))
		conform(t, r, "POST", "/api/v1/admin/reload", 200)
		got := decoded(r)
		sameAsExample(t, r, "POST", "/api/v1/admin/reload", "unchanged", func(ex map[string]any) {
			ex["fingerprint"], ex["previous_fingerprint"] = got["fingerprint"], got["previous_fingerprint"]
		})
	}
	id := doc.Components.Parameters["NotificationID"].Example
	r = send(t, ts.URL, "DELETE", "/api/v1/admin/notification/"+id, nil, nil)
	conform(t, r, "DELETE", "/api/v1/admin/notification/{notification_id}", 404)
	sameAsExample(t, r, "DELETE", "/api/v1/admin/notification/{notification_id}", "not_found", func(ex map[string]any) {
		ex["notification_id"] = id
	})
	for name, v := range examples("/api/v1/admin/wipe/stream", "delete") {
		seen["wipe "+name] = true
		r := send(t, ts.URL, "DELETE", "/api/v1/admin/wipe/stream", nil, body(v))
		conform(t, r, "DELETE", "/api/v1/admin/wipe/stream", 200)
		sameAsExample(t, r, "DELETE", "/api/v1/admin/wipe/stream", "wiped", nil)
	}

	// Every request example of the document was sent.
	for path, item := range doc.Paths {
		for method, op := range item {
			for _, c := range op.RequestBody.Content {
				for name := range c.Examples {
					found := false
					for k := range seen {
						if strings.HasSuffix(k, " "+name) {
							found = true
						}
					}
					if !found {
						t.Errorf("request example %s of %s %s was not sent", name, method, path)
					}
				}
			}
		}
	}
}

// TestExampleConfigIsTheShippedOne checks that the conformance tests' own
// configuration declares the shipped untyped event types as
// configs/config.yaml does (topic, identifier fields in order, payload),
// so that the examples it checks are the ones a user of the default config
// gets. The shipped typed ones (sensor, sensor_cbor) are not in it: their
// examples are sent to herald on configs/config.yaml itself
// (TestEventsExamplesWorkOnTheTypedExample).
func TestExampleConfigIsTheShippedOne(t *testing.T) {
	shipped, err := configs.Load("../configs/config.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	own, err := configs.Parse([]byte(exampleConfig+alertType), nil)
	if err != nil {
		t.Fatal(err)
	}
	view := func(c *configs.Config) map[string]string {
		out := map[string]string{}
		for _, s := range c.NotificationSchema {
			if s.Payload != nil && s.Payload.Codec != "" {
				if s.Name != "sensor" && s.Name != "sensor_cbor" {
					t.Errorf("typed event type %s is not one of the shipped typed ones", s.Name)
				}
				continue
			}
			fields := make([]configs.IdentifierField, len(s.Identifier))
			for i, f := range s.Identifier {
				fields[i] = *f
				fields[i].Line = 0
			}
			out[s.Name] = string(mustJSON([]any{s.Topic, fields, s.Payload}))
		}
		return out
	}
	if got, want := view(own), view(shipped); !reflect.DeepEqual(got, want) {
		t.Errorf("the test's event types\n%v\ndiffer from configs/config.yaml's\n%v", got, want)
	}
}

// TestEventsExamplesWorkOnTheTypedExample sends the raw events examples,
// verbatim, to herald running the default config configs/config.yaml (its
// typed event type sensor, as `go run .` serves it; its codecs path is
// relative to the config file): the WIRE JSON reading to the event_type parameter's example
// is stored as example "one" says (modulo id and time), the same reading
// with its value as a string is example "codec"'s 400, and the text/plain
// syslog frame, for a SYSLOG codec the example config does not have, is the
// documented 415.
func TestEventsExamplesWorkOnTheTypedExample(t *testing.T) {
	cfg, err := configs.Load("../configs/config.yaml", []string{
		"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=" + t.TempDir(), "HERALD_APPLICATION__PORT=0"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)

	const docPath = "/api/v1/events/{event_type}"
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name    string
				Example string
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Spec(), &doc); err != nil {
		t.Fatal(err)
	}
	var et string
	for _, p := range doc.Paths[docPath]["post"].Parameters {
		if p.Name == "event_type" {
			et = p.Example
		}
	}
	reading, _ := openapi.DocRequestExample("POST", docPath, "reading").(map[string]any)
	if et == "" || reading == nil {
		t.Fatalf("event_type example %q, reading example %v", et, reading)
	}
	path := "/api/v1/events/" + et
	r := send(t, ts.URL, "POST", path, map[string]string{"Content-Type": "application/json"}, mustJSON(reading))
	conform(t, r, "POST", docPath, 200)
	var got map[string]any
	_ = json.Unmarshal(r.body, &got)
	sameAsExample(t, r, "POST", docPath, "one", func(ex map[string]any) {
		ex["processed_at"] = got["processed_at"]
		if ids, _ := got["ids"].([]any); len(ids) == 1 && strings.HasPrefix(fmt.Sprint(ids[0]), et+"@") {
			ex["ids"] = ids
		}
	})

	// The reading example in document order, its value a string: the
	// diagnostic names the byte.
	bad := []byte(`{"sensor":"t-01","at":"2026-12-03T10:00:00Z","value":"21.5","samples":[0.1,0.2]}`)
	if want := mustJSON(reading); !strings.Contains(string(want), `"value":21.5`) {
		t.Fatalf("the reading example %s has no value 21.5", want)
	}
	r = send(t, ts.URL, "POST", path, map[string]string{"Content-Type": "application/json"}, bad)
	conform(t, r, "POST", docPath, 400)
	sameAsExample(t, r, "POST", docPath, "codec", nil)

	syslog := []byte(fmt.Sprint(openapi.DocRequestExampleOf("POST", docPath, "text/plain", "syslog")))
	r = send(t, ts.URL, "POST", path, map[string]string{"Content-Type": "text/plain"}, syslog)
	conform(t, r, "POST", docPath, 415)
}

// TestSessionExamplesWorkOnTheShippedConfig sends every request example of
// the AsyncAPI document, verbatim, in document order, in one WebSocket
// session to herald on the shipped configs/config.yaml, and requires each
// reply to succeed, but auth's: the shipped config has authentication
// off, and the example's token is not signed by any secret.
func TestSessionExamplesWorkOnTheShippedConfig(t *testing.T) {
	ts := startShipped(t)
	var doc struct {
		Components struct {
			Messages map[string]struct {
				Examples []struct {
					Name    string          `json:"name"`
					Payload json.RawMessage `json:"payload"`
				} `json:"examples"`
			} `json:"messages"`
		} `json:"components"`
		Operations map[string]struct {
			Messages []struct {
				Ref string `json:"$ref"`
			} `json:"messages"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(openapi.AsyncAPISpec(), &doc); err != nil {
		t.Fatal(err)
	}
	c := dialAsync(t, ts.URL, nil)
	if f := c.next(); f.msg != "welcome" {
		t.Fatalf("first frame %v", f.m)
	}
	sent := 0
	for _, m := range doc.Operations[openapitest.Send].Messages {
		name := strings.TrimPrefix(m.Ref, "#/channels/session/messages/")
		for _, e := range doc.Components.Messages[name].Examples {
			var req struct {
				ID any `json:"id"`
			}
			if err := json.Unmarshal(e.Payload, &req); err != nil || req.ID == nil {
				t.Fatalf("%s example %s has no id: %s", name, e.Name, e.Payload)
			}
			c.write(string(e.Payload), true)
			sent++
			for {
				f := c.next()
				if f.m["type"] != "reply" || f.m["id"] != req.ID {
					continue
				}
				switch {
				case name == "auth":
					if f.m["ok"] != false {
						t.Errorf("auth example %s: %v, want a refusal on a config without authentication", e.Name, f.m)
					}
				case name == "execute" && e.Name == "create":
					// The session protocol's own example: the identifier
					// comes from WHERE (class = 'od' pins the required
					// class), so the topic narrows.
					if f.m["ok"] != true || f.m["name"] != "s1" || f.m["topic"] != "mars.od.*.*.*.*.*.*" {
						t.Errorf("execute example create: %s\nreply %v", e.Payload, f.m)
					}
				case f.m["ok"] != true:
					t.Errorf("%s example %s: %s\nreply %v", name, e.Name, e.Payload, f.m)
				}
				t.Logf("%s %s: %s", name, e.Name, mustJSON(f.m))
				break
			}
		}
	}
	if sent < 14 {
		t.Errorf("only %d session request examples", sent)
	}

	// The refusals the reply_error examples show, for the requests their
	// summaries name, on the same config.
	for _, rc := range []struct{ example, op, fields string }{
		{"notify_invalid", "notify", `"event_type":"alert","identifier":{"region":"mars","severity":3,"date":"2025-07-06","polygon":[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]},"payload":{}`},
		{"statement", "execute", `"statement":"DESCRIBE EVENT TYPE alert WHERE nope = 1"`},
		{"not_admitted", "publish", `"producer":"p2","batch":[{"identifier":{"region":"europe","severity":3,"date":"2025-07-06","polygon":[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]},"payload":{}},{"identifier":{"region":"europe","severity":9,"date":"2025-07-06","polygon":[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]},"payload":{}}]`},
	} {
		if rc.op == "publish" {
			c.ok("open_producer", `"producer":"p2","event_type":"alert"`)
		}
		got, _ := c.call(rc.op, rc.fields)
		var want map[string]any
		for _, e := range doc.Components.Messages["reply_error"].Examples {
			if e.Name == rc.example {
				_ = json.Unmarshal(e.Payload, &want)
			}
		}
		if want == nil {
			t.Fatalf("no reply_error example %s", rc.example)
		}
		want["id"] = got["id"]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("reply_error example %s\n got %s\nwant %s", rc.example, mustJSON(got), mustJSON(want))
		}
	}
}
