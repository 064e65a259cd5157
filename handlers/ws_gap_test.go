package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	herald "github.com/herald-gateway/herald/server"
)

// startOnJetStream starts herald on an embedded JetStream engine, with
// history paged two records at a time 300 ms apart, and returns a
// JetStream client of the same server, to do to the stream what the
// backend might (here: lose it).
func startOnJetStream(t *testing.T) (*server, natsjs.JetStream) {
	t.Helper()
	var eng *jetstream.Engine
	s := start(t, wsConfig, startOptions{edit: func(c *configs.Config) {
		c.WatchEndpoint.ReplayBatchSize = 2
		c.WatchEndpoint.ReplayBatchDelayMs = 300
	}, engine: func(_ testing.TB, c *configs.Config) engine.Engine {
		o, err := herald.JetStreamOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		eng = jetstreamtest.Open(t, o.Streams, nil)
		return eng
	}})
	nc, err := nats.Connect("", nats.InProcessServer(eng.Server()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"ev","identifier":{"k":"a"},"payload":%d}`, i))
	}
	return s, js
}

// TestSessionGap: the backend loses notifications it cannot recover
// (here the stream is deleted and created again behind herald's back):
// over a real WebSocket, a live subscription ends with reason gap and
// the next id it needs, and a subscription whose history read fails
// part-way ends with reason gap and the id after the last one it got,
// with no history_completed.
func TestSessionGap(t *testing.T) {
	s, js := startOnJetStream(t)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("subscribe", `"name":"live","event_type":"ev"`)
	c.ok("subscribe", `"name":"hist","event_type":"ev","from_id":"1"`)
	f := c.next()
	if f["type"] != "events" || f["sub"] != "hist" {
		t.Fatalf("first frame %v", f)
	}
	got := eventIDs(f)
	if err := js.DeleteStream(context.Background(), "EV"); err != nil {
		t.Fatal(err)
	}
	s.notify(t, `{"event_type":"ev","identifier":{"k":"b"}}`) // creates the stream again
	ends := map[string]map[string]any{}
	deadline := time.After(wait)
	for len(ends) < 2 {
		select {
		case f := <-c.frames:
			<-c.raw
			switch {
			case f["type"] == "events" && f["sub"] == "hist" && len(ends) == 0:
				got = append(got, eventIDs(f)...)
			case f["type"] == "subscription_ended":
				ends[f["sub"].(string)] = f
			default:
				t.Fatalf("frame %v (ends so far %v)", f, ends)
			}
		case <-deadline:
			t.Fatalf("ends %v, history %v", ends, got)
		}
	}
	var want []string
	for i := 1; i <= len(got); i++ {
		want = append(want, fmt.Sprintf("ev@%d", i))
	}
	if len(got) == 0 || len(got) >= 10 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("history before the failure %v, want ev@1 on, not all ten", got)
	}
	// The deleted stream fails the next history page, unless the live
	// feed the subscription joined for its live part notices the loss
	// during the pause between pages: either ends it with gap at the id
	// after the last it got, each with its own message.
	if e := ends["hist"]; e["reason"] != "gap" || e["resume_from_id"] != fmt.Sprintf("ev@%d", len(got)+1) ||
		(e["message"] != "fetching stored notifications failed" && e["message"] != "the live feed lost its connection to the backend") {
		t.Fatalf("history end %v", e)
	}
	if e := ends["live"]; e["reason"] != "gap" || e["resume_from_id"] != "ev@11" {
		t.Fatalf("live end %v", e)
	}
}

// TestReplayHistoryFailsPartWay: an SSE replay whose history read fails
// part-way delivers what it read, then says the stream failed, and never
// sends replay_completed (which would tell the client it has everything).
func TestReplayHistoryFailsPartWay(t *testing.T) {
	s, js := startOnJetStream(t)
	st := s.open(t, "/api/v1/replay", `{"event_type":"ev","identifier":{},"from_id":"1"}`)
	if ev := st.skipBeats(wait); ev.Name != "replay-control" || ev.Data["type"] != "replay_started" {
		t.Fatalf("first event %s %s", ev.Name, ev.Raw)
	}
	if ev := st.skipBeats(wait); ev.Name != "replay" || ev.Data["id"] != "ev@1" {
		t.Fatalf("second event %s %s", ev.Name, ev.Raw)
	}
	if err := js.DeleteStream(context.Background(), "EV"); err != nil {
		t.Fatal(err)
	}
	evs := st.all(wait)
	n := names(evs)
	i := 0
	for ; i < len(n) && n[i] == fmt.Sprintf("replay:ev@%d", i+2); i++ {
	}
	if i >= 9 || strings.Join(n[i:], " ") != "error connection-closing:end_of_stream" {
		t.Fatalf("after ev@1: %v", n)
	}
	if e := evs[i].Data; e["error"] != "stream_processing_failed" {
		t.Fatalf("error event %s", evs[i].Raw)
	}
}
