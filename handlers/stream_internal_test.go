package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"herald/engine"
	"herald/stream"
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
// nothing more to the (gone) client.
func TestClientGoneDuringHistoryIsNotAnError(t *testing.T) {
	var logs lockedBuffer
	h := New(Options{Engine: engine.NewMemory(engine.MemoryOptions{}),
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	w := httptest.NewRecorder()
	s := &sseSink{h: h, w: w, reqID: "r1", topic: "mars.*"}
	s.sse = startSSE(w, h.now, h.writeTimeout, true)
	r := httptest.NewRequest("POST", "/api/v1/replay", nil)
	s.end(r, replayEndpoint, stream.End{Reason: stream.ClientGone, Err: fmt.Errorf("history: %w", context.Canceled)})
	out := logs.String()
	if strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, `"level":"DEBUG","msg":"stream ended: the client went away"`) {
		t.Fatalf("logs: %s", out)
	}
	if w.Body.Len() != 0 {
		t.Fatalf("written after the client left: %q", w.Body.String())
	}
}
