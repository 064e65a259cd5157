package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
	herald "github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
)

// TestPastSchemasSurviveRestart checks that the registry of past payload
// schemas lives in the backend, not in one process: a herald started on
// a backend whose records were written under an earlier schema (here
// with a breaking change, which a restart does not judge) reads them
// with the schema that wrote them, projected onto its own by name; a
// restart with the schema already current adds no version, so the
// sequences written under each stay right.
func TestPastSchemasSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	defs := filepath.Join(dir, "defs.nspl")
	if err := os.WriteFile(defs, []byte(evolveDefs[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, evolveConfig(defs), nil)
	s.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":1,"temperature":21.5}}`)

	// restart closes the running herald and starts a new one on the same
	// backend with schema version v of the definitions.
	restart := func(old *server, v int) *server {
		t.Helper()
		old.Server.Close()
		if err := os.WriteFile(defs, []byte(evolveDefs[v]), 0o600); err != nil {
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
		ts.Config.ConnContext = sse.ConnContext
		ts.Start()
		t.Cleanup(func() { srv.Close(); ts.CloseClientConnections(); ts.Close() })
		return &server{URL: ts.URL, Handlers: srv.Handlers(), Engine: s.Engine, Server: srv, srv: ts, path: s.path}
	}

	// The same schema again: still one version, its records running on.
	s2 := restart(s, 0)
	s2.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":2,"temperature":22}}`)
	// A new herald with the breaking schema (a restart does not judge it).
	s3 := restart(s2, 2)
	s3.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":3,"temperature":"warm"}}`)
	evs := s3.replayAll(t, "r", "")
	if len(evs) != 3 ||
		payloadText(t, evs[0].Raw) != `{"station":"s1","step":1,"temperature":21.5,"humidity":null}` || evs[0].Data["heraldpayloaderror"] != nil ||
		payloadText(t, evs[1].Raw) != `{"station":"s1","step":2,"temperature":22,"humidity":null}` ||
		payloadText(t, evs[2].Raw) != `{"station":"s1","step":3,"temperature":"warm","humidity":null}` {
		t.Fatalf("replay after the restarts: %v", evs)
	}
	r := s3.do(t, http.MethodGet, "/api/v1/schema/r", "")
	var got []string
	for _, v := range r.Body["payload_schema_versions"].([]any) {
		m := v.(map[string]any)
		got = append(got, jsonString([]any{m["first_seq"], m["last_seq"], m["current"]}))
	}
	if strings.Join(got, " ") != `[1,2,false] [3,3,true]` {
		t.Fatalf("schema versions after the restarts: %s", r.Raw)
	}
}
