package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
)

// harness runs publishers and watchers and checks the delivery
// invariant: every acknowledged notification is stored, and every watcher
// receives every stored notification that matches it, exactly once, in
// order.
type harness struct {
	t   *testing.T
	pub *Engine

	mu       sync.Mutex
	acked    []uint64
	failures int
	otherErr error

	watchers []*watcher
	stop     chan struct{} // stops the publishers
	quit     chan struct{} // stops the watchers' readers
	wg       sync.WaitGroup
}

// watcher is one live subscription and what it received.
type watcher struct {
	name string
	q    engine.Query
	sub  *engine.Subscription
	mu   sync.Mutex
	got  []uint64
	done chan struct{}
}

func newHarness(t *testing.T, pub *Engine) *harness {
	h := &harness{t: t, pub: pub, stop: make(chan struct{}), quit: make(chan struct{})}
	t.Cleanup(h.halt)
	t.Cleanup(func() { close(h.quit) })
	return h
}

// watch subscribes q on e and records what arrives.
func (h *harness) watch(e *Engine, name string, q engine.Query) *watcher {
	h.t.Helper()
	sub, err := e.Subscribe(context.Background(), q, engine.SubscribeOptions{QueueSize: 1 << 20})
	if err != nil {
		h.t.Fatalf("Subscribe %s: %v", name, err)
	}
	w := &watcher{name: name, q: q, sub: sub, done: make(chan struct{})}
	h.t.Cleanup(sub.Close)
	go func() {
		defer close(w.done)
		for {
			select {
			case r := <-sub.C():
				w.mu.Lock()
				w.got = append(w.got, r.Seq)
				w.mu.Unlock()
			case <-sub.Done():
				return
			case <-h.quit:
				return
			}
		}
	}()
	h.watchers = append(h.watchers, w)
	return w
}

// received returns what w has received so far.
func (w *watcher) received() []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got)
}

// start runs n publishers until halt.
func (h *harness) start(n int) {
	classes, kinds := []string{"od", "rd"}, []string{"enfo", "oper", "wave"}
	for p := range n {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-h.stop:
					return
				default:
				}
				nt := note("mars", classes[(p+i)%2], kinds[i%3], strconv.Itoa(p)+"-"+strconv.Itoa(i))
				seq, _, err := h.pub.Publish(context.Background(), nt)
				h.mu.Lock()
				switch {
				case err == nil:
					h.acked = append(h.acked, seq)
				case errors.Is(err, engine.ErrUnavailable):
					h.failures++
				default:
					if h.otherErr == nil {
						h.otherErr = err
					}
				}
				h.mu.Unlock()
			}
		}()
	}
}

// halt stops the publishers and watchers.
func (h *harness) halt() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	h.wg.Wait()
}

// ackedCount returns the number of acknowledged publishes.
func (h *harness) ackedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.acked)
}

// waitAcked waits until n more publishes than now are acknowledged.
func (h *harness) waitAcked(n int) {
	h.t.Helper()
	target := h.ackedCount() + n
	testkit.WaitFor(h.t, wait, fmt.Sprintf("%d acknowledged publishes", target), func() bool { return h.ackedCount() >= target })
}

// waitFailure waits until a publish has failed with ErrUnavailable.
func (h *harness) waitFailure() {
	h.t.Helper()
	testkit.WaitFor(h.t, wait, "a publish failing with ErrUnavailable", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.failures > 0
	})
}

// check stops the publishers and verifies the invariant, reading the
// stored notifications through e.
func (h *harness) check(e *Engine) {
	h.t.Helper()
	h.halt()
	h.mu.Lock()
	acked, failures, other := slices.Clone(h.acked), h.failures, h.otherErr
	h.mu.Unlock()
	if other != nil {
		h.t.Errorf("a publish failed with an error other than ErrUnavailable: %v", other)
	}
	stored := seqs(readAll(h.t, e, engine.Query{Stream: "mars"}, everything, 500))
	missing := 0
	for _, s := range acked {
		if _, found := slices.BinarySearch(stored, s); !found {
			missing++
		}
	}
	if missing > 0 {
		h.t.Errorf("%d acknowledged notifications are not stored", missing)
	}
	h.t.Logf("%d acknowledged, %d failed while the server was down, %d stored", len(acked), failures, len(stored))
	for _, w := range h.watchers {
		want := seqs(readAll(h.t, e, w.q, engine.Range{FromSeq: w.sub.Boundary() + 1, ToSeq: ^uint64(0)}, 500))
		deadline := time.Now().Add(wait)
		for len(w.received()) < len(want) && time.Now().Before(deadline) {
			select {
			case <-w.done:
				h.t.Fatalf("watcher %s ended: %v", w.name, w.sub.Err())
			case <-time.After(5 * time.Millisecond): // polling, with a deadline
			}
		}
		got := w.received()
		if !slices.Equal(got, want) {
			h.t.Errorf("watcher %s: received %d notifications, want %d (the stored matches, in order, once each)%s",
				w.name, len(got), len(want), firstDiff(got, want))
		}
		if err := w.sub.Err(); err != nil {
			h.t.Errorf("watcher %s ended with %v", w.name, err)
		}
	}
}

