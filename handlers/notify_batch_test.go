package handlers_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	herald "github.com/herald-gateway/herald/server"
)

// batchConfig is the config of the batch notify tests: two event types,
// each keeping one notification per exact subject on both engines (the
// in-memory history per topic, and allow_duplicates: false on
// JetStream, set by startBatchServer), and batches of at most 8.
const batchConfig = `
application: {host: 127.0.0.1, port: 8000, base_url: "http://herald.test", max_batch_notifications: 8}
notification_backend:
  kind: in_memory
  in_memory: {max_history_per_topic: 1, max_topics: 10000}
watch_endpoint: {replay_batch_delay_ms: 0}
notification_schema:
  ev:
    topic: {base: ev, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: true}
  num:
    payload: {required: true}
    topic: {base: num, key_order: [i]}
    identifier:
      i: {type: IntHandler, range: [0, 100], required: true}
  gen:
    topic: {base: gen, key_order: [c]}
    identifier:
      c: {type: EnumHandler, values: [a, b], required: true}
`

// startBatchServer serves herald on the in-memory engine, or for the
// subtests of TestOnJetStream (and fuzz targets) on an embedded
// JetStream engine that keeps one notification per subject, as the
// in-memory engine of batchConfig does (Aviso's default,
// allow_duplicates: false).
func startBatchServer(t testing.TB, yaml string, edit func(*configs.Config)) *server {
	t.Helper()
	return start(t, yaml, startOptions{edit: edit, engine: func(t testing.TB, c *configs.Config) engine.Engine {
		if !onJetStream(t) {
			return memoryEngine(t, c)
		}
		o, err := herald.JetStreamOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		return jetstreamtest.Open(t, o.Streams, func(o *jetstream.Options) { o.Defaults.MaxMsgsPerSubject = 1 })
	}})
}

// batchBody is a batch notify body of the given elements.
func batchBody(elems ...string) string {
	return `{"notifications":[` + strings.Join(elems, ",") + `]}`
}

// evNote is a notification of event type ev.
func evNote(k, payload string) string {
	if payload == "" {
		return `{"event_type":"ev","identifier":{"k":"` + k + `"}}`
	}
	return `{"event_type":"ev","identifier":{"k":"` + k + `"},"payload":` + payload + `}`
}

