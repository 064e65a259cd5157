package handlers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	herald "github.com/herald-gateway/herald/server"
)

// outageLog forwards log lines at info level and above to t.Log while
// the test runs (the engine's reconnection lines are the test's story).
type outageLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *outageLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// get returns the status and body of a GET.
func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// outagePublisher notifies mars notifications with unique identifiers
// (stream "s<i>", class od or rd in turn) until stopped, and records
// which were acknowledged and when notify first answered 200 after a
// given moment.
type outagePublisher struct {
	url  string
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	acked    map[string]bool // stream identifier → acknowledged
	statuses map[int]int     // status → count
	other    []string        // unexpected answers
	since    time.Time       // firstOK is the first 200 sent after since
	firstOK  time.Time
	// okSince counts the 200 answers to notifies sent after since.
	okSince int
}

func startOutagePublisher(url string) *outagePublisher {
	p := &outagePublisher{url: url, stop: make(chan struct{}), done: make(chan struct{}), acked: map[string]bool{}, statuses: map[int]int{}}
	go p.run()
	return p
}

func (p *outagePublisher) run() {
	defer close(p.done)
	tick := time.NewTicker(20 * time.Millisecond) // the publishing rate, not a wait
	defer tick.Stop()
	client := &http.Client{Timeout: time.Minute}
	for i := 0; ; i++ {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		key := "s" + strconv.Itoa(i)
		class := [2]string{"od", "rd"}[i%2]
		body := fmt.Sprintf(`{"event_type":"mars","identifier":{"class":%q,"expver":"1","domain":"g","date":"20250706","time":"0","stream":%q,"step":1}}`, class, key)
		sent := time.Now()
		status, raw := 0, ""
		resp, err := client.Post(p.url+"/api/v1/notification", "application/json", strings.NewReader(body))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			status, raw = resp.StatusCode, string(b)
		} else {
			raw = err.Error()
		}
		p.mu.Lock()
		p.statuses[status]++
		switch status {
		case http.StatusOK:
			p.acked[key] = true
			if !p.since.IsZero() && !sent.Before(p.since) {
				p.okSince++
				if p.firstOK.IsZero() {
					p.firstOK = time.Now()
				}
			}
		case http.StatusServiceUnavailable:
		default:
			if len(p.other) < 5 {
				p.other = append(p.other, fmt.Sprintf("%d %s", status, raw))
			}
		}
		p.mu.Unlock()
	}
}

// mark starts counting the 200 answers to notifies sent from now.
func (p *outagePublisher) mark(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.since, p.firstOK, p.okSince = at, time.Time{}, 0
}

// ok returns the time of the first 200 since mark and how many followed.
func (p *outagePublisher) ok() (time.Time, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstOK, p.okSince
}

// ackedCount returns the number of acknowledged notifies.
func (p *outagePublisher) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// halt stops the publisher and waits for its last notify.
func (p *outagePublisher) halt() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// collect reads a watch stream until it has delivered the CloudEvents
// with ids want (in that order, once each), following a
// connection-closing with resume_from_id by watching again from there. It
// returns the ids received and the number of resumptions.
func collect(t *testing.T, s *server, body string, st *eventStream, want []string, timeout time.Duration) ([]string, int) {
	t.Helper()
	var got []string
	resumed := 0
	deadline := time.Now().Add(timeout)
	for len(got) < len(want) {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("watch %s: %d of %d notifications before the deadline", body, len(got), len(want))
		}
		ev := st.next(left)
		switch {
		case ev.Data["specversion"] != nil:
			got = append(got, ev.Data["id"].(string))
		case ev.Name == "connection-closing":
			from, ok := ev.Data["resume_from_id"].(string)
			if !ok {
				t.Fatalf("watch %s ended without resume_from_id: %s", body, ev.Raw)
			}
			t.Logf("watch %s ended (%s); resuming from %s", body, ev.Raw, from)
			resumed++
			st = s.open(t, "/api/v1/watch", strings.TrimSuffix(body, "}")+`,"from_id":"`+from+`"}`)
		}
	}
	return got, resumed
}

