package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// hubWait bounds the waits of the hub and queue tests; a deadline, never
// a delay.
const hubWait = 10 * time.Second

// rec returns a record of stream with subject tokens stream.value and
// sequence seq.
func rec(stream, value string, seq uint64) *Record {
	tokens := []string{stream, value}
	return &Record{
		Notification: notification.Notification{
			EventType: stream, Subject: topic.Encode(tokens), Tokens: tokens,
		},
		Seq: seq,
	}
}

// q returns a query of stream matching value ("*" for any).
func q(stream, value string) Query {
	tok := topic.Literal(value)
	if value == "*" {
		tok = topic.Any()
	}
	return Query{Stream: stream, Filter: &notification.Filter{Pattern: topic.Pattern{topic.Literal(stream), tok}}}
}

// drain returns the sequences queued on s without waiting. Only use it
// when nothing is spilled (fewer than queueChanCap records queued).
func drain(s *Subscription) []uint64 {
	out := []uint64{}
	for {
		select {
		case r := <-s.C():
			out = append(out, r.Seq)
		default:
			return out
		}
	}
}

// recvN receives n records from s before the deadline.
func recvN(t *testing.T, s *Subscription, n int) []uint64 {
	t.Helper()
	out := []uint64{}
	deadline := time.After(hubWait)
	for len(out) < n {
		select {
		case r := <-s.C():
			out = append(out, r.Seq)
		case <-deadline:
			t.Fatalf("received %v, want %d records", out, n)
		}
	}
	return out
}

// waitClosed waits for c to be closed before the deadline.
func waitClosed(t *testing.T, what string, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(hubWait):
		t.Fatalf("%s: not done before the deadline", what)
	}
}

// isOpen reports whether c is still open.
func isOpen(c <-chan struct{}) bool {
	select {
	case <-c:
		return false
	default:
		return true
	}
}

func TestHubBoundaryAndDelivery(t *testing.T) {
	h := NewHub()
	defer h.Close()
	if got := h.Last("mars"); got != 0 {
		t.Fatalf("Last of an unknown stream = %d", got)
	}
	h.SetLast("mars", 41)
	a := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	h.Deliver(rec("mars", "x", 42))
	h.Deliver(rec("mars", "y", 43))
	h.Deliver(rec("mars", "x", 43)) // stale: ignored
	h.Deliver(rec("mars", "x", 40)) // stale: ignored
	b := h.Subscribe(q("mars", "x"), SubscribeOptions{})
	h.Deliver(rec("diss", "x", 1))
	h.Deliver(rec("mars", "y", 44))
	h.Deliver(rec("mars", "x", 45))
	nilFilter := h.Subscribe(Query{Stream: "mars"}, SubscribeOptions{})
	h.Deliver(rec("mars", "z", 46))

	cases := []struct {
		name     string
		s        *Subscription
		boundary uint64
		want     []uint64
	}{
		{"before", a, 41, []uint64{42, 43, 44, 45, 46}},
		{"after, filtered", b, 43, []uint64{45}},
		{"nil filter", nilFilter, 45, []uint64{46}},
	}
	for _, c := range cases {
		if c.s.Boundary() != c.boundary {
			t.Errorf("%s: boundary %d, want %d", c.name, c.s.Boundary(), c.boundary)
		}
		if got := drain(c.s); !slices.Equal(got, c.want) {
			t.Errorf("%s: received %v, want %v", c.name, got, c.want)
		}
	}
	for stream, want := range map[string]uint64{"mars": 46, "diss": 1, "none": 0} {
		if got := h.Last(stream); got != want {
			t.Errorf("Last(%s) = %d, want %d", stream, got, want)
		}
	}
	if got := h.Subscribers("mars"); got != 3 {
		t.Errorf("Subscribers = %d, want 3", got)
	}
}

