package sse

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/stream"
)

// TestClientGoneDuringHistoryIsNotAnError: a history read that fails
// because the client went away is logged at DEBUG, not ERROR, and writes
// nothing more to the (gone) client.
func TestClientGoneDuringHistoryIsNotAnError(t *testing.T) {
	var logs testkit.Buffer
	w := httptest.NewRecorder()
	s := NewSink(w, Options{RequestID: "r1", Topic: "mars.*", AnyOrigin: true,
		Log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s.sse = startWriter(w, s.o.Now, s.o.WriteTimeout, true)
	s.End(stream.End{Reason: stream.ClientGone, Err: fmt.Errorf("history: %w", context.Canceled)})
	out := logs.String()
	if strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, `"level":"DEBUG","msg":"stream ended: the client went away"`) {
		t.Fatalf("logs: %s", out)
	}
	if w.Body.Len() != 0 {
		t.Fatalf("written after the client left: %q", w.Body.String())
	}
}
