package engine_test

import (
	"context"
	"testing"

	"herald/engine"
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
