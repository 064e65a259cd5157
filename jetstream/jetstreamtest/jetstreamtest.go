// Package jetstreamtest opens JetStream engines on embedded nats-servers
// for the tests of other packages (handlers, main): each call starts a
// fresh server on a fresh data directory and closes it when the test
// ends, so that end-to-end tests can run on both engines. It also runs
// external nats-servers that fault tests can stop and start again. It
// owns no behaviour of its own and is meant to be imported from _test.go
// files only.
package jetstreamtest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/herald-gateway/herald/jetstream"
)

// Open starts an embedded JetStream engine in t.TempDir() with the given
// streams, keeping every notification (allow_duplicates) unless mod says
// otherwise, and closes it when the test ends. mod, when not nil, may
// adjust the options before the engine opens.
func Open(t testing.TB, streams []jetstream.StreamSpec, mod func(*jetstream.Options)) *jetstream.Engine {
	t.Helper()
	o := jetstream.Options{
		Embedded: jetstream.EmbeddedOptions{DataDir: t.TempDir()},
		Defaults: jetstream.StreamPolicy{MaxMsgsPerSubject: -1},
		Streams:  streams,
		Logger:   slog.New(slog.DiscardHandler),
	}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := jetstream.Open(ctx, o)
	if err != nil {
		t.Fatalf("jetstreamtest: open an embedded engine: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// Server is an external nats-server for fault tests: it runs in the test
// process with JetStream, on a loopback port and with its own store
// directory, and Stop and Start take it away and bring it back on the
// same port and store, as a restart of a real server would. Its methods
// are safe for concurrent use.
type Server struct {
	t    testing.TB
	dir  string
	port int

	mu  sync.Mutex
	srv *server.Server // nil while stopped
}

// StartServer starts a Server on a free loopback port with a fresh store
// directory, stopped when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("jetstreamtest: find a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &Server{t: t, dir: t.TempDir(), port: port}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's NATS URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Start runs the server (again) and waits until it accepts clients; it
// does nothing if it is running.
func (s *Server) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "jetstreamtest-" + strconv.Itoa(s.port),
		Host:       "127.0.0.1",
		Port:       s.port,
		JetStream:  true,
		StoreDir:   s.dir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		s.t.Fatalf("jetstreamtest: nats-server on port %d: %v", s.port, err)
	}
	srv.Start()
	if !srv.ReadyForConnections(time.Minute) {
		srv.Shutdown()
		s.t.Fatalf("jetstreamtest: nats-server on port %d not ready", s.port)
	}
	s.srv = srv
}

// Stop shuts the server down and waits until it has; it does nothing if
// it is stopped.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}
