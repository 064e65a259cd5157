package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/configs"
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
	if limits["session_queue_frames"] != float64(1024) || limits["max_subscriptions"] != float64(32) || limits["blocking_timeout_ms"] != float64(1000) {
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

// TestSessionRequestErrors: every malformed request is an error reply
// (or an error frame without a usable id) and changes nothing; frames
// that are not JSON objects close the session with the protocol's status.
func TestSessionRequestErrors(t *testing.T) {
	s := startServer(t, testConfig, nil)
	c := s.dial(t, nil)
	c.welcome()
	for _, frame := range []string{`{"op":"ping"}`, `{"id":1.5,"op":"ping"}`, `{"id":{},"op":"ping"}`} {
		c.sendRaw(frame)
		if f := c.next(); f["type"] != "error" || f["error"].(map[string]any)["code"] != "INVALID_REQUEST" {
			t.Fatalf("%s: %v", frame, f)
		}
	}
	c.fails("nope", "", "INVALID_REQUEST", `unknown op "nope"`)
	c.sendRaw(`{"id":"x"}`)
	if f := c.next(); f["id"] != "x" || f["ok"] != false {
		t.Fatalf("no op: %v", f)
	}
	c.sendRaw(`{"id":"d","op":"ping","op":"schema"}`)
	if f := c.next(); f["id"] != "d" || f["error"].(map[string]any)["message"] != "the request repeats the key 'op'" {
		t.Fatalf("repeated key: %v", f)
	}
	c.fails("ping2", "", "INVALID_REQUEST", "unknown op")
	c.fails("schema", `"extra":1`, "INVALID_REQUEST", "schema does not take 'extra'")
	c.fails("schema", `"event_type":"nope"`, "UNKNOWN_EVENT_TYPE", "Event type 'nope' not found")
	c.fails("notify", `"event_type":"nope","identifier":{}`, "UNKNOWN_EVENT_TYPE", "unknown event type 'nope'")
	c.fails("notify", `"event_type":"extreme","identifier":{"region":"r"}`, "INVALID_NOTIFICATION_REQUEST", "required field 'anomaly' is missing")
	c.fails("subscribe", `"event_type":"extreme"`, "INVALID_REQUEST", `the request needs a "name"`)
	c.fails("subscribe", `"name":"a","event_type":"extreme","mode":"fast"`, "INVALID_REQUEST", `mode must be "blocking"`)
	c.fails("subscribe", `"name":"a","event_type":"extreme","sample_rate":2`, "INVALID_REQUEST", "sample_rate must be a number between 0 and 1")
	c.fails("subscribe", `"name":"a","event_type":"extreme","identifier":{"anomaly":"x"}`, "INVALID_WATCH_REQUEST", "invalid value for identifier 'anomaly'")
	c.fails("subscribe", `"name":"a","event_type":"extreme","where":"anomaly >"`, "INVALID_WATCH_REQUEST", "where: column 10: expected a field name or a value")
	c.fails("subscribe", `"name":"a","event_type":"extreme","to_id":"3"`, "INVALID_REQUEST", "subscribe does not take 'to_id'")
	c.fails("replay", `"name":"a","event_type":"extreme"`, "INVALID_REPLAY_REQUEST", "Replay endpoint requires either from_id or from_date parameter")
	c.fails("subscribe", `"name":"a","event_type":"extreme","identifier":{"anomaly":1,"regoin":"x"}`, "INVALID_WATCH_REQUEST", "Unknown field 'regoin' provided for watch operation")
	c.fails("replay", `"name":"a","event_type":"extreme","identifier":{"regoin":"x"},"from_id":"0"`, "INVALID_REPLAY_REQUEST", "Unknown field 'regoin' provided for replay operation")
	c.fails("subscribe", `"name":"a","event_type":"extreme","format":"avro"`, "INVALID_WATCH_REQUEST", `format 'avro' is not available: event type 'extreme' has an opaque JSON payload (typed payload views need a payload codec), so its only format is json`)
	c.ok("subscribe", `"name":"a","event_type":"extreme"`)
	c.fails("subscribe", `"name":"a","event_type":"mars","identifier":{"class":"od"}`, "DUPLICATE_NAME", "the session already has a subscription named 'a'")
	c.fails("publish", `"producer":"p","batch":[]`, "UNKNOWN_PRODUCER", "the session has no producer named 'p'")
	c.fails("auth", `"token":"x"`, "INVALID_REQUEST", "auth is allowed once, as the first request")
	c.ok("ping", "")
}

// TestSessionProtocolViolations: a frame that is not a JSON object, a
// binary frame and an oversized frame close the session with 1002, 1003
// and 1009.
func TestSessionProtocolViolations(t *testing.T) {
	s := startServer(t, testConfig, func(cfg *configs.Config) { cfg.Application.MaxBodyBytes = 4096 })
	for _, c := range []struct {
		name   string
		send   func(c *wsClient)
		status websocket.StatusCode
		code   string
	}{
		{"not an object", func(c *wsClient) { c.sendRaw(`[1,2]`) }, websocket.StatusProtocolError, "PROTOCOL_VIOLATION"},
		{"not JSON", func(c *wsClient) { c.sendRaw(`hello`) }, websocket.StatusProtocolError, "PROTOCOL_VIOLATION"},
		{"binary", func(c *wsClient) {
			_ = c.c.Write(context.Background(), websocket.MessageBinary, []byte(`{"id":1,"op":"ping"}`))
		}, websocket.StatusUnsupportedData, "PROTOCOL_VIOLATION"},
		{"too big", func(c *wsClient) { c.sendRaw(`{"id":1,"op":"ping","pad":"` + strings.Repeat("x", 5000) + `"}`) }, websocket.StatusMessageTooBig, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := s.dial(t, nil)
			cl.welcome()
			c.send(cl)
			if c.code != "" {
				if f := cl.next(); f["type"] != "error" || f["error"].(map[string]any)["code"] != c.code {
					t.Fatalf("frame %v", f)
				}
			}
			select {
			case _, ok := <-cl.frames:
				if ok {
					t.Fatal("a frame after the violation")
				}
			case <-time.After(wait):
				t.Fatal("the session did not close")
			}
			if err := <-cl.errs; websocket.CloseStatus(err) != c.status {
				t.Fatalf("close %v, want %d", err, c.status)
			}
		})
	}
}
