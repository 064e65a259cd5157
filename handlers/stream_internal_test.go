package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"herald/engine"
)

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClientGoneDuringHistoryIsNotAnError: a history read that fails
// because the client went away is logged at DEBUG, not ERROR, and writes
// nothing to the (gone) client.
func TestClientGoneDuringHistoryIsNotAnError(t *testing.T) {
	var logs lockedBuffer
	h := New(Options{Engine: engine.NewMemory(engine.MemoryOptions{}),
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := &stream{h: h, ctx: ctx, reqID: "r1", topic: "mars.*"}
	if o := st.batchError(context.Canceled); o != outGone {
		t.Fatalf("outcome %d, want outGone", o)
	}
	out := logs.String()
	if strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, `"level":"DEBUG","msg":"history fetch ended: the client went away"`) {
		t.Fatalf("logs: %s", out)
	}
}