func TestHubOverflowPolicies(t *testing.T) {
	cases := []struct {
		name        string
		opts        SubscribeOptions
		deliver     int
		wantQueued  []uint64
		wantDropped uint64
		wantErr     error
	}{
		{"close: fits", SubscribeOptions{QueueSize: 3}, 3, []uint64{1, 2, 3}, 0, nil},
		{"close: overflows", SubscribeOptions{QueueSize: 3}, 5, []uint64{1, 2, 3}, 0, ErrOverflow},
		{"drop: fits", SubscribeOptions{QueueSize: 3, Overflow: DropOnOverflow}, 3, []uint64{1, 2, 3}, 0, nil},
		{"drop: counts", SubscribeOptions{QueueSize: 3, Overflow: DropOnOverflow}, 8, []uint64{1, 2, 3}, 5, nil},
		{"unknown policy closes", SubscribeOptions{QueueSize: 2, Overflow: 9}, 3, []uint64{1, 2}, 0, ErrOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHub()
			defer h.Close()
			s := h.Subscribe(q("mars", "*"), c.opts)
			other := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: 100})
			for i := 1; i <= c.deliver; i++ {
				h.Deliver(rec("mars", "x", uint64(i)))
			}
			if got := drain(s); !slices.Equal(got, c.wantQueued) {
				t.Errorf("queued %v, want %v", got, c.wantQueued)
			}
			if got := s.Dropped(); got != c.wantDropped {
				t.Errorf("Dropped = %d, want %d", got, c.wantDropped)
			}
			if got := s.TakeDropped(); got != c.wantDropped {
				t.Errorf("TakeDropped = %d, want %d", got, c.wantDropped)
			}
			if got := s.Dropped(); got != 0 {
				t.Errorf("Dropped after take = %d", got)
			}
			if err := s.Err(); err != c.wantErr {
				t.Errorf("Err = %v, want %v", err, c.wantErr)
			}
			if open := isOpen(s.Done()); open != (c.wantErr == nil) {
				t.Errorf("Done open = %v, want %v", open, c.wantErr == nil)
			}
			wantSubs := 2
			if c.wantErr != nil {
				wantSubs = 1
			}
			if got := h.Subscribers("mars"); got != wantSubs {
				t.Errorf("Subscribers = %d, want %d", got, wantSubs)
			}
			if got := len(drain(other)); got != c.deliver {
				t.Errorf("other subscriber received %d, want %d", got, c.deliver)
			}
		})
	}
}

// TestHubIndex: the pattern index delivers to exactly the subscriptions
// whose filter matches, for patterns of every shape, as subscriptions come
// and go, and frees its nodes when they are gone.
func TestHubIndex(t *testing.T) {
	values := []string{"a", "b", "c"}
	var patterns []topic.Pattern
	// Every pattern of length 2 and 3 over values and wildcards, plus
	// patterns on the wrong base.
	toks := append([]topic.Token{topic.Any()}, topic.Literal("a"), topic.Literal("b"), topic.Literal("c"))
	for _, x := range toks {
		patterns = append(patterns, topic.Pattern{topic.Literal("mars"), x})
		for _, y := range toks {
			patterns = append(patterns, topic.Pattern{topic.Literal("mars"), x, y})
		}
	}
	patterns = append(patterns, topic.Pattern{topic.Literal("diss"), topic.Any()}, topic.Pattern{topic.Any(), topic.Any()})
	var records [][]string
	for _, x := range values {
		records = append(records, []string{"mars", x})
		for _, y := range values {
			records = append(records, []string{"mars", x, y})
		}
	}

	h := NewHub()
	defer h.Close()
	type sub struct {
		s *Subscription
		f *notification.Filter
	}
	var subs []sub
	for i, p := range patterns {
		f := &notification.Filter{Pattern: p}
		if i%3 == 0 {
			// A constraint that rejects value "b" at the last position.
			f.Constraints = []notification.TokenConstraint{{Pos: len(p) - 1, Constraint: notB{}}}
		}
		subs = append(subs, sub{h.Subscribe(Query{Stream: "mars", Filter: f}, SubscribeOptions{QueueSize: 1000}), f})
	}
	subs = append(subs, sub{h.Subscribe(Query{Stream: "mars"}, SubscribeOptions{QueueSize: 1000}), nil})

	var seq uint64
	round := func(name string) {
		start := seq
		for _, r := range records {
			seq++
			h.Deliver(&Record{Notification: notification.Notification{Tokens: r}, Seq: seq})
		}
		for i, x := range subs {
			if x.s.idx < 0 {
				continue
			}
			var want []uint64
			for j, r := range records {
				if x.f == nil || x.f.Match(r, nil) {
					want = append(want, start+uint64(j)+1)
				}
			}
			got := drain(x.s)
			if len(want) == 0 {
				want = []uint64{}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: subscription %d: received %v, want %v", name, i, got, want)
			}
		}
	}
	round("all subscribed")
	for i := 0; i < len(subs); i += 2 {
		subs[i].s.Close()
	}
	round("half closed")
	for _, x := range subs {
		x.s.Close()
	}
	st := h.lookup("mars")
	if len(st.index.lit) != 0 || st.index.wild != nil || len(st.index.subs) != 0 || len(st.unfiltered.subs) != 0 {
		t.Errorf("index not empty after every subscription closed: %+v", st.index)
	}
}

