package handlers_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestSessionBasics: welcome, ping, schema, notify, a live subscription,
// a replay and unsubscribe over a real WebSocket connection.
func TestSessionBasics(t *testing.T) {
	s := startServer(t, testConfig, nil)
	c := s.dial(t, nil)
	w := c.welcome()
	if w["protocol"] != "herald.v1" || w["server"] != "herald test" {
		t.Fatalf("welcome %v", w)
	}
	limits := w["limits"].(map[string]any)
	if limits["session_queue_frames"] != float64(16) || limits["max_subscriptions"] != float64(32) || limits["blocking_timeout_ms"] != float64(1000) {
		t.Fatalf("limits %v", limits)
	}
	if r := c.ok("ping", ""); r["time"] == nil {
		t.Fatalf("ping %v", r)
	}
	if r := c.ok("schema", `"event_type":"extreme"`); r["schema"].(map[string]any)["event_type"] != "extreme" {
		t.Fatalf("schema %v", r)
	}
	sub := c.ok("subscribe", `"name":"s1","event_type":"extreme","identifier":{"region":"north"}`)
	if sub["name"] != "s1" || sub["generation"] != float64(1) || sub["boundary"] != "extreme@0" || sub["topic"] != "extreme.north.*" {
		t.Fatalf("subscribe reply %v", sub)
	}
	// The events of a notification may arrive before the notify's reply.
	var ids []string
	for i, body := range []string{
		`"event_type":"extreme","identifier":{"region":"north","anomaly":1.5},"payload":{"p":1}`,
		`"event_type":"extreme","identifier":{"region":"south","anomaly":1},"payload":null`,
		`"event_type":"extreme","identifier":{"region":"north","anomaly":2},"payload":null`,
	} {
		r, before := c.replyAmid("notify", body)
		if r["ok"] != true || r["notification_id"] != fmt.Sprintf("extreme@%d", i+1) {
			t.Fatalf("notify %v", r)
		}
		for _, f := range before {
			ids = append(ids, eventIDs(f)...)
		}
	}
	more, others := c.collect("s1", 2-len(ids))
	ids = append(ids, more...)
	if strings.Join(ids, " ") != "extreme@1 extreme@3" || len(others) != 0 {
		t.Fatalf("live ids %v others %v", ids, others)
	}
	r := c.ok("replay", `"name":"r1","event_type":"extreme","identifier":{},"from_id":"0"`)
	if r["generation"] != float64(2) || r["boundary"] != "extreme@3" {
		t.Fatalf("replay reply %v", r)
	}
	ids, others = c.collect("r1", 3)
	if strings.Join(ids, " ") != "extreme@1 extreme@2 extreme@3" {
		t.Fatalf("replay ids %v", ids)
	}
	end := c.next()
	if end["type"] != "subscription_ended" || end["sub"] != "r1" || end["gen"] != float64(2) || end["reason"] != "end_of_stream" || len(others) != 0 {
		t.Fatalf("replay end %v (others %v)", end, others)
	}
	if r := c.ok("unsubscribe", `"name":"s1"`); r["generation"] != float64(1) {
		t.Fatalf("unsubscribe %v", r)
	}
	c.fails("unsubscribe", `"name":"s1"`, "UNKNOWN_SUBSCRIPTION", "the session has no subscription named 's1'")
	c.ok("unsubscribe", `"name":"r1"`) // ended by the server: still answered ok
	if _, before := c.replyAmid("notify", `"event_type":"extreme","identifier":{"region":"north","anomaly":3},"payload":null`); len(before) != 0 {
		t.Fatalf("a frame of the deleted subscription followed its unsubscribe: %v", before)
	}
	c.ok("ping", "")
}
