package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

// TestAccessLogFlushedOnShutdown: the log goes through an asynchronous
// buffer, and nothing is lost to it. After 64 notifies from 8 clients and
// a shutdown, herald's output holds one access log line per request, in
// the log's format exactly, with the request id each answer carried, no
// line dropped, and "stopped" as its last line.
func TestAccessLogFlushedOnShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(contractConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	var out, errOut testkit.Buffer
	go func() { done <- run(ctx, []string{"--config", path}, nil, &out, &errOut, ready) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr.String()
	case code := <-done:
		t.Fatalf("exited %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(20 * time.Second):
		t.Fatal("did not start")
	}
	var (
		mu  sync.Mutex
		ids = map[string]bool{}
		wg  sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				resp, err := http.Post(base+"/api/v1/notification", "application/json",
					strings.NewReader(`{"event_type":"forecast","identifier":{"region":"europe","step":1}}`))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("notify: %d", resp.StatusCode)
				}
				mu.Lock()
				ids[resp.Header.Get("X-Request-ID")] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("did not stop")
	}
	line := regexp.MustCompile(`^\{"time":"[^"]+","level":"INFO","msg":"request","method":"POST","path":"/api/v1/notification","status":200,"duration_ms":[0-9.e-]+,"request_id":"([0-9a-f-]{36})","remote":"127\.0\.0\.1:[0-9]+"\}$`)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	logged := map[string]bool{}
	for _, l := range lines {
		if strings.Contains(l, `"msg":"request"`) {
			m := line.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("access log line not in the log's format: %s", l)
			}
			logged[m[1]] = true
		}
		if strings.Contains(l, "dropped") {
			t.Fatalf("lines dropped: %s", l)
		}
	}
	if len(logged) != 64 || len(ids) != 64 {
		t.Fatalf("%d access log lines of %d requests, want 64 of 64", len(logged), len(ids))
	}
	for id := range ids {
		if !logged[id] {
			t.Fatalf("request %s has no access log line", id)
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `"msg":"stopped"`) {
		t.Fatalf("last line %s, want the stopped line", last)
	}
}

// TestLogFormatText: logging.format text writes human-readable key=value
// lines (slog's text form), and the probes' requests (/health, /ready)
// are logged at DEBUG only: at level info they leave no line, at debug
// they do.
func TestLogFormatText(t *testing.T) {
	for _, level := range []string{"info", "debug"} {
		t.Run(level, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			cfg := strings.Replace(contractConfig, "notification_schema:", "logging: {level: "+level+", format: text}\nnotification_schema:", 1)
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ready := make(chan net.Addr, 1)
			done := make(chan int, 1)
			var out, errOut testkit.Buffer
			go func() { done <- run(ctx, []string{"--config", path}, nil, &out, &errOut, ready) }()
			var base string
			select {
			case addr := <-ready:
				base = "http://" + addr.String()
			case code := <-done:
				t.Fatalf("exited %d: %s%s", code, out.String(), errOut.String())
			case <-time.After(20 * time.Second):
				t.Fatal("did not start")
			}
			for _, p := range []string{"/health", "/ready", "/api/v1/schema"} {
				resp, err := http.Get(base + p)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			text := out.String()
			schemaLine := regexp.MustCompile(`(?m)^time=\S+ level=INFO msg=request method=GET path=/api/v1/schema status=200 duration_ms=[0-9.e-]+ request_id=[0-9a-f-]{36} remote=127\.0\.0\.1:[0-9]+$`)
			if !schemaLine.MatchString(text) {
				t.Fatalf("no text access line for /api/v1/schema in:\n%s", text)
			}
			probes := regexp.MustCompile(`(?m)^time=\S+ level=DEBUG msg=request method=GET path=/(health|ready) status=200 `)
			got := len(probes.FindAllString(text, -1))
			want := map[string]int{"info": 0, "debug": 2}[level]
			if got != want || strings.Contains(text, `{"time"`) {
				t.Fatalf("level %s: %d probe lines, want %d (and no JSON):\n%s", level, got, want, text)
			}
		})
	}
}