// notB is a test constraint rejecting the value "b".
type notB struct{}

func (notB) Match(v string) bool { return v != "b" }

// TestHubSpill: a queue larger than its channel keeps every record, in
// order, while its subscriber does not read, and overflows past its bound
// (give or take the one record in transit to the channel).
func TestHubSpill(t *testing.T) {
	const size = 10 * queueChanCap
	h := NewHub()
	defer h.Close()
	s := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: size})
	for i := uint64(1); i <= size; i++ {
		h.Deliver(rec("mars", "x", i))
	}
	if got := s.Len(); got != size && got != size-1 {
		t.Fatalf("Len = %d, want %d (or one less, in transit)", got, size)
	}
	if s.Err() != nil {
		t.Fatalf("Err = %v", s.Err())
	}
	// Read half, deliver more, read everything: one ordered feed.
	got := recvN(t, s, size/2)
	for i := uint64(size + 1); i <= size+size/2; i++ {
		h.Deliver(rec("mars", "x", i))
	}
	got = append(got, recvN(t, s, size)...)
	want := make([]uint64, 0, size+size/2)
	for i := uint64(1); i <= size+size/2; i++ {
		want = append(want, i)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("received %v, want 1..%d", got, size+size/2)
	}
	if s.Err() != nil {
		t.Fatalf("Err = %v", s.Err())
	}
	// Fill it again without reading: it ends once more than its bound
	// is waiting.
	accepted := 0
	for seq := uint64(size + size/2 + 1); s.Err() == nil && accepted <= size+1; seq++ {
		h.Deliver(rec("mars", "x", seq))
		accepted++
	}
	if accepted != size+1 && accepted != size+2 {
		t.Fatalf("ended after %d deliveries, want %d or %d", accepted, size+1, size+2)
	}
	waitClosed(t, "overflow", s.Done())
	if s.Err() != ErrOverflow {
		t.Fatalf("Err = %v, want ErrOverflow", s.Err())
	}
}

func TestSubscriptionOwnerClose(t *testing.T) {
	h := NewHub()
	defer h.Close()
	s := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	h.Deliver(rec("mars", "x", 1))
	s.Close()
	s.Close()
	h.Deliver(rec("mars", "x", 2))
	if got := drain(s); !slices.Equal(got, []uint64{1}) {
		t.Errorf("received %v, want [1] (queued before Close)", got)
	}
	if !isOpen(s.Done()) || s.Err() != nil {
		t.Errorf("Done open %v, Err %v; want open, nil", isOpen(s.Done()), s.Err())
	}
	if got := h.Subscribers("mars"); got != 0 {
		t.Errorf("Subscribers = %d, want 0", got)
	}
	// Closing after the hub ended it keeps the reason.
	g := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	h.EndStream("mars", ErrGap)
	g.Close()
	if g.Err() != ErrGap {
		t.Errorf("Err = %v, want ErrGap", g.Err())
	}
}