var processedAt = regexp.MustCompile(`"processed_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)

// wantRaw checks a JSON answer's status and exact body, with $ID standing
// for the request id (which must equal X-Request-ID) and $AT for a
// second-precision UTC processed_at.
func wantRaw(t *testing.T, r response, status int, want string) {
	t.Helper()
	id := r.Header.Get("X-Request-ID")
	got := r.Raw
	if id != "" {
		got = strings.ReplaceAll(got, `"request_id":"`+id+`"`, `"request_id":"$ID"`)
	}
	got = processedAt.ReplaceAllString(got, `"processed_at":"$$AT"`)
	if r.Status != status || got != want+"\n" {
		t.Fatalf("got %d %s\nwant %d %s", r.Status, got, status, want)
	}
	if r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("Content-Type %q", r.Header.Get("Content-Type"))
	}
}

// stored reads a stream back from the engine: each record as
// "<stream>@<seq> <subject tokens after the base> <payload>".
func stored(t testing.TB, eng engine.Engine, stream string) []string {
	t.Helper()
	ctx := context.Background()
	h, err := eng.History(ctx, engine.Query{Stream: stream}, engine.Range{ToSeq: math.MaxUint64})
	if err != nil {
		t.Fatalf("history of %s: %v", stream, err)
	}
	defer h.Close()
	out := []string{}
	for {
		page, done, err := h.Next(ctx, 1000)
		if err != nil {
			t.Fatalf("history of %s: %v", stream, err)
		}
		for _, r := range page {
			out = append(out, fmt.Sprintf("%s@%d %s %s", stream, r.Seq, strings.Join(r.Tokens[1:], "."), r.Payload))
		}
		if done {
			return out
		}
	}
}

// wantStored checks what each stream holds.
func wantStored(t testing.TB, eng engine.Engine, want map[string][]string) {
	t.Helper()
	for stream, w := range want {
		if w == nil {
			w = []string{}
		}
		if got := stored(t, eng, stream); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("stream %s holds %q\nwant %q", stream, got, w)
		}
	}
}

// TestNotifyBatch stores batches of mixed event types: the answer lists
// the ids in request order, the streams hold the notifications in that
// order, and a notification repeating an earlier one's identifiers on an
// event type that keeps one per subject replaces it, as two notifies
// would.
func TestNotifyBatch(t *testing.T) {
	s := startBatchServer(t, batchConfig, nil)
	const path = "/api/v1/notifications"
	r := s.do(t, http.MethodPost, path, batchBody(evNote("a", `{"x":[1, 2]}`), `{"event_type":"num","identifier":{"i":"007"},"payload":"p"}`,
		evNote("b", ""), `{"event_type":"gen","identifier":{"c":"A"},"payload":null,"from_id":"3"}`))
	wantRaw(t, r, http.StatusOK, `{"status":"success","request_id":"$ID","processed_at":"$AT","ids":["ev@1","num@1","ev@2","gen@1"]}`)
	wantStored(t, s.Engine, map[string][]string{
		"ev":  {`ev@1 a {"x":[1,2]}`, "ev@2 b null"},
		"num": {`num@1 7 "p"`},
		"gen": {"gen@1 a null"},
	})

	// Eight, the limit, in order; then the same subjects again: each
	// replaces its predecessor.
	var elems []string
	for i := range 8 {
		elems = append(elems, evNote("k"+strconv.Itoa(i), strconv.Itoa(i)))
	}
	r = s.do(t, http.MethodPost, path, batchBody(elems...))
	wantRaw(t, r, http.StatusOK, `{"status":"success","request_id":"$ID","processed_at":"$AT","ids":["ev@3","ev@4","ev@5","ev@6","ev@7","ev@8","ev@9","ev@10"]}`)
	want := []string{`ev@1 a {"x":[1,2]}`, "ev@2 b null"}
	for i := range 8 {
		want = append(want, fmt.Sprintf("ev@%d k%d %d", i+3, i, i))
	}
	wantStored(t, s.Engine, map[string][]string{"ev": want})

	r = s.do(t, http.MethodPost, path, batchBody(evNote("d", "1"), evNote("d", "2"), evNote("a", "3"), evNote("d", "4")))
	wantRaw(t, r, http.StatusOK, `{"status":"success","request_id":"$ID","processed_at":"$AT","ids":["ev@11","ev@12","ev@13","ev@14"]}`)
	want = append([]string{"ev@2 b null"}, want[2:]...)
	want = append(want, "ev@13 a 3", "ev@14 d 4")
	wantStored(t, s.Engine, map[string][]string{"ev": want})

	// A single notify afterwards continues the sequence.
	s.notify(t, evNote("z", ""))
	wantStored(t, s.Engine, map[string][]string{"ev": append(want, "ev@15 z null")})
}

// TestNotifyBatchInvalid: a batch with invalid notifications is refused
// as a whole, 400 with each refused notification by index (its code and
// message as single notify gives them), and nothing is stored.
func TestNotifyBatchInvalid(t *testing.T) {
	s := startBatchServer(t, batchConfig, nil)
	const path = "/api/v1/notifications"
	r := s.do(t, http.MethodPost, path, batchBody(
		evNote("a", ""),
		`{"event_type":"nope","identifier":{}}`,
		`{"event_type":"ev","identifier":{"k":"a","point":"1,2"}}`,
		`{"event_type":"num","identifier":{"i":101},"payload":1}`,
		`[1]`,
		`{"event_type":"ev","identifier":{"k":"b"},"extra":1}`,
		`{"event_type":"num","identifier":{"i":1}}`,
		`{"event_type":"ev","identifier":{"k":"c","k":"d"}}`,
	))
	wantRaw(t, r, http.StatusBadRequest, `{"code":"INVALID_NOTIFICATION_REQUEST","error":"Invalid Notification Request",`+
		`"message":"7 of the batch's 8 notifications are invalid; nothing was stored",`+
		`"details":"notifications[1]: unknown event type 'nope'","request_id":"$ID","errors":[`+
		`{"index":1,"code":"UNKNOWN_EVENT_TYPE","message":"unknown event type 'nope'"},`+
		`{"index":2,"code":"INVALID_NOTIFICATION_REQUEST","message":"identifier.point is only supported for watch/replay endpoints, not /notification"},`+
		`{"index":3,"code":"INVALID_NOTIFICATION_REQUEST","message":"invalid value for identifier 'i': value 101 is outside the allowed range [0, 100]"},`+
		`{"index":4,"code":"INVALID_REQUEST_SHAPE","message":"Request deserialization failed: expected a JSON object with event_type and identifier, found an array"},`+
		`{"index":5,"code":"UNKNOWN_FIELD","message":"Request contains unknown fields: 'extra' (allowed: event_type, identifier, from_id, from_date, to_id, to_date, payload)"},`+
		`{"index":6,"code":"INVALID_NOTIFICATION_REQUEST","message":"payload is required for event type 'num'"},`+
		"{\"index\":7,\"code\":\"INVALID_REQUEST_SHAPE\",\"message\":\"Request deserialization failed: duplicate field `k` in `identifier`: each identifier key may appear once\"}]}")
	wantStored(t, s.Engine, map[string][]string{"ev": nil, "num": nil})

	// One bad notification among good ones is enough.
	r = s.do(t, http.MethodPost, path, batchBody(evNote("a", ""), evNote("b", ""), `{"event_type":"gen","identifier":{"c":"z"}}`))
	wantRaw(t, r, http.StatusBadRequest, `{"code":"INVALID_NOTIFICATION_REQUEST","error":"Invalid Notification Request",`+
		`"message":"1 of the batch's 3 notifications are invalid; nothing was stored",`+
		`"details":"notifications[2]: invalid value for identifier 'c': value \"z\" is not allowed; allowed values (case-insensitive): a, b","request_id":"$ID","errors":[`+
		`{"index":2,"code":"INVALID_NOTIFICATION_REQUEST","message":"invalid value for identifier 'c': value \"z\" is not allowed; allowed values (case-insensitive): a, b"}]}`)
	wantStored(t, s.Engine, map[string][]string{"ev": nil, "gen": nil})
}

// TestNotifyBatchRequestErrors: bodies that are not a batch, an empty
// batch and one over max_batch_notifications are refused with nothing
// stored.
func TestNotifyBatchRequestErrors(t *testing.T) {
	s := startBatchServer(t, batchConfig, nil)
	const path = "/api/v1/notifications"
	nine := make([]string, 9)
	for i := range nine {
		nine[i] = evNote("k"+strconv.Itoa(i), "")
	}
	shape := func(detail string) string {
		return `{"code":"INVALID_REQUEST_SHAPE","error":"Invalid Notification Request","message":"Request deserialization failed: ` + detail + `","details":"` + detail + `","request_id":"$ID"}`
	}
	for _, c := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"empty body", "", 400, `{"code":"INVALID_JSON","error":"Invalid Notification Request","message":"JSON parsing failed: EOF while parsing a value: the body is empty","details":"EOF while parsing a value: the body is empty","request_id":"$ID"}`},
		{"not JSON", `{"notifications":[` + evNote("a", "") + `,]}`, 400, `{"code":"INVALID_JSON","error":"Invalid Notification Request","message":"JSON parsing failed: invalid character ',' at start of value at line 1 column 61","details":"invalid character ',' at start of value at line 1 column 61","request_id":"$ID"}`},
		{"trailing", `{"notifications":[]} {}`, 400, `{"code":"INVALID_JSON","error":"Invalid Notification Request","message":"JSON parsing failed: trailing characters after the JSON value at byte 20","details":"trailing characters after the JSON value at byte 20","request_id":"$ID"}`},
		{"array", `[` + evNote("a", "") + `]`, 400, shape("expected a JSON object with notifications, found an array")},
		{"a notify body", evNote("a", ""), 400, `{"code":"UNKNOWN_FIELD","error":"Invalid Notification Request","message":"Request contains unknown fields: 'event_type', 'identifier' (allowed: notifications)","details":"'event_type', 'identifier' (allowed: notifications)","request_id":"$ID"}`},
		{"missing", `{}`, 400, shape("missing field `notifications`")},
		{"twice", `{"notifications":[],"notifications":[` + evNote("a", "") + `]}`, 400, shape("duplicate field `notifications`")},
		{"not an array", `{"notifications":{"event_type":"ev"}}`, 400, shape("invalid type for `notifications`: expected an array, found an object")},
		{"null", `{"notifications":null}`, 400, shape("invalid type for `notifications`: expected an array, found null")},
		{"empty", `{"notifications":[]}`, 400, shape("`notifications` is empty: a batch carries at least one notification")},
		{"over the limit", batchBody(nine...), 413, `{"code":"PAYLOAD_TOO_LARGE","error":"Invalid Notification Request","message":"the batch has 9 notifications; at most 8 are allowed (application.max_batch_notifications)","details":"the batch has 9 notifications; at most 8 are allowed (application.max_batch_notifications)","request_id":"$ID"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantRaw(t, s.do(t, http.MethodPost, path, c.body), c.status, c.want)
		})
	}
	wantStored(t, s.Engine, map[string][]string{"ev": nil})

	// max_body_bytes applies as to every body.
	small := startBatchServer(t, batchConfig, func(c *configs.Config) { c.Application.MaxBodyBytes = 64 })
	wantRaw(t, small.do(t, http.MethodPost, path, batchBody(evNote("a", ""), evNote("b", ""))), http.StatusRequestEntityTooLarge,
		`{"code":"PAYLOAD_TOO_LARGE","error":"Invalid Notification Request","message":"request body exceeds the limit of 64 bytes","details":"request body exceeds the limit of 64 bytes","request_id":"$ID"}`)
	wantStored(t, small.Engine, map[string][]string{"ev": nil})
}