// TestOutage runs herald over HTTP on an external nats-server (in
// process, on a loopback port, with its own store) with bounded
// reconnection bursts (max_reconnect_attempts 5, aviso-server 0.7's
// default, and reconnect_delay_ms 2000: a burst of about 10 s, so that
// the burst ends during the outage; the default is now unlimited, with
// no burst to end), stops the server for 30 s under a
// publisher and two watchers, and starts it again on the same port and
// store. While it is down, /ready is 503 and /health 200 with
// "backend":"unavailable", and the engine re-dials once the burst is
// over; after it is back, notify answers 200 within 5 s, every
// acknowledged notification is stored, and each watcher receives exactly
// the stored notifications that match it, in order, once each (resuming
// from resume_from_id if its stream was ended).
func TestOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: it stops a nats-server for 30 s; run without -short, as scripts/test and CI do")
	}
	const (
		outage  = 30 * time.Second
		backIn  = 5 * time.Second
		timeout = time.Minute
	)
	ns := jetstreamtest.StartServer(t)
	lw := &outageLog{t: t}
	t.Cleanup(func() {
		lw.mu.Lock()
		lw.done = true
		lw.mu.Unlock()
	})
	s := start(t, testConfig, startOptions{edit: func(c *configs.Config) {
		js := &c.NotificationBackend.JetStream
		c.NotificationBackend.Kind = configs.BackendJetStream
		js.NatsURL = ns.URL()
		js.EnableAutoReconnect = true
		js.MaxReconnectAttempts = 5
		js.ReconnectDelayMs = 2000
	}, engine: func(_ testing.TB, c *configs.Config) engine.Engine {
		o, err := herald.JetStreamOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		o.Logger = slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelInfo}))
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		e, err := jetstream.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}})
	watches := map[string]string{
		"od": `{"event_type":"mars","identifier":{"class":"od"}}`,
		"rd": `{"event_type":"mars","identifier":{"class":"rd"}}`,
	}
	streams := map[string]*eventStream{}
	for class, body := range watches {
		st := s.open(t, "/api/v1/watch", body)
		if ev := st.next(wait); ev.Data["type"] != "connection_established" {
			t.Fatalf("watch %s: first event %s", class, ev.Raw)
		}
		streams[class] = st
	}

	pub := startOutagePublisher(s.URL)
	defer pub.halt()
	testkit.WaitFor(t, timeout, "50 acknowledged notifies", func() bool { return pub.ackedCount() >= 50 })

	ns.Stop()
	down := time.Now()
	testkit.WaitFor(t, timeout, "/ready 503 and /health 200 backend unavailable", func() bool {
		rs, _, _ := get(s.URL + "/ready")
		hs, hb, _ := get(s.URL + "/health")
		return rs == http.StatusServiceUnavailable && hs == http.StatusOK && hb == "{\"backend\":\"unavailable\",\"status\":\"ok\"}\n"
	})
	// The client library's burst is over once the engine re-dials.
	// /ready answers aviso's two fields only; the engine itself says
	// why it is not ready.
	rd := s.Engine.(interface{ Ready(context.Context) error })
	testkit.WaitFor(t, timeout, "the engine to re-dial after the reconnection burst", func() bool {
		err := rd.Ready(context.Background())
		return err != nil && strings.Contains(err.Error(), "re-dialling")
	})
	if rs, rb, _ := get(s.URL + "/ready"); rs != http.StatusServiceUnavailable || rb != "{\"status\":\"not_ready\",\"backend_connected\":false}\n" {
		t.Errorf("/ready while re-dialling: %d %q", rs, rb)
	}
	burstOver := time.Since(down)
	if hs, hb, _ := get(s.URL + "/health"); hs != http.StatusOK || hb != "{\"backend\":\"unavailable\",\"status\":\"ok\"}\n" {
		t.Errorf("/health while re-dialling: %d %s", hs, hb)
	}
	time.Sleep(time.Until(down.Add(outage))) // the outage itself: a deliberate wait
	ns.Start()
	up := time.Now()
	pub.mark(up)
	testkit.WaitFor(t, backIn, "notify to answer 200 after the server is back", func() bool {
		first, _ := pub.ok()
		return !first.IsZero()
	})
	first, _ := pub.ok()
	testkit.WaitFor(t, timeout, "50 more acknowledged notifies", func() bool { _, n := pub.ok(); return n >= 50 })
	pub.halt()
	// Notifies go over the engine's pool of publish connections, which
	// reconnect on their own; the engine's main connection (health,
	// history, the live feeds) re-dials at its own pace, up to its
	// max_delay (3 s here) after the server is back.
	testkit.WaitFor(t, timeout, "/health and /ready to report the backend back", func() bool {
		hs, hb, _ := get(s.URL + "/health")
		rs, rb, _ := get(s.URL + "/ready")
		return hs == http.StatusOK && hb == "{\"backend\":\"ok\",\"status\":\"ok\"}\n" &&
			rs == http.StatusOK && rb == "{\"status\":\"ready\",\"backend_connected\":true}\n"
	})

	// What is stored: sequences 1..N, nothing acknowledged missing.
	h, err := s.Engine.History(context.Background(), engine.Query{Stream: "mars"}, engine.Range{ToSeq: ^uint64(0)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var recs []*engine.Record
	for {
		page, done, err := h.Next(context.Background(), 500)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, page...)
		if done {
			break
		}
	}
	stored := map[string]bool{}
	wantIDs := map[string][]string{}
	for i, r := range recs {
		if r.Seq != uint64(i+1) {
			t.Fatalf("stored sequence %d at position %d: the stream is not dense", r.Seq, i)
		}
		stored[r.Tokens[6]] = true
		wantIDs[r.Tokens[1]] = append(wantIDs[r.Tokens[1]], "mars@"+strconv.FormatUint(r.Seq, 10))
	}
	pub.mu.Lock()
	lost := 0
	for key := range pub.acked {
		if !stored[key] {
			lost++
		}
	}
	acked, statuses, other := len(pub.acked), fmt.Sprint(pub.statuses), slices.Clone(pub.other)
	pub.mu.Unlock()
	if lost != 0 {
		t.Errorf("%d acknowledged notifications are not stored", lost)
	}
	if len(other) > 0 {
		t.Errorf("notify answered other than 200 or 503: %v", other)
	}
	for class, body := range watches {
		got, resumed := collect(t, s, body, streams[class], wantIDs[class], timeout)
		if !slices.Equal(got, wantIDs[class]) {
			t.Errorf("watch %s: got %d notifications, want %d: %v", class, len(got), len(wantIDs[class]), firstDifference(got, wantIDs[class]))
		}
		t.Logf("watch %s: %d notifications, exactly the stored ones in order, %d resumption(s)", class, len(got), resumed)
	}
	t.Logf("outage %s (reconnection burst over after %s); first notify 200 %s after the server was back; %d acknowledged, %d stored, lost %d; notify statuses %s",
		up.Sub(down).Round(time.Millisecond), burstOver.Round(time.Millisecond), first.Sub(up).Round(time.Millisecond), acked, len(recs), lost, statuses)
}

