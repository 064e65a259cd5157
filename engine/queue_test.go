package engine

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestOverflowPolicyString(t *testing.T) {
	for p, want := range map[OverflowPolicy]string{
		CloseOnOverflow: "close", DropOnOverflow: "drop", BlockOnOverflow: "block", 7: "unknown",
	} {
		if got := p.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", p, got, want)
		}
	}
	var zero SubscribeOptions
	if zero.Overflow != CloseOnOverflow {
		t.Errorf("zero policy = %v, want close", zero.Overflow)
	}
}

// TestQueueOffer: offers into a queue nobody reads, per policy and size.
func TestQueueOffer(t *testing.T) {
	const (
		Q = offerQueued
		D = offerDropped
		O = offerOverflow
		W = offerWait
	)
	cases := []struct {
		name      string
		size      int
		policy    OverflowPolicy
		want      []offerResult
		wantLen   int
		wantDrops uint64
		wantSpill bool
	}{
		{name: "close", size: 2, policy: CloseOnOverflow, want: []offerResult{Q, Q, O, O}, wantLen: 2},
		{name: "drop", size: 2, policy: DropOnOverflow, want: []offerResult{Q, Q, D, D, D}, wantLen: 2, wantDrops: 3},
		{name: "block", size: 2, policy: BlockOnOverflow, want: []offerResult{Q, Q, W, W}, wantLen: 2},
		{name: "exactly the channel", size: queueChanCap, policy: DropOnOverflow,
			want: append(slices.Repeat([]offerResult{Q}, queueChanCap), D), wantLen: queueChanCap, wantDrops: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			qu := newQueue(c.size, c.policy)
			defer qu.close()
			var got []offerResult
			for i := range c.want {
				res, tk := qu.offer(rec("mars", "x", uint64(i+1)))
				got = append(got, res)
				if (res == offerWait) != (tk.turn != nil) {
					t.Errorf("offer %d: result %d with ticket %v", i, res, tk)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("results %v, want %v", got, c.want)
			}
			if n := qu.len(); n != c.wantLen {
				t.Errorf("len = %d, want %d", n, c.wantLen)
			}
			if d := qu.dropped.Load(); d != c.wantDrops {
				t.Errorf("dropped = %d, want %d", d, c.wantDrops)
			}
		})
	}
}

// TestQueueSpilledBound: a queue larger than its channel accepts its size,
// plus possibly the one record in transit, then applies its policy; what
// it accepted arrives in order.
func TestQueueSpilledBound(t *testing.T) {
	cases := []struct {
		size   int
		policy OverflowPolicy
		last   offerResult
	}{
		{queueChanCap + 1, CloseOnOverflow, offerOverflow},
		{queueChanCap + 2, DropOnOverflow, offerDropped},
		{3 * queueChanCap, BlockOnOverflow, offerWait},
		{0, CloseOnOverflow, offerOverflow}, // DefaultLiveQueueSize
	}
	for _, c := range cases {
		size := c.size
		if size == 0 {
			size = DefaultLiveQueueSize
		}
		qu := newQueue(c.size, c.policy)
		accepted := 0
		for {
			res, _ := qu.offer(rec("mars", "x", uint64(accepted+1)))
			if res != offerQueued {
				if res != c.last {
					t.Errorf("size %d: result %d, want %d", size, res, c.last)
				}
				break
			}
			accepted++
		}
		if accepted != size && accepted != size+1 {
			t.Errorf("size %d: accepted %d", size, accepted)
		}
		for i := 1; i <= accepted; i++ {
			if got := (<-qu.ch).Seq; got != uint64(i) {
				t.Fatalf("size %d: record %d has seq %d", size, i, got)
			}
		}
		qu.close()
	}
}

// TestQueueWait: waiting pushes enqueue in ticket order once there is
// room; a cancelled one stops the queue before a later one may push.
func TestQueueWait(t *testing.T) {
	for _, size := range []int{1, queueChanCap + 1} {
		qu := newQueue(size, BlockOnOverflow)
		// Offer until the queue is full (a spilled queue may take one
		// more, the record in transit); then a second offer must wait
		// behind the first.
		var (
			n      uint64
			r1, r2 offerResult
			t1, t2 ticket
		)
		for {
			r1, t1 = qu.offer(rec("mars", "x", n+1))
			if r1 != offerQueued {
				break
			}
			n++
		}
		if n != uint64(size) && !(size > queueChanCap && n == uint64(size)+1) {
			t.Fatalf("size %d: accepted %d", size, n)
		}
		r2, t2 = qu.offer(rec("mars", "x", n+2))
		if r1 != offerWait || r2 != offerWait {
			t.Fatalf("size %d: offers %d %d, want wait", size, r1, r2)
		}
		errs := make(chan error, 2)
		go func() { errs <- qu.wait(context.Background(), t2, rec("mars", "x", n+2)) }()
		go func() { errs <- qu.wait(context.Background(), t1, rec("mars", "x", n+1)) }()
		var got []uint64
		for range n + 2 {
			got = append(got, (<-qu.ch).Seq)
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("size %d: wait = %v", size, err)
			}
		}
		want := make([]uint64, 0, size+2)
		for i := uint64(1); i <= n+2; i++ {
			want = append(want, i)
		}
		if !slices.Equal(got, want) {
			t.Errorf("size %d: received %v, want %v", size, got, want)
		}
		// The queue is empty and not waiting: the next offer queues.
		if res, _ := qu.offer(rec("mars", "x", n+3)); res != offerQueued {
			t.Errorf("size %d: offer after waits = %d, want queued", size, res)
		}
		qu.close()
	}
}

