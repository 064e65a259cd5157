package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/session"

	"github.com/coder/websocket"
)

// TestSessionExecute: CREATE SUBSCRIPTION, DESCRIBE EVENT TYPE and DELETE
// SUBSCRIPTION statements, and their errors with line and column.
func TestSessionExecute(t *testing.T) {
	s := startServer(t, wsConfig, nil)
	c := s.dial(t, nil)
	c.welcome()
	r := c.ok("execute", `"statement":"create subscription s1 TO ev DROPPING WHERE k = 'a' OR k = 'b';"`)
	if r["name"] != "s1" || r["generation"] != float64(1) {
		t.Fatalf("create %v", r)
	}
	for _, k := range []string{"a", "c", "b"} {
		s.notify(t, `{"event_type":"ev","identifier":{"k":"`+k+`"}}`)
	}
	if ids, _ := c.collect("s1", 2); strings.Join(ids, " ") != "ev@1 ev@3" {
		t.Fatalf("where: %v", ids)
	}
	d := c.ok("execute", `"statement":"DESCRIBE EVENT TYPE ev WHERE k IN ('x', 'y')"`)
	if d["where"] != "(identifier.k IN ('x', 'y'))" || d["event_type"] != "ev" {
		t.Fatalf("describe %v", d)
	}
	c.ok("execute", `"statement":"DELETE SUBSCRIPTION s1"`)
	for _, e := range []struct{ stmt, code, msg string }{
		{"SELECT 1", "INVALID_REQUEST", "execute: line 1 column 1: expected CREATE SUBSCRIPTION, DELETE SUBSCRIPTION or DESCRIBE EVENT TYPE, found 'SELECT'"},
		{"CREATE SUBSCRIPTION s2 FOR ev", "INVALID_REQUEST", "execute: line 1 column 24: expected TO, found 'FOR'"},
		{"CREATE SUBSCRIPTION s2 TO ev BATCH SAMPLE RATE 2", "INVALID_REQUEST", "execute: line 1 column 48: BATCH SAMPLE RATE must be a number between 0 and 1, found '2'"},
		{"CREATE SUBSCRIPTION s2 TO ev\\nWHERE k = ", "INVALID_WATCH_REQUEST", "execute: line 2 column 10: WHERE: expected a field name or a value, found end of the predicate"},
		{"DESCRIBE EVENT TYPE ev WHERE nope = 1", "INVALID_WATCH_REQUEST", "execute: line 1 column 30: WHERE: unknown field 'nope' for event type 'ev'"},
		{"DELETE SUBSCRIPTION s1; DELETE SUBSCRIPTION s2", "INVALID_REQUEST", "execute: line 1 column 25: unexpected \"DELETE SUBSCRIPTION \" after the end of the statement"},
		{"DELETE SUBSCRIPTION nope", "UNKNOWN_SUBSCRIPTION", "the session has no subscription named 'nope'"},
		{"DESCRIBE EVENT TYPE nope", "UNKNOWN_EVENT_TYPE", "Event type 'nope' not found"},
	} {
		c.fails("execute", `"statement":"`+e.stmt+`"`, e.code, e.msg)
	}
}

// TestSessionWhereAndSample: a seeded sample rate keeps exactly the
// notifications the same pseudo-random source keeps.
func TestSessionWhereAndSample(t *testing.T) {
	s := startServer(t, wsConfig, nil)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("subscribe", `"name":"w","event_type":"ev","where":"k >= 'k5'","sample_rate":0.5,"sample_seed":42`)
	rng := session.NewSampleSource(42)
	var want []string
	for i := 1; i <= 200; i++ {
		k := fmt.Sprintf("k%d", i%10)
		s.notify(t, `{"event_type":"ev","identifier":{"k":"`+k+`"}}`)
		if k >= "k5" && rng.Float64() < 0.5 {
			want = append(want, fmt.Sprintf("ev@%d", i))
		}
	}
	got, _ := c.collect("w", len(want))
	// Nothing more: a marker notification the predicate refuses, and a
	// ping whose reply comes after anything still queued.
	s.notify(t, `{"event_type":"ev","identifier":{"k":"a"}}`)
	if _, before := c.replyAmid("ping", ""); len(before) != 0 {
		t.Fatalf("more than the sample: %v", before)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("sampled %d: %v\nwant %d: %v", len(got), got, len(want), want)
	}
}

