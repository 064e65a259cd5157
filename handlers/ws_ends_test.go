package handlers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
)

// TestSessionHistoryLimit: a subscription whose history passes the
// historical cap gets the cap's events, then subscription_ended
// history_limit with the id to resume from.
func TestSessionHistoryLimit(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) { c.WatchEndpoint.MaxHistoricalNotifications = 5 })
	publishN(t, s, 1, 8)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("subscribe", `"name":"h","event_type":"ev","from_id":"1"`)
	got, others := c.collect("h", 5)
	if strings.Join(got, " ") != "ev@1 ev@2 ev@3 ev@4 ev@5" || len(others) != 0 {
		t.Fatalf("history %v (others %v)", got, others)
	}
	end := c.next()
	if end["type"] != "subscription_ended" || end["sub"] != "h" || end["reason"] != "history_limit" || end["resume_from_id"] != "ev@6" {
		t.Fatalf("end %v", end)
	}
	// The name is free again: resuming from the id continues.
	c.ok("replay", `"name":"h","event_type":"ev","from_id":"6"`)
	if got, _ := c.collect("h", 3); strings.Join(got, " ") != "ev@6 ev@7 ev@8" {
		t.Fatalf("resumed %v", got)
	}
}

// TestSessionMaxDuration: connection_max_duration_sec ends a subscription
// (not the session) with max_duration and a resume id.
func TestSessionMaxDuration(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) { c.WatchEndpoint.ConnectionMaxDurationSec = 1 })
	c := s.dial(t, nil)
	c.welcome()
	c.ok("subscribe", `"name":"d","event_type":"ev"`)
	s.notify(t, `{"event_type":"ev","identifier":{"k":"a"}}`)
	if got, _ := c.collect("d", 1); got[0] != "ev@1" {
		t.Fatalf("live %v", got)
	}
	end := c.next()
	if end["type"] != "subscription_ended" || end["reason"] != "max_duration" || end["resume_from_id"] != "ev@2" {
		t.Fatalf("end %v", end)
	}
	c.ok("ping", "")
}

// TestSessionFrameLimits: events frames carry at most max_frame_events
// events and never exceed max_frame_bytes; an event that alone exceeds it
// is replaced by a skipped frame, and the events after it still come.
func TestSessionFrameLimits(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) {
		c.Session.MaxFrameEvents = 3
		c.Session.MaxFrameBytes = 4096
	})
	for i := 1; i <= 7; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"ev","identifier":{"k":"k%d"}}`, i))
	}
	s.notify(t, `{"event_type":"ev","identifier":{"k":"big"},"payload":"`+strings.Repeat("x", 5000)+`"}`)
	s.notify(t, `{"event_type":"ev","identifier":{"k":"after"}}`)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("replay", `"name":"r","event_type":"ev","from_id":"1"`)
	var ids []string
	for {
		f, raw := c.nextRaw()
		if len(raw) > 4096 {
			t.Fatalf("a frame of %d bytes: %.200s", len(raw), raw)
		}
		switch f["type"] {
		case "events":
			n := len(f["events"].([]any))
			if n > 3 {
				t.Fatalf("a frame with %d events", n)
			}
			ids = append(ids, eventIDs(f)...)
		case "skipped":
			if f["reason"] != "too_large" || fmt.Sprint(f["ids"]) != "[ev@8]" {
				t.Fatalf("skipped %v", f)
			}
			ids = append(ids, "skipped:ev@8")
		case "subscription_ended":
			if f["reason"] != "end_of_stream" {
				t.Fatalf("end %v", f)
			}
			if got := strings.Join(ids, " "); got != "ev@1 ev@2 ev@3 ev@4 ev@5 ev@6 ev@7 skipped:ev@8 ev@9" {
				t.Fatalf("replayed %s", got)
			}
			return
		default:
			t.Fatalf("frame %v", f)
		}
	}
}

// TestSessionKeepAlive: the server pings every heartbeat interval; a
// session whose client answers stays open, one whose client has stopped
// reading (and so answers no ping) is dropped after two unanswered pings.
func TestSessionKeepAlive(t *testing.T) {
	s := startServer(t, wsConfig, func(c *configs.Config) { c.WatchEndpoint.SSEHeartbeatIntervalSec = 1 })
	live := s.dial(t, nil)
	live.welcome()
	dead := s.dial(t, nil)
	dead.welcome()
	// The paused client reads the ping reply, then nothing more.
	dead.pause()
	dead.request("ping", "")
	testkit.WaitFor(t, 10*time.Second, "the silent session to be dropped", func() bool { return s.Handlers.Sessions() == 1 })
	// The answering client has answered a ping at least every second
	// meanwhile (three pings are due before the second one is missed).
	live.ok("ping", "")
	if n := s.Handlers.Sessions(); n != 1 {
		t.Fatalf("%d sessions open, want the answering one", n)
	}
	dead.resume()
	if f := dead.next(); f["type"] != "reply" {
		t.Fatalf("the silent client's last frame %v", f)
	}
	select {
	case _, open := <-dead.frames:
		if open {
			t.Fatal("the dropped session sent another frame")
		}
	case <-time.After(wait):
		t.Fatal("the dropped session's connection is still open")
	}
}

// TestSessionWriteTimeout: a frame write that takes longer than the
// stream write timeout (its client stopped reading) closes the session;
// the timers of completed writes leave a reading session alone.
func TestSessionWriteTimeout(t *testing.T) {
	s := start(t, wsConfig, startOptions{edit: queueConfig, engine: func(testing.TB, *configs.Config) engine.Engine {
		return engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 1000, MaxTopics: 1000})
	}, writeTimeout: 300 * time.Millisecond})
	reading := s.dial(t, nil)
	reading.welcome()
	reading.ok("subscribe", `"name":"all","event_type":"ev"`)
	stuck := s.dialSlow(t)
	stuck.welcome()
	stuck.ok("subscribe", `"name":"all","event_type":"ev","mode":"dropping"`)
	stuck.pause()
	n := 0
	testkit.WaitFor(t, 20*time.Second, "the stuck session to be closed", func() bool {
		n++
		publishN(t, s, n, n)
		return s.Handlers.Sessions() == 1
	})
	// The reading session has every event and still answers.
	if ids, others := reading.collect("all", n); len(ids) != n || len(others) != 0 {
		t.Fatalf("reading session: %d of %d events, other frames %v", len(ids), n, others)
	}
	reading.ok("ping", "")
}