func TestHubEndStreamAndClose(t *testing.T) {
	h := NewHub()
	m1 := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	m2 := h.Subscribe(q("mars", "x"), SubscribeOptions{Overflow: BlockOnOverflow})
	d := h.Subscribe(q("diss", "*"), SubscribeOptions{})
	h.Deliver(rec("mars", "x", 7))
	h.EndStream("mars", ErrGap)
	for _, s := range []*Subscription{m1, m2} {
		waitClosed(t, "mars", s.Done())
		if s.Err() != ErrGap {
			t.Errorf("Err = %v, want ErrGap", s.Err())
		}
	}
	if !isOpen(d.Done()) {
		t.Fatalf("diss subscription ended: %v", d.Err())
	}
	// The stream lives on.
	again := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	if again.Boundary() != 7 {
		t.Errorf("Boundary = %d, want 7", again.Boundary())
	}
	h.Deliver(rec("mars", "x", 8))
	if got := drain(again); !slices.Equal(got, []uint64{8}) {
		t.Errorf("received %v, want [8]", got)
	}
	nilErr := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	h.EndStream("mars", nil)
	h.EndStream("unknown", ErrGap)
	if nilErr.Err() != ErrClosed {
		t.Errorf("EndStream(nil): Err = %v, want ErrClosed", nilErr.Err())
	}

	h.Close()
	h.Close()
	for _, s := range []*Subscription{d} {
		waitClosed(t, "close", s.Done())
		if s.Err() != ErrClosed {
			t.Errorf("Err = %v, want ErrClosed", s.Err())
		}
	}
	for _, stream := range []string{"mars", "new"} {
		late := h.Subscribe(q(stream, "*"), SubscribeOptions{})
		if isOpen(late.Done()) || late.Err() != ErrClosed {
			t.Errorf("Subscribe(%s) after Close: Done open %v, Err %v", stream, isOpen(late.Done()), late.Err())
		}
		late.Close()
	}
	h.Deliver(rec("mars", "x", 9))
	h.Deliver(rec("other", "x", 1))
	h.SetLast("other2", 5)
}

// TestHubBlockOnOverflow: a delivery to a full blocking subscriber waits
// outside the hub's lock, and reading, closing, ending the stream or
// closing the hub releases it.
func TestHubBlockOnOverflow(t *testing.T) {
	cases := []struct {
		name    string
		release func(h *Hub, s *Subscription)
		want    []uint64 // what s receives from the start
		wantErr error
	}{
		{"read", func(h *Hub, s *Subscription) {}, []uint64{1, 2}, nil},
		{"close", func(h *Hub, s *Subscription) { s.Close() }, []uint64{1}, nil},
		{"end stream", func(h *Hub, s *Subscription) { h.EndStream("mars", ErrGap) }, []uint64{1}, ErrGap},
		{"close hub", func(h *Hub, s *Subscription) { h.Close() }, []uint64{1}, ErrClosed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHub()
			defer h.Close()
			s := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: 1, Overflow: BlockOnOverflow})
			observer := h.Subscribe(q("mars", "*"), SubscribeOptions{})
			h.Deliver(rec("mars", "x", 1))
			delivered := make(chan struct{})
			go func() {
				defer close(delivered)
				h.Deliver(rec("mars", "x", 2))
			}()
			// The observer has 2: Deliver is now waiting for s.
			if got := recvN(t, observer, 2); !slices.Equal(got, []uint64{1, 2}) {
				t.Fatalf("observer %v", got)
			}
			if !isOpen(delivered) {
				t.Fatal("Deliver returned while the blocking subscriber is full")
			}
			// The hub is not locked meanwhile.
			late := h.Subscribe(q("mars", "*"), SubscribeOptions{})
			if late.Boundary() != 2 {
				t.Errorf("Boundary while blocked = %d, want 2", late.Boundary())
			}
			late.Close()
			h.Deliver(rec("diss", "x", 1))
			observer.Close()
			if got := h.Last("mars"); got != 2 {
				t.Errorf("Last = %d, want 2", got)
			}

			c.release(h, s)
			var got []uint64
			if c.name == "read" {
				got = recvN(t, s, 2)
			} else {
				got = drain(s)
			}
			waitClosed(t, "Deliver", delivered)
			if !slices.Equal(got, c.want) {
				t.Errorf("received %v, want %v", got, c.want)
			}
			if s.Err() != c.wantErr {
				t.Errorf("Err = %v, want %v", s.Err(), c.wantErr)
			}
		})
	}
}

// TestHubBlockingOrder: engines dispatch under their own lock and wait
// outside it, so several deliveries can wait for one blocking subscriber
// at once; tickets keep them in sequence order, with and without a spill
// buffer.
func TestHubBlockingOrder(t *testing.T) {
	for _, size := range []int{1, 3, queueChanCap + 5} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			const n = 300
			h := NewHub()
			defer h.Close()
			s := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: size, Overflow: BlockOnOverflow})
			var (
				mu  sync.Mutex
				seq uint64
				wg  sync.WaitGroup
			)
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range n / 6 {
						mu.Lock()
						seq++
						p := h.dispatch(rec("mars", "x", seq))
						mu.Unlock()
						p.wait(context.Background())
					}
				}()
			}
			got := recvN(t, s, n)
			wg.Wait()
			for i, v := range got {
				if v != uint64(i+1) {
					t.Fatalf("record %d has seq %d; feed %v", i, v, got)
				}
			}
		})
	}
}

