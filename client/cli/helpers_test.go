package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
)

// testConfig is the config of the end-to-end tests; KIND is the
// backend.
const testConfig = `
application:
  host: 127.0.0.1
  port: 0
  base_url: http://herald.test
notification_backend:
  kind: KIND
  in_memory:
    max_history_per_topic: 1000
watch_endpoint:
  replay_batch_delay_ms: 0
  replay_batch_size: 2
  max_historical_notifications: 50
notification_schema:
  mars:
    topic:
      base: mars
      key_order: [class, date, step, stream]
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true, description: MARS class.}
      date: {type: DateHandler, canonical_format: "%Y%m%d", required: false}
      step: {type: IntHandler, range: [0, 360], required: false}
      stream: {type: StringHandler, required: false}
  alert:
    identifier:
      region: {type: EnumHandler, values: [europe, asia], required: false}
      level: {type: IntHandler, required: false}
    payload:
      required: true
`

// engines are the backends the end-to-end tests run on.
var engines = []string{"in_memory", "jetstream"}

// onBoth runs a test on each backend.
func onBoth(t *testing.T, test func(t *testing.T, kind string)) {
	for _, kind := range engines {
		t.Run(kind, func(t *testing.T) { test(t, kind) })
	}
}

// herald is a server started in the test process.
type herald struct {
	srv  *server.Server
	url  string
	path string // the config file, for reloads
}

// startHerald starts herald on a loopback port with config (KIND
// replaced by kind; JetStream embedded, storing under a temporary
// directory) and extra environment overrides.
func startHerald(t *testing.T, kind, config string, env ...string) *herald {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(config, "KIND", kind)), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append(env, "HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR="+t.TempDir())
	cfg, err := configs.Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{ConfigPath: path, Env: env, Version: "0.1.0-test"})
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
	})
	return &herald{srv: srv, url: ts.URL, path: path}
}

// reload rewrites the config file and reloads it.
func (h *herald) reload(t *testing.T, kind, config string) {
	t.Helper()
	if err := os.WriteFile(h.path, []byte(strings.ReplaceAll(config, "KIND", kind)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.srv.Reload(context.Background(), server.ReloadOptions{Trigger: "test"}); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// result is a finished command.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs one client command in-process to its end.
func runCLI(t *testing.T, env []string, stdin io.Reader, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code := Main(ctx, args[0], args[1:], env, stdin, &out, &errOut)
	if ctx.Err() != nil {
		t.Fatalf("%q did not end within a minute", args)
	}
	return result{code, out.String(), errOut.String()}
}

// running is a command running in the background (watch, session).
type running struct {
	cancel         context.CancelFunc
	done           chan int
	stdout, stderr *testkit.Buffer
}

// startCLI starts a command in the background.
func startCLI(t *testing.T, env []string, stdin io.Reader, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan int, 1), stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	go func() { r.done <- Main(ctx, args[0], args[1:], env, stdin, r.stdout, r.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Errorf("%q did not stop", args)
		}
	})
	return r
}

// stop ends the command and returns its exit code.
func (r *running) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

// wait waits for the command to end by itself.
func (r *running) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		r.done <- code
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("the command did not end; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		return -1
	}
}

// waitFor waits until cond holds of the buffer's text, and returns the
// text it held of.
func waitFor(t *testing.T, what string, b *testkit.Buffer, cond func(string) bool) string {
	t.Helper()
	var got string
	testkit.WaitFor(t, 20*time.Second, what, func() bool {
		got = b.String()
		return cond(got)
	})
	return got
}

// lines counts the complete lines of s.
func lines(s string) int { return strings.Count(s, "\n") }

// notifyHTTP publishes through the API directly (not the command under
// test) and returns the notification id.
func notifyHTTP(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/notification", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		NotificationID string `json:"notification_id"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || r.NotificationID == "" {
		t.Fatalf("notify %s: %d %s", body, resp.StatusCode, b)
	}
	return r.NotificationID
}

// marsAt is a mars notify body.
func marsAt(step int, stream string) string {
	b, _ := json.Marshal(map[string]any{"event_type": "mars",
		"identifier": map[string]any{"class": "od", "date": "2025-07-06", "step": step, "stream": stream},
		"payload":    map[string]any{"path": "/data/" + stream + "/" + itoa(step)}})
	return string(b)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// replayHTTP reads a replay's CloudEvents straight from the API (not the
// client under test), each as the exact data line the server wrote.
func replayHTTP(t *testing.T, base, body string) []string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/replay", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("replay %s: %d %s", body, resp.StatusCode, b)
	}
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "replay":
			out = append(out, strings.TrimPrefix(line, "data: "))
		}
	}
	return out
}

// timeOf returns a CloudEvent's time.
func timeOf(t *testing.T, ce string) string {
	t.Helper()
	var v struct {
		Time string `json:"time"`
	}
	if err := json.Unmarshal([]byte(ce), &v); err != nil || v.Time == "" {
		t.Fatalf("CloudEvent %s: %v", ce, err)
	}
	return v.Time
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