// firstDifference describes where two id lists differ.
func firstDifference(got, want []string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("first difference at %d: got %v, want %v", i, got[i:min(i+3, len(got))], want[i:min(i+3, len(want))])
}

// TestOutageUnrecoverableFailsHealth: when the engine reports a state it
// cannot leave by itself (its embedded nats-server has stopped), /health
// answers 503 so that an orchestrator restarts herald, and /ready 503.
func TestOutageUnrecoverableFailsHealth(t *testing.T) {
	var eng *jetstream.Engine
	s := start(t, testConfig, startOptions{engine: func(_ testing.TB, c *configs.Config) engine.Engine {
		o, err := herald.JetStreamOptions(c)
		if err != nil {
			t.Fatal(err)
		}
		eng = jetstreamtest.Open(t, o.Streams, nil)
		return eng
	}})
	if hs, hb, _ := get(s.URL + "/health"); hs != http.StatusOK || hb != "{\"backend\":\"ok\",\"status\":\"ok\"}\n" {
		t.Fatalf("/health: %d %q", hs, hb)
	}
	eng.Server().Shutdown()
	eng.Server().WaitForShutdown()
	if hs, hb, _ := get(s.URL + "/health"); hs != http.StatusServiceUnavailable || hb != "{\"backend\":\"failed\",\"status\":\"unhealthy\"}\n" {
		t.Errorf("/health with the embedded server stopped: %d %q", hs, hb)
	}
	if rs, rb, _ := get(s.URL + "/ready"); rs != http.StatusServiceUnavailable {
		t.Errorf("/ready with the embedded server stopped: %d %s", rs, rb)
	}
}
