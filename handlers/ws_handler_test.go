package handlers_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
)

// TestSessionOutlivesItsUpgrade: the upgrade's handler returns once the
// session is open (the session reads on a goroutine of its own, so that
// an idle session holds neither the handler's deep stack nor the
// upgrade request), so the access log's line of the upgrade, status 101,
// is written while the session is open; the session goes on serving
// requests and subscriptions, and its end is still seen.
func TestSessionOutlivesItsUpgrade(t *testing.T) {
	var logs testkit.Buffer
	s := start(t, wsConfig, startOptions{
		engine: func(testing.TB, *configs.Config) engine.Engine { return engine.NewMemory(engine.MemoryOptions{}) },
		logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	c := s.dial(t, nil)
	c.welcome()
	upgraded := func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"request"`) && strings.Contains(line, `"path":"/api/v1/session"`) {
				if !strings.Contains(line, `"status":101`) {
					t.Fatalf("the upgrade's access log line: %s", line)
				}
				return true
			}
		}
		return false
	}
	testkit.WaitFor(t, wait, "the upgrade's access log line while the session is open", upgraded)
	if s.Handlers.Sessions() != 1 {
		t.Fatalf("%d open sessions, want 1", s.Handlers.Sessions())
	}
	c.ok("subscribe", `"name":"a","event_type":"ev"`)
	c.ok("ping", "")
	if err := c.c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatalf("close: %v", err)
	}
	testkit.WaitFor(t, wait, "the session to end", func() bool { return s.Handlers.Sessions() == 0 && s.Handlers.SessionSubscriptions() == 0 })
}
