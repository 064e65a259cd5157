// Command heraldload measures herald on its default backend against raw
// JetStream, in one process, on loopback: it starts an embedded
// nats-server through herald's JetStream engine and herald's HTTP stack
// (built from the same packages as the herald command), then measures
//
//   - B1 notify: HTTP notify requests/s and latency p50/p99 at several
//     concurrencies, against synchronous JetStream publishes of the same
//     messages at the same concurrency (and asynchronous publishes as the
//     ceiling) and against the HTTP floor (a tiny GET on the same stack);
//     -rounds repeats every level, the sides interleaved in an order that
//     rotates per round, and reports each round and the medians;
//     -engine in_memory measures herald on its in-memory engine against
//     the HTTP floor only (B1 only);
//   - B4 replay: events/s of one SSE replay of N stored notifications,
//     unfiltered and with a filter matching 1/16 of the subjects, against
//     an ordered consumer reading the same stream with the same filter;
//   - B2 live latency: publish → SSE receive latency p50/p99 with 1, 100
//     and 1,000 watchers, against raw publish → ordered consumer latency
//     with as many consumers.
//
// Every phase is bounded in count and time. It prints one table with the
// ratios. It owns nothing but its own measurements: it must not be
// imported, and it never listens beyond 127.0.0.1.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
	"github.com/herald-gateway/herald/bench/internal/leanhttp"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/logwriter"
	herjs "github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/server"
)

// flags of the tool.
type params struct {
	duration    time.Duration
	concurrency []int
	replay      int
	watchers    []int
	events      int
	only        string
	sides       string
	timeout     time.Duration
	batch       int
	engine      string
	rounds      int
	// logPath receives herald's log at level info (the access log line
	// of every request, as the herald command writes it); empty: a file
	// in the run's temporary directory.
	logPath string
	// logWriter is async (herald's writer) or sync.
	logWriter string
}

func main() {
	var p params
	var conc, watch string
	flag.DurationVar(&p.duration, "duration", 3*time.Second, "B1: measuring time per concurrency level and side")
	flag.StringVar(&conc, "concurrency", "1,16,64", "B1: concurrency levels")
	flag.IntVar(&p.replay, "replay", 100000, "B4: stored notifications replayed")
	flag.IntVar(&p.batch, "replay-batch", 1000, "B4: watch_endpoint.replay_batch_size")
	flag.StringVar(&watch, "watchers", "1,100,1000", "B2: watcher counts")
	flag.IntVar(&p.events, "events", 200, "B2: notifications published per watcher count and side")
	flag.StringVar(&p.only, "only", "B1,B4,B2", "figures to measure")
	flag.StringVar(&p.sides, "sides", "herald,raw", "B1: sides to measure (for profiling one of them)")
	flag.DurationVar(&p.timeout, "timeout", 15*time.Minute, "bound of the whole run")
	flag.StringVar(&p.engine, "engine", "jetstream", "herald's backend: jetstream (embedded) or in_memory (B1 against the HTTP floor only)")
	flag.IntVar(&p.rounds, "rounds", 1, "B1: rounds of every level, sides interleaved; medians reported")
	flag.StringVar(&p.logPath, "log", "", "herald's log (level info, one access log line per request) goes to `FILE`; default a file in the run's temporary directory")
	flag.StringVar(&p.logWriter, "log-writer", "async", "herald's log writer: async (as the herald command) or sync (each line written by the request that logs it)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	memprofile := flag.String("memprofile", "", "write an allocation profile (every allocation of the run) to `FILE`")
	traceFile := flag.String("trace", "", "write an execution trace of the whole run to `FILE` (go tool trace)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "heraldload:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "heraldload:", err)
			}
		}()
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "heraldload:", err)
			os.Exit(2)
		}
		defer trace.Stop()
	}
	var err error
	if p.concurrency, err = benchproc.Ints(conc); err == nil {
		p.watchers, err = benchproc.Ints(watch)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "heraldload:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if err := run(ctx, p, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "heraldload:", err)
		pprof.StopCPUProfile()
		trace.Stop()
		os.Exit(1)
	}
}

