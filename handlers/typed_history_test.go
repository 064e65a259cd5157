package handlers_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"herald/configs"
	"herald/handlers"
	herald "herald/server"
)

// TestPastSchemasSurviveRestart checks that the registry of past payload
// schemas lives in the backend, not in one process: a herald started on
// a backend whose records were written under an earlier schema (here
// with a breaking change, which a restart does not judge) reads them
// with the schema that wrote them, projected onto its own by name.
func TestPastSchemasSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	defs := filepath.Join(dir, "defs.nspl")
	if err := os.WriteFile(defs, []byte(evolveDefs[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, evolveConfig(defs), nil)
	s.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":1,"temperature":21.5}}`)
	s.Server.Close()

	// A new herald on the same backend, with the breaking schema.
	if err := os.WriteFile(defs, []byte(evolveDefs[2]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(s.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := herald.New(context.Background(), cfg, herald.Options{ConfigPath: s.path, Engine: s.Engine, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = handlers.ConnContext
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.CloseClientConnections(); ts.Close() })
	s2 := &server{URL: ts.URL, Handlers: srv.Handlers(), Engine: s.Engine, Server: srv, srv: ts, path: s.path}

	s2.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":2,"temperature":"warm"}}`)
	evs := s2.replayAll(t, "r", "")
	if len(evs) != 2 ||
		payloadText(t, evs[0].Raw) != `{"station":"s1","step":1,"temperature":21.5,"humidity":null}` || evs[0].Data["heraldpayloaderror"] != nil ||
		payloadText(t, evs[1].Raw) != `{"station":"s1","step":2,"temperature":"warm","humidity":null}` {
		t.Fatalf("replay after the restart: %v", evs)
	}
}