// firstDiff describes where two sequence lists differ.
func firstDiff(got, want []uint64) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("; first difference at %d: got %v, want %v", i, got[i:min(i+5, len(got))], want[i:min(i+5, len(want))])
}

// faultRun publishes and watches through two engines on url, takes the
// server away with down, brings it back with up, and checks the
// invariant.
func faultRun(t *testing.T, url string, down, up func()) {
	faultRunWith(t, url, nil, func(_, _ *Engine) { down() }, up)
}

// faultRunWith is faultRun with the engines' options adjusted by mod and
// down given the two engines.
func faultRunWith(t *testing.T, url string, mod func(*Options), down func(pub, other *Engine), up func()) {
	pub := openURL(t, url, mod)
	other := openURL(t, url, mod)
	h := newHarness(t, pub)
	h.watch(pub, "all on the publishing engine", query("mars", "*", "*", "*"))
	h.watch(other, "all on the other engine", engine.Query{Stream: "mars"})
	h.watch(other, "od", query("mars", "od", "*", "*"))
	h.watch(other, "rd wave", query("mars", "rd", "wave", "*"))
	h.start(3)
	h.waitAcked(60)
	down(pub, other)
	h.waitFailure()
	if err := other.Ready(context.Background()); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Ready while the server is down = %v, want ErrUnavailable", err)
	}
	up()
	h.waitAcked(60)
	testkit.WaitFor(t, wait, "readiness after the restart", func() bool { return other.Ready(context.Background()) == nil })
	h.check(other)
}

// TestFaultServerProcessKilled kills a separate nats-server process with
// SIGKILL while publishers and watchers run, starts it again on the same
// store, and checks that every acknowledged notification reaches every
// matching watcher exactly once, in order. The server runs with the
// default sync settings: a standalone server writes each message to the
// operating system before acknowledging it, so killing the process loses
// nothing acknowledged (only an operating system crash can lose what was
// not yet fsynced; sync_always closes that window).
func TestFaultServerProcessKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: it builds a nats-server binary from the module cache and kills and restarts it; run without -short, as scripts/test and CI do")
	}
	bin := natsServerBinary(t)
	dir, port := t.TempDir(), testkit.FreePort(t)
	p := startProcess(t, bin, dir, port)
	faultRun(t, fmt.Sprintf("nats://127.0.0.1:%d", port), p.kill, p.start)
}

// TestFaultServerRestartedInProcess does the same with an in-process
// nats-server shut down and started again on the same port and store.
func TestFaultServerRestartedInProcess(t *testing.T) {
	dir, port := t.TempDir(), testkit.FreePort(t)
	s := runServer(t, dir, port, nil)
	faultRun(t, fmt.Sprintf("nats://127.0.0.1:%d", port),
		func() { stopServer(s) },
		func() { s = runServer(t, dir, port, nil) })
}

