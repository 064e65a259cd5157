package jetstream

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
)

// benchEngine opens an embedded engine for a benchmark.
func benchEngine(b *testing.B) *Engine {
	b.Helper()
	o := testOptions(b)
	return open(b, o)
}

// BenchmarkPublish measures Publish (ack and stored time) on the embedded
// server, one publisher; BenchmarkRawPublish is its reference.
func BenchmarkPublish(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := e.Publish(ctx, note("mars", "od", "enfo", strconv.Itoa(i%1000))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishParallel is BenchmarkPublish with GOMAXPROCS×16
// concurrent publishers.
func BenchmarkPublishParallel(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	var n atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, _, err := e.Publish(ctx, note("mars", "od", "enfo", strconv.FormatInt(i%1000, 10))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRawPublish is the reference of BenchmarkPublish: a synchronous
// JetStream publish of the same message on the same server.
func BenchmarkRawPublish(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	if _, err := e.ensure(ctx, "mars"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m := &nats.Msg{Subject: "mars.od.enfo." + strconv.Itoa(i%1000), Data: []byte(`{"n":"x"}`), Header: nats.Header{}}
		if _, err := e.cur().js.PublishMsg(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
}

// historyFixture stores n notifications, 1/16 of them with class "od".
func historyFixture(b *testing.B, n int) *Engine {
	b.Helper()
	e := benchEngine(b)
	ctx := context.Background()
	var futures []jetstream.PubAckFuture
	classes := []string{"od", "rd", "ea", "mc", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "ea1", "eb", "ec"}
	for i := range n {
		m, err := message(note("mars", classes[i%16], "enfo", strconv.Itoa(i)), "MARS", "mars", strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		f, err := e.cur().js.PublishMsgAsync(m)
		if err != nil {
			b.Fatal(err)
		}
		futures = append(futures, f)
	}
	select {
	case <-e.cur().js.PublishAsyncComplete():
	case <-ctx.Done():
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			b.Fatal(err)
		}
	}
	return e
}

// BenchmarkHistory reads 10,000 stored notifications per iteration in
// pages of 1,000, unfiltered and with a filter matching 1/16 of them.
func BenchmarkHistory(b *testing.B) {
	const n = 10000
	e := historyFixture(b, n)
	for _, c := range []struct {
		name string
		q    engine.Query
		want int
	}{
		{"all", engine.Query{Stream: "mars"}, n},
		{"one_in_16", query("mars", "od", "*", "*"), n / 16},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				h, err := e.History(context.Background(), c.q, everything)
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for {
					recs, done, err := h.Next(context.Background(), 1000)
					if err != nil {
						b.Fatal(err)
					}
					got += len(recs)
					if done {
						break
					}
				}
				h.Close()
				if got != c.want {
					b.Fatalf("read %d, want %d", got, c.want)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "stored/s")
		})
	}
}

// BenchmarkRawHistory is the reference of BenchmarkHistory/all: an ordered
// consumer reading the same 10,000 messages.
func BenchmarkRawHistory(b *testing.B) {
	const n = 10000
	e := historyFixture(b, n)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, err := e.cur().js.OrderedConsumer(ctx, "MARS", jetstream.OrderedConsumerConfig{})
		if err != nil {
			b.Fatal(err)
		}
		it, err := c.Messages()
		if err != nil {
			b.Fatal(err)
		}
		for got := 0; got < n; got++ {
			if _, err := it.Next(); err != nil {
				b.Fatal(err)
			}
		}
		it.Stop()
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "stored/s")
}

// BenchmarkClose measures Close of an embedded engine with two
// configured streams holding 1,000 notifications and a live watcher on
// each: stopping the feeds, deleting their consumers, closing the
// connection and shutting the embedded server down. Opening and filling
// each engine is not timed.
func BenchmarkClose(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		o := testOptions(b)
		o.Logger = nil
		e, err := Open(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			if _, _, err := e.Publish(ctx, note([]string{"mars", "diss"}[i%2], "od", strconv.Itoa(i))); err != nil {
				b.Fatal(err)
			}
		}
		for _, base := range []string{"mars", "diss"} {
			if _, err := e.Subscribe(ctx, engine.Query{Stream: base}, engine.SubscribeOptions{QueueSize: 2000}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBatchSizes are the batch sizes of the batch publish benchmarks.
var benchBatchSizes = []int{100, 1000}

// batchBenchEngine opens an embedded engine for a batch benchmark; the
// stream keeps its newest 100,000 notifications, so that long runs do
// not fill the disk.
func batchBenchEngine(b *testing.B) *Engine {
	b.Helper()
	o := testOptions(b)
	o.Defaults.MaxMsgs = 100_000
	e := open(b, o)
	if _, err := e.ensure(context.Background(), "mars"); err != nil {
		b.Fatal(err)
	}
	return e
}

// benchBatch is a batch of n notifications on 1,000 subjects of mars.
func benchBatch(n int) []*notification.Notification {
	ns := make([]*notification.Notification, n)
	for i := range ns {
		ns[i] = note("mars", "od", "enfo", strconv.Itoa(i%1000))
	}
	return ns
}

// perNotification reports the time per notification of a batch
// benchmark whose iterations are batches of size.
func perNotification(b *testing.B, size int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/notification")
}

// BenchmarkPublishBatch measures PublishBatch on the embedded server,
// one batch per iteration; BenchmarkRawAsyncPublish is its reference
// and BenchmarkPublishSequential what a batch costs without it.
func BenchmarkPublishBatch(b *testing.B) {
	for _, size := range benchBatchSizes {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			e := batchBenchEngine(b)
			ns := benchBatch(size)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for i, r := range e.PublishBatch(ctx, ns) {
					if r.Err != nil {
						b.Fatalf("result %d: %v", i, r.Err)
					}
				}
			}
			perNotification(b, size)
		})
	}
}

// BenchmarkRawAsyncPublish is the reference of BenchmarkPublishBatch: the
// same messages (subject, payload and headers, built by the engine's
// message with a fresh Nats-Msg-Id each) published with nats.go's
// PublishMsgAsync on the engine's JetStream context, then waiting for
// every acknowledgement.
func BenchmarkRawAsyncPublish(b *testing.B) {
	for _, size := range benchBatchSizes {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			e := batchBenchEngine(b)
			ns := benchBatch(size)
			js := e.cur().js
			futures := make([]jetstream.PubAckFuture, size)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for i, n := range ns {
					m, err := message(n, "MARS", "mars", nuid.Next())
					if err != nil {
						b.Fatal(err)
					}
					if futures[i], err = js.PublishMsgAsync(m); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
				for i, f := range futures {
					select {
					case <-f.Ok():
					case err := <-f.Err():
						b.Fatalf("future %d: %v", i, err)
					}
				}
			}
			perNotification(b, size)
		})
	}
}

// BenchmarkPublishSequential is a batch published the way engines
// without PublishBatch are (engine.PublishAll): one Publish after the
// other.
func BenchmarkPublishSequential(b *testing.B) {
	for _, size := range benchBatchSizes {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			e := batchBenchEngine(b)
			ns := benchBatch(size)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, n := range ns {
					if _, _, err := e.Publish(ctx, n); err != nil {
						b.Fatal(err)
					}
				}
			}
			perNotification(b, size)
		})
	}
}

