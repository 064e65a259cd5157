// Command idlemem measures the memory an idle stream costs a server: the
// resident set size (VmRSS) that herald, run as its own process, grows by
// per idle SSE watcher, against a bare net/http SSE handler (the same
// tool, re-executed as a minimal server) holding as many idle streams in
// the same run. It reports kB per stream for each and the ratio.
//
// Both servers get the same treatment: started alone, measured once idle,
// given N streams whose clients read the opening event and then nothing,
// measured again after a settling pause. Everything runs on 127.0.0.1 and
// is bounded by -timeout. It owns nothing but its measurement and must
// not be imported.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	herald := flag.String("herald", "", "path of the herald binary to measure (go build -o FILE .)")
	streams := flag.Int("streams", 2000, "idle streams opened on each server")
	settle := flag.Duration("settle", 3*time.Second, "pause between opening the streams and reading the RSS")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound of the whole run")
	bare := flag.String("serve-bare", "", "internal: serve the bare SSE reference on `ADDR`")
	flag.Parse()
	if *bare != "" {
		serveBare(*bare)
		return
	}
	if *herald == "" {
		fmt.Fprintln(os.Stderr, "idlemem: -herald is required (go build -o /tmp/herald . first)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *herald, *streams, *settle, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "idlemem:", err)
		os.Exit(1)
	}
}

// serveBare is the reference: a net/http server whose SSE handler sends
// the headers and one event, then waits for the client to go away.
func serveBare(addr string) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: live-notification\ndata: {\"type\":\"connection_established\"}\n\n")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "idlemem: bare server:", err)
		os.Exit(1)
	}
}

// heraldConfig runs herald on the embedded JetStream backend, the
// default setup, with one event type.
const heraldConfig = `
application: {host: 127.0.0.1, port: %d}
logging: {level: warn}
notification_backend:
  kind: jetstream
  jetstream: {data_dir: %q}
watch_endpoint: {max_streams_per_client: 0, max_streams_per_user: 0}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, required: false}
`

// side is one server under measurement.
type side struct {
	name  string
	cmd   *exec.Cmd
	addr  string
	path  string // the stream endpoint
	body  string // the request body
	perKB float64
}

func run(ctx context.Context, heraldPath string, n int, settle time.Duration, out io.Writer) error {
	dir, err := os.MkdirTemp("", "idlemem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	hport, bport := freePort(), freePort()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(heraldConfig, hport, filepath.Join(dir, "js"))), 0o600); err != nil {
		return err
	}
	sides := []*side{
		{name: "herald SSE watch", cmd: exec.CommandContext(ctx, heraldPath, "--config", cfg),
			addr: fmt.Sprintf("127.0.0.1:%d", hport), path: "/api/v1/watch", body: `{"event_type":"mars","identifier":{"class":"od"}}`},
		{name: "bare net/http SSE", cmd: exec.CommandContext(ctx, self, "-serve-bare", fmt.Sprintf("127.0.0.1:%d", bport)),
			addr: fmt.Sprintf("127.0.0.1:%d", bport), path: "/", body: `{}`},
	}
	for _, s := range sides {
		if err = measure(ctx, s, n, settle); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	fmt.Fprintf(out, "idle streams: %d per server, RSS read %s after the last one opened\n", n, settle)
	for _, s := range sides {
		fmt.Fprintf(out, "%-20s %8.1f kB per stream\n", s.name, s.perKB)
	}
	fmt.Fprintf(out, "ratio herald/bare   %8.2f\n", sides[0].perKB/sides[1].perKB)
	return nil
}

// measure starts the side's server, opens n idle streams on it and sets
// perKB from the RSS growth.
func measure(ctx context.Context, s *side, n int, settle time.Duration) error {
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	if err := s.cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		_ = s.cmd.Wait()
	}()
	if err := waitListening(ctx, s.addr); err != nil {
		return err
	}
	// Warm up: one stream opened and closed, so that lazily built state
	// (the stream's live feed, the router) is not counted per stream.
	c, err := openStream(s.addr, s.path, s.body)
	if err != nil {
		return err
	}
	c.Close()
	if err := pause(ctx, settle); err != nil {
		return err
	}
	before, err := rss(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := openStream(s.addr, s.path, s.body)
		if err != nil {
			return fmt.Errorf("stream %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	if err := pause(ctx, settle); err != nil {
		return err
	}
	after, err := rss(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	s.perKB = float64(after-before) / float64(n) / 1000
	return nil
}

// openStream posts the stream request over a fresh connection and reads
// the response headers and the first event; the connection then stays
// idle.
func openStream(addr, path, body string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, addr, len(body), body)
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		c.Close()
		return nil, fmt.Errorf("answer %q: %v", status, err)
	}
	for blank := 0; blank < 2; { // the headers, then the first event
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" || line == "\n" {
			blank++
		}
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// rss returns the resident set size of a process in bytes.
func rss(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS line")
}

// waitListening waits until addr accepts connections.
func waitListening(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if err := pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("%s never listened: %w", addr, err)
		}
	}
}

// pause waits for d or the end of ctx.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
