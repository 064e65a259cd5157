package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
)

// readReplies reads frames until the replies to n requests arrived and
// returns them by id with their arrival order; any other frame fails.
func (w *wsClient) readReplies(n int) (replies map[float64]map[string]any, order map[float64]int) {
	w.t.Helper()
	replies, order = map[float64]map[string]any{}, map[float64]int{}
	for len(replies) < n {
		f := w.next()
		id, ok := f["id"].(float64)
		if f["type"] != "reply" || !ok {
			w.t.Fatalf("after %d replies: a frame that is not a reply: %v", len(replies), f)
		}
		if _, dup := replies[id]; dup {
			w.t.Fatalf("two replies to request %v", id)
		}
		order[id] = len(replies)
		replies[id] = f
	}
	return replies, order
}

// TestSessionUnsubscribePipelined: an unsubscribe sent right behind the
// subscribe of the same name, without waiting for its reply, is answered
// after it and stops what it opened (per subscription name, a request is
// handled after every earlier request that names it); nothing leaks, so
// the session's max_subscriptions places are all free afterwards. The
// statements that name a subscription (CREATE and DELETE SUBSCRIPTION)
// count as naming it.
func TestSessionUnsubscribePipelined(t *testing.T) {
	s := startServer(t, wsConfig, nil)
	c := s.dial(t, nil)
	limit := int(c.welcome()["limits"].(map[string]any)["max_subscriptions"].(float64))
	const pairs = 200
	type pair struct {
		name       string
		sub, unsub float64
	}
	var ps []pair
	for i := range pairs {
		p := pair{name: fmt.Sprintf("s%d", i)}
		if i%4 == 3 {
			p.sub = c.request("execute", `"statement":"CREATE SUBSCRIPTION `+p.name+` TO ev"`)
		} else {
			p.sub = c.request("subscribe", `"name":"`+p.name+`","event_type":"ev"`)
		}
		p.unsub = c.request("unsubscribe", `"name":"`+p.name+`"`)
		ps = append(ps, p)
	}
	// One name, reused: each request waits for the one before it.
	reuse := []float64{
		c.request("subscribe", `"name":"r","event_type":"ev"`),
		c.request("unsubscribe", `"name":"r"`),
		c.request("execute", `"statement":"CREATE SUBSCRIPTION r TO ev"`),
		c.request("unsubscribe", `"name":"r"`),
		c.request("unsubscribe", `"name":"r"`),
	}
	replies, order := c.readReplies(2*pairs + len(reuse))
	for _, p := range ps {
		sr, ur := replies[p.sub], replies[p.unsub]
		if sr["ok"] != true || sr["name"] != p.name {
			t.Fatalf("%s: subscribe %v", p.name, sr)
		}
		if ur["ok"] != true || ur["generation"] != sr["generation"] || order[p.unsub] < order[p.sub] {
			t.Fatalf("%s: subscribe (reply %d) %v, then unsubscribe (reply %d) %v", p.name, order[p.sub], sr, order[p.unsub], ur)
		}
	}
	for i := 1; i < len(reuse); i++ {
		if order[reuse[i]] < order[reuse[i-1]] {
			t.Fatalf("reused name: request %d answered before request %d", i, i-1)
		}
	}
	r := func(i int) map[string]any { return replies[reuse[i]] }
	if r(0)["ok"] != true || r(1)["ok"] != true || r(1)["generation"] != r(0)["generation"] ||
		r(2)["ok"] != true || r(3)["ok"] != true || r(3)["generation"] != r(2)["generation"] {
		t.Fatalf("reused name: %v %v %v %v", r(0), r(1), r(2), r(3))
	}
	if e, _ := r(4)["error"].(map[string]any); r(4)["ok"] != false || e["code"] != "UNKNOWN_SUBSCRIPTION" {
		t.Fatalf("reused name, third unsubscribe: %v", r(4))
	}
	testkit.WaitFor(t, wait, "every unsubscribed stream to stop", func() bool { return s.Handlers.SessionSubscriptions() == 0 })
	// Nothing leaked: every place is free, and nothing is delivered.
	for i := range limit {
		c.ok("subscribe", fmt.Sprintf(`"name":"full%d","event_type":"ev"`, i))
	}
	c.fails("subscribe", `"name":"one-more","event_type":"ev"`, "LIMIT_EXCEEDED", fmt.Sprintf("max_subscriptions (%d)", limit))
}

// holdPublishes opens a BLOCKING subscription on ev from a client that
// then reads nothing, so that a large publish waits for it (up to
// blocking_timeout_ms); resume lets it read again.
func holdPublishes(t *testing.T, s *server) (resume func()) {
	t.Helper()
	slow := s.dialSlow(t)
	slow.welcome()
	slow.ok("subscribe", `"name":"hold","event_type":"ev"`)
	slow.pause()
	return slow.resume
}

// bigBatch is a batch of n notifications of ev with 2,000-byte payloads.
func bigBatch(n int) string {
	pad := strings.Repeat("x", 2000)
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"identifier":{"k":"k%d"},"payload":"%s"}`, i, pad)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// TestSessionProducerRefusalsInOrder: a batch refused at once (its
// validation failed) is still answered after the batches sent before
// it, which the backend is storing: terminal replies come in the order
// the batches were sent.
func TestSessionProducerRefusalsInOrder(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) {
		c.Session.BlockingTimeoutMs = 1000
		c.WatchEndpoint.LiveQueueSize = 8
		c.Session.QueueFrames = 2
	})
	c := s.dial(t, nil)
	c.welcome()
	c.ok("open_producer", `"producer":"p","event_type":"ev"`)
	resume := holdPublishes(t, s)
	first := c.request("publish", `"producer":"p","batch":`+bigBatch(200))
	second := c.request("publish", `"producer":"p","batch":[{"identifier":{"nope":"x"}}]`)
	f := c.next()
	if f["id"] != first || f["outcome"] != "completed" {
		t.Fatalf("the first reply is not the first batch's outcome: %v", f)
	}
	if f = c.next(); f["id"] != second || f["outcome"] != "not_admitted" {
		t.Fatalf("second %v", f)
	}
	resume()
}
