package metrics

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServePprof: the metrics listener serves Go's profiles only when
// asked to (metrics.pprof); /metrics is served either way.
func TestServePprof(t *testing.T) {
	get := func(t *testing.T, addr, path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	for _, on := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := New(Options{Version: "test"}).Serve(ln, ServeOptions{Pprof: on})
		addr := ln.Addr().String()
		if code, _ := get(t, addr, "/metrics"); code != http.StatusOK {
			t.Errorf("pprof %v: /metrics %d", on, code)
		}
		code, body := get(t, addr, "/debug/pprof/goroutine?debug=1")
		switch {
		case !on && code != http.StatusNotFound:
			t.Errorf("pprof off: /debug/pprof/goroutine %d, want 404", code)
		case on && (code != http.StatusOK || !strings.Contains(body, "goroutine profile:")):
			t.Errorf("pprof on: /debug/pprof/goroutine %d %.80q", code, body)
		}
		code, body = get(t, addr, "/debug/pprof/")
		if on && (code != http.StatusOK || !strings.Contains(body, "heap")) {
			t.Errorf("pprof on: index %d", code)
		}
		if !on && code != http.StatusNotFound {
			t.Errorf("pprof off: index %d, want 404", code)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(ctx)
		cancel()
	}
}