// TestSessionProducers: credit, whole-batch validation, completed ids in
// order, CREDIT_EXCEEDED ending the producer, close_producer.
func TestSessionProducers(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) {
		c.Session.ProducerCredit = 1
		c.Session.BlockingTimeoutMs = 2000
		// Small queues, so that the subscriber below holds the publisher.
		c.WatchEndpoint.LiveQueueSize = 8
		c.Session.QueueFrames = 2
	})
	c := s.dial(t, nil)
	c.welcome()
	r := c.ok("open_producer", `"producer":"p","event_type":"ev"`)
	if r["credit"] != float64(1) || r["max_batch"] != float64(1000) {
		t.Fatalf("open %v", r)
	}
	c.fails("open_producer", `"producer":"p","event_type":"ev"`, "DUPLICATE_NAME", "the session already has a producer named 'p'")
	done := c.ok("publish", `"producer":"p","batch":[{"identifier":{"k":"a"},"payload":1},{"identifier":{"k":"b"}}]`)
	if done["outcome"] != "completed" || fmt.Sprint(done["ids"]) != "[ev@1 ev@2]" {
		t.Fatalf("completed %v", done)
	}
	bad := c.fails("publish", `"producer":"p","batch":[{"identifier":{"k":"c"}},{"identifier":{"nope":"x"}},{"payload":1,"extra":2}]`,
		"INVALID_NOTIFICATION_REQUEST", "2 of the batch's notifications are invalid; nothing was stored")
	if bad["outcome"] != "not_admitted" || fmt.Sprint(bad["errors"]) != "[map[code:INVALID_NOTIFICATION_REQUEST index:1 message:Unknown field 'nope' provided for notify operation] map[code:INVALID_REQUEST index:2 message:unknown key 'extra': an element has identifier and payload]]" {
		t.Fatalf("not admitted %v", bad)
	}
	if r := s.do(t, http.MethodPost, "/api/v1/replay", `{"event_type":"ev","identifier":{},"from_id":"3"}`); strings.Contains(r.Raw, "ev@3") {
		t.Fatal("a refused batch stored something")
	}
	// A second batch while the first awaits its outcome exceeds the
	// credit of 1: a BLOCKING subscription of a client that reads nothing
	// holds the first batch's publish for up to blocking_timeout_ms.
	slow := s.dialSlow(t)
	slow.welcome()
	slow.ok("subscribe", `"name":"hold","event_type":"ev"`)
	slow.pause()
	pad := strings.Repeat("x", 2000)
	var batch []string
	for i := range 200 {
		batch = append(batch, fmt.Sprintf(`{"identifier":{"k":"k%d"},"payload":"%s"}`, i, pad))
	}
	first := c.request("publish", `"producer":"p","batch":[`+strings.Join(batch, ",")+`]`)
	second := c.request("publish", `"producer":"p","batch":[{"identifier":{"k":"z"}}]`)
	third := c.request("publish", `"producer":"p","batch":[{"identifier":{"k":"z"}}]`)
	// Terminal replies come in the order the batches were sent, and
	// producer_ended is the last frame about the producer: the first
	// batch's outcome (once the subscriber reads again), the refusal of
	// the second, the third's (sent before the client could read that
	// the producer ended), then producer_ended. The first batch's
	// outcome comes once the subscriber has held its publish for
	// blocking_timeout_ms.
	var got []string
	for len(got) < 4 {
		f := c.next()
		switch {
		case f["id"] == first:
			if f["outcome"] != "completed" {
				t.Fatalf("first %v", f)
			}
			got = append(got, "first")
		case f["id"] == second:
			if f["error"].(map[string]any)["code"] != "CREDIT_EXCEEDED" {
				t.Fatalf("second %v", f)
			}
			got = append(got, "second")
		case f["id"] == third:
			if e := f["error"].(map[string]any); e["code"] != "UNKNOWN_PRODUCER" || e["message"] != "producer 'p' has ended (protocol_violation); nothing was stored" {
				t.Fatalf("third %v", f)
			}
			got = append(got, "third")
		case f["type"] == "producer_ended":
			if f["producer"] != "p" || f["reason"] != "protocol_violation" {
				t.Fatalf("ended %v", f)
			}
			got = append(got, "ended")
		default:
			t.Fatalf("frame %v", f)
		}
	}
	if strings.Join(got, " ") != "first second third ended" {
		t.Fatalf("order %v, want the batches' order, then producer_ended", got)
	}
	slow.resume()
	c.fails("publish", `"producer":"p","batch":[{"identifier":{"k":"z"}}]`, "UNKNOWN_PRODUCER", "the session has no producer named 'p'")
	c.ok("open_producer", `"producer":"q","event_type":"ev"`)
	c.ok("close_producer", `"producer":"q"`)
	c.fails("close_producer", `"producer":"q"`, "UNKNOWN_PRODUCER", "")
}

