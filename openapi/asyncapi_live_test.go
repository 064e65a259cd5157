package openapi_test

// This test starts herald as it runs and drives one WebSocket session
// through every frame the server sends without a backend outage, checking
// each frame it sends and receives against asyncapi.json. The frames of
// an outage (producer_suspended, producer_resumed) are checked by the
// handlers tests, whose session client validates every frame it reads.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/openapi"
	"github.com/herald-gateway/herald/openapi/openapitest"
)

// sessionConfig is weatherConfig with authentication on (the event type
// stays public) and no identifier field required to subscribe, with a
// producer credit of 1, a small session queue, a small live queue (a
// BLOCKING subscriber then holds its publishers back at once) and the
// smallest max_frame_bytes, so that every frame can be provoked.
const sessionConfig = `
application: {host: 127.0.0.1, port: 8000, base_url: "http://localhost"}
notification_backend:
  kind: in_memory
  in_memory: {max_history_per_topic: 100000, max_topics: 1000}
watch_endpoint: {replay_batch_delay_ms: 0, stream_send_buffer_bytes: 16384, live_queue_size: 8}
auth: {enabled: true, mode: trusted_proxy, jwt_secret: conformance-secret, admin_roles: {ecmwf: [admin]}}
session: {producer_credit: 1, session_queue_frames: 4, blocking_timeout_ms: 2000, max_frame_bytes: 65536}
notification_schema:
  weather_alert:
    payload: {required: false}
    topic: {base: alert, key_order: [region, severity_level, date, issued_by]}
    identifier:
      region: {type: EnumHandler, required: false, values: [europe, asia, africa, americas, oceania], description: Geographic region.}
      severity_level: {type: IntHandler, required: false, range: [1, 5], description: Alert severity (1 to 5).}
      date: {type: DateHandler, required: false, canonical_format: "%Y%m%d", description: Alert date.}
      issued_by: {type: StringHandler, required: false, max_length: 64, description: Issuing authority identifier.}
`

// asyncClient is a session client that checks every frame against the
// AsyncAPI document.
type asyncClient struct {
	t      *testing.T
	conn   *websocket.Conn
	frames chan asyncFrame
	ctx    context.Context
	nextID int

	mu     sync.Mutex
	gate   chan struct{} // when not nil, the reader waits on it
	seen   map[string]bool
	shapes map[string]bool
	bad    []string
}

// asyncFrame is one received frame, decoded, with its message name.
type asyncFrame struct {
	msg string
	m   map[string]any
}

// dialAsync opens a session with a small receive buffer (so that a
// client that stops reading pushes back on the server at once).
func dialAsync(t *testing.T, base string, header http.Header) *asyncClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	conn, _, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(base, "http")+"/api/v1/session", &websocket.DialOptions{
		Subprotocols: []string{"herald.v1"}, HTTPHeader: header,
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: d.DialContext}},
	})
	if err != nil {
		cancel()
		t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(64 << 20)
	c := &asyncClient{t: t, conn: conn, frames: make(chan asyncFrame, 1<<16), ctx: ctx, seen: map[string]bool{}, shapes: map[string]bool{}}
	go c.read()
	t.Cleanup(func() {
		cancel()
		_ = conn.CloseNow()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, e := range c.bad {
			t.Error(e)
		}
	})
	return c
}

// read reads frames until the connection ends, checking each.
func (c *asyncClient) read() {
	defer close(c.frames)
	for {
		c.mu.Lock()
		g := c.gate
		c.mu.Unlock()
		if g != nil {
			select {
			case <-g:
			case <-c.ctx.Done():
				return
			}
		}
		_, data, err := c.conn.Read(c.ctx)
		if err != nil {
			return
		}
		name, err := servedMessage(openapitest.Receive, data)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		c.mu.Lock()
		if err != nil {
			c.bad = append(c.bad, err.Error())
		} else {
			c.seen[name] = true
			// Log the first frame of every shape: the document's
			// examples come from these.
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			shape := fmt.Sprint(name, keys, m["reason"], m["outcome"], m["phase"], m["error"])
			if sc, ok := m["schema"].(map[string]any); ok {
				shape += fmt.Sprint(len(sc))
			}
			if !c.shapes[shape] && len(data) < 4096 {
				c.shapes[shape] = true
				c.t.Logf("frame %s %s", name, data)
			}
		}
		c.mu.Unlock()
		c.frames <- asyncFrame{name, m}
	}
}

