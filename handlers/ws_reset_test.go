package handlers_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	herald "github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
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
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(wsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := &slowSubscribe{Memory: engine.NewMemory(engine.MemoryOptions{}), entered: make(chan struct{}, 1)}
	var logs testkit.Buffer
	srv, err := herald.New(context.Background(), cfg, herald.Options{ConfigPath: path, Engine: eng, Version: "test",
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(func() {
		srv.Close()
		ts.CloseClientConnections()
		ts.Close()
		_ = eng.Close()
	})
	s := &server{URL: ts.URL, Handlers: srv.Handlers(), Engine: eng, Server: srv, srv: ts, path: path}
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