// TestNotifyBatchErrorsBounded: the answer to a batch of many invalid
// notifications lists the first 100 and counts the others, and shortens
// a message that quotes a long request value (an event type).
func TestNotifyBatchErrorsBounded(t *testing.T) {
	s := startBatchServer(t, batchConfig, func(c *configs.Config) {
		c.Application.MaxBatchNotifications = 1000
		c.Application.MaxBodyBytes = 4 << 20
	})
	elems := make([]string, 1000)
	long := strings.Repeat("é", 600)
	for i := range elems {
		elems[i] = `{"event_type":"` + long + `","identifier":{}}`
	}
	elems[0] = evNote("ok", "")
	r := s.do(t, http.MethodPost, "/api/v1/notifications", batchBody(elems...))
	if r.Status != http.StatusBadRequest {
		t.Fatalf("status %d: %.300s", r.Status, r.Raw)
	}
	// 1,024 bytes at most with the "…" (3 bytes): "unknown event type '"
	// is 20 bytes, each é 2, so the cut falls after 500 of them.
	short := "unknown event type '" + strings.Repeat("é", 500) + "…"
	errs, _ := r.Body["errors"].([]any)
	if len(errs) != 100 || r.Body["errors_truncated"] != 899.0 || r.Body["message"] != "999 of the batch's 1000 notifications are invalid; nothing was stored" ||
		r.Body["details"] != "notifications[1]: "+short {
		t.Fatalf("%d errors, errors_truncated %v, message %q, details %q", len(errs), r.Body["errors_truncated"], r.Body["message"], r.Body["details"])
	}
	for i, e := range errs {
		want := map[string]any{"index": float64(i + 1), "code": "UNKNOWN_EVENT_TYPE", "message": short}
		if fmt.Sprint(e) != fmt.Sprint(want) {
			t.Fatalf("errors[%d] = %.200v", i, e)
		}
	}
	if len(r.Raw) > 120_000 {
		t.Fatalf("the answer is %d bytes", len(r.Raw))
	}
	wantStored(t, s.Engine, map[string][]string{"ev": nil, "gen": nil})
}

