package jetstream

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"herald/engine"
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
