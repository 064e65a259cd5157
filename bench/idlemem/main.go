// Command idlemem measures the memory an idle stream costs a server: the
// resident set size (VmRSS) that herald, run as its own process, grows by
// per idle stream, against a bare server (the same tool, re-executed as a
// minimal server) holding as many idle streams in the same run. It
// reports kB per stream for each and the ratios (B5):
//
//   - SSE: herald's POST /api/v1/watch against a bare net/http SSE
//     handler that sends the headers and one event;
//   - WebSocket: a herald session (GET /api/v1/session, subprotocol
//     herald.v1) with one live subscription, against a bare
//     github.com/coder/websocket echo connection (herald's library with
//     the same accept options) that has echoed one message; with
//     -centrifugo PATH also against Centrifugo v6 (a general-purpose
//     real-time fan-out server, built apart: never a dependency of
//     herald's module), each connection connected anonymously with its
//     JSON protocol and subscribed to one channel, its pings answered.
//
// Usage:
//
//	go build -o /tmp/herald-bench . && go build -o /tmp/idlemem ./bench/idlemem
//	/tmp/idlemem -herald /tmp/herald-bench [-streams 2000] [-runs 3] [-settle 3s] [-kinds sse,ws]
//	GOBIN=/tmp go install github.com/centrifugal/centrifugo/v6@v6.9.1
//	/tmp/idlemem -herald /tmp/herald-bench -centrifugo /tmp/centrifugo -kinds ws
//
// Every server gets the same treatment: started alone, given one stream
// opened and closed (so that lazily built state is not counted per
// stream), measured once idle, given N streams whose clients read the
// opening frames and then nothing, measured again after a settling
// pause. The clients live in this process, not in the servers. Each run
// starts every server afresh; with several runs it prints the median and
// range. Everything runs on 127.0.0.1 and is bounded by -timeout. It
// owns nothing but its measurement and must not be imported.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

func main() {
	herald := flag.String("herald", "", "path of the herald binary to measure (go build -o FILE .)")
	streams := flag.Int("streams", 2000, "idle streams opened on each server")
	runs := flag.Int("runs", 3, "runs (each measures every server once, started afresh)")
	kinds := flag.String("kinds", "sse,ws", "stream kinds to measure: sse, ws")
	settle := flag.Duration("settle", 3*time.Second, "pause between opening the streams and reading the RSS")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound of the whole run")
	centrifugo := flag.String("centrifugo", "", "path of a Centrifugo v6 binary to measure beside herald's WebSocket sessions")
	bare := flag.String("serve-bare", "", "internal: serve the bare SSE and WebSocket references on `ADDR`")
	flag.Parse()
	if *bare != "" {
		serveBare(*bare)
		return
	}
	if *herald == "" {
		fmt.Fprintln(os.Stderr, "idlemem: -herald is required (go build -o /tmp/herald . first)")
		os.Exit(2)
	}
	if err := raiseFileLimit(2**streams + 256); err != nil {
		fmt.Fprintln(os.Stderr, "idlemem:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	ks := strings.Split(*kinds, ",")
	if *centrifugo != "" && !slices.Contains(ks, "ws") {
		fmt.Fprintln(os.Stderr, "idlemem: -centrifugo is measured with the ws kind: -kinds must include ws")
		os.Exit(2)
	}
	if err := run(ctx, *herald, *centrifugo, *streams, *runs, ks, *settle, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "idlemem:", err)
		os.Exit(1)
	}
}

// raiseFileLimit makes sure the process (and the servers it starts,
// which inherit it) may open n files.
func raiseFileLimit(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur < uint64(n) {
		if lim.Max < uint64(n) {
			return fmt.Errorf("the file descriptor limit (hard %d) is below the %d needed: raise ulimit -Hn", lim.Max, n)
		}
		lim.Cur = lim.Max
	}
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

// serveBare is the reference: a net/http server whose SSE handler sends
// the headers and one event, then waits for the client to go away, and
// whose /ws is a coder/websocket echo (herald's library and accept
// options): each message is written back, then it waits for the next.
func serveBare(addr string) {
	sse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: live-notification\ndata: {\"type\":\"connection_established\"}\n\n")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	})
	mux := http.NewServeMux()
	mux.Handle("/", sse)
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"herald.v1"}, InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			typ, rd, err := c.Reader(ctx)
			if err != nil {
				return
			}
			wr, err := c.Writer(ctx, typ)
			if err != nil {
				return
			}
			if _, err := io.Copy(wr, rd); err != nil {
				return
			}
			if err := wr.Close(); err != nil {
				return
			}
		}
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
	name string
	kind string // sse or ws
	ref  string // "" for herald, else what the ratio calls the reference: bare, centrifugo
	cmd  *exec.Cmd
	addr string
	// open opens one stream on the side's server and reads its opening
	// frames; the stream then stays idle until closed.
	open  func(addr string) (io.Closer, error)
	perKB float64
}

