package jetstream

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/notification"
)

// TestPublishSeqConcurrent: concurrent PublishSeq calls get the dense
// sequences 1..n, each stored with its own subject, and a subscription
// made right after a PublishSeq returns has its boundary at or above that
// sequence although PublishSeq does not wait for the live feed.
func TestPublishSeqConcurrent(t *testing.T) {
	e := open(t, testOptions(t))
	const workers, each = 16, 40
	var (
		mu   sync.Mutex
		got  = map[uint64]string{}
		errs = make(chan error, workers)
		wg   sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				n := note("mars", "od", strconv.Itoa(w), strconv.Itoa(i))
				seq, err := e.PublishSeq(context.Background(), n)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				got[seq] = n.Subject
				mu.Unlock()
				if i%10 == 9 {
					s, err := e.Subscribe(context.Background(), query("mars", "od", "*", "*"), engine.SubscribeOptions{})
					if err != nil {
						errs <- err
						return
					}
					b := s.Boundary()
					s.Close()
					if b < seq {
						errs <- fmt.Errorf("worker %d: Subscribe after PublishSeq = %d: Boundary = %d", w, seq, b)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	const total = workers * each
	keys := slices.Sorted(func(yield func(uint64) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	})
	if len(keys) != total || keys[0] != 1 || keys[total-1] != total {
		t.Fatalf("sequences: %d distinct, from %d to %d; want 1 to %d", len(keys), keys[0], keys[len(keys)-1], total)
	}
	recs := readAll(t, e, query("mars", "od", "*", "*"), everything, 100)
	if len(recs) != total {
		t.Fatalf("History: %d records, want %d", len(recs), total)
	}
	for _, r := range recs {
		if r.Subject != got[r.Seq] {
			t.Errorf("record %d: subject %s, want %s", r.Seq, r.Subject, got[r.Seq])
		}
	}
	s, err := e.Subscribe(context.Background(), query("mars", "od", "*", "*"), engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b := s.Boundary(); b != total {
		t.Errorf("Boundary after every PublishSeq = %d, want %d", b, total)
	}
}

// BenchmarkPublishSeqParallel is BenchmarkPublishParallel with
// PublishSeq (the acknowledgement only, no wait for the live feed), on 1
// and on DefaultPublishConns publishing connections.
func BenchmarkPublishSeqParallel(b *testing.B) {
	for _, conns := range []int{DefaultPublishConns, 2, 1} {
		b.Run("conns="+strconv.Itoa(conns), func(b *testing.B) {
			o := testOptions(b)
			o.PublishConns = conns
			e := open(b, o)
			ctx := context.Background()
			mustPublish(b, e, note("mars", "od", "enfo", "0"))
			if conns > 1 {
				waitPublishers(b, e, conns)
			}
			var n atomic.Int64
			b.SetParallelism(16)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, err := e.PublishSeq(ctx, note("mars", "od", "enfo", strconv.FormatInt(i%1000, 10))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// waitPublishers waits until the engine's current link has its conns
// publishing connections.
func waitPublishers(t testing.TB, e *Engine, conns int) {
	t.Helper()
	testkit.WaitFor(t, wait, "the publishing connections", func() bool {
		p := e.cur().pubs.Load()
		return p != nil && len(p.conns) == conns
	})
}

// BenchmarkPublishSeq is BenchmarkPublish with PublishSeq.
func BenchmarkPublishSeq(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := e.PublishSeq(ctx, note("mars", "od", "enfo", strconv.Itoa(i%1000))); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPublishConns: single publishes take turns on Options.PublishConns
// connections, the main one included, and the extra ones go with the
// engine.
func TestPublishConns(t *testing.T) {
	o := testOptions(t)
	o.PublishConns = 3
	e, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	waitPublishers(t, e, 3)
	for i := range 30 {
		if _, err := e.PublishSeq(context.Background(), note("mars", "od", strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	connz, err := e.Server().Connz(&server.ConnzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var extra []int64
	for _, c := range connz.Conns {
		if c.Name == "herald-publish" {
			extra = append(extra, c.InMsgs)
		}
	}
	if len(extra) != 2 || extra[0] < 10 || extra[1] < 10 {
		t.Errorf("extra publishing connections: messages received %v, want 2 connections with at least 10 each", extra)
	}
	p := e.cur().pubs.Load()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for i, c := range p.conns {
		if !c.IsClosed() {
			t.Errorf("publishing connection %d still open after Close", i)
		}
	}
}

// TestPublishBatchThenSubscribe: a subscription made right after
// PublishBatch returns has its boundary at or above the batch's last
// sequence in its stream, although PublishBatch does not wait for the
// live feeds; a batch spanning two streams moves both.
func TestPublishBatchThenSubscribe(t *testing.T) {
	e := open(t, testOptions(t))
	const workers, rounds, size = 4, 5, 20
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				ns := make([]*notification.Notification, size)
				for i := range ns {
					base := "mars"
					if i%4 == 3 {
						base = "diss"
					}
					ns[i] = note(base, "od", strconv.Itoa(w), strconv.Itoa(r*size+i))
				}
				last := map[string]uint64{}
				for i, res := range e.PublishBatch(context.Background(), ns) {
					if res.Err != nil {
						errs <- res.Err
						return
					}
					last[ns[i].Base()] = max(last[ns[i].Base()], res.Seq)
				}
				for base, seq := range last {
					s, err := e.Subscribe(context.Background(), engine.Query{Stream: base}, engine.SubscribeOptions{})
					if err != nil {
						errs <- err
						return
					}
					b := s.Boundary()
					s.Close()
					if b < seq {
						errs <- fmt.Errorf("worker %d: Subscribe to %s after a batch stored up to %d: Boundary = %d", w, base, seq, b)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for base, want := range map[string]uint64{"mars": workers * rounds * size * 3 / 4, "diss": workers * rounds * size / 4} {
		s, err := e.Subscribe(context.Background(), engine.Query{Stream: base}, engine.SubscribeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if b := s.Boundary(); b != want {
			t.Errorf("%s: Boundary after every batch = %d, want %d", base, b, want)
		}
		s.Close()
	}
}