// config is the herald configuration of the run: the embedded JetStream
// backend (or the in-memory one) and three event types (one stream each)
// keeping every notification; the log at level info, as herald's
// default, so that every request writes its access log line.
const config = `
application:
  host: 127.0.0.1
  port: 8000
logging:
  level: info
notification_backend:
%s
watch_endpoint:
  sse_heartbeat_interval_sec: 30
  connection_max_duration_sec: 3600
  replay_batch_size: %d
  replay_batch_delay_ms: 0
  max_historical_notifications: 10000000
  live_queue_size: 100000
notification_schema:
%s`

const schema = `
  %s:
    payload:
      required: false
    topic:
      base: %s
      key_order: [class, kind, step]
    identifier:
      class:
        type: StringHandler
        required: false
      kind:
        type: StringHandler
        required: false
      step:
        type: IntHandler
        required: false
%s`

// bench is the running system under test.
type bench struct {
	p      params
	base   string // http://127.0.0.1:port
	client *http.Client
	eng    *herjs.Engine
	nc     *nats.Conn // a raw client of the same embedded server
	js     jetstream.JetStream
	// jsTCP is a raw client of the same server over loopback TCP.
	jsTCP jetstream.JetStream
	// lean is the minimal HTTP/1.1 client of the B1 load.
	lean *leanhttp.Pool
}

func run(ctx context.Context, p params, out io.Writer) error {
	if p.engine != "jetstream" && p.engine != "in_memory" {
		return fmt.Errorf("-engine %q: want jetstream or in_memory", p.engine)
	}
	if p.rounds < 1 {
		return fmt.Errorf("-rounds %d: want at least 1", p.rounds)
	}
	if p.engine == "in_memory" {
		if p.only != "B1" {
			return fmt.Errorf("-engine in_memory measures B1 only (give -only B1)")
		}
		p.sides = strings.ReplaceAll(p.sides, "raw", "") // no JetStream to publish to
	}
	dir, err := os.MkdirTemp("", "heraldload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var schemas string
	for _, name := range []string{"bench", "replay", "live"} {
		policy := "    storage_policy:\n      allow_duplicates: true\n"
		if p.engine == "in_memory" {
			policy = "" // not supported there
		}
		schemas += fmt.Sprintf(schema, name, name, policy)
	}
	path := filepath.Join(dir, "config.yaml")
	backend := fmt.Sprintf("  kind: jetstream\n  jetstream:\n    data_dir: %q", filepath.Join(dir, "jetstream"))
	if p.engine == "in_memory" {
		backend = "  kind: in_memory\n  in_memory:\n    max_topics: 100000"
	}
	text := fmt.Sprintf(config, backend, p.batch, schemas)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return err
	}
	cfg, err := configs.Load(path, nil)
	if err != nil {
		return err
	}
	logPath := p.logPath
	if logPath == "" {
		logPath = filepath.Join(dir, "herald.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// herald's log as the herald command writes it (main.go: JSON lines,
	// the configured level, through the asynchronous writer), or written
	// synchronously (-log-writer sync, as before that writer).
	level := new(slog.LevelVar)
	var logOut io.Writer = logFile
	switch p.logWriter {
	case "async":
		aw := logwriter.New(logFile, logwriter.Options{})
		defer func() {
			_ = aw.Close()
			if n := aw.Dropped(); n > 0 {
				fmt.Fprintf(out, "herald's log writer dropped %d lines\n", n)
			}
		}()
		logOut = aw
	case "sync":
	default:
		return fmt.Errorf("-log-writer %q: want async or sync", p.logWriter)
	}
	log := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: level}))
	var eng engine.Engine
	var jsEng *herjs.Engine
	if p.engine == "jetstream" {
		opts, err := server.JetStreamOptions(cfg)
		if err != nil {
			return err
		}
		opts.Logger = log
		// A loopback port besides the in-process connection, for the raw
		// reference over TCP (what a publisher bypassing herald would use).
		opts.Embedded.Listen = "127.0.0.1:0"
		if jsEng, err = herjs.Open(ctx, opts); err != nil {
			return err
		}
		defer jsEng.Close()
		eng = jsEng
	}
	// herald as the herald command assembles it, on the engine opened
	// above (so that the raw references share its embedded server); the
	// in-memory engine is built by New.
	hs, err := server.New(ctx, cfg, server.Options{Engine: eng, Logger: log, LogLevel: level, Version: "heraldload"})
	if err != nil {
		return err
	}
	srv := hs.HTTPServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	defer hs.Close()
	b := &bench{
		p:    p,
		base: "http://" + ln.Addr().String(),
		client: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 2048, MaxConnsPerHost: 0, DisableCompression: true,
		}},
		lean: leanhttp.New(ln.Addr().String()),
	}
	defer b.lean.Close()
	if jsEng != nil {
		nc, err := nats.Connect("", nats.InProcessServer(jsEng.Server()))
		if err != nil {
			return err
		}
		defer nc.Close()
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
		if err != nil {
			return err
		}
		tcp, err := nats.Connect(jsEng.Server().ClientURL())
		if err != nil {
			return err
		}
		defer tcp.Close()
		jsTCP, err := jetstream.New(tcp)
		if err != nil {
			return err
		}
		b.eng, b.nc, b.js, b.jsTCP = jsEng, nc, js, jsTCP
	}
	fmt.Fprintf(out, "heraldload: %s, %s/%s, GOMAXPROCS=%d, %s, loopback HTTP, herald's log at level info to a file (%s writer)\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), engineLabel(p.engine), p.logWriter)
	if strings.Contains(p.only, "B1") {
		if err := b.b1(ctx, out); err != nil {
			return fmt.Errorf("B1: %w", err)
		}
	}
	if strings.Contains(p.only, "B4") {
		if err := b.b4(ctx, out); err != nil {
			return fmt.Errorf("B4: %w", err)
		}
	}
	if strings.Contains(p.only, "B2") {
		if err := b.b2(ctx, out); err != nil {
			return fmt.Errorf("B2: %w", err)
		}
	}
	return nil
}