// The requests of herald's streams.
const (
	watchBody = `{"event_type":"mars","identifier":{"class":"od"}}`
	subscribe = `{"id":1,"op":"subscribe","name":"s","event_type":"mars","identifier":{"class":"od"}}`
)

func run(ctx context.Context, heraldPath, centPath string, n, runs int, kinds []string, settle time.Duration, out io.Writer) error {
	dir, err := os.MkdirTemp("", "idlemem-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "idlemem: %s, %s/%s, %d CPUs: %d idle streams per server, RSS read %s after the last one opened\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), n, settle)
	if centPath != "" {
		fmt.Fprintf(out, "centrifugo: %s, default client queue, JSON protocol, one channel per connection\n", benchproc.CentrifugoVersion(centPath))
	}
	per := map[string][]float64{} // kB per stream by side name
	ratios := map[string][]float64{}
	var names, ratioNames []string
	for r := 1; r <= runs; r++ {
		var sides []*side
		for _, k := range kinds {
			hport, err := benchproc.FreePort()
			if err != nil {
				return err
			}
			bport, err := benchproc.FreePort()
			if err != nil {
				return err
			}
			cfg := filepath.Join(dir, fmt.Sprintf("config-%s-%d.yaml", k, r))
			js := filepath.Join(dir, fmt.Sprintf("js-%s-%d", k, r))
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf(heraldConfig, hport, js)), 0o600); err != nil {
				return err
			}
			h := &side{kind: k, cmd: exec.CommandContext(ctx, heraldPath, "--config", cfg), addr: fmt.Sprintf("127.0.0.1:%d", hport)}
			b := &side{kind: k, ref: "bare", cmd: exec.CommandContext(ctx, self, "-serve-bare", fmt.Sprintf("127.0.0.1:%d", bport)), addr: fmt.Sprintf("127.0.0.1:%d", bport)}
			switch k {
			case "sse":
				h.name, h.open = "herald SSE watch", func(a string) (io.Closer, error) { return openStream(a, "/api/v1/watch", watchBody) }
				b.name, b.open = "bare net/http SSE", func(a string) (io.Closer, error) { return openStream(a, "/", "{}") }
			case "ws":
				h.name, h.open = "herald WS session+sub", openSession
				b.name, b.open = "bare coder/ws echo", openEcho
			default:
				return fmt.Errorf("unknown kind %q (sse, ws)", k)
			}
			sides = append(sides, h, b)
			if k == "ws" && centPath != "" {
				cport, err := benchproc.FreePort()
				if err != nil {
					return err
				}
				ccfg := filepath.Join(dir, fmt.Sprintf("centrifugo-%d.json", r))
				if err := os.WriteFile(ccfg, benchproc.CentrifugoConfig(cport, 0), 0o600); err != nil {
					return err
				}
				c := &side{name: "centrifugo WS conn+sub", kind: k, ref: "centrifugo", open: openCentrifugo,
					cmd: exec.CommandContext(ctx, centPath, "--config", ccfg), addr: fmt.Sprintf("127.0.0.1:%d", cport)}
				c.cmd.Dir = dir
				sides = append(sides, c)
			}
		}
		for _, s := range sides {
			if err = measure(ctx, s, n, settle); err != nil {
				return fmt.Errorf("run %d, %s: %w", r, s.name, err)
			}
			if !slices.Contains(names, s.name) {
				names = append(names, s.name)
			}
			per[s.name] = append(per[s.name], s.perKB)
			fmt.Fprintf(out, "run %d  %-22s %8.1f kB per stream\n", r, s.name, s.perKB)
		}
		for _, h := range sides {
			if h.ref != "" {
				continue
			}
			for _, o := range sides {
				if o.ref == "" || o.kind != h.kind {
					continue
				}
				name := fmt.Sprintf("herald/%s %s", o.ref, h.kind)
				if !slices.Contains(ratioNames, name) {
					ratioNames = append(ratioNames, name)
				}
				ratios[name] = append(ratios[name], h.perKB/o.perKB)
				fmt.Fprintf(out, "run %d  ratio %-22s %8.2f\n", r, name, h.perKB/o.perKB)
			}
		}
	}
	fmt.Fprintf(out, "\nmedian [min–max] over %d runs\n", runs)
	for _, name := range names {
		fmt.Fprintf(out, "%-22s %s kB per stream\n", name, spread(per[name], "%.1f"))
	}
	for _, name := range ratioNames {
		fmt.Fprintf(out, "ratio %-22s %s\n", name, spread(ratios[name], "%.2f"))
	}
	return nil
}