// pause stops reading; resume reads again.
func (c *asyncClient) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gate == nil {
		c.gate = make(chan struct{})
	}
}

func (c *asyncClient) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gate != nil {
		close(c.gate)
		c.gate = nil
	}
}

// write sends one frame; valid says whether the document must describe
// it (a request meant to be well-formed) or must not.
func (c *asyncClient) write(frame string, valid bool) {
	c.t.Helper()
	if _, err := servedMessage(openapitest.Send, []byte(frame)); (err == nil) != valid {
		c.t.Errorf("request %.300s: check %v, want valid %v", frame, err, valid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// request sends a well-formed request (fields: JSON object members) and
// returns its id.
func (c *asyncClient) request(op, fields string) float64 {
	c.t.Helper()
	c.nextID++
	frame := fmt.Sprintf(`{"id":%d,"op":%q`, c.nextID, op)
	if fields != "" {
		frame += "," + fields
	}
	c.write(frame+"}", true)
	return float64(c.nextID)
}

// next returns the next frame.
func (c *asyncClient) next() asyncFrame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatal("the session ended")
		}
		return f
	case <-time.After(20 * time.Second):
		c.t.Fatal("no frame in time")
	}
	return asyncFrame{}
}

// call sends a request and returns its reply and the frames before it.
func (c *asyncClient) call(op, fields string) (map[string]any, []asyncFrame) {
	c.t.Helper()
	id := c.request(op, fields)
	var before []asyncFrame
	for {
		f := c.next()
		if f.m["type"] == "reply" && f.m["id"] == id {
			return f.m, before
		}
		before = append(before, f)
	}
}

// ok sends a request whose reply must succeed; fails, one that must fail
// with code.
func (c *asyncClient) ok(op, fields string) (map[string]any, []asyncFrame) {
	c.t.Helper()
	r, before := c.call(op, fields)
	if r["ok"] != true {
		c.t.Fatalf("%s %s: %v", op, fields, r)
	}
	return r, before
}

func (c *asyncClient) fails(op, fields, code string) map[string]any {
	c.t.Helper()
	r, _ := c.call(op, fields)
	if e, _ := r["error"].(map[string]any); r["ok"] != false || e["code"] != code {
		c.t.Fatalf("%s %s: %v, want %s", op, fields, r, code)
	}
	return r
}

// until reads frames until done says so (or the deadline passes, when
// more is called every quiet 200 ms).
func (c *asyncClient) until(what string, done func(asyncFrame) bool, more func()) {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatalf("the session ended waiting for %s", what)
			}
			if done(f) {
				return
			}
		case <-time.After(200 * time.Millisecond):
			if more != nil {
				more()
			}
		case <-deadline:
			c.t.Fatalf("no %s in time", what)
		}
	}
}

// alert is a weather_alert notify request body.
func alert(region string, severity int, payload string) string {
	return fmt.Sprintf(`{"event_type":"weather_alert","identifier":{"region":%q,"severity_level":%d,"date":"2025-07-06","issued_by":"forecast"},"payload":%s}`, region, severity, payload)
}

// alertMembers is alert's members without the braces, for a request.
func alertMembers(region string, severity int, payload string) string {
	a := alert(region, severity, payload)
	return a[1 : len(a)-1]
}

// defaultLimits are the limits of the session block (and the producer
// defaults and the request size) when the configuration sets none.
var defaultLimits = map[string]any{
	"max_subscriptions": 32.0, "max_producers": 32.0, "max_producer_bytes": 33554432.0, "producer_credit": 16.0,
	"producer_max_batch": 1000.0, "session_queue_frames": 1024.0, "max_frame_events": 256.0, "max_frame_bytes": 4194304.0,
	"blocking_timeout_ms": 1000.0, "max_sessions_per_user": 64.0, "max_request_bytes": 1048576.0,
}