// engineLabel describes the backend of the run.
func engineLabel(kind string) string {
	if kind == "in_memory" {
		return "in-memory engine"
	}
	return "embedded nats-server"
}

// ---- B1 notify ----

// notifyBody is the notify request of operation i.
func notifyBody(event string, i int, payload string) []byte {
	return fmt.Appendf(nil, `{"event_type":%q,"identifier":{"class":"c%02d","kind":"k","step":%d},"payload":%s}`,
		event, i%16, i%1000, payload)
}

// notify posts one notification and checks the answer.
func (b *bench) notify(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/v1/notification", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("notify: %s: %s", resp.Status, msg)
	}
	return nil
}

// b1side is one side of B1: a name and the operation of request i.
type b1side struct {
	name string
	op   func(i int) error
}

// b1row is what one round measured at one level, by side name.
type b1row map[string]benchproc.Load

func (b *bench) b1(ctx context.Context, out io.Writer) error {
	herald, raw := strings.Contains(b.p.sides, "herald"), strings.Contains(b.p.sides, "raw")
	fmt.Fprintf(out, "B1 notify: closed loop, %s per level and side, %d round(s), sides interleaved in an order rotating per round;\n", b.p.duration, b.p.rounds)
	fmt.Fprintf(out, "   herald = HTTP POST /api/v1/notification (200 after the %s);\n", map[bool]string{true: "JetStream ack", false: "in-memory store"}[b.js != nil])
	if raw {
		fmt.Fprintf(out, "   raw = synchronous JetStream publish of the same subject and payload on an in-process client of the same server;\n")
		fmt.Fprintf(out, "   raw tcp = the same over a loopback TCP connection (what a publisher bypassing herald uses);\n")
	}
	fmt.Fprintf(out, "   http floor = GET /api/v1/schema/bench on the same HTTP stack and middleware (an HTTP exchange with a tiny handler);\n")
	fmt.Fprintf(out, "   HTTP load from a minimal keep-alive HTTP/1.1 client, one connection per worker\n")
	var sides []b1side
	if herald {
		sides = append(sides, b1side{"herald", func(i int) error {
			_, err := b.lean.Do("POST", "/api/v1/notification", notifyBody("bench", i, `{"i":`+strconv.Itoa(i)+`}`))
			return err
		}})
	}
	if raw {
		rawPublish := func(js jetstream.JetStream) func(i int) error {
			return func(i int) error {
				m := &nats.Msg{Subject: fmt.Sprintf("bench.c%02d.k.%d", i%16, i%1000), Data: []byte(`{"i":` + strconv.Itoa(i) + `}`)}
				_, err := js.PublishMsg(ctx, m)
				return err
			}
		}
		sides = append(sides, b1side{"raw", rawPublish(b.js)}, b1side{"tcp", rawPublish(b.jsTCP)})
	}
	if herald || raw {
		sides = append(sides, b1side{"floor", func(int) error {
			_, err := b.lean.Do("GET", "/api/v1/schema/bench", nil)
			return err
		}})
	}
	rows := make(map[int][]b1row)
	// cpu is the process's CPU time per operation, by level and side, one
	// value per round.
	cpu := make(map[int]map[string][]float64)
	for round := range b.p.rounds {
		for _, c := range b.p.concurrency {
			row := b1row{}
			if cpu[c] == nil {
				cpu[c] = make(map[string][]float64)
			}
			for k := range sides {
				side := sides[(k+round)%len(sides)]
				cpu0 := benchproc.SelfCPU()
				l, err := benchproc.ClosedLoop(ctx, c, b.p.duration, func(i int) error { return side.op(i + 1) })
				if err != nil {
					return fmt.Errorf("%s at concurrency %d: %w", side.name, c, err)
				}
				row[side.name] = l
				cpu[c][side.name] = append(cpu[c][side.name], float64((benchproc.SelfCPU()-cpu0).Nanoseconds())/1e3/float64(max(l.Ops, 1)))
			}
			rows[c] = append(rows[c], row)
		}
	}
	header := func() {
		fmt.Fprintf(out, "%-5s %-6s %9s %8s %8s %6s |", "conc", "round", "herald/s", "p50", "p99", "p99/50")
		if raw {
			fmt.Fprintf(out, " %8s %8s %8s | %8s %8s |", "raw/s", "p50", "p99", "tcp/s", "p50")
		}
		fmt.Fprintf(out, " %8s %8s %8s %6s |", "floor/s", "p50", "p99", "p99/50")
		if raw {
			fmt.Fprintf(out, " %6s %6s", ":raw", ":tcp")
		}
		fmt.Fprintf(out, " %6s\n", ":floor")
	}
	line := func(c int, label string, f func(side string, g func(benchproc.Load) float64) float64) {
		rate := func(l benchproc.Load) float64 { return l.Rate() }
		p50 := func(l benchproc.Load) float64 { return float64(benchproc.Pct(l.Lat, .5)) }
		p99 := func(l benchproc.Load) float64 { return float64(benchproc.Pct(l.Lat, .99)) }
		ratio := func(l benchproc.Load) float64 { return p99(l) / max(p50(l), 1) }
		d := func(v float64) string { return round(time.Duration(v)) }
		fmt.Fprintf(out, "%-5d %-6s %9.0f %8s %8s %6.1f |", c, label, f("herald", rate), d(f("herald", p50)), d(f("herald", p99)), f("herald", ratio))
		if raw {
			fmt.Fprintf(out, " %8.0f %8s %8s | %8.0f %8s |", f("raw", rate), d(f("raw", p50)), d(f("raw", p99)), f("tcp", rate), d(f("tcp", p50)))
		}
		fmt.Fprintf(out, " %8.0f %8s %8s %6.1f |", f("floor", rate), d(f("floor", p50)), d(f("floor", p99)), f("floor", ratio))
		h := f("herald", rate)
		if raw {
			fmt.Fprintf(out, " %5.2fx %5.2fx", h/f("raw", rate), h/f("tcp", rate))
		}
		fmt.Fprintf(out, " %5.2fx\n", h/f("floor", rate))
	}
	header()
	for _, c := range b.p.concurrency {
		for i, row := range rows[c] {
			line(c, strconv.Itoa(i+1), func(side string, g func(benchproc.Load) float64) float64 { return g(row[side]) })
		}
		if b.p.rounds > 1 {
			// Medians over the rounds, each column on its own (a ratio
			// column is the median of the rounds' ratios).
			line(c, "median", func(side string, g func(benchproc.Load) float64) float64 {
				vals := make([]float64, 0, len(rows[c]))
				for _, row := range rows[c] {
					vals = append(vals, g(row[side]))
				}
				return benchproc.Median(vals)
			})
		}
	}
	// Where the process is CPU-bound, the floor's CPU per request over
	// the notify's bounds the notify's throughput against the floor.
	fmt.Fprintf(out, "CPU time of the whole process (herald, its embedded nats-server, the load) per request, medians of the rounds:\n")
	fmt.Fprintf(out, "%-5s %12s %12s %14s\n", "conc", "herald µs", "floor µs", "floor/herald")
	for _, c := range b.p.concurrency {
		h, f := benchproc.Median(cpu[c]["herald"]), benchproc.Median(cpu[c]["floor"])
		if h > 0 && f > 0 {
			fmt.Fprintf(out, "%-5d %12.1f %12.1f %13.2fx\n", c, h, f, f/h)
		}
	}
	if !raw {
		fmt.Fprintln(out)
		return nil
	}
	// Ceiling: asynchronous publishes, windows of asyncWindow in flight.
	n := 0
	began := time.Now()
	deadline := began.Add(b.p.duration)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if err := b.publishAsync(ctx, n, asyncWindow, func(i int) string { return fmt.Sprintf("bench.c%02d.k.%d", i%16, i%1000) }); err != nil {
			return err
		}
		n += asyncWindow
	}
	fmt.Fprintf(out, "raw asynchronous publish ceiling: %.0f msg/s\n\n", float64(n)/time.Since(began).Seconds())
	return nil
}

