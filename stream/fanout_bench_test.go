package stream_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/stream"
	"github.com/herald-gateway/herald/topic"
)

// countSink counts the live records it is handed and signals when it has
// want of them.
type countSink struct {
	n    atomic.Int64
	want atomic.Int64
	full chan struct{}
}

func (s *countSink) Open(stream.Opening) error { return nil }
func (s *countSink) Record(*engine.Record, stream.Phase) error {
	if s.n.Add(1) == s.want.Load() {
		close(s.full)
	}
	return nil
}
func (s *countSink) Flush() error       { return nil }
func (s *countSink) Heartbeat() error   { return nil }
func (s *countSink) HistoryDone() error { return nil }

// BenchmarkLiveFanout: 100 live streams on the in-memory engine, each
// handed every notification of bursts of 64 (the runners' per-record
// overhead in a burst); ns/op is per notification, all streams.
func BenchmarkLiveFanout(b *testing.B) {
	const streams, burst = 100, 64
	e := engine.NewMemory(engine.MemoryOptions{})
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	total := int64(b.N)
	sinks := make([]*countSink, streams)
	q := engine.Query{Stream: "s", Filter: &notification.Filter{Pattern: topic.Pattern{topic.Literal("s"), topic.Any()}}}
	for i := range sinks {
		sinks[i] = &countSink{full: make(chan struct{})}
		sinks[i].want.Store(-1) // not before the warm-up is over
		spec := stream.Spec{Query: q, QueueSize: 1 << 20}
		go stream.Run(ctx, e, &spec, sinks[i])
	}
	// Every stream is live once a notification published now reaches it.
	deadline := time.Now().Add(wait)
	for i := 0; ; i++ {
		if time.Now().After(deadline) {
			b.Fatal("the streams did not go live")
		}
		live := 0
		for _, s := range sinks {
			if s.n.Load() > 0 {
				live++
			}
		}
		if live == streams {
			break
		}
		if _, _, err := e.Publish(ctx, note("warm"+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Millisecond) // pacing the warm-up publishes only
	}
	// The warm-up is over: no record is in flight (each stream counted
	// the last one), so each count is final.
	for _, s := range sinks {
		s.want.Store(s.n.Load() + total)
	}
	notes := make([]*notification.Notification, burst)
	for i := range notes {
		notes[i] = note(strconv.Itoa(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := e.Publish(ctx, notes[i%burst]); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range sinks {
		select {
		case <-s.full:
		case <-time.After(wait):
			b.Fatalf("a stream got %d of %d records", s.n.Load(), s.want.Load())
		}
	}
}