func TestQueueWaitCancelled(t *testing.T) {
	qu := newQueue(1, BlockOnOverflow)
	qu.offer(rec("mars", "x", 1))
	_, t2 := qu.offer(rec("mars", "x", 2))
	_, t3 := qu.offer(rec("mars", "x", 3))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done3 := make(chan error, 1)
	go func() { done3 <- qu.wait(context.Background(), t3, rec("mars", "x", 3)) }()
	if err := qu.wait(ctx, t2, rec("mars", "x", 2)); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", err)
	}
	if err := <-done3; err != nil {
		t.Fatalf("later wait = %v, want nil (discarded)", err)
	}
	if got := (<-qu.ch).Seq; got != 1 {
		t.Errorf("queued %d, want 1", got)
	}
	select {
	case r := <-qu.ch:
		t.Errorf("record %d queued after the hole", r.Seq)
	default:
	}
	if res, _ := qu.offer(rec("mars", "x", 4)); res != offerStopped {
		t.Errorf("offer after stop = %d, want stopped", res)
	}
}

func TestQueueCloseReleases(t *testing.T) {
	qu := newQueue(queueChanCap+4, BlockOnOverflow)
	var tk ticket
	for i := uint64(1); tk.turn == nil; i++ {
		_, tk = qu.offer(rec("mars", "x", i))
	}
	done := make(chan error, 1)
	go func() { done <- qu.wait(context.Background(), tk, rec("mars", "x", 99)) }()
	qu.close()
	qu.close()
	if err := <-done; err != nil {
		t.Errorf("wait after close = %v", err)
	}
	if n := qu.len(); n != queueChanCap {
		t.Errorf("len after close = %d, want %d (the channel keeps its records)", n, queueChanCap)
	}
}

func TestRing(t *testing.T) {
	var r ring
	var want []uint64
	next := uint64(1)
	// Interleave pushes and pops so that the buffer wraps and grows.
	for round, n := range []int{5, 20, 3, 40, 1} {
		for range n {
			r.push(&Record{Seq: next})
			want = append(want, next)
			next++
		}
		for range (round + 1) * 2 {
			if r.len() == 0 {
				break
			}
			if got := r.front().Seq; got != want[0] {
				t.Fatalf("front %d, want %d", got, want[0])
			}
			r.pop()
			want = want[1:]
		}
		if r.len() != len(want) {
			t.Fatalf("len %d, want %d", r.len(), len(want))
		}
	}
	for r.len() > 0 {
		if got := r.front().Seq; got != want[0] {
			t.Fatalf("front %d, want %d", got, want[0])
		}
		r.pop()
		want = want[1:]
	}
}

// BenchmarkQueue measures an offer and a receive on an unshared queue.
func BenchmarkQueue(b *testing.B) {
	qu := newQueue(0, CloseOnOverflow)
	defer qu.close()
	r := rec("mars", "x", 1)
	b.ReportAllocs()
	for b.Loop() {
		qu.offer(r)
		<-qu.ch
	}
}

// TestQueueWaitBehindSpill: a queue that fits its channel can still
// spill, when the channel is full at tryPushLocked's send and has room by
// its count (the receiver read in between). A waiting push whose turn
// comes while that record is with the pump must not send straight to the
// channel past it: it waits for the pump. Under load this reordered a
// BLOCKING subscriber's records (TestHubBlockingOrder saw 33, 37, …, 41,
// 34). The state of that race is set up by hand: the pump is started only
// once the waiting push has had its chance to overtake.
func TestQueueWaitBehindSpill(t *testing.T) {
	q := newQueue(3, BlockOnOverflow)
	for i := uint64(1); i <= 3; i++ {
		if res, _ := q.offer(&Record{Seq: i}); res != offerQueued {
			t.Fatalf("offer %d: %v", i, res)
		}
	}
	// Record 4 spilled in the race, its pump not yet running.
	q.mu.Lock()
	q.spill.push(&Record{Seq: 4})
	q.pumping = true
	q.mu.Unlock()
	res, tk := q.offer(&Record{Seq: 5})
	if res != offerWait {
		t.Fatalf("offer 5 with a spilled record and a full channel: %v, want wait", res)
	}
	waited := make(chan error, 1)
	go func() { waited <- q.wait(context.Background(), tk, &Record{Seq: 5}) }()
	// Room for one: with the bug the waiting push took it at once.
	if r := <-q.ch; r.Seq != 1 {
		t.Fatalf("first record %d, want 1", r.Seq)
	}
	// The waiting push has every chance to send now; it must not. A
	// record it sent would be the channel's third.
	for range 1000 {
		select {
		case err := <-waited:
			t.Fatalf("the waiting push finished (%v) while the spilled record 4 was still with the pump", err)
		default:
		}
		runtime.Gosched()
	}
	go q.pump()
	var got []uint64
	deadline := time.After(10 * time.Second)
	for len(got) < 4 {
		select {
		case r := <-q.ch:
			got = append(got, r.Seq)
		case <-deadline:
			t.Fatalf("received %v, want 2, 3, 4, 5", got)
		}
	}
	if want := []uint64{2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting push did not finish")
	}
}
