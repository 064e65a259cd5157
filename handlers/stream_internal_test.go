package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"herald/engine"
	"herald/internal/testkit"
	"herald/stream"
)

// TestClientGoneDuringHistoryIsNotAnError: a history read that fails
// because the client went away is logged at DEBUG, not ERROR, and writes
// nothing more to the (gone) client.
func TestClientGoneDuringHistoryIsNotAnError(t *testing.T) {
	var logs testkit.Buffer
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