// TestNotifyBatchMetrics: batch notifications count in the notify
// series, one each: accepted by event type, refused by event type and
// code.
func TestNotifyBatchMetrics(t *testing.T) {
	s := startBatchServer(t, batchConfig, withMetrics(t, nil))
	const path = "/api/v1/notifications"
	wantRaw(t, s.do(t, http.MethodPost, path, batchBody(evNote("a", ""), evNote("b", ""), `{"event_type":"num","identifier":{"i":1},"payload":1}`)), http.StatusOK,
		`{"status":"success","request_id":"$ID","processed_at":"$AT","ids":["ev@1","ev@2","num@1"]}`)
	r := s.do(t, http.MethodPost, path, batchBody(evNote("c", ""), `{"event_type":"nope","identifier":{}}`, `{"event_type":"num","identifier":{"i":1}}`))
	if r.Status != http.StatusBadRequest {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if r := s.do(t, http.MethodPost, path, `{"notifications":[]}`); r.Status != http.StatusBadRequest {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"herald_notifications_accepted_total", "event_type=ev,transport=http", 2},
		{"herald_notifications_accepted_total", "event_type=num,transport=http", 1},
		{"aviso_notifications_total", "event_type=ev,status=success", 2},
		// The valid one of a refused batch counts with the batch's code.
		{"herald_notifications_refused_total", "code=INVALID_NOTIFICATION_REQUEST,event_type=ev,transport=http", 1},
		{"herald_notifications_refused_total", "code=UNKNOWN_EVENT_TYPE,event_type=unknown,transport=http", 1},
		{"herald_notifications_refused_total", "code=INVALID_NOTIFICATION_REQUEST,event_type=num,transport=http", 1},
		{"herald_notifications_refused_total", "code=INVALID_REQUEST_SHAPE,event_type=unknown,transport=http", 1},
	} {
		if got := metric(t, s, c.name, c.labels); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
