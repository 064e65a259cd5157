package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/server"
)

// TestShippedConfigsStart loads every shipped config and starts herald on
// it unchanged, except what the environment moves: the port to a free
// one and, for JetStream configs, the store to a temporary directory with
// the embedded server (an example naming an external cluster runs on one
// embedded server with one replica instead). Each serves its schemas.
func TestShippedConfigsStart(t *testing.T) {
	files, _ := filepath.Glob("configs/examples/*.yaml")
	files = append(files, "configs/config.yaml")
	if len(files) < 2 {
		t.Fatalf("no shipped configs found")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			env := []string{"HERALD_APPLICATION__PORT=0", "HERALD_APPLICATION__HOST=127.0.0.1"}
			cfg, err := configs.Load(f, env)
			if err == nil && cfg.NotificationBackend.Kind == configs.BackendJetStream {
				env = append(env, "HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR="+t.TempDir(),
					"HERALD_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL=")
				if cfg.NotificationBackend.JetStream.Replicas != nil {
					env = append(env, "HERALD_NOTIFICATION_BACKEND__JETSTREAM__REPLICAS=1")
				}
				cfg, err = configs.Load(f, env)
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			rt, err := server.NewRuntime(cfg, server.RuntimeOptions{}, nil)
			if err != nil {
				t.Fatalf("runtime: %v", err)
			}
			reg := rt.Registry
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready := make(chan net.Addr, 1)
			done := make(chan int, 1)
			var out bytes.Buffer
			go func() { done <- run(ctx, []string{"--config", f}, env, io.Discard, &out, ready) }()
			var addr net.Addr
			select {
			case addr = <-ready:
			case code := <-done:
				t.Fatalf("exited %d: %s", code, out.String())
			case <-time.After(10 * time.Second):
				t.Fatal("did not start")
			}
			resp, err := http.Get("http://" + addr.String() + "/api/v1/schema")
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				EventTypes []string `json:"event_types"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			want := reg.Names()
			sort.Strings(want)
			if strings.Join(body.EventTypes, ",") != strings.Join(want, ",") {
				t.Fatalf("event types %v, want %v", body.EventTypes, want)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit code %d", code)
			}
		})
	}
}

// TestSlowHeadersAreCut: a client that never finishes its headers is
// disconnected after read_header_timeout_sec.
func TestSlowHeadersAreCut(t *testing.T) {
	base, _ := startHerald(t, contractConfig+"\n# header timeout\n", "HERALD_APPLICATION__READ_HEADER_TIMEOUT_SEC=1")
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn)
	if err != nil {
		t.Fatalf("connection not closed by the server: %v", err)
	}
	if waited := time.Since(start); waited > 8*time.Second {
		t.Fatalf("closed only after %v", waited)
	}
}

// TestCodecsAtStartup: the codecs block is compiled before the port is
// bound; a definition that does not compile stops herald with its
// position.
func TestCodecsAtStartup(t *testing.T) {
	_, n, err := server.LoadCodecs(&configs.Codecs{
		Definitions: "configs/codecs/jaq.nspl",
		Resources:   []configs.CodecResource{{Name: "proto_bundle", Dir: "configs/codecs/proto"}},
	})
	if err != nil || n == 0 {
		t.Fatalf("shipped definitions: %d statements, %v", n, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.nspl")
	if err := os.WriteFile(bad, []byte("CREATE SCHEMA s (a U8);\nCREATE SCHEMA t (b NOPE);\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = server.LoadCodecs(&configs.Codecs{Definitions: bad})
	if err == nil || !strings.HasPrefix(err.Error(), bad+":2:") {
		t.Fatalf("bad definitions: %v", err)
	}
	if _, _, err := server.LoadCodecs(&configs.Codecs{Definitions: "configs/codecs/jaq.nspl"}); err == nil || !strings.Contains(err.Error(), "proto_bundle") {
		t.Fatalf("missing resource: %v", err)
	}
	if _, _, err := server.LoadCodecs(&configs.Codecs{Definitions: "x", Resources: []configs.CodecResource{{Name: "r", Dir: "/nonexistent"}}}); err == nil || !strings.Contains(err.Error(), "resource r@1 (/nonexistent)") {
		t.Fatalf("missing resource dir: %v", err)
	}
}
