package handlers_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
)

// slowSubscribe is the in-memory engine whose Subscribe first waits
// until the caller's context ends, as a subscribe to a backend that is
// slow to answer does, and says on entered that it waits: it holds a
// session's subscription in its setup for as long as the test needs.
type slowSubscribe struct {
	*engine.Memory
	entered chan struct{}
}

func (e *slowSubscribe) Subscribe(ctx context.Context, q engine.Query, o engine.SubscribeOptions) (*engine.Subscription, error) {
	e.entered <- struct{}{}
	<-ctx.Done()
	return e.Memory.Subscribe(ctx, q, o)
}

// TestSessionResetDuringSubscribe: a client that resets its connection
// while its subscription is being set up is a client going away, not a
// server fault: logged at DEBUG, never at ERROR.
func TestSessionResetDuringSubscribe(t *testing.T) {
	eng := &slowSubscribe{Memory: engine.NewMemory(engine.MemoryOptions{}), entered: make(chan struct{}, 1)}
	var logs testkit.Buffer
	s := start(t, wsConfig, startOptions{
		engine: func(testing.TB, *configs.Config) engine.Engine { return eng },
		logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	c := s.dial(t, nil)
	c.welcome()
	c.request("subscribe", `"name":"a","event_type":"ev"`)
	select {
	case <-eng.entered:
	case <-time.After(wait):
		t.Fatal("the subscription's setup did not start")
	}
	_ = c.c.CloseNow() // the client resets the connection
	testkit.WaitFor(t, wait, "the session to end", func() bool { return s.Handlers.Sessions() == 0 && s.Handlers.SessionSubscriptions() == 0 })
	out := logs.String()
	if strings.Contains(out, `"level":"ERROR"`) || !strings.Contains(out, `"level":"DEBUG","msg":"subscription setup ended with the session"`) {
		t.Fatalf("logs:\n%s", out)
	}
}