// TestSessionLimits: max_subscriptions and max_producers are enforced
// and named.
func TestSessionLimits(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) { c.Session.MaxSubscriptions = 2; c.Session.MaxProducers = 1 })
	c := s.dial(t, nil)
	w := c.welcome()
	if w["limits"].(map[string]any)["max_subscriptions"] != float64(2) {
		t.Fatalf("welcome %v", w)
	}
	c.ok("subscribe", `"name":"a","event_type":"ev"`)
	c.ok("subscribe", `"name":"b","event_type":"ev"`)
	c.fails("subscribe", `"name":"c","event_type":"ev"`, "LIMIT_EXCEEDED", "max_subscriptions (2)")
	c.ok("unsubscribe", `"name":"a"`)
	testkit.WaitFor(t, wait, "the unsubscribed stream to stop", func() bool { return s.Handlers.SessionSubscriptions() == 1 })
	c.ok("subscribe", `"name":"c","event_type":"ev"`)
	c.ok("open_producer", `"producer":"p","event_type":"ev"`)
	c.fails("open_producer", `"producer":"q","event_type":"ev"`, "LIMIT_EXCEEDED", "max_producers (1)")
}

// TestSessionReloadAndShutdown: a reload ends the subscriptions of a
// changed event type (schema_changed with a resume id) and of a removed
// one; a shutdown ends the others with server_shutdown and closes with
// 1001.
func TestSessionReloadAndShutdown(t *testing.T) {
	s := startServer(t, reloadBase, nil)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("subscribe", `"name":"st","event_type":"steady"`)
	c.ok("subscribe", `"name":"sh","event_type":"shifting"`)
	c.ok("subscribe", `"name":"do","event_type":"doomed"`)
	// The event of sh may come before the notify's reply; it is received
	// before the reload, so that sh resumes after it.
	r, before := c.replyAmid("notify", `"event_type":"shifting","identifier":{"k":"a"}`)
	if r["ok"] != true {
		t.Fatalf("notify %v", r)
	}
	if len(before) == 0 {
		if got, _ := c.collect("sh", 1); got[0] != "shifting@1" {
			t.Fatalf("sh got %v", got)
		}
	}
	next := strings.Replace(reloadBase, "  doomed:\n    topic: {base: doomed, key_order: [k]}\n    identifier:\n      k: {type: StringHandler, required: false}\n", "", 1)
	next = strings.Replace(next, "topic: {base: shifting, key_order: [k]}", "topic: {base: shifting2, key_order: [k]}", 1)
	if r := s.reload(t, next); r.Status != http.StatusOK {
		t.Fatalf("reload %d %s", r.Status, r.Raw)
	}
	ends := map[string]map[string]any{}
	for len(ends) < 2 {
		f := c.next()
		if f["type"] == "subscription_ended" {
			ends[f["sub"].(string)] = f
		}
	}
	if e := ends["sh"]; e["reason"] != "schema_changed" || e["resume_from_id"] != "shifting@2" {
		t.Fatalf("changed %v", e)
	}
	if e := ends["do"]; e["reason"] != "schema_removed" {
		t.Fatalf("removed %v", e)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.Server.Drain(nil, wait) }()
	f := c.next()
	if f["type"] != "subscription_ended" || f["sub"] != "st" || f["reason"] != "server_shutdown" || f["resume_from_id"] != "steady@1" {
		t.Fatalf("shutdown %v", f)
	}
	if _, ok := <-c.frames; ok {
		t.Fatal("a frame after the last end")
	}
	if err := <-c.errs; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("close %v", err)
	}
	wg.Wait()
}