func TestSessionFramesMatchAsyncAPI(t *testing.T) {
	// The welcome of a configuration without a session block lists the
	// defaults.
	d := dialAsync(t, startLive(t, exampleConfig, nil).ts.URL, nil)
	if f := d.next(); f.msg != "welcome" || !reflect.DeepEqual(f.m["limits"], defaultLimits) {
		t.Errorf("welcome with the default limits: %v", f.m)
	}

	h := startLive(t, sessionConfig, nil)
	base := h.ts.URL
	notify := func(body string) {
		t.Helper()
		if r := send(t, base, "POST", "/api/v1/notification", map[string]string{"Content-Type": "application/json"}, []byte(body)); r.status != http.StatusOK {
			t.Fatalf("notify: %d %s", r.status, r.body)
		}
	}
	c := dialAsync(t, base, nil)
	if f := c.next(); f.msg != "welcome" {
		t.Fatalf("first frame %v", f.m)
	}

	// Requests and their replies, ok and refused.
	r, _ := c.ok("auth", `"token":"`+token(map[string]any{"username": "rita", "realm": "ecmwf", "roles": []string{"reader"}, "exp": exp()})+`"`)
	if r["user"] != "rita" {
		t.Fatalf("auth %v", r)
	}
	c.ok("ping", "")
	c.ok("schema", "")
	c.ok("schema", `"event_type":"weather_alert"`)
	c.fails("schema", `"event_type":"nope"`, "UNKNOWN_EVENT_TYPE")
	c.fails("notify", alertMembers("mars", 3, "null"), "INVALID_NOTIFICATION_REQUEST")
	// A request without a usable id: an error frame.
	c.write(`{"op":"ping"}`, false)
	if f := c.next(); f.msg != "error" {
		t.Fatalf("no id: %v", f.m)
	}
	c.ok("notify", alertMembers("europe", 3, `{"headline":"Severe thunderstorms"}`))
	c.ok("notify", alertMembers("asia", 2, "null"))

	// History, history_completed, live; a replay to its end; skipped.
	r, before := c.ok("subscribe", `"name":"alerts","event_type":"weather_alert","identifier":{"region":"europe"},"where":"severity_level >= 3","from_id":"1"`)
	if r["boundary"] != "weather_alert@2" || len(before) != 0 {
		t.Fatalf("subscribe %v (before %v)", r, before)
	}
	phases := []string{}
	c.until("history_completed", func(f asyncFrame) bool {
		if f.msg == "events" {
			phases = append(phases, f.m["phase"].(string))
		}
		return f.msg == "history_completed"
	}, nil)
	_, before = c.ok("notify", alertMembers("europe", 4, `{"headline":"Flooding","url":"https://example.org/alerts/4712"}`))
	got := len(before) > 0
	if !got {
		c.until("a live events frame", func(f asyncFrame) bool { return f.msg == "events" && f.m["phase"] == "live" }, nil)
	}
	if fmt.Sprint(phases) != "[history]" {
		t.Fatalf("history phases %v", phases)
	}
	notify(alert("europe", 5, `"`+strings.Repeat("x", 70000)+`"`))
	c.until("skipped", func(f asyncFrame) bool { return f.msg == "skipped" }, nil)
	c.ok("replay", `"name":"r1","event_type":"weather_alert","identifier":{"region":{"in":["europe","asia"]}},"from_id":"1","to_id":"2"`)
	c.until("the replay's end", func(f asyncFrame) bool { return f.msg == "subscription_ended" && f.m["reason"] == "end_of_stream" }, nil)
	c.ok("unsubscribe", `"name":"r1"`) // ended by the server: ok without generation
	c.fails("unsubscribe", `"name":"r1"`, "UNKNOWN_SUBSCRIPTION")
	c.ok("unsubscribe", `"name":"alerts"`)

	// Statements.
	c.ok("execute", `"statement":"DESCRIBE EVENT TYPE weather_alert WHERE region IN ('europe', 'asia') AND severity_level >= 3"`)
	c.fails("execute", `"statement":"DESCRIBE EVENT TYPE weather_alert WHERE nope = 1"`, "INVALID_WATCH_REQUEST")
	c.ok("execute", `"statement":"CREATE SUBSCRIPTION s2 TO weather_alert DROPPING WHERE severity_level >= 3;"`)
	c.ok("execute", `"statement":"DELETE SUBSCRIPTION s2"`)

	// A producer: completed, not admitted.
	c.ok("open_producer", `"producer":"p1","event_type":"weather_alert"`)
	c.ok("publish", `"producer":"p1","batch":[{"identifier":{"region":"europe","severity_level":3,"date":"2025-07-06","issued_by":"forecast"},"payload":null},{"identifier":{"region":"asia","severity_level":4,"date":"2025-07-06","issued_by":"forecast"},"payload":{"headline":"Heat"}}]`)
	c.fails("publish", `"producer":"p1","batch":[{"identifier":{"region":"europe","severity_level":3,"date":"2025-07-06","issued_by":"forecast"}},{"identifier":{"region":"europe","severity_level":9,"date":"2025-07-06","issued_by":"forecast"}}]`, "INVALID_NOTIFICATION_REQUEST")

	// dropped: a DROPPING subscription whose client stops reading.
	c.ok("subscribe", `"name":"d","event_type":"weather_alert","identifier":{"region":"africa"},"mode":"dropping"`)
	c.pause()
	pad := `"` + strings.Repeat("x", 1000) + `"`
	for i := range 1500 {
		notify(alert("africa", 1+i%5, pad))
	}
	c.resume()
	c.until("dropped", func(f asyncFrame) bool { return f.msg == "dropped" }, func() { notify(alert("africa", 1, pad)) })
	c.ok("unsubscribe", `"name":"d"`)

	// CREDIT_EXCEEDED and producer_ended: a second batch while the first
	// awaits its outcome, held back by the session's own BLOCKING
	// subscription, which nobody reads.
	c.ok("subscribe", `"name":"hold","event_type":"weather_alert","identifier":{"region":"oceania"}`)
	c.pause()
	items := make([]string, 400)
	for i := range items {
		items[i] = fmt.Sprintf(`{"identifier":{"region":"oceania","severity_level":%d,"date":"2025-07-06","issued_by":"forecast"},"payload":"%s"}`, 1+i%5, strings.Repeat("y", 2000))
	}
	first := c.request("publish", `"producer":"p1","batch":[`+strings.Join(items, ",")+`]`)
	second := c.request("publish", `"producer":"p1","batch":[{"identifier":{"region":"oceania","severity_level":1,"date":"2025-07-06","issued_by":"forecast"}}]`)
	c.resume()
	var gotFirst, gotSecond, ended bool
	c.until("the batches' outcomes and producer_ended", func(f asyncFrame) bool {
		switch {
		case f.m["id"] == first:
			gotFirst = true
		case f.m["id"] == second:
			if e, _ := f.m["error"].(map[string]any); e["code"] != "CREDIT_EXCEEDED" {
				t.Fatalf("second batch %v", f.m)
			}
			gotSecond = true
		case f.msg == "producer_ended":
			ended = true
		}
		return gotFirst && gotSecond && ended
	}, nil)
	c.ok("unsubscribe", `"name":"hold"`)
	c.fails("publish", `"producer":"p1","batch":[{"identifier":{"region":"oceania","severity_level":1,"date":"2025-07-06","issued_by":"forecast"}}]`, "UNKNOWN_PRODUCER")
	c.ok("open_producer", `"producer":"q","event_type":"weather_alert"`)
	c.ok("close_producer", `"producer":"q"`)
	c.ok("ping", "")

	// Every server frame of the document was seen, but those of an outage.
	c.mu.Lock()
	var seen []string
	for name := range c.seen {
		seen = append(seen, name)
	}
	c.mu.Unlock()
	want := []string{"welcome", "reply_ok", "reply_error", "events", "history_completed", "dropped", "skipped", "subscription_ended", "producer_ended", "error"}
	sort.Strings(seen)
	sort.Strings(want)
	if !slices.Equal(seen, want) {
		t.Errorf("message names seen\n %q\nwant the document's receive messages but producer_suspended and producer_resumed\n %q", seen, want)
	}
	// batch frames come only for typed event types (TestBatchContainersSession
	// in package handlers checks them against the document).
	all := append(slices.Clone(want), "producer_suspended", "producer_resumed", "batch")
	sort.Strings(all)
	if doc := receiveMessageNames(t); !slices.Equal(doc, all) {
		t.Errorf("the document's receive messages %q, want %q", doc, all)
	}
}

// receiveMessageNames lists the names of the messages of the document's
// receive operation, sorted.
func receiveMessageNames(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Operations map[string]struct {
			Messages []struct {
				Ref string `json:"$ref"`
			} `json:"messages"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(openapi.AsyncAPISpec(), &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range doc.Operations[openapitest.Receive].Messages {
		names = append(names, strings.TrimPrefix(m.Ref, "#/channels/session/messages/"))
	}
	sort.Strings(names)
	return names
}

// servedDoc is the AsyncAPI document herald serves, decoded once.
var servedDoc = sync.OnceValues(func() (*openapitest.SessionDoc, error) {
	return openapitest.ParseSessionDoc(openapi.AsyncAPISpec())
})

// servedMessage names the message of the served document a frame is.
func servedMessage(direction string, frame []byte) (string, error) {
	sd, err := servedDoc()
	if err != nil {
		return "", err
	}
	return sd.Message(direction, frame)
}