// asyncWindow is the number of asynchronous publishes in flight at once.
const asyncWindow = 2048

// publishAsync publishes messages from..from+count-1 asynchronously on the
// subjects subject(i) with payload {"i":i} and waits for their acks.
func (b *bench) publishAsync(ctx context.Context, from, count int, subject func(int) string) error {
	futures := make([]jetstream.PubAckFuture, 0, count)
	for i := from; i < from+count; i++ {
		f, err := b.js.PublishAsync(subject(i), []byte(`{"i":`+strconv.Itoa(i)+`}`))
		if err != nil {
			return err
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// round rounds a latency for display.
func round(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// ---- B4 replay ----

func (b *bench) b4(ctx context.Context, out io.Writer) error {
	n := b.p.replay
	// Store n notifications on 16 classes × 1000 steps, the way herald
	// stores them (schema notifications carry no extra header).
	began := time.Now()
	for i := 0; i < n; i += asyncWindow {
		if err := b.publishAsync(ctx, i, min(asyncWindow, n-i), func(i int) string { return fmt.Sprintf("replay.c%02d.k.%d", i%16, i%1000) }); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "B4 replay: one SSE replay (POST /api/v1/replay from_id 1, replay_batch_size %d, no batch delay) of %d stored notifications (stored in %s);\n",
		b.p.batch, n, time.Since(began).Round(time.Millisecond))
	fmt.Fprintf(out, "   raw = an ordered consumer reading the same stream with the same subject filter;\n")
	fmt.Fprintf(out, "   cpu = the CPU time of the whole process (herald, nats-server, client) per event\n")
	fmt.Fprintf(out, "%-14s %9s %14s %9s %8s | %14s %9s %8s | %7s\n", "filter", "events", "herald ev/s", "time", "cpu", "raw msg/s", "time", "cpu", "ratio")
	for _, c := range []struct {
		name, ident, subject string
		want                 int
	}{
		{"none", `{}`, "", n},
		{"class (1/16)", `{"class":"c03"}`, "replay.c03.>", (n + 15 - 3) / 16},
	} {
		body := fmt.Sprintf(`{"event_type":"replay","identifier":%s,"from_id":"1"}`, c.ident)
		t, cpu := time.Now(), benchproc.SelfCPU()
		got, err := b.sse(ctx, "/api/v1/replay", body, "replay", nil)
		took, hcpu := time.Since(t), benchproc.SelfCPU()-cpu
		if err != nil {
			return err
		}
		if got != c.want {
			return fmt.Errorf("replay %s delivered %d events, want %d", c.name, got, c.want)
		}
		cpu = benchproc.SelfCPU()
		rt, err := b.consume(ctx, "REPLAY", c.subject, c.want)
		if err != nil {
			return err
		}
		rcpu := benchproc.SelfCPU() - cpu
		perEvent := func(d time.Duration) string {
			return fmt.Sprintf("%.2fµs", float64(d.Nanoseconds())/1e3/float64(c.want))
		}
		hr, rr := float64(got)/took.Seconds(), float64(c.want)/rt.Seconds()
		fmt.Fprintf(out, "%-14s %9d %14.0f %9s %8s | %14.0f %9s %8s | %6.2fx\n", c.name, got, hr, took.Round(time.Millisecond), perEvent(hcpu), rr, rt.Round(time.Millisecond), perEvent(rcpu), hr/rr)
	}
	fmt.Fprintln(out)
	return nil
}

// consume reads want messages of a stream through an ordered consumer
// with the given filter and returns the time it took.
func (b *bench) consume(ctx context.Context, stream, subject string, want int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	t := time.Now()
	cfg := jetstream.OrderedConsumerConfig{}
	if subject != "" {
		cfg.FilterSubjects = []string{subject}
	}
	c, err := b.js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return 0, err
	}
	it, err := c.Messages()
	if err != nil {
		return 0, err
	}
	defer it.Stop()
	for range want {
		if _, err := it.Next(jetstream.NextContext(ctx)); err != nil {
			return 0, err
		}
	}
	return time.Since(t), nil
}

// sse posts body to path and reads the event stream until
// connection-closing, counting the events named count; on, when not nil,
// gets the data line of each. ready, when not nil, is called after the
// first event.
func (b *bench) sse(ctx context.Context, path, body, count string, on func(data []byte)) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("%s: %s: %s", path, resp.Status, msg)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<16)
	n, event := 0, ""
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			rest, err2 := r.ReadBytes('\n')
			line, err = append(slices.Clone(line), rest...), err2
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			event = strings.TrimSpace(string(line[7:]))
			if event == count {
				n++
			}
			if event == "connection-closing" {
				return n, nil
			}
		case bytes.HasPrefix(line, []byte("data: ")) && on != nil:
			on(line[6:])
		}
	}
}

