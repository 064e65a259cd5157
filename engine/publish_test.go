package engine_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
)

// TestPublishSeqFallsBackToPublish: an engine without PublishSeq (the
// in-memory one) stores through Publish, with the same sequences.
func TestPublishSeqFallsBackToPublish(t *testing.T) {
	m := engine.NewMemory(engine.MemoryOptions{})
	defer m.Close()
	if _, ok := engine.Engine(m).(engine.SeqPublisher); ok {
		t.Fatal("the in-memory engine is a SeqPublisher: this test needs one that is not")
	}
	for want := uint64(1); want <= 3; want++ {
		seq, err := engine.PublishSeq(context.Background(), m, note("mars", "1"))
		if err != nil || seq != want {
			t.Fatalf("PublishSeq = %d, %v; want %d", seq, err, want)
		}
	}
	if last, err := m.LastSeq(context.Background(), "mars"); err != nil || last != 3 {
		t.Fatalf("LastSeq = %d, %v; want 3", last, err)
	}
}

// BenchmarkMemoryPublishParallel is BenchmarkMemoryPublish with
// GOMAXPROCS×16 concurrent publishers on one stream (as concurrent
// notifies of one event type) on 16,000 subjects, none evicted (as in
// bench/heraldload), no subscriber.
func BenchmarkMemoryPublishParallel(b *testing.B) {
	m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 1, MaxTopics: 100000})
	defer m.Close()
	ctx := context.Background()
	notes := make([]*notification.Notification, 16000)
	for i := range notes {
		notes[i] = note("mars", strconv.Itoa(i))
	}
	var n atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, _, err := m.Publish(ctx, notes[i%int64(len(notes))]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
