package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const contractConfig = `
application:
  host: 127.0.0.1
  port: 0
notification_backend:
  kind: in_memory
  in_memory:
    max_history_per_topic: 100
watch_endpoint:
  replay_batch_delay_ms: 0
  max_historical_notifications: 4
notification_schema:
  forecast:
    topic:
      base: forecast
      key_order: [region, step]
    identifier:
      region: {type: EnumHandler, values: [europe, asia], required: true}
      step: {type: IntHandler, required: false}
`

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startHerald runs the herald command in-process on a loopback port and
// returns its base URL and a stop function that waits for the exit code.
func startHerald(t *testing.T, config string, env ...string) (string, func() int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	var out, errOut syncBuffer
	go func() { done <- run(ctx, []string{"--config", path}, env, &out, &errOut, ready) }()
	select {
	case addr := <-ready:
		stop := func() int {
			cancel()
			select {
			case code := <-done:
				return code
			case <-time.After(40 * time.Second):
				t.Fatalf("herald did not exit within the grace period")
				return -1
			}
		}
		t.Cleanup(func() { cancel() })
		return "http://" + addr.String(), stop
	case code := <-done:
		cancel()
		t.Fatalf("herald exited with %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("herald did not start")
	}
	return "", nil
}

type sseEvent struct {
	name string
	data map[string]any
}

// readEvents parses an event stream into a channel.
func readEvents(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "":
				ch <- ev
				ev = sseEvent{}
			}
		}
	}()
	return ch
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestClientContract plays the aviso Python client against herald run as
// a command: every rule pyaviso 2.4 checks literally.
func TestClientContract(t *testing.T) {
	base, stop := startHerald(t, contractConfig)
	allowedReasons := map[string]bool{"server_shutdown": true, "max_duration_reached": true, "end_of_stream": true}

	for i := 1; i <= 6; i++ {
		resp := post(t, base+"/api/v1/notification", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":"europe","step":%d},"payload":{"i":%d}}`, i, i))
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 200 || body["status"] != "success" || len(body["processed_at"].(string)) != 20 {
			t.Fatalf("notify %d: %d %v", i, resp.StatusCode, body)
		}
	}

	// Replay from a cursor: 200 text/event-stream, replay_started first
	// (within 10 s), ids <event_type>@<u64> dense, the cap event carries
	// max_allowed, closing reason from the allowed set.
	resp := post(t, base+"/api/v1/replay", `{"event_type":"forecast","identifier":{"region":"europe"},"from_id":"2"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("replay: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(resp.Body)
	var seqs []uint64
	var limit, closing map[string]any
	first := true
	timeout := time.After(10 * time.Second)
loop:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				break loop
			}
			if first {
				if ev.name != "replay-control" || ev.data["type"] != "replay_started" {
					t.Fatalf("opening event %s %v", ev.name, ev.data)
				}
				first = false
			}
			switch ev.name {
			case "replay":
				id := ev.data["id"].(string)
				at := strings.LastIndex(id, "@")
				seq, err := strconv.ParseUint(id[at+1:], 10, 64)
				if at < 0 || id[:at] != "forecast" || err != nil {
					t.Fatalf("id %q does not parse as <event_type>@<u64>", id)
				}
				seqs = append(seqs, seq)
			case "replay-control":
				if ev.data["type"] == "notification_replay_limit_reached" {
					limit = ev.data
				}
			case "connection-closing":
				closing = ev.data
			}
		case <-timeout:
			t.Fatal("replay did not finish within 10 s")
		}
	}
	resp.Body.Close()
	if fmt.Sprint(seqs) != "[2 3 4 5]" {
		t.Fatalf("sequences %v", seqs)
	}
	if limit == nil || limit["max_allowed"] != float64(4) {
		t.Fatalf("limit event %v", limit)
	}
	if closing == nil || !allowedReasons[closing["reason"].(string)] {
		t.Fatalf("closing %v", closing)
	}

	// Resume: from_id is the next sequence wanted (last id + 1).
	resp = post(t, base+"/api/v1/watch", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":"europe"},"from_id":"%d"}`, seqs[len(seqs)-1]+1))
	events = readEvents(resp.Body)
	got := []string{}
	for len(got) < 2 {
		select {
		case ev := <-events:
			switch ev.name {
			case "replay":
				got = append(got, ev.data["id"].(string))
			case "replay-control":
				if ev.data["type"] == "replay_completed" {
					r := post(t, base+"/api/v1/notification", `{"event_type":"forecast","identifier":{"region":"europe","step":7}}`)
					r.Body.Close()
				}
			case "live-notification":
				if ev.data["id"] != nil {
					got = append(got, ev.data["id"].(string))
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("resume watch stalled")
		}
	}
	if strings.Join(got, " ") != "forecast@6 forecast@7" {
		t.Fatalf("resumed %v", got)
	}

	// A live-only watch opens with connection_established; on SIGTERM-like
	// shutdown every open stream ends with server_shutdown and the process
	// exits 0 within the grace period.
	live := post(t, base+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"asia"}}`)
	liveEvents := readEvents(live.Body)
	if ev := <-liveEvents; ev.data["type"] != "connection_established" {
		t.Fatalf("live opening %v", ev)
	}
	code := stop()
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, ch := range []<-chan sseEvent{events, liveEvents} {
		var last sseEvent
		for ev := range ch {
			last = ev
		}
		if last.name != "connection-closing" || last.data["reason"] != "server_shutdown" {
			t.Fatalf("last event on shutdown %v", last)
		}
	}

	// With auth enabled, a 401 carries the WWW-Authenticate challenges
	// (Bearer, and Basic in direct mode) and the JSON error code.
	authConfig := strings.Replace(contractConfig, "notification_schema:",
		"auth: {enabled: true, mode: direct, auth_o_tron_url: 'http://127.0.0.1:9', jwt_secret: s, admin_roles: {ecmwf: [admin]}}\nnotification_schema:", 1) +
		"    auth: {required: true}\n"
	authBase, authStop := startHerald(t, authConfig)
	resp = post(t, authBase+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"europe"}}`)
	var unauthorized map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&unauthorized)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Join(resp.Header.Values("WWW-Authenticate"), ", ") != "Bearer, Basic" ||
		unauthorized["code"] != "UNAUTHORIZED" || unauthorized["request_id"] != resp.Header.Get("X-Request-ID") {
		t.Fatalf("unauthenticated watch: %d %v %v", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), unauthorized)
	}
	// A 503 from auth-o-tron being unreachable carries Retry-After.
	req, _ := http.NewRequest(http.MethodPost, authBase+"/api/v1/watch", strings.NewReader(`{"event_type":"forecast","identifier":{"region":"europe"}}`))
	req.Header.Set("Authorization", "Bearer abc.def.ghi")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("auth-o-tron unreachable: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code := authStop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	// Over the concurrent-stream limit: 429 with Retry-After.
	limitBase, limitStop := startHerald(t, contractConfig, "HERALD_WATCH_ENDPOINT__MAX_STREAMS_PER_CLIENT=1")
	held := post(t, limitBase+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"europe"}}`)
	if held.StatusCode != 200 {
		t.Fatalf("first stream: %d", held.StatusCode)
	}
	second := post(t, limitBase+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"europe"}}`)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" {
		t.Fatalf("second stream: %d Retry-After %q", second.StatusCode, second.Header.Get("Retry-After"))
	}
	held.Body.Close()
	if code := limitStop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"help"}, nil, &out, &errOut, nil); code != 0 || !strings.Contains(out.String(), "herald [serve] [--config FILE]") || !strings.Contains(out.String(), "-config FILE") {
		t.Fatalf("help: %d %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"bogus"}, nil, &out, &errOut, nil); code != 2 || !strings.Contains(errOut.String(), `unknown command "bogus"`) {
		t.Fatalf("bogus: %d %q", code, errOut.String())
	}
	errOut.Reset()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("application:\n  host: 127.0.0.1\n  port: 0\n  bogus: 1\nnotification_backend:\n  kind: in_memory\n"), 0o600)
	if code := run(context.Background(), []string{"--config", bad}, nil, &out, &errOut, nil); code != 1 || !strings.Contains(errOut.String(), "application.bogus") {
		t.Fatalf("bad config: %d %q", code, errOut.String())
	}
}