// ---- B2 live latency ----

// stamp extracts the publish time of a live notification's data line
// ({"data":{...,"payload":{"t":<unix ns>}}...}); 0 for other events.
func stamp(data []byte) int64 {
	i := bytes.Index(data, []byte(`"payload":{"t":`))
	if i < 0 {
		return 0
	}
	rest := data[i+len(`"payload":{"t":`):]
	j := bytes.IndexByte(rest, '}')
	if j < 0 {
		return 0
	}
	t, _ := strconv.ParseInt(string(rest[:j]), 10, 64)
	return t
}

func (b *bench) b2(ctx context.Context, out io.Writer) error {
	fmt.Fprintf(out, "B2 live latency: %d notifications per row; herald = HTTP notify → every SSE watcher (POST /api/v1/watch, live only);\n", b.p.events)
	fmt.Fprintf(out, "   raw = synchronous JetStream publish → every one of as many ordered consumers (one per watcher)\n")
	fmt.Fprintf(out, "%-9s %10s %9s %9s | %10s %9s %9s | %9s\n", "watchers", "deliveries", "p50", "p99", "raw deliv", "p50", "p99", "p50 ratio")
	for _, w := range b.p.watchers {
		gap := max(2*time.Millisecond, time.Duration(w)*20*time.Microsecond)
		h, err := b.liveHerald(ctx, w, gap)
		if err != nil {
			return err
		}
		r, err := b.liveRaw(ctx, w, gap)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-9d %10d %9s %9s | %10d %9s %9s | %8.2fx\n", w,
			len(h), round(benchproc.Pct(h, .5)), round(benchproc.Pct(h, .99)), len(r), round(benchproc.Pct(r, .5)), round(benchproc.Pct(r, .99)),
			float64(benchproc.Pct(h, .5))/float64(benchproc.Pct(r, .5)))
	}
	fmt.Fprintln(out)
	return nil
}

