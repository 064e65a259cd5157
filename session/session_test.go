package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/session"
	"github.com/herald-gateway/herald/stream"
)

// These tests drive sessions through a fake transport: the protocol
// without the WebSocket framing, which package handlers' end-to-end tests
// cover over real connections.

// wait bounds every wait for a frame or a close.
const wait = 10 * time.Second

// sessionConfig has one event type with an optional field.
const sessionConfig = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  ev:
    topic: {base: ev, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`

// fakeTransport records what a session writes and how it closes it.
type fakeTransport struct {
	frames chan string              // every frame written, in order
	closed chan session.CloseReason // the close, once
	mu     sync.Mutex
	broken bool // every write fails
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{frames: make(chan string, 1024), closed: make(chan session.CloseReason, 1)}
}

// Write implements session.Transport.
func (f *fakeTransport) Write(frame []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken {
		return errors.New("the connection is broken")
	}
	f.frames <- string(frame)
	return nil
}

// Close implements session.Transport.
func (f *fakeTransport) Close(r session.CloseReason) error {
	f.closed <- r
	return nil
}

// breakConn makes every write from now on fail.
func (f *fakeTransport) breakConn() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broken = true
}

// harness is what sessions need of a server: an in-memory engine, the
// settings of sessionConfig, a stream set, counters.
type harness struct {
	t        *testing.T
	eng      engine.Engine
	set      *session.Settings
	streams  stream.Set
	counters session.Counters
	deps     session.Deps
}

// now is the harness's clock.
var now = time.Date(2025, 6, 9, 13, 15, 0, 0, time.UTC)

func newHarness(t *testing.T, edit func(*session.Settings)) *harness {
	t.Helper()
	cfg, err := configs.Parse([]byte(sessionConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := notification.NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, eng: engine.NewMemory(engine.MemoryOptions{})}
	t.Cleanup(func() { _ = h.eng.Close() })
	h.set = &session.Settings{Registry: reg, Streams: stream.Limits{PageSize: 10, QueueSize: 100}, Limits: session.Limits{}.WithDefaults(), MaxRequestBytes: 4096}
	if edit != nil {
		edit(h.set)
	}
	h.deps = session.Deps{Engine: h.eng, Settings: func() *session.Settings { return h.set }, Streams: &h.streams, Counters: &h.counters,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: func() time.Time { return now }, Version: "test"}
	return h
}

// client is one session and its fake transport.
type client struct {
	t   *testing.T
	s   *session.Session
	tr  *fakeTransport
	end chan struct{} // closed once End returned
}

// open starts a session of the identity in ctx and reads its welcome.
func (h *harness) open(ctx context.Context, c session.Client) (*client, map[string]any) {
	h.t.Helper()
	tr := newFakeTransport()
	s := session.New(ctx, &h.deps, tr, c)
	s.Start()
	cl := &client{t: h.t, s: s, tr: tr, end: make(chan struct{})}
	return cl, cl.next()
}

// next returns the next frame written.
func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case f := <-c.tr.frames:
		var m map[string]any
		if err := json.Unmarshal([]byte(f), &m); err != nil {
			c.t.Fatalf("frame %q: %v", f, err)
		}
		return m
	case <-time.After(wait):
		c.t.Fatal("no frame")
		return nil
	}
}

// nextRaw returns the next frame written, as written.
func (c *client) nextRaw() string {
	c.t.Helper()
	select {
	case f := <-c.tr.frames:
		return f
	case <-time.After(wait):
		c.t.Fatal("no frame")
		return ""
	}
}

// send hands the session one text frame; it reports whether the session
// reads on.
func (c *client) send(frame string) bool { return c.s.Receive([]byte(frame), false) }

// endWith ends the session as a transport whose reading stopped with why,
// in the background.
func (c *client) endWith(why session.CloseReason) {
	go func() {
		defer close(c.end)
		c.s.End(why)
	}()
}

// closed returns how the session closed its transport, once End returned.
func (c *client) closed() session.CloseReason {
	c.t.Helper()
	select {
	case r := <-c.tr.closed:
		select {
		case <-c.end:
		case <-time.After(wait):
			c.t.Fatal("End did not return")
		}
		return r
	case <-time.After(wait):
		c.t.Fatal("the transport was not closed")
		return session.CloseReason{}
	}
}

// TestWelcomeAndPing: the welcome names the session, the protocol, the
// server and the limits in force; a ping is answered with the time.
func TestWelcomeAndPing(t *testing.T) {
	h := newHarness(t, nil)
	c, w := h.open(context.Background(), session.Client{RequestID: "r1"})
	limits, _ := w["limits"].(map[string]any)
	if w["type"] != "welcome" || w["session_id"] != c.s.ID() || w["protocol"] != session.Subprotocol || w["server"] != "herald test" ||
		limits["max_subscriptions"] != float64(session.DefaultMaxSubscriptions) || limits["max_request_bytes"] != float64(4096) ||
		limits["blocking_timeout_ms"] != float64(session.DefaultBlockingTimeout.Milliseconds()) || len(limits) != 11 {
		t.Fatalf("welcome %v", w)
	}
	if !c.send(`{"id":1,"op":"ping"}`) {
		t.Fatal("the session ended on a ping")
	}
	if f := c.nextRaw(); f != `{"type":"reply","id":1,"ok":true,"time":"2025-06-09T13:15:00Z"}` {
		t.Fatalf("ping reply %s", f)
	}
	if h.counters.Open() != 1 {
		t.Fatalf("%d sessions open", h.counters.Open())
	}
	c.endWith(session.CloseNormal)
	if r := c.closed(); r != session.CloseNormal {
		t.Fatalf("closed with %v", r)
	}
	if h.counters.Open() != 0 {
		t.Fatalf("%d sessions open after the end", h.counters.Open())
	}
}

// TestCloseReasons: each way a session ends closes its transport with
// its declared reason, after the frames that explain it.
func TestCloseReasons(t *testing.T) {
	cases := []struct {
		name  string
		do    func(h *harness, c *client) // what ends the session
		frame string                      // the last frame before the close ("": none)
		want  session.CloseReason
	}{
		{"client closed", func(_ *harness, c *client) { c.endWith(session.CloseNormal) }, "", session.CloseNormal},
		{"client's own status echoed", func(_ *harness, c *client) { c.endWith(session.CloseEcho(4001)) }, "", session.CloseReason{Status: 4001}},
		{"frame too big", func(_ *harness, c *client) { c.endWith(session.CloseFrameTooBig(4096)) }, "",
			session.CloseReason{Status: 1009, Text: "frame larger than 4096 bytes"}},
		{"unmasked frame", func(_ *harness, c *client) { c.endWith(session.CloseUnmaskedFrame) }, "", session.CloseUnmaskedFrame},
		{"binary frame", func(_ *harness, c *client) {
			if c.s.Receive([]byte{1, 2}, true) {
				c.t.Fatal("the session reads on after a binary frame")
			}
			c.endWith(session.CloseNormal)
		}, `{"error":{"code":"PROTOCOL_VIOLATION","message":"binary frames are not part of the protocol: send one JSON object per text frame"},"type":"error"}`,
			session.CloseBinaryFrame},
		{"not JSON", func(_ *harness, c *client) {
			if c.send(`hello`) {
				c.t.Fatal("the session reads on after a frame that is not JSON")
			}
			c.endWith(session.CloseNormal)
		}, `{"error":{"code":"PROTOCOL_VIOLATION","message":"a frame must be one JSON object (a request {\"id\": …, \"op\": …})"},"type":"error"}`,
			session.CloseNotJSON},
		{"ping timeout", func(_ *harness, c *client) {
			c.s.Disconnect(session.ClosePingTimeout)
			c.endWith(session.CloseNormal)
		}, "", session.ClosePingTimeout},
		{"shutdown", func(h *harness, c *client) {
			h.streams.EndAll(&stream.Stop{Reason: stream.Shutdown})
			c.endWith(session.CloseNormal)
		}, "", session.CloseShutdown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			c, _ := h.open(context.Background(), session.Client{})
			c.t = t
			tc.do(h, c)
			if r := c.closed(); r != tc.want {
				t.Fatalf("closed with %+v, want %+v", r, tc.want)
			}
			if tc.frame != "" {
				if f := c.nextRaw(); f != tc.frame {
					t.Fatalf("last frame %s\nwant %s", f, tc.frame)
				}
			}
			select {
			case f := <-c.tr.frames:
				t.Fatalf("frame %s after the end", f)
			default:
			}
		})
	}
}

// TestSubscribeNotifyUnsubscribe: a subscription is opened, receives a
// notification the session itself stored, and is unsubscribed; a
// shutdown ends the next one with server_shutdown before the close.
func TestSubscribeNotifyUnsubscribe(t *testing.T) {
	h := newHarness(t, nil)
	c, _ := h.open(context.Background(), session.Client{})
	c.send(`{"id":"s","op":"subscribe","name":"a","event_type":"ev","identifier":{"k":"x"}}`)
	r := c.next()
	if r["ok"] != true || r["name"] != "a" || r["generation"] != float64(1) || r["topic"] != "ev.x" || r["boundary"] != "ev@0" || r["schema"] == nil {
		t.Fatalf("subscribe reply %v", r)
	}
	c.send(`{"id":2,"op":"notify","event_type":"ev","identifier":{"k":"x"},"payload":{"v":1}}`)
	// The events frame and the notify's reply come in either order.
	var events map[string]any
	for range 2 {
		switch f := c.next(); f["type"] {
		case "reply":
			if f["ok"] != true || f["notification_id"] != "ev@1" {
				t.Fatalf("notify reply %v", f)
			}
		case "events":
			events = f
		default:
			t.Fatalf("frame %v", f)
		}
	}
	evs, _ := events["events"].([]any)
	if events["sub"] != "a" || events["gen"] != float64(1) || events["phase"] != "live" || len(evs) != 1 || evs[0].(map[string]any)["id"] != "ev@1" {
		t.Fatalf("events %v", events)
	}
	if h.counters.Subscriptions() != 1 {
		t.Fatalf("%d subscriptions running", h.counters.Subscriptions())
	}
	c.send(`{"id":3,"op":"unsubscribe","name":"a"}`)
	if f := c.nextRaw(); f != `{"type":"reply","id":3,"ok":true,"generation":1,"name":"a"}` {
		t.Fatalf("unsubscribe reply %s", f)
	}
	c.send(`{"id":4,"op":"subscribe","name":"a","event_type":"ev"}`)
	if r := c.next(); r["ok"] != true || r["generation"] != float64(2) || r["boundary"] != "ev@1" {
		t.Fatalf("second subscribe reply %v", r)
	}
	h.streams.EndAll(&stream.Stop{Reason: stream.Shutdown})
	if f := c.nextRaw(); f != `{"gen":2,"message":"Server is shutting down gracefully","reason":"server_shutdown","resume_from_id":"ev@2","sub":"a","type":"subscription_ended"}` {
		t.Fatalf("shutdown frame %s", f)
	}
	c.endWith(session.CloseNormal)
	if r := c.closed(); r != session.CloseShutdown {
		t.Fatalf("closed with %+v", r)
	}
	if h.counters.Subscriptions() != 0 {
		t.Fatalf("%d subscriptions running after the end", h.counters.Subscriptions())
	}
}

// TestSubscribeRefusals: a subscription is refused with the code and
// message its request earns, in the order stream.Prepare checks (the
// access check before the identifier, the identifier before the format).
func TestSubscribeRefusals(t *testing.T) {
	h := newHarness(t, func(s *session.Settings) {
		s.Policy = auth.Policy{Enabled: true, Streams: map[string]*auth.StreamRules{"ev": {Required: true}}}
	})
	c, _ := h.open(context.Background(), session.Client{})
	for _, tc := range []struct{ req, code, msg string }{
		{`"event_type":"nope"`, "UNKNOWN_EVENT_TYPE", ""},
		{`"event_type":"ev","identifier":{"z":"1"},"format":"avro"`, auth.Unauthenticated.Code(), ""},
	} {
		c.send(`{"id":1,"op":"subscribe","name":"a",` + tc.req + `}`)
		r := c.next()
		e, _ := r["error"].(map[string]any)
		if r["ok"] != false || e["code"] != tc.code {
			t.Fatalf("%s: reply %v", tc.req, r)
		}
	}
	h.set = &session.Settings{Registry: h.set.Registry, Limits: h.set.Limits}
	c.send(`{"id":2,"op":"subscribe","name":"a","event_type":"ev","identifier":{"z":"1"},"format":"avro"}`)
	if r := c.next(); r["ok"] != false || r["error"].(map[string]any)["code"] != session.CodeInvalidWatch ||
		!strings.Contains(r["error"].(map[string]any)["message"].(string), "'z'") {
		t.Fatalf("identifier and format wrong: %v", r)
	}
	c.send(`{"id":3,"op":"replay","name":"a","event_type":"ev","format":"avro","from_id":"1"}`)
	if r := c.next(); r["ok"] != false || r["error"].(map[string]any)["code"] != session.CodeInvalidReplay ||
		!strings.Contains(r["error"].(map[string]any)["message"].(string), "format 'avro'") {
		t.Fatalf("format wrong: %v", r)
	}
	c.endWith(session.CloseNormal)
	c.closed()
}

// TestWriteFailureEndsSession: once a write fails the session ends and
// writes nothing more.
func TestWriteFailureEndsSession(t *testing.T) {
	h := newHarness(t, nil)
	c, _ := h.open(context.Background(), session.Client{})
	c.tr.breakConn()
	c.send(`{"id":1,"op":"ping"}`)
	select {
	case <-c.s.Context().Done():
	case <-time.After(wait):
		t.Fatal("the session goes on after a failed write")
	}
	c.endWith(session.CloseNormal)
	c.closed()
	select {
	case f := <-c.tr.frames:
		t.Fatalf("frame %s written after the failure", f)
	default:
	}
}

// TestAuthRequest: an anonymous session authenticates once with its
// first request, within max_sessions_per_user, which counts it.
func TestAuthRequest(t *testing.T) {
	h := newHarness(t, func(s *session.Settings) {
		s.Limits.MaxSessionsPerUser = 1
		s.Authenticate = func(_ context.Context, authorization string) (*auth.Identity, *auth.Error) {
			if authorization != "Bearer good" {
				return nil, &auth.Error{Kind: auth.Unauthenticated, Message: "bad token"}
			}
			return &auth.Identity{Username: "ann", Roles: []string{"r"}}, nil
		}
	})
	// A session whose upgrade carried credentials may not authenticate.
	c, _ := h.open(auth.WithIdentity(context.Background(), &auth.Identity{Username: "bob"}), session.Client{Credentials: true})
	c.send(`{"id":1,"op":"auth","token":"good"}`)
	if r := c.next(); r["ok"] != false || r["error"].(map[string]any)["code"] != "INVALID_REQUEST" {
		t.Fatalf("auth after an authenticated upgrade: %v", r)
	}
	c.endWith(session.CloseNormal)
	c.closed()

	a, _ := h.open(context.Background(), session.Client{})
	a.send(`{"id":1,"op":"auth","token":"good"}`)
	if f := a.nextRaw(); f != `{"type":"reply","id":1,"ok":true,"roles":["r"],"user":"ann"}` {
		t.Fatalf("auth reply %s", f)
	}
	b, _ := h.open(context.Background(), session.Client{})
	b.send(`{"id":1,"op":"auth","token":"good"}`)
	if r := b.next(); r["ok"] != false || r["error"].(map[string]any)["message"] != session.UserLimitMessage("ann", 1) {
		t.Fatalf("auth beyond the limit: %v", r)
	}
	// The first session's end releases its count.
	a.endWith(session.CloseNormal)
	a.closed()
	if release, ok := h.counters.Acquire("ann", 1); !ok {
		t.Fatal("the ended session still counts")
	} else {
		release()
	}
	b.endWith(session.CloseNormal)
	b.closed()
}

// TestIdleSubscriptionHoldsNoGoroutine: once its events are written, a
// live subscription has no goroutine running its stream (stream.Start),
// and the next notification still reaches it.
func TestIdleSubscriptionHoldsNoGoroutine(t *testing.T) {
	h := newHarness(t, nil)
	c, _ := h.open(context.Background(), session.Client{})
	c.send(`{"id":1,"op":"subscribe","name":"a","event_type":"ev"}`)
	if r := c.next(); r["ok"] != true {
		t.Fatalf("subscribe reply %v", r)
	}
	streams := func() int { return testkit.Goroutines("stream.(*runner)") }
	for i := 1; i <= 2; i++ {
		testkit.WaitFor(t, wait, "no goroutine for the idle subscription", func() bool { return streams() == 0 })
		c.send(fmt.Sprintf(`{"id":%d,"op":"notify","event_type":"ev","identifier":{"k":"x"}}`, 1+i))
		got := map[string]bool{}
		for range 2 { // the events frame and the notify's reply, in either order
			f := c.next()
			evs, _ := f["events"].([]any)
			switch {
			case f["type"] == "reply" && f["ok"] == true:
				got["reply"] = true
			case f["type"] == "events" && len(evs) == 1 && evs[0].(map[string]any)["id"] == fmt.Sprintf("ev@%d", i):
				got["events"] = true
			default:
				t.Fatalf("frame %v", f)
			}
		}
		if !got["reply"] || !got["events"] {
			t.Fatalf("frames %v", got)
		}
	}
	c.endWith(session.CloseNormal)
	if r := c.closed(); r != session.CloseNormal {
		t.Fatalf("closed with %+v", r)
	}
}