// spread renders the median and range of xs.
func spread(xs []float64, f string) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(f+" ["+f+"–"+f+"]", med, s[0], s[len(s)-1])
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
	if err := benchproc.WaitListening(ctx, s.addr, 2*time.Minute); err != nil {
		return err
	}
	// Warm up: one stream opened and closed, so that lazily built state
	// (the stream's live feed, the router) is not counted per stream.
	c, err := s.open(s.addr)
	if err != nil {
		return err
	}
	c.Close()
	if err := benchproc.Pause(ctx, settle); err != nil {
		return err
	}
	before, err := benchproc.RSS(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	conns := make([]io.Closer, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := s.open(s.addr)
		if err != nil {
			return fmt.Errorf("stream %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	if err := benchproc.Pause(ctx, settle); err != nil {
		return err
	}
	after, err := benchproc.RSS(s.cmd.Process.Pid)
	if err != nil {
		return err
	}
	ended := 0
	for _, c := range conns {
		if e, ok := c.(interface{ ended() bool }); ok && e.ended() {
			ended++
		}
	}
	if ended > 0 {
		return fmt.Errorf("%d of %d streams were closed by the server before the RSS was read", ended, n)
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

// wsConn is an open client WebSocket connection.
type wsConn struct{ c *websocket.Conn }

// Close closes the connection at once.
func (w wsConn) Close() error { return w.c.CloseNow() }

// dialWS opens a WebSocket connection offering the herald.v1
// subprotocol.
func dialWS(ctx context.Context, url string) (*websocket.Conn, error) {
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"herald.v1"}})
	return c, err
}

// openSession opens a herald session, reads its welcome frame and
// subscribes once; the session then stays idle.
func openSession(addr string) (io.Closer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dialWS(ctx, "ws://"+addr+"/api/v1/session")
	if err != nil {
		return nil, err
	}
	if _, msg, err := c.Read(ctx); err != nil || !strings.Contains(string(msg), `"type":"welcome"`) {
		c.CloseNow()
		return nil, fmt.Errorf("no welcome frame (%q, %v)", msg, err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(subscribe)); err != nil {
		c.CloseNow()
		return nil, err
	}
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			c.CloseNow()
			return nil, err
		}
		if strings.Contains(string(msg), `"type":"reply"`) {
			if !strings.Contains(string(msg), `"ok":true`) {
				c.CloseNow()
				return nil, fmt.Errorf("subscribe refused: %s", msg)
			}
			return wsConn{c}, nil
		}
	}
}

// openEcho opens a connection to the bare echo and has one message
// echoed; the connection then stays idle.
func openEcho(addr string) (io.Closer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dialWS(ctx, "ws://"+addr+"/ws")
	if err != nil {
		return nil, err
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(subscribe)); err != nil {
		c.CloseNow()
		return nil, err
	}
	if _, _, err := c.Read(ctx); err != nil {
		c.CloseNow()
		return nil, err
	}
	return wsConn{c}, nil
}

// centConn is an idle Centrifugo client connection; a goroutine answers
// the server's application pings (an empty object, {}, every 25 s by
// default) as Centrifugo's own clients do, or the server would close the
// connection after its pong timeout.
type centConn struct {
	c    *websocket.Conn
	done chan struct{}
}

// ended reports whether the connection has ended (the server closed it).
func (c centConn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Close closes the connection at once and waits for its reader.
func (c centConn) Close() error {
	err := c.c.CloseNow()
	<-c.done
	return err
}

// openCentrifugo opens a Centrifugo client connection with its JSON
// protocol, connects anonymously and subscribes to one channel; the
// connection then stays idle but for pings.
func openCentrifugo(addr string) (io.Closer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/connection/websocket", nil)
	if err != nil {
		return nil, err
	}
	for id, cmd := range []string{
		`{"id":1,"connect":{"name":"idlemem"}}`,
		`{"id":2,"subscribe":{"channel":"` + benchproc.CentrifugoNamespace + `:idle"}}`,
	} {
		if err := centCall(ctx, c, id+1, cmd); err != nil {
			c.CloseNow()
			return nil, err
		}
	}
	cc := centConn{c: c, done: make(chan struct{})}
	go func() {
		defer close(cc.done)
		for {
			_, msg, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if strings.TrimSpace(string(msg)) == "{}" {
				if err := c.Write(context.Background(), websocket.MessageText, []byte("{}")); err != nil {
					return
				}
			}
		}
	}()
	return cc, nil
}

// centCall sends the command cmd with id id and reads until its reply,
// which must not be an error (a frame may hold several newline-delimited
// replies).
func centCall(ctx context.Context, c *websocket.Conn, id int, cmd string) error {
	if err := c.Write(ctx, websocket.MessageText, []byte(cmd)); err != nil {
		return err
	}
	prefix := fmt.Sprintf(`{"id":%d,`, id)
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return fmt.Errorf("awaiting the reply to %s: %w", cmd, err)
		}
		for _, line := range strings.Split(string(msg), "\n") {
			if !strings.HasPrefix(line, prefix) {
				continue
			}
			if strings.HasPrefix(line, prefix+`"error":`) {
				return fmt.Errorf("%s answered %s", cmd, line)
			}
			return nil
		}
	}
}