// latencies collects delivery latencies from many goroutines.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
	n   atomic.Int64
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d)
	l.mu.Unlock()
	l.n.Add(1)
}

func (l *latencies) sorted() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	slices.Sort(l.all)
	return l.all
}

// waitCount waits until l holds n latencies or the deadline passes.
func (l *latencies) waitCount(ctx context.Context, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for l.n.Load() < int64(n) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d deliveries before the deadline", l.n.Load(), n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// liveHerald measures publish → SSE receive with w watchers.
func (b *bench) liveHerald(ctx context.Context, w int, gap time.Duration) ([]time.Duration, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		lat   latencies
		ready atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, w)
	)
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.sse(wctx, "/api/v1/watch", `{"event_type":"live","identifier":{}}`, "", func(data []byte) {
				if t := stamp(data); t > 0 {
					lat.add(time.Since(time.Unix(0, t)))
				} else if bytes.Contains(data, []byte("connection_established")) {
					ready.Add(1)
				}
			})
			if err != nil && wctx.Err() == nil {
				errs <- err
			}
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for ready.Load() < int64(w) {
		select {
		case err := <-errs:
			return nil, err
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d watchers connected", ready.Load(), w)
		}
	}
	for i := range b.p.events {
		body := notifyBody("live", i, `{"t":`+strconv.FormatInt(time.Now().UnixNano(), 10)+`}`)
		if err := b.notify(ctx, body); err != nil {
			return nil, err
		}
		time.Sleep(gap) // open loop: a fixed pace, not a wait for a condition
	}
	err := lat.waitCount(ctx, w*b.p.events, time.Minute)
	cancel()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return lat.sorted(), nil
}

