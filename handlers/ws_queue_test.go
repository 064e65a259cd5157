package handlers_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
)

// wsConfig adds to testConfig an event type without a historical cap.
const wsConfig = testConfig + `  ev:
    topic: {base: ev, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`

// queueConfig makes the session queue small and BLOCKING quick to give up.
func queueConfig(c *configs.Config) {
	c.Session.QueueFrames = 4
	c.Session.BlockingTimeoutMs = 300
	c.WatchEndpoint.StreamSendBufferBytes = 16 << 10
}

// publishN notifies n extreme notifications of region r with a padded
// payload, from a few goroutines in order per goroutine.
func publishN(t *testing.T, s *server, from, to int) {
	t.Helper()
	pad := strings.Repeat("x", 1000)
	for i := from; i <= to; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"ev","identifier":{"k":"k%d"},"payload":"%s"}`, i%10, pad))
	}
}

// seqOf returns the sequence of an id "ev@N".
func seqOf(t *testing.T, id string) int {
	t.Helper()
	_, n, _ := strings.Cut(id, "@")
	v, err := strconv.Atoi(n)
	if err != nil {
		t.Fatalf("id %q", id)
	}
	return v
}

// TestSessionDroppingCountsExact: a DROPPING subscription of a client
// that reads nothing discards and counts; every notification is either
// delivered (once, in order) or counted, exactly.
func TestSessionDroppingCountsExact(t *testing.T) {
	s := startServer(t, wsConfig, withMetrics(t, queueConfig))
	c := s.dialSlow(t)
	c.welcome()
	c.ok("subscribe", `"name":"d","event_type":"ev","mode":"dropping"`)
	c.pause()
	const n = 1500
	publishN(t, s, 1, n)
	c.resume()
	// A count is reported before the subscription's next events frame:
	// while the accounting is short, publish one more (the client has
	// caught up when one goes through).
	published := n
	var ids []int
	dropped := 0
	deadline := time.After(30 * time.Second)
	for len(ids)+dropped < published {
		select {
		case f := <-c.frames:
			<-c.raw
			switch f["type"] {
			case "events":
				for _, id := range eventIDs(f) {
					ids = append(ids, seqOf(t, id))
				}
			case "dropped":
				if f["sub"] != "d" || f["gen"] != float64(1) {
					t.Fatalf("dropped frame %v", f)
				}
				dropped += int(f["count"].(float64))
			default:
				t.Fatalf("unexpected frame %v", f)
			}
		case <-time.After(200 * time.Millisecond):
			published++
			publishN(t, s, published, published)
		case <-deadline:
			t.Fatalf("%d delivered + %d dropped of %d published", len(ids), dropped, published)
		}
	}
	if dropped == 0 {
		t.Fatal("nothing was dropped: the client was never behind")
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("delivered out of order or twice: %v", ids[max(0, i-3):i+1])
		}
	}
	if ids[len(ids)-1] != published {
		t.Fatalf("last delivered %d, want %d", ids[len(ids)-1], published)
	}
	if got := metric(t, s, "herald_session_subscription_dropped_rows_total", ""); got != float64(dropped) {
		t.Fatalf("herald_session_subscription_dropped_rows_total %v, the client was told of %d", got, dropped)
	}
	// Handed to the session: delivered, or dropped by its queue (not by
	// the subscription's own live queue).
	if got, want := metric(t, s, "herald_live_deliveries_total", "transport=websocket"), len(ids)+int(s.Handlers.SessionDropped()); got != float64(want) {
		t.Fatalf("herald_live_deliveries_total{websocket} %v, want %d delivered + %d dropped by the session queue", got, len(ids), s.Handlers.SessionDropped())
	}
	t.Logf("%d delivered, %d dropped", len(ids), dropped)
}

// TestSessionBlockingOverflow: a BLOCKING subscription of a client that
// reads nothing ends with overflow after blocking_timeout_ms, whether the
// session queue is full by frames (session_queue_frames) or by bytes
// (session_queue_bytes); resuming from its resume id loses nothing.
func TestSessionBlockingOverflow(t *testing.T) {
	t.Run("frames", func(t *testing.T) { blockingOverflow(t, queueConfig) })
	t.Run("bytes", func(t *testing.T) {
		blockingOverflow(t, func(c *configs.Config) {
			queueConfig(c)
			// The default frame bound, which 1000 padded notifications
			// are within: 16 KiB of frames fill the queue first.
			c.Session.QueueFrames = configs.DefaultSessionQueueFrames
			c.Session.QueueBytes = 16 << 10
		})
	})
}

// blockingOverflow is TestSessionBlockingOverflow with the session queue
// that edit configures.
func blockingOverflow(t *testing.T, edit func(*configs.Config)) {
	s := startServer(t, wsConfig, withMetrics(t, edit))
	c := s.dialSlow(t)
	c.welcome()
	c.ok("subscribe", `"name":"b","event_type":"ev"`)
	c.pause()
	const n = 1000
	publishN(t, s, 1, n)
	// The subscription ends once the queue stayed full for
	// blocking_timeout_ms; only then does the client read again.
	testkit.WaitFor(t, wait, "the blocked subscription to end", func() bool { return s.Handlers.SessionSubscriptions() == 0 })
	c.resume()
	var got []int
	var end map[string]any
	for end == nil {
		f := c.next()
		switch f["type"] {
		case "events":
			for _, id := range eventIDs(f) {
				got = append(got, seqOf(t, id))
			}
		case "subscription_ended":
			end = f
		default:
			t.Fatalf("unexpected frame %v", f)
		}
	}
	if end["reason"] != "overflow" || end["sub"] != "b" || end["gen"] != float64(1) {
		t.Fatalf("end %v", end)
	}
	if got := metric(t, s, "herald_stream_ends_total", "reason=overflow,transport=websocket"); got != 1 {
		t.Fatalf("herald_stream_ends_total{overflow,websocket} %v, want 1", got)
	}
	resume := seqOf(t, end["resume_from_id"].(string))
	for i, seq := range got {
		if seq != i+1 {
			t.Fatalf("delivered %v…, not 1..%d in order", got[:min(len(got), i+3)], len(got))
		}
	}
	if resume != len(got)+1 {
		t.Fatalf("resume_from_id %d after %d delivered", resume, len(got))
	}
	// The client resubscribes from the resume id: exactly the rest. The
	// replay is BLOCKING too: when the test's reader stalls past
	// blocking_timeout_ms (heavy CPU load), it ends with overflow as
	// well, and the client goes on from that resume id, which must be
	// the next sequence it lacks.
	next := resume
	for part := 2; ; part++ {
		if part > 50 {
			t.Fatalf("the replay from %d overflowed %d times", resume, part-2)
		}
		name := fmt.Sprintf("b%d", part)
		c.ok("replay", fmt.Sprintf(`"name":%q,"event_type":"ev","from_id":"%d"`, name, next))
		var end map[string]any
		for end == nil {
			f := c.next()
			switch {
			case f["type"] == "events" && f["sub"] == name:
				for _, id := range eventIDs(f) {
					if seqOf(t, id) != next {
						t.Fatalf("replay %s: %s, want ev@%d", name, id, next)
					}
					next++
				}
			case f["type"] == "subscription_ended" && f["sub"] == name:
				end = f
			default:
				t.Fatalf("replay %s: other frame %v", name, f)
			}
		}
		if end["reason"] == "end_of_stream" {
			break
		}
		if end["reason"] != "overflow" {
			t.Fatalf("replay end %v", end)
		}
		if r := seqOf(t, end["resume_from_id"].(string)); r != next {
			t.Fatalf("replay %s overflowed with resume_from_id %d after ev@%d", name, r, next-1)
		}
		t.Logf("replay %s overflowed at %d (the reader stalled); going on from there", name, next)
	}
	if next != n+1 {
		t.Fatalf("replay from %d ended after ev@%d, want ev@%d", resume, next-1, n)
	}
}

// TestSessionBlockingPauseWithinQueueBytes: a BLOCKING subscriber that
// stops reading during a burst of small notifications (a frame each),
// for longer than
// blocking_timeout_ms, is not ended while its backlog stays within
// session_queue_bytes, however many frames that is: when it reads again
// it gets every notification, in order, and no overflow. With the queue
// bounded by 16 frames instead (the former default), or by 16 KiB, the
// same burst and pause end it with overflow and a resume_from_id that
// loses nothing.
func TestSessionBlockingPauseWithinQueueBytes(t *testing.T) {
	const (
		n        = 400 // notifications of ~500-byte frames: ~200 KB, well under 1 MiB
		blocking = 200 * time.Millisecond
	)
	pad := strings.Repeat("x", 300)
	burst := func(t *testing.T, queueFrames, queueBytes int) (*server, *wsClient) {
		s := startServer(t, wsConfig, withMetrics(t, func(c *configs.Config) {
			c.Session.BlockingTimeoutMs = int(blocking / time.Millisecond)
			c.Session.QueueFrames = queueFrames
			c.Session.QueueBytes = queueBytes
			// Small socket buffers, so that the backlog is in the queue.
			c.WatchEndpoint.StreamSendBufferBytes = 16 << 10
		}))
		c := s.dialSlow(t)
		c.welcome()
		c.ok("subscribe", `"name":"b","event_type":"ev"`)
		c.pause()
		// Each notification is handed to the session before the next is
		// published (or the subscription has ended), so that each goes
		// out in a frame of its own, as at a low rate.
		for i := 1; i <= n; i++ {
			s.notify(t, fmt.Sprintf(`{"event_type":"ev","identifier":{"k":"k%d"},"payload":"%s"}`, i, pad))
			testkit.WaitFor(t, wait, fmt.Sprintf("notification %d handed to the session", i), func() bool {
				return metric(t, s, "herald_live_deliveries_total", "transport=websocket") >= float64(i) || s.Handlers.SessionSubscriptions() == 0
			})
		}
		return s, c
	}

	t.Run("defaults", func(t *testing.T) {
		s, c := burst(t, configs.DefaultSessionQueueFrames, configs.DefaultSessionQueueBytes)
		// Every notification was handed to the session; from then on the
		// client reads nothing for twice blocking_timeout_ms.
		testkit.WaitFor(t, wait, "the burst handed to the session", func() bool {
			return metric(t, s, "herald_live_deliveries_total", "transport=websocket") == n
		})
		time.Sleep(2 * blocking) // the client's pause itself: a deliberate wait
		if got := s.Handlers.SessionSubscriptions(); got != 1 {
			t.Fatalf("%d subscriptions after the pause, want the paused one", got)
		}
		c.resume()
		ids, others := c.collect("b", n)
		if len(others) != 0 {
			t.Fatalf("frames other than events: %v", others)
		}
		for i, id := range ids {
			if id != fmt.Sprintf("ev@%d", i+1) {
				t.Fatalf("event %d is %s, want ev@%d", i+1, id, i+1)
			}
		}
		if got := s.Handlers.SessionSubscriptions(); got != 1 {
			t.Fatalf("%d subscriptions after the backlog was read, want 1", got)
		}
		if got := metric(t, s, "herald_stream_ends_total", "reason=overflow,transport=websocket"); got != 0 {
			t.Fatalf("herald_stream_ends_total{overflow,websocket} %v, want 0", got)
		}
	})

	// The same burst overflows a queue of 16 frames, or of 16 KiB.
	overflows := func(t *testing.T, queueFrames, queueBytes int) {
		s, c := burst(t, queueFrames, queueBytes)
		testkit.WaitFor(t, wait, "the blocked subscription to end", func() bool { return s.Handlers.SessionSubscriptions() == 0 })
		c.resume()
		next := 1
		for {
			f := c.next()
			if f["type"] == "events" {
				for _, id := range eventIDs(f) {
					if seqOf(t, id) != next {
						t.Fatalf("%s, want ev@%d", id, next)
					}
					next++
				}
				continue
			}
			if f["type"] != "subscription_ended" || f["reason"] != "overflow" || f["resume_from_id"] != fmt.Sprintf("ev@%d", next) {
				t.Fatalf("after ev@%d: %v, want subscription_ended overflow resuming from ev@%d", next-1, f, next)
			}
			break
		}
		if next > n {
			t.Fatalf("all %d events were delivered before the overflow", n)
		}
	}
	t.Run("16 frames", func(t *testing.T) { overflows(t, 16, configs.DefaultSessionQueueBytes) })
	t.Run("16 KiB", func(t *testing.T) { overflows(t, configs.DefaultSessionQueueFrames, 16<<10) })
}

// TestSessionReplyAheadOfQueuedEvents: a reply is written ahead of the
// events frames queued for a client that stopped reading.
func TestSessionReplyAheadOfQueuedEvents(t *testing.T) {
	s := startServer(t, wsConfig, queueConfig)
	c := s.dialSlow(t)
	c.welcome()
	c.ok("subscribe", `"name":"d","event_type":"ev","mode":"dropping"`)
	c.pause()
	publishN(t, s, 1, 500)
	// More notifications until some are dropped: the session queue is
	// then full and stays full while the client reads nothing.
	next := 501
	dropMore := func() {
		dropped := s.Handlers.SessionDropped()
		for ; s.Handlers.SessionDropped() == dropped; next++ {
			publishN(t, s, next, next)
		}
	}
	dropMore()
	// A request whose effect shows when the server has run it: a notify
	// through the session. Its reply then waits while the queue is full;
	// the client resumes only once the reply is queued (counted on the
	// control lane), or it could drain the queue before the reply exists.
	before, _ := s.Engine.LastSeq(context.Background(), "ev")
	ctrl := s.Handlers.SessionControlFrames()
	id := c.request("notify", `"event_type":"ev","identifier":{"k":"marker"}`)
	testkit.WaitFor(t, wait, "the session's notify stored and its reply queued", func() bool {
		last, _ := s.Engine.LastSeq(context.Background(), "ev")
		return last > before && s.Handlers.SessionControlFrames() > ctrl
	})
	// Drops again after it: the queue is still full.
	dropMore()
	c.resume()
	after := 0
	seen := false
	var trace []string
	for !seen || after == 0 {
		var f map[string]any
		select {
		case f = <-c.frames:
			<-c.raw
		case <-time.After(wait):
			t.Fatalf("reply seen %v, %d events frames after it; frames %v", seen, after, trace)
		}
		trace = append(trace, fmt.Sprint(f["type"], len(eventIDs(f))))
		switch {
		case f["type"] == "reply" && f["id"] == id:
			seen = true
		case seen && f["type"] == "events":
			after++
		}
	}
}

// TestSessionUnsubscribeDiscardsQueued: unsubscribe stops a subscription
// at once even while its client reads nothing; nothing about that
// generation follows the reply, and a new generation of the name starts
// clean.
func TestSessionUnsubscribeDiscardsQueued(t *testing.T) {
	s := startServer(t, wsConfig, queueConfig)
	c := s.dialSlow(t)
	c.welcome()
	c.ok("subscribe", `"name":"d","event_type":"ev","mode":"dropping"`)
	c.pause()
	publishN(t, s, 1, 500)
	unsub := c.request("unsubscribe", `"name":"d"`)
	resub := c.request("subscribe", `"name":"d","event_type":"ev","mode":"dropping"`)
	c.resume()
	var replied, reopened bool
	for !reopened {
		f := c.next()
		switch {
		case f["type"] == "reply" && f["id"] == unsub:
			if f["ok"] != true || f["generation"] != float64(1) {
				t.Fatalf("unsubscribe %v", f)
			}
			replied = true
		case f["type"] == "reply" && f["id"] == resub:
			if !replied || f["generation"] != float64(2) {
				t.Fatalf("resubscribe %v (unsubscribed %v)", f, replied)
			}
			reopened = true
		case replied && f["gen"] == float64(1):
			t.Fatalf("a frame of generation 1 after its unsubscribe reply: %v", f)
		}
	}
	publishN(t, s, 501, 501)
	ids, others := c.collect("d", 1)
	if ids[0] != "ev@501" || len(others) != 0 {
		t.Fatalf("new generation got %v %v", ids, others)
	}
}

// TestSessionHistoryToLive: a subscription with a cursor gets history,
// history_completed, then live, with nothing missed or repeated while
// notifications keep coming.
func TestSessionHistoryToLive(t *testing.T) {
	s := startServer(t, wsConfig, nil)
	publishN(t, s, 1, 50)
	c := s.dial(t, nil)
	c.welcome()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); publishN(t, s, 51, 100) }()
	r := c.ok("subscribe", `"name":"h","event_type":"ev","from_id":"1"`)
	boundary := seqOf(t, r["boundary"].(string))
	wg.Wait()
	var got []int
	phase := "history"
	// When the publisher finished before the subscription joined, the
	// whole range is history and history_completed comes last.
	for len(got) < 100 || phase != "live" {
		f := c.next()
		switch f["type"] {
		case "events":
			if f["phase"] != phase {
				t.Fatalf("phase %v while in %s (at %d)", f["phase"], phase, len(got))
			}
			for _, id := range eventIDs(f) {
				got = append(got, seqOf(t, id))
			}
		case "history_completed":
			if phase != "history" || len(got) != boundary || f["last_id"] != r["boundary"] {
				t.Fatalf("history_completed %v after %d (boundary %d)", f, len(got), boundary)
			}
			phase = "live"
		default:
			t.Fatalf("unexpected frame %v", f)
		}
	}
	for i, seq := range got {
		if seq != i+1 {
			t.Fatalf("got %v", got)
		}
	}
}