// TestUnavailableIsQuick: with the server out of reach, every call fails
// with ErrUnavailable within the publish timeout, and Ready says so.
func TestUnavailableIsQuick(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	e := openURL(t, "nats://"+px.Addr(), nil)
	mustPublish(t, e, note("mars", "od", "1"))
	px.Down()
	testkit.WaitFor(t, wait, "the engine to notice the lost connection", func() bool { return e.Ready(context.Background()) != nil })
	ctx := context.Background()
	calls := map[string]func() error{
		"Publish":   func() error { _, _, err := e.Publish(ctx, note("mars", "od", "2")); return err },
		"Subscribe": func() error { _, err := e.Subscribe(ctx, query("newbase", "*"), engine.SubscribeOptions{}); return err },
		"History":   func() error { _, err := e.History(ctx, query("mars", "*", "*"), everything); return err },
		"LastSeq":   func() error { _, err := e.LastSeq(ctx, "mars"); return err },
		"Ready":     func() error { return e.Ready(ctx) },
	}
	for name, call := range calls {
		began := time.Now()
		err := call()
		t.Logf("%s: %v", name, err)
		if !errors.Is(err, engine.ErrUnavailable) {
			t.Errorf("%s while down = %v, want ErrUnavailable", name, err)
		}
		if d := time.Since(began); d > e.opts.PublishTimeout+time.Second {
			t.Errorf("%s took %s, more than the publish timeout %s", name, d, e.opts.PublishTimeout)
		}
	}
	px.Up()
	testkit.WaitFor(t, wait, "readiness after the connection is back", func() bool { return e.Ready(ctx) == nil })
	mustPublish(t, e, note("mars", "od", "3"))
}

