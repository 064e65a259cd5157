package handlers_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/topic"
)

// TestLongSubjectsRefused sends every request that used to put an
// over-long subject or stream name on the NATS connection (which made
// the embedded nats-server drop herald's connection for good) and checks
// that each is a 400 naming the field and the limit, and that a normal
// notify and replay still work afterwards.
func TestLongSubjectsRefused(t *testing.T) {
	s := startServer(t, testConfig, nil)
	long := strings.Repeat("a", 4100)
	cjk := strings.Repeat("日", 1400) // 4,200 bytes of UTF-8
	subjectMsg := func(what string, total, field int) string {
		return fmt.Sprintf("the identifier makes a %s of %d bytes (percent-encoded), more than the limit of %d bytes; its longest value is 'region' (%d bytes encoded): send a shorter value",
			what, total, topic.MaxSubjectBytes, field)
	}
	nameMsg := func(prefix, shown string, n int) string {
		return fmt.Sprintf("%s%q (%d bytes) is not a valid stream or event type name: it must match [A-Za-z0-9][A-Za-z0-9_-]*, at most 255 bytes", prefix, shown, n)
	}
	cut := strings.Repeat("a", 64) + "…"
	for _, c := range []struct {
		name, method, path, body string
		code, message            string // code is "" for the admin bodies
	}{
		{"notify ascii", http.MethodPost, "/api/v1/notification",
			`{"event_type":"extreme","identifier":{"region":"` + long + `","anomaly":1}}`,
			"INVALID_NOTIFICATION_REQUEST", subjectMsg("subject", len("extreme.")+4100+len(".1"), 4100)},
		{"notify cjk", http.MethodPost, "/api/v1/notification",
			`{"event_type":"extreme","identifier":{"region":"` + cjk + `","anomaly":1}}`,
			"INVALID_NOTIFICATION_REQUEST", subjectMsg("subject", len("extreme.")+4200+len(".1"), 4200)},
		{"notify reserved characters", http.MethodPost, "/api/v1/notification",
			`{"event_type":"extreme","identifier":{"region":"` + strings.Repeat(".", 700) + `","anomaly":1}}`,
			"INVALID_NOTIFICATION_REQUEST", subjectMsg("subject", len("extreme.")+2100+len(".1"), 2100)},
		{"replay", http.MethodPost, "/api/v1/replay",
			`{"event_type":"extreme","identifier":{"region":"` + long + `"},"from_id":"0"}`,
			"INVALID_REPLAY_REQUEST", subjectMsg("subject filter", len("extreme.")+4100+len(".*"), 4100)},
		{"watch with cursor", http.MethodPost, "/api/v1/watch",
			`{"event_type":"extreme","identifier":{"region":"` + cjk + `"},"from_id":"1"}`,
			"INVALID_WATCH_REQUEST", subjectMsg("subject filter", len("extreme.")+4200+len(".*"), 4200)},
		{"watch live", http.MethodPost, "/api/v1/watch",
			`{"event_type":"extreme","identifier":{"region":"` + long + `"}}`,
			"INVALID_WATCH_REQUEST", subjectMsg("subject filter", len("extreme.")+4100+len(".*"), 4100)},
		{"admin delete", http.MethodDelete, "/api/v1/admin/notification/" + long + "@1", "",
			"", nameMsg("notification id: ", cut, 4100)},
		{"wipe long", http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"` + long + `"}`,
			"", nameMsg("stream_name: ", cut, 4100)},
		{"wipe star", http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"*"}`,
			"", nameMsg("stream_name: ", "*", 1)},
		{"wipe gt", http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":">"}`,
			"", nameMsg("stream_name: ", ">", 1)},
		{"wipe path", http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"../x"}`,
			"", nameMsg("stream_name: ", "../x", 4)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, c.method, c.path, c.body)
			if r.Status != http.StatusBadRequest || r.Body["message"] != c.message {
				t.Fatalf("status %d body %.600s\nwant message %q", r.Status, r.Raw, c.message)
			}
			if c.code != "" && r.Body["code"] != c.code {
				t.Fatalf("code %v, want %s", r.Body["code"], c.code)
			}
			if c.code == "" && r.Body["success"] != false {
				t.Fatalf("admin body %s", r.Raw)
			}
		})
	}
	// The backend is still up: a normal notify is stored and replayed, and
	// so is one whose subject is exactly at the limit (its replay filter
	// goes through the JetStream API subject).
	atLimit := strings.Repeat("b", topic.MaxSubjectBytes-len("extreme.")-len(".1"))
	s.notify(t, `{"event_type":"extreme","identifier":{"region":"north","anomaly":2}}`)
	s.notify(t, `{"event_type":"extreme","identifier":{"region":"`+atLimit+`","anomaly":1}}`)
	for i, region := range []string{"north", atLimit} {
		st := s.open(t, "/api/v1/replay", `{"event_type":"extreme","identifier":{"region":"`+region+`"},"from_id":"0"}`)
		got := names(st.all(wait))
		want := []string{"replay-control:replay_started", fmt.Sprintf("replay:extreme@%d", i+1), "replay-control:replay_completed", "connection-closing:end_of_stream"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("replay of region %d after the refused requests: %v, want %v", i, got, want)
		}
	}
}

// stuckWatcher opens a watch over a raw TCP connection with a tiny
// receive buffer and never reads the response: a client that hangs.
func stuckWatcher(t *testing.T, addr, body string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := fmt.Sprintf("POST /api/v1/watch HTTP/1.1\r\nHost: herald\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// sendQueueBytes sums the kernel send queues (tx_queue of /proc/net/tcp)
// of the TCP sockets whose local port is port, and returns the largest.
func sendQueueBytes(t *testing.T, port int) (total, biggest int64) {
	t.Helper()
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("reading the kernel's socket table: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		_, lport, _ := strings.Cut(f[1], ":")
		if p, _ := strconv.ParseInt(lport, 16, 32); int(p) != port {
			continue
		}
		tx, _, _ := strings.Cut(f[4], ":")
		n, _ := strconv.ParseInt(tx, 16, 64)
		total += n
		biggest = max(biggest, n)
	}
	return total, biggest
}

// TestStuckWatchersAreBounded opens 200 watchers that read nothing and a
// few that read everything, publishes 5,000 notifications, and checks
// that the stuck ones hold at most their capped socket send buffers in
// the kernel, that each is closed within max_lag_sec and a few seconds,
// and that the healthy ones get every notification in order.
func TestStuckWatchersAreBounded(t *testing.T) {
	const (
		stuck     = 200
		healthy   = 4
		published = 5000
		maxLag    = 2 * time.Second
	)
	// HERALD_STUCK_SEND_BUFFER=0 measures the reference for
	// BENCHMARKS.md: the kernel's own send buffers, uncapped.
	sendBuf := configs.DefaultStreamSendBufferBytes
	if v, ok := os.LookupEnv("HERALD_STUCK_SEND_BUFFER"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("HERALD_STUCK_SEND_BUFFER=%q: want a byte count", v)
		}
		sendBuf = n
	}
	s := startServer(t, testConfig, func(c *configs.Config) {
		c.WatchEndpoint.MaxLagSec = int(maxLag / time.Second)
		c.WatchEndpoint.StreamSendBufferBytes = sendBuf
	})
	u, _ := url.Parse(s.URL)
	port, _ := strconv.Atoi(u.Port())
	watch := `{"event_type":"extreme","identifier":{"region":"r"}}`
	var good []*eventStream
	for range healthy {
		st := s.open(t, "/api/v1/watch", watch)
		st.next(wait)
		good = append(good, st)
	}
	for range stuck {
		stuckWatcher(t, u.Host, watch)
	}
	testkit.WaitFor(t, wait, "every watcher open", func() bool { return s.Handlers.Streams() == stuck+healthy })

	payload := strings.Repeat("p", 600)
	var peak, perSocketPeak int64
	sample := func() {
		total, biggest := sendQueueBytes(t, port)
		peak, perSocketPeak = max(peak, total), max(perSocketPeak, biggest)
	}
	for i := 1; i <= published; i++ {
		s.notify(t, fmt.Sprintf(`{"event_type":"extreme","identifier":{"region":"r","anomaly":%d},"payload":"%s"}`, i%100, payload))
		if i%250 == 0 {
			sample()
		}
	}
	last := time.Now()
	for _, st := range good {
		for want := 1; want <= published; want++ {
			ev := st.skipBeats(30 * time.Second)
			if ev.Name != "live-notification" || ev.Data["id"] != fmt.Sprintf("extreme@%d", want) {
				t.Fatalf("healthy watcher: got %s %.200s, want extreme@%d", ev.Name, ev.Raw, want)
			}
		}
	}
	testkit.WaitFor(t, maxLag+10*time.Second, "the stuck watchers closed", func() bool {
		sample()
		return s.Handlers.Streams() == healthy
	})
	closedAfter := time.Since(last)
	t.Logf("peak kernel send-queue bytes of %d stuck and %d healthy watchers: %d (%.1f KiB per stuck watcher, %.1f KiB on the fullest socket, cap %d KiB); stuck watchers closed %.1fs after the last notify",
		stuck, healthy, peak, float64(peak)/stuck/1024, float64(perSocketPeak)/1024, sendBuf/1024, closedAfter.Seconds())
	if sendBuf > 0 && peak > int64(stuck*sendBuf) {
		t.Fatalf("stuck watchers held %d bytes in kernel send queues, more than %d × %d", peak, stuck, sendBuf)
	}
	if closedAfter > maxLag+5*time.Second {
		t.Fatalf("stuck watchers closed %v after the last notification, want within max_lag_sec %v + 5s", closedAfter, maxLag)
	}
}

// TestDuplicateKeysRefused checks that a key repeated inside identifier,
// a constraint or the payload is refused as a repeated top-level key is,
// naming the key, on notify, watch and replay.
func TestDuplicateKeysRefused(t *testing.T) {
	s := startServer(t, testConfig, nil)
	identDup := "Request deserialization failed: duplicate field `class` in `identifier`: each identifier key may appear once"
	for _, c := range []struct {
		name, path, body, code, message string
	}{
		{"notify identifier", "/api/v1/notification", `{"event_type":"mars","identifier":{"class":"rd","class":"od"}}`,
			"INVALID_REQUEST_SHAPE", identDup},
		{"watch identifier", "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","class":"rd"}}`,
			"INVALID_REQUEST_SHAPE", identDup},
		{"replay identifier", "/api/v1/replay", `{"event_type":"mars","identifier":{"class":"od","class":"od"},"from_id":"0"}`,
			"INVALID_REQUEST_SHAPE", identDup},
		{"top level", "/api/v1/notification", `{"event_type":"mars","event_type":"mars","identifier":{"class":"od"}}`,
			"INVALID_REQUEST_SHAPE", "Request deserialization failed: duplicate field `event_type`"},
		{"constraint", "/api/v1/watch", `{"event_type":"mars","identifier":{"class":"od","step":{"gte":1,"gte":5}}}`,
			"INVALID_WATCH_REQUEST", `invalid value for identifier 'step': constraint object has 2 keys ("gte", "gte"); it needs exactly one operator key, for a range use {"between": [min, max]}`},
		{"payload", "/api/v1/notification", `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo","step":1},"payload":{"a":{"b":1,"b":2}}}`,
			"INVALID_NOTIFICATION_REQUEST", "payload repeats the key 'b' (at /payload/a/b): each key of a JSON object may appear once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, http.MethodPost, c.path, c.body)
			if r.Status != http.StatusBadRequest || r.Body["code"] != c.code || r.Body["message"] != c.message {
				t.Fatalf("status %d body %s\nwant %s %q", r.Status, r.Raw, c.code, c.message)
			}
		})
	}
}