// TestShutdownFitsGrace stops herald on the embedded JetStream backend
// while 50 watchers that read nothing hold blocked writes: the whole
// shutdown, the embedded nats-server included, ends within
// shutdown_grace_sec.
func TestShutdownFitsGrace(t *testing.T) {
	const grace = 2 * time.Second
	config := strings.Replace(contractConfig, "  kind: in_memory\n", "  kind: jetstream\n  jetstream:\n    data_dir: "+t.TempDir()+"\n", 1)
	config = strings.Replace(config, "  port: 0\n", "  port: 0\n  shutdown_grace_sec: 2\n", 1)
	base, stop := startHerald(t, config)
	addr := strings.TrimPrefix(base, "http://")
	body := `{"event_type":"forecast","identifier":{"region":"europe"}}`
	for range 50 {
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/watch HTTP/1.1\r\nHost: herald\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	payload := strings.Repeat("x", 4096)
	for i := range 100 {
		resp := post(t, base+"/api/v1/notification", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":"europe","step":%d},"payload":"%s"}`, i, payload))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("notify %d: %d", i, resp.StatusCode)
		}
	}
	start := time.Now()
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	// A little slack for the scheduler: the budget itself is the grace.
	if took := time.Since(start); took > grace+300*time.Millisecond {
		t.Fatalf("shutdown took %v, more than shutdown_grace_sec %v", took, grace)
	} else {
		t.Logf("shutdown with 50 stuck watchers took %v (grace %v)", took, grace)
	}
}

// TestSIGHUPReloads runs the built binary, removes an event type from its
// config file and sends SIGHUP: the event type's watcher ends with
// schema_removed, the log says what changed, and the process keeps
// serving (SIGHUP used to kill it with exit 129).
func TestSIGHUPReloads(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "herald")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "config.yaml")
	extra := "  alert:\n    identifier:\n      level: {type: IntHandler, required: false}\n"
	if err := os.WriteFile(path, []byte(contractConfig+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	waitLog := func(msg string) map[string]any {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("herald exited before logging %q: %s", msg, logs.String())
				}
				if m["msg"] == msg {
					return m
				}
			case <-deadline:
				t.Fatalf("no %q log line", msg)
			}
		}
	}
	base := "http://" + waitLog("herald listening")["address"].(string)
	watch := post(t, base+"/api/v1/watch", `{"event_type":"alert","identifier":{}}`)
	defer watch.Body.Close()
	events := readEvents(watch.Body)
	if ev := <-events; ev.data["type"] != "connection_established" {
		t.Fatalf("opening %v", ev)
	}
	if err := os.WriteFile(path, []byte(contractConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	line := waitLog("configuration reloaded")
	if fmt.Sprint(line["removed"]) != "[alert]" || line["trigger"] != "SIGHUP" || line["fingerprint"] == line["previous_fingerprint"] {
		t.Fatalf("reload log line %v", line)
	}
	for ev := range events {
		if ev.name == "heartbeat" {
			continue
		}
		if ev.name != "connection-closing" || ev.data["reason"] != "schema_removed" {
			t.Fatalf("watcher of the removed event type got %v", ev)
		}
		break
	}
	resp := post(t, base+"/api/v1/notification", `{"event_type":"forecast","identifier":{"region":"europe","step":1}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("notify after the reload: %d", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (%s)", err, logs.String())
	}
}