// TestFeedCatchesUpAfterReconnect: notifications stored while one
// instance is cut off reach its watchers after it reconnects, once each,
// in order, without a gap error.
func TestFeedCatchesUpAfterReconnect(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	pub := openURL(t, s.ClientURL(), nil)
	rec := newRecorder()
	cut := openURL(t, "nats://"+px.Addr(), func(o *Options) { o.Observer = rec })
	sub, err := cut.Subscribe(context.Background(), engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range 5 {
		mustPublish(t, pub, note("mars", "od", strconv.Itoa(i)))
	}
	expect(t, sub, 1, 5)
	px.Down()
	testkit.WaitFor(t, wait, "the cut engine to notice", func() bool { return cut.Ready(context.Background()) != nil })
	for i := range 20 {
		mustPublish(t, pub, note("mars", "rd", strconv.Itoa(i)))
	}
	px.Up()
	expect(t, sub, 6, 25)
	mustPublish(t, cut, note("mars", "od", "last"))
	expect(t, sub, 26, 26)
	// The observer saw one reconnection, no gap, the one publish.
	ops, reconnects, gaps := rec.counts()
	if reconnects != 1 || len(gaps) != 0 || len(ops) != 1 || ops["publish ok"] != 1 {
		t.Fatalf("observer: %d reconnections, gaps %v, operations %v; want 1, none, one publish ok", reconnects, gaps, ops)
	}
}

// expect reads the records from..to from sub, in order.
func expect(t *testing.T, sub *engine.Subscription, from, to uint64) {
	t.Helper()
	deadline := time.After(wait)
	for want := from; want <= to; want++ {
		select {
		case r := <-sub.C():
			if r.Seq != want {
				t.Fatalf("live record %d, want %d", r.Seq, want)
			}
		case <-sub.Done():
			t.Fatalf("subscription ended before %d: %v", want, sub.Err())
		case <-deadline:
			t.Fatalf("no live record %d before the deadline", want)
		}
	}
}

// TestFeedGapAfterOutage: notifications removed by the stream's limits
// while an instance was cut off cannot be delivered; its subscriptions
// end with ErrGap so that clients reconnect from their last sequence,
// and new subscriptions work.
func TestFeedGapAfterOutage(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	small := func(o *Options) { o.Defaults.MaxMsgs = 5 }
	pub := openURL(t, s.ClientURL(), small)
	rec := newRecorder()
	cut := openURL(t, "nats://"+px.Addr(), func(o *Options) { small(o); o.Observer = rec })
	sub, err := cut.Subscribe(context.Background(), engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mustPublish(t, pub, note("mars", "od", "0"))
	expect(t, sub, 1, 1)
	px.Down()
	testkit.WaitFor(t, wait, "the cut engine to notice", func() bool { return cut.Ready(context.Background()) != nil })
	for i := range 20 {
		mustPublish(t, pub, note("mars", "rd", strconv.Itoa(i)))
	}
	px.Up()
	select {
	case <-sub.Done():
		if err := sub.Err(); !errors.Is(err, engine.ErrGap) || !strings.Contains(err.Error(), "2 to 16") {
			t.Fatalf("subscription ended with %v, want ErrGap naming 2 to 16", err)
		}
	case r := <-sub.C():
		t.Fatalf("received %d across the gap", r.Seq)
	case <-time.After(wait):
		t.Fatal("subscription not ended after the gap")
	}
	if _, reconnects, gaps := rec.counts(); reconnects != 1 || len(gaps) != 1 || gaps[0] != "mars" {
		t.Fatalf("observer: %d reconnections, gaps %v; want 1 and [mars]", reconnects, gaps)
	}
	again, err := cut.Subscribe(context.Background(), engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if b := again.Boundary(); b < 16 || b > 21 {
		t.Errorf("new boundary %d, want 16..21", b)
	}
	mustPublish(t, pub, note("mars", "od", "1"))
	expect(t, again, again.Boundary()+1, 22)
}

// TestFeedRewind: a stream deleted and created again behind an
// instance's back (its sequences start over) ends that instance's
// subscriptions with ErrGap, and its feed goes on from the new end.
func TestFeedRewind(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	e := openURL(t, "nats://"+px.Addr(), nil)
	sub, err := e.Subscribe(context.Background(), engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range 10 {
		mustPublish(t, e, note("mars", "od", strconv.Itoa(i)))
	}
	expect(t, sub, 1, 10)
	px.Down()
	testkit.WaitFor(t, wait, "the engine to notice", func() bool { return e.Ready(context.Background()) != nil })
	raw := openURL(t, s.ClientURL(), nil)
	ctx := context.Background()
	cfg := streamConfig(t, raw, "MARS")
	if err := raw.cur().js.DeleteStream(ctx, "MARS"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.cur().js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := raw.cur().js.Publish(ctx, "mars.rd."+strconv.Itoa(i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	px.Up()
	select {
	case <-sub.Done():
		if !errors.Is(sub.Err(), engine.ErrGap) {
			t.Fatalf("subscription ended with %v, want ErrGap", sub.Err())
		}
	case r := <-sub.C():
		t.Fatalf("received %d after the rewind", r.Seq)
	case <-time.After(wait):
		t.Fatal("subscription not ended after the rewind")
	}
	var again *engine.Subscription
	testkit.WaitFor(t, wait, "a subscription at the new end", func() bool {
		s, err := e.Subscribe(ctx, engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
		if err != nil {
			return false
		}
		if s.Boundary() != 2 {
			s.Close()
			return false
		}
		again = s
		return true
	})
	defer again.Close()
	if _, err := raw.cur().js.Publish(ctx, "mars.rd.x", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	expect(t, again, 3, 3)
}

// TestConnectFailureNamesURL: startup gives up after the configured
// attempts with an error that names the URL (without its password) and
// wraps ErrUnavailable.
func TestConnectFailureNamesURL(t *testing.T) {
	port := testkit.FreePort(t)
	url := fmt.Sprintf("nats://herald:s3cret@127.0.0.1:%d", port)
	began := time.Now()
	_, err := Open(context.Background(), Options{
		URL: url, ConnectAttempts: 2, ConnectTimeout: 500 * time.Millisecond,
		ReconnectDelay: 20 * time.Millisecond, Logger: testLogger(t),
	})
	if err == nil {
		t.Fatal("Open succeeded without a server")
	}
	t.Logf("Open error: %v", err)
	want := fmt.Sprintf("127.0.0.1:%d", port)
	if !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "2 attempt(s)") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open error = %v; want ErrUnavailable naming %s and the attempts, without the password", err, want)
	}
	if d := time.Since(began); d > wait {
		t.Errorf("Open took %s", d)
	}
}

// TestScaleOut: two engines on one server serve the same streams:
// notifications published on either reach the watchers of both, in the
// same order, and history agrees.
func TestScaleOut(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	a := openURL(t, s.ClientURL(), nil)
	b := openURL(t, s.ClientURL(), nil)
	ctx := context.Background()
	subA, err := a.Subscribe(ctx, query("mars", "od", "*", "*"), engine.SubscribeOptions{QueueSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer subA.Close()
	subB, err := b.Subscribe(ctx, query("mars", "od", "*", "*"), engine.SubscribeOptions{QueueSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer subB.Close()
	var wg sync.WaitGroup
	for _, e := range []*Engine{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if _, _, err := e.Publish(ctx, note("mars", "od", "enfo", strconv.Itoa(i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	expect(t, subA, 1, 200)
	expect(t, subB, 1, 200)
	if got := seqs(readAll(t, b, query("mars", "od", "*", "*"), everything, 64)); len(got) != 200 {
		t.Errorf("history on b: %d records", len(got))
	}
	if n, err := a.LastSeq(ctx, "mars"); err != nil || n != 200 {
		t.Errorf("LastSeq on a = %d, %v", n, err)
	}
	// A schema-less stream created by one instance is served by the other.
	mustPublish(t, a, note("gen", "x"))
	if got := seqs(readAll(t, b, query("gen", "*"), everything, 10)); !slices.Equal(got, []uint64{1}) {
		t.Errorf("generic history on b: %v", got)
	}
	names := map[string]bool{}
	list := a.cur().js.ListStreams(ctx)
	for info := range list.Info() {
		names[info.Config.Name] = true
	}
	if !names["MARS"] || !names["GEN"] || len(names) != 2 {
		t.Errorf("streams %v", names)
	}
	_ = jetstream.ErrStreamNotFound
}

// TestNoReconnect: with the client library's reconnection disabled
// (enable_auto_reconnect: false), a lost connection is closed at once and
// the engine re-dials a new one: while the server is out of reach calls
// report the backend unavailable and Healthy says it is recovering; once
// it is back, the live subscription goes on with what was stored
// meanwhile, without a gap error.
func TestNoReconnect(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	pub := openURL(t, s.ClientURL(), nil)
	e := openURL(t, "nats://"+px.Addr(), func(o *Options) { o.NoReconnect = true })
	sub, err := e.Subscribe(context.Background(), engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	first := e.cur()
	px.Down()
	testkit.WaitFor(t, wait, "the engine to re-dial", func() bool { return e.redials.Load() >= 2 })
	if _, _, err := e.Publish(context.Background(), note("mars", "od", "1")); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Publish = %v, want ErrUnavailable", err)
	}
	if _, err := e.Subscribe(context.Background(), query("other", "*"), engine.SubscribeOptions{}); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Subscribe = %v, want ErrUnavailable", err)
	}
	if err := e.Ready(context.Background()); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Ready = %v, want ErrUnavailable", err)
	}
	if err := e.Healthy(); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Healthy = %v, want ErrUnavailable (recovering)", err)
	}
	for i := range 3 {
		mustPublish(t, pub, note("mars", "rd", strconv.Itoa(i)))
	}
	px.Up()
	testkit.WaitFor(t, wait, "readiness after the connection is back", func() bool { return e.Ready(context.Background()) == nil })
	if e.cur() == first {
		t.Error("the connection was not replaced")
	}
	if err := e.Healthy(); err != nil {
		t.Errorf("Healthy after recovery = %v", err)
	}
	expect(t, sub, 1, 3)
	mustPublish(t, e, note("mars", "od", "2"))
	expect(t, sub, 4, 4)
	if err := sub.Err(); err != nil {
		t.Errorf("subscription ended with %v", err)
	}
}

// TestStreamDeletedBehindTheBack: a herald stream deleted by hand is
// created again by the next publish; the live subscriptions end with
// ErrGap (their sequences start over) and new ones follow the new stream.
func TestStreamDeletedBehindTheBack(t *testing.T) {
	e := open(t, testOptions(t))
	ctx := context.Background()
	sub, err := e.Subscribe(ctx, engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range 3 {
		mustPublish(t, e, note("mars", "od", strconv.Itoa(i)))
	}
	expect(t, sub, 1, 3)
	if err := e.cur().js.DeleteStream(ctx, "MARS"); err != nil {
		t.Fatal(err)
	}
	if seq := mustPublish(t, e, note("mars", "od", "again")); seq != 1 {
		t.Errorf("first sequence of the new stream %d, want 1", seq)
	}
	select {
	case <-sub.Done():
		if !errors.Is(sub.Err(), engine.ErrGap) {
			t.Errorf("subscription ended with %v, want ErrGap", sub.Err())
		}
	case <-time.After(wait):
		t.Fatal("subscription not ended after the stream was deleted")
	}
	c := streamConfig(t, e, "MARS")
	if c.Metadata[MetadataBase] != "mars" || c.MaxMsgsPerSubject != -1 {
		t.Errorf("recreated stream config %+v", c)
	}
	again, err := e.Subscribe(ctx, engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	mustPublish(t, e, note("mars", "od", "next"))
	expect(t, again, again.Boundary()+1, 2)
}