// BenchmarkPublishBatchRatio runs PublishBatch, the raw asynchronous
// publishes of BenchmarkRawAsyncPublish and the sequential Publish of
// BenchmarkPublishSequential in turn on one engine, each iteration one
// batch of each in rotating order, so that a machine whose load drifts
// slows all three alike; it reports each one's time per notification
// and PublishBatch's throughput relative to the raw publishes
// (raw time / batch time: 1 is as fast). After each run it waits,
// untimed, for the live feed to catch up, which PublishBatch and Publish
// do (timed) and the raw publishes do not, so that no run pays for the
// previous one's feed.
func BenchmarkPublishBatchRatio(b *testing.B) {
	for _, size := range benchBatchSizes {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			e := batchBenchEngine(b)
			ns := benchBatch(size)
			ctx := context.Background()
			js := e.cur().js
			futures := make([]jetstream.PubAckFuture, size)
			batch := func() {
				for i, r := range e.PublishBatch(ctx, ns) {
					if r.Err != nil {
						b.Fatalf("result %d: %v", i, r.Err)
					}
				}
			}
			raw := func() {
				for i, n := range ns {
					m, err := message(n, "MARS", "mars", nuid.Next())
					if err != nil {
						b.Fatal(err)
					}
					if futures[i], err = js.PublishMsgAsync(m); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
				for i, f := range futures {
					select {
					case <-f.Ok():
					case err := <-f.Err():
						b.Fatalf("future %d: %v", i, err)
					}
				}
			}
			sequential := func() {
				for _, n := range ns {
					if _, _, err := e.Publish(ctx, n); err != nil {
						b.Fatal(err)
					}
				}
			}
			// drain waits, untimed, until the live feed has read what
			// the last run stored: the raw publishes do not wait for it,
			// and the next run would pay for it.
			st, err := e.ensure(ctx, "mars")
			if err != nil {
				b.Fatal(err)
			}
			drain := func() {
				last, err := e.LastSeq(ctx, "mars")
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := st.feed.Load().timeOf(ctx, last, time.Now().Add(wait)); !ok {
					b.Fatalf("the live feed did not read %d", last)
				}
			}
			runs := []func(){batch, raw, sequential}
			var spent [3]time.Duration
			b.ResetTimer()
			for i := range b.N {
				for k := range runs {
					k = (k + i) % len(runs)
					began := time.Now()
					runs[k]()
					spent[k] += time.Since(began)
					drain()
				}
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*size) }
			b.ReportMetric(per(spent[0]), "batch-ns/notification")
			b.ReportMetric(per(spent[1]), "raw-ns/notification")
			b.ReportMetric(per(spent[2]), "sequential-ns/notification")
			b.ReportMetric(float64(spent[1])/float64(spent[0]), "batch/raw-throughput")
		})
	}
}