// liveRaw measures raw publish → ordered consumer with w consumers.
func (b *bench) liveRaw(ctx context.Context, w int, gap time.Duration) ([]time.Duration, error) {
	var lat latencies
	var ccs []jetstream.ConsumeContext
	defer func() {
		for _, cc := range ccs {
			cc.Stop()
		}
	}()
	for range w {
		c, err := b.js.OrderedConsumer(ctx, "LIVE", jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
		if err != nil {
			return nil, err
		}
		cc, err := c.Consume(func(m jetstream.Msg) {
			var p struct{ T int64 }
			if json.Unmarshal(m.Data(), &p) == nil && p.T > 0 {
				lat.add(time.Since(time.Unix(0, p.T)))
			}
		})
		if err != nil {
			return nil, err
		}
		ccs = append(ccs, cc)
	}
	for i := range b.p.events {
		m := &nats.Msg{Subject: fmt.Sprintf("live.c%02d.k.%d", i%16, i%1000), Data: []byte(`{"t":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `}`)}
		if _, err := b.js.PublishMsg(ctx, m); err != nil {
			return nil, err
		}
		time.Sleep(gap) // open loop pace
	}
	if err := lat.waitCount(ctx, w*b.p.events, time.Minute); err != nil {
		return nil, err
	}
	return lat.sorted(), nil
}