// TestHubConcurrentStreams delivers on several streams in parallel while
// subscribers come and go (for the race detector).
func TestHubConcurrentStreams(t *testing.T) {
	const streams, n = 4, 500
	h := NewHub()
	defer h.Close()
	subs := make([]*Subscription, streams)
	for i := range subs {
		subs[i] = h.Subscribe(q(fmt.Sprint("s", i), "*"), SubscribeOptions{QueueSize: n})
	}
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := uint64(1); j <= n; j++ {
				h.Deliver(rec(fmt.Sprint("s", i), "x", j))
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				s := h.Subscribe(q(fmt.Sprint("s", i), "x"), SubscribeOptions{QueueSize: 1, Overflow: DropOnOverflow})
				s.Close()
			}
		}()
	}
	wg.Wait()
	for i, s := range subs {
		got := recvN(t, s, n)
		for j, v := range got {
			if v != uint64(j+1) {
				t.Fatalf("stream %d: record %d has seq %d", i, j, v)
			}
		}
	}
}

// BenchmarkHubDeliver delivers records over 16 subjects to subscribers
// that each match one subject (1/16 of the records) and drain their
// queues in their own goroutines.
func BenchmarkHubDeliver(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			h := NewHub()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			subs := make([]*Subscription, n)
			var received atomic.Uint64
			for i := range subs {
				s := h.Subscribe(q("mars", fmt.Sprint(i%16)), SubscribeOptions{Overflow: DropOnOverflow})
				subs[i] = s
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-s.C():
							received.Add(1)
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			tokens := make([][]string, 16)
			for i := range tokens {
				tokens[i] = []string{"mars", fmt.Sprint(i)}
			}
			b.ReportAllocs()
			var seq uint64
			for b.Loop() {
				seq++
				h.Deliver(&Record{Notification: notification.Notification{Tokens: tokens[seq%16]}, Seq: seq})
			}
			b.StopTimer()
			var dropped uint64
			for _, s := range subs {
				dropped += s.Dropped()
			}
			b.ReportMetric(float64(dropped)/float64(b.N), "drops/op")
			cancel()
			wg.Wait()
			h.Close()
		})
	}
}

// BenchmarkHubDeliverParallel delivers on one stream per goroutine, with
// 100 subscribers per stream that never match: the cost of matching and
// of the per-stream locks under parallel load.
func BenchmarkHubDeliverParallel(b *testing.B) {
	h := NewHub()
	defer h.Close()
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		stream := fmt.Sprint("s", next.Add(1))
		for i := range 100 {
			h.Subscribe(q(stream, fmt.Sprint("v", i)), SubscribeOptions{})
		}
		tokens := []string{stream, "x"}
		var seq uint64
		for pb.Next() {
			seq++
			h.Deliver(&Record{Notification: notification.Notification{Tokens: tokens}, Seq: seq})
		}
	})
}

// BenchmarkHubMatch delivers records that no subscriber matches: the cost
// of finding the matching subscriptions through the pattern index.
// BenchmarkFilterScan is its reference, the linear scan the index
// replaces.
func BenchmarkHubMatch(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			h := NewHub()
			defer h.Close()
			for i := range n {
				h.Subscribe(q("mars", fmt.Sprint("v", i)), SubscribeOptions{})
			}
			tokens := []string{"mars", "x"}
			b.ReportAllocs()
			var seq uint64
			for b.Loop() {
				seq++
				h.Deliver(&Record{Notification: notification.Notification{Tokens: tokens}, Seq: seq})
			}
		})
	}
}

// BenchmarkFilterScan matches a record against every filter in turn: the
// reference for BenchmarkHubMatch.
func BenchmarkFilterScan(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			filters := make([]*notification.Filter, n)
			for i := range filters {
				filters[i] = q("mars", fmt.Sprint("v", i)).Filter
			}
			tokens := []string{"mars", "x"}
			matched := 0
			for b.Loop() {
				for _, f := range filters {
					if f.Match(tokens, nil) {
						matched++
					}
				}
			}
			if matched != 0 {
				b.Fatal("matched")
			}
		})
	}
}

