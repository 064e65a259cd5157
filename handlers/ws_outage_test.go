package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	herald "github.com/herald-gateway/herald/server"
)

// TestSessionProducerOutage: a producer on an external nats-server that
// stops. The batch sent into the outage is answered failed (nothing
// stored) or unknown, never completed; the producer is suspended
// (producer_suspended) and refuses batches as not_admitted
// SERVICE_UNAVAILABLE; when the server is back it resumes
// (producer_resumed) and publishes again. What the stream holds at the
// end is exactly what was reported stored, plus for an unknown outcome
// possibly that batch.
func TestSessionProducerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: it stops a nats-server; run without -short, as scripts/test and CI do")
	}
	ns := jetstreamtest.StartServer(t)
	// In the file, so that a reload reads the same backend.
	yaml := strings.Replace(wsConfig, "  kind: in_memory\n", "  kind: jetstream\n  jetstream: {nats_url: '"+ns.URL()+"', timeout_seconds: 1}\n", 1)
	s := start(t, yaml, startOptions{engine: func(_ testing.TB, c *configs.Config) engine.Engine {
		o, err := herald.JetStreamOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		e, err := jetstream.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}})
	c := s.dial(t, nil)
	c.welcome()
	c.ok("open_producer", `"producer":"p","event_type":"ev"`)
	batch := func(from, n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"identifier":{"k":"k%d"},"payload":%d}`, from+i, from+i)
		}
		return `"producer":"p","batch":[` + strings.Join(items, ",") + `]`
	}
	if r := c.ok("publish", batch(1, 3)); fmt.Sprint(r["ids"]) != "[ev@1 ev@2 ev@3]" {
		t.Fatalf("first batch %v", r)
	}

	ns.Stop()
	testkit.WaitFor(t, wait, "/ready 503", func() bool { st, _, _ := get(s.URL + "/ready"); return st == http.StatusServiceUnavailable })
	id := c.request("publish", batch(4, 3))
	var reply map[string]any
	suspended := false
	for reply == nil || !suspended {
		f := c.next()
		switch {
		case f["type"] == "reply" && f["id"] == id:
			reply = f
		case f["type"] == "producer_suspended" && f["producer"] == "p":
			suspended = true
		default:
			t.Fatalf("unexpected frame %v", f)
		}
	}
	outcome := reply["outcome"]
	e, _ := reply["error"].(map[string]any)
	switch {
	case outcome == "failed" && e["code"] == "SERVICE_UNAVAILABLE" && fmt.Sprint(reply["ids"]) == "[]":
	case outcome == "unknown" && e["code"] == "SERVICE_UNAVAILABLE":
	default:
		t.Fatalf("batch into the outage: %v", reply)
	}
	c.fails("publish", batch(7, 1), "SERVICE_UNAVAILABLE", "the notification backend is unavailable; the producer is suspended until it returns")
	// A reload that needs the backend (a new event type's stream) cannot
	// apply now: 503, nothing changed.
	grown := yaml + "  later:\n    topic: {base: later, key_order: [k]}\n    identifier:\n      k: {type: StringHandler, required: false}\n"
	if r := s.reload(t, grown); r.Status != http.StatusServiceUnavailable || r.Body["code"] != "SERVICE_UNAVAILABLE" || r.Header.Get("Retry-After") != "5" {
		t.Fatalf("reload during the outage: %d %s", r.Status, r.Raw)
	}
	if err := os.WriteFile(s.path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}

	ns.Start()
	deadline := time.After(30 * time.Second)
	for resumed := false; !resumed; {
		select {
		case f := <-c.frames:
			<-c.raw
			if f["type"] != "producer_resumed" || f["producer"] != "p" {
				t.Fatalf("unexpected frame %v", f)
			}
			resumed = true
		case <-deadline:
			t.Fatal("no producer_resumed within 30 s of the server's return")
		}
	}
	r := c.ok("publish", batch(8, 2))
	ids := r["ids"].([]any)
	if len(ids) != 2 {
		t.Fatalf("batch after the outage %v", r)
	}
	// The stream holds the first batch, then (only for an unknown
	// outcome, maybe) the batch sent into the outage, then the last one.
	c.ok("replay", `"name":"all","event_type":"ev","identifier":{},"from_id":"1"`)
	got, _ := c.collect("all", 3)
	for {
		f := c.next()
		if f["type"] == "subscription_ended" {
			break
		}
		got = append(got, eventIDs(f)...)
	}
	want := []string{"ev@1", "ev@2", "ev@3", ids[0].(string), ids[1].(string)}
	if outcome == "unknown" && len(got) > 5 && len(got) <= 8 {
		// Some of the unknown batch made it: those are in between.
		want = append(want[:3:3], append(got[3:len(got)-2], want[3:]...)...)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored %v, want %v (outcome %v)", got, want, outcome)
	}
	t.Logf("batch into the outage: %s; stored afterwards: %v", outcome, got)
}