func TestRenderedOncePerView(t *testing.T) {
	rec := &Record{Seq: 1}
	calls := 0
	render := func(tag string) func(*Record) ([]byte, error) {
		return func(r *Record) ([]byte, error) { calls++; return []byte(tag), nil }
	}
	if n := rec.RenderedViews(); n != 0 {
		t.Fatalf("a fresh record has %d rendered views", n)
	}
	for range 3 {
		for _, tag := range []string{"a", "b"} {
			got, err := rec.Rendered(tag, render(tag))
			if err != nil || string(got) != tag {
				t.Fatalf("view %s: %q %v", tag, got, err)
			}
		}
	}
	if calls != 2 || rec.RenderedViews() != 2 {
		t.Fatalf("rendered %d times for 2 views (RenderedViews %d)", calls, rec.RenderedViews())
	}
	for i := range maxRenderings + 2 {
		_, _ = rec.Rendered(i, render("x"))
	}
	if n := rec.RenderedViews(); n != maxRenderings {
		t.Fatalf("%d renderings cached, want at most %d", n, maxRenderings)
	}
}

// TestHubBlockTimeout: blocking subscribers that stay full longer than
// their block timeout are ended with ErrOverflow and release the delivery.
func TestHubBlockTimeout(t *testing.T) {
	h := NewHub()
	defer h.Close()
	const timeout = 200 * time.Millisecond
	a := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: 1, Overflow: BlockOnOverflow, BlockTimeout: timeout})
	b := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: 1, Overflow: BlockOnOverflow, BlockTimeout: timeout})
	h.Deliver(rec("mars", "x", 1))
	h.Deliver(rec("mars", "x", 2)) // both full: waits, then ends both
	for _, s := range []*Subscription{a, b} {
		select {
		case <-s.Done():
		default:
			t.Fatal("a blocking subscriber past its timeout is still open")
		}
		if s.Err() != ErrOverflow {
			t.Fatalf("Err = %v, want ErrOverflow", s.Err())
		}
		if got := drain(s); !slices.Equal(got, []uint64{1}) {
			t.Fatalf("received %v, want [1]", got)
		}
	}
}

// TestSubscriptionWake: a subscription with a wake function calls it once
// for each record that reaches C (straight away, or from the spill buffer
// once the subscriber made room) and once when the hub ends it; records
// queued before it was set and the owner's Close call nothing, nor does
// anything once it is removed.
func TestSubscriptionWake(t *testing.T) {
	h := NewHub()
	s := h.Subscribe(q("mars", "*"), SubscribeOptions{QueueSize: queueChanCap + 2, Overflow: BlockOnOverflow})
	h.Deliver(rec("mars", "x", 1))
	var wakes atomic.Int64
	s.SetWake(func() { wakes.Add(1) })
	for seq := uint64(2); seq <= queueChanCap+2; seq++ {
		h.Deliver(rec("mars", "x", seq)) // the last two spill
	}
	if n := wakes.Load(); n != queueChanCap-1 {
		t.Fatalf("%d wakes for %d records that reached C", n, queueChanCap-1)
	}
	if got := recvN(t, s, queueChanCap+2); got[0] != 1 || got[len(got)-1] != queueChanCap+2 {
		t.Fatalf("records %v", got)
	}
	// The spilled records reached C through the pump: a wake each, just
	// after each send.
	testkit.WaitFor(t, hubWait, "a wake for each spilled record", func() bool { return wakes.Load() == queueChanCap+1 })
	h.EndStream("mars", ErrGap)
	if n := wakes.Load(); n != queueChanCap+2 {
		t.Fatalf("%d wakes after the end, want %d", n, queueChanCap+2)
	}

	c := h.Subscribe(q("mars", "*"), SubscribeOptions{})
	var cw atomic.Int64
	c.SetWake(func() { cw.Add(1) })
	h.Deliver(rec("mars", "x", 100))
	c.SetWake(nil)
	h.Deliver(rec("mars", "x", 101))
	c.SetWake(func() { cw.Add(1) })
	c.Close()
	if n := cw.Load(); n != 1 {
		t.Fatalf("%d wakes, want 1 (the record before the wake was removed)", n)
	}
}
