// Command soak runs herald under a steady mixed load for a bounded time
// and reports whether it stays flat and loses nothing.
//
// It starts an external nats-server (this tool re-executed, JetStream on
// a fresh file store) and the herald binary pointed at it by nats_url,
// with metrics on, all on 127.0.0.1. Then:
//
//   - -watchers SSE watchers (POST /api/v1/watch) on seven mixed filters
//     (enum values, an int constraint, both, none);
//   - -sessions WebSocket sessions with -subs subscriptions each, with
//     WHERE predicates (comparisons, AND, IN, BETWEEN, <>);
//   - -rate notify/s of the event type soak, notification n carrying
//     {"n": n, "t": send time} and an identifier that n decides, so that
//     every client knows which notifications it must receive;
//   - a config reload every -reload (the config file rewritten with an
//     extra event type added or removed, then SIGHUP), which must not
//     disturb the soak streams;
//   - the nats-server stopped at -nats-restart for -outage, then started
//     again on the same store.
//
// Every client reopens its stream from the next sequence it needs after
// any end (a connection-closing, subscription_ended or a dropped
// connection), as a well-behaved client does. Every -report it prints
// herald's RSS, live heap, goroutines and open files (scraped from its
// /metrics), and the deliveries so far. At the end it waits for the
// deliveries to drain and prints:
//
//   - the slope of each of those four over the last 5 minutes (the second
//     half of a shorter run) as % of the mean per minute (goal: flat,
//     under 1 %/min);
//   - deliveries against what was expected: every (client, notification)
//     pair whose notify answered 200 and whose filter selects it (goal: 0
//     lost, 0 duplicated; notifications whose notify had no answer may
//     arrive or not);
//   - the p50 and p99 delivery latency (notify sent to event read) per
//     minute.
//
// It exits 1 if anything was lost, duplicated or delivered that was
// refused. Usage:
//
//	go build -o /tmp/herald-soak . && go build -o /tmp/soak ./bench/soak
//	/tmp/soak -herald /tmp/herald-soak                 # 10 minutes
//	/tmp/soak -herald /tmp/herald-soak -duration 2m -watchers 200
//
// It is not part of CI; its smoke test (a few seconds, small numbers)
// is.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// params are the knobs of one soak.
type params struct {
	herald      string
	duration    time.Duration
	watchers    int
	sessions    int
	subs        int
	rate        int
	reload      time.Duration
	natsRestart time.Duration // 0: no restart
	outage      time.Duration
	report      time.Duration
	drain       time.Duration
	// inprocNATS runs the nats-server in this process (the smoke test)
	// instead of as a child process.
	inprocNATS bool
	dir        string // work directory; a temporary one when empty
}

func main() {
	var p params
	flag.StringVar(&p.herald, "herald", "", "path of the herald binary (go build -o FILE .)")
	flag.DurationVar(&p.duration, "duration", 10*time.Minute, "how long notifications are sent")
	flag.IntVar(&p.watchers, "watchers", 1000, "SSE watchers")
	flag.IntVar(&p.sessions, "sessions", 50, "WebSocket sessions")
	flag.IntVar(&p.subs, "subs", 4, "subscriptions per WebSocket session (at most 4 filters, taken in turn)")
	flag.IntVar(&p.rate, "rate", 500, "notifications per second")
	flag.DurationVar(&p.reload, "reload", time.Minute, "interval of config reloads (0: none)")
	flag.DurationVar(&p.natsRestart, "nats-restart", 0, "when to stop the nats-server (default: half the duration; negative: never)")
	flag.DurationVar(&p.outage, "outage", 5*time.Second, "how long the nats-server stays stopped")
	flag.DurationVar(&p.report, "report", 10*time.Second, "reporting interval")
	flag.DurationVar(&p.drain, "drain", time.Minute, "how long to wait for the last deliveries after the last notify")
	natsAddr := flag.String("serve-nats", "", "internal: serve nats-server with JetStream on `ADDR`")
	natsDir := flag.String("nats-dir", "", "internal: the store directory of -serve-nats")
	flag.Parse()
	if *natsAddr != "" {
		if err := serveNATS(*natsAddr, *natsDir); err != nil {
			fmt.Fprintln(os.Stderr, "soak: nats-server:", err)
			os.Exit(1)
		}
		return
	}
	if p.herald == "" {
		fmt.Fprintln(os.Stderr, "soak: -herald FILE is required (go build -o FILE . in the repository)")
		os.Exit(2)
	}
	switch {
	case p.natsRestart == 0:
		p.natsRestart = p.duration / 2
	case p.natsRestart < 0:
		p.natsRestart = 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, p, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !res.ok() {
		os.Exit(1)
	}
}

// serveNATS is the child process of the nats side: it serves until SIGINT.
func serveNATS(addr, dir string) error {
	s, err := benchproc.StartNATS(addr, dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// natsSide is the nats-server herald uses, which the soak stops and
// starts again.
type natsSide struct {
	addr, dir string
	inproc    bool
	cmd       *exec.Cmd
	srv       *server.Server
	log       io.Writer
}

func (n *natsSide) start(ctx context.Context) error {
	if n.inproc {
		s, err := benchproc.StartNATS(n.addr, n.dir)
		n.srv = s
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	n.cmd = exec.Command(self, "-serve-nats", n.addr, "-nats-dir", n.dir)
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	n.cmd.SysProcAttr = benchproc.OrphanGuard()
	if err := n.cmd.Start(); err != nil {
		return fmt.Errorf("nats-server: %w", err)
	}
	return benchproc.WaitListening(ctx, n.addr, time.Minute)
}

func (n *natsSide) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
	if n.cmd != nil {
		benchproc.Stop(n.cmd, 30*time.Second)
		n.cmd = nil
	}
}

const heraldConfig = `
application: {host: 127.0.0.1, port: %d}
logging: {level: warn}
metrics: {enabled: true, host: 127.0.0.1, port: %d}
notification_backend:
  kind: jetstream
  jetstream: {nats_url: "nats://%s", reconnect_delay_ms: 250}
watch_endpoint: {max_streams_per_client: 0, max_streams_per_user: 0}
session: {max_sessions_per_user: 0}
notification_schema:
  soak:
    # Every notification is kept: with Aviso's default (allow_duplicates
    # false: the newest per subject) a notification the live feed has not
    # read yet when the next one on its subject (96 subjects here) is
    # stored is gone, as it is for every JetStream consumer, and a loaded
    # machine would count it lost.
    storage_policy: {allow_duplicates: true}
    topic: {base: soak, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [a, b, c, d], required: false}
      step: {type: IntHandler, required: false}
%s`

// notifySenders is the number of concurrent notify senders.
const notifySenders = 32

// extraType is the event type each reload adds or removes.
const extraType = `  extra:
    topic: {base: extra, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: true}
`

// result is what one soak found.
type result struct {
	Verdict                      verdict
	Samples                      []sample
	Minutes                      []minuteStats
	Sent, Accepted, Refused, Unk int
	Reloads, ReloadsOK           int
	NATSRestarts                 int
	Reconnects                   int64
	Surprises                    int64
	LastSurprise                 string
	Slopes                       map[string]float64
}

func (r *result) ok() bool {
	v := r.Verdict
	return v.Lost == 0 && v.Duplicated == 0 && v.Phantom == 0
}

// run runs one soak and prints its report to out.
func run(ctx context.Context, p params, out io.Writer) (*result, error) {
	dir := p.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ports := make([]int, 3)
	for i := range ports {
		port, err := benchproc.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = port
	}
	natsLog, err := os.Create(filepath.Join(dir, "nats.log"))
	if err != nil {
		return nil, err
	}
	defer natsLog.Close()
	nats := &natsSide{addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), dir: filepath.Join(dir, "nats"), inproc: p.inprocNATS, log: natsLog}
	if err := nats.start(ctx); err != nil {
		return nil, err
	}
	defer func() { nats.stop() }()

	cfgPath := filepath.Join(dir, "herald.yaml")
	writeConfig := func(extra bool) error {
		e := ""
		if extra {
			e = extraType
		}
		return os.WriteFile(cfgPath, fmt.Appendf(nil, heraldConfig, ports[1], ports[2], nats.addr, e), 0o600)
	}
	if err := writeConfig(false); err != nil {
		return nil, err
	}
	heraldLog, err := os.Create(filepath.Join(dir, "herald.log"))
	if err != nil {
		return nil, err
	}
	defer heraldLog.Close()
	h := exec.Command(p.herald, "--config", cfgPath)
	h.Stdout, h.Stderr = heraldLog, heraldLog
	h.SysProcAttr = benchproc.OrphanGuard()
	if err := h.Start(); err != nil {
		return nil, fmt.Errorf("herald: %w", err)
	}
	defer benchproc.Stop(h, 30*time.Second)
	base := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[2])
	if err := benchproc.WaitListening(ctx, fmt.Sprintf("127.0.0.1:%d", ports[1]), time.Minute); err != nil {
		return nil, fmt.Errorf("herald (log %s): %w", heraldLog.Name(), err)
	}

	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0, DisableCompression: true}
	defer tr.CloseIdleConnections()
	start := time.Now()
	c := &client{base: base, http: &http.Client{Transport: tr}, lat: newLatencies(start, p.duration+p.drain)}
	fmt.Fprintf(out, "soak: %s, %d SSE watchers, %d WebSocket sessions × %d subscriptions, %d notify/s for %s, reload every %s, nats-server restart at %s for %s\n",
		start.UTC().Format("2006-01-02"), p.watchers, p.sessions, p.subs, p.rate, p.duration, p.reload, p.natsRestart, p.outage)

	// The clients, all established before the first notify.
	cctx, cancelClients := context.WithCancel(ctx)
	defer cancelClients()
	var cwg sync.WaitGroup
	var rs []*receiver
	var readies []chan struct{}
	for i := range p.watchers {
		f := sseFilters[i%len(sseFilters)]
		r := &receiver{name: fmt.Sprintf("sse%d %s", i, f.ident), match: f.match}
		rs = append(rs, r)
		ready := make(chan struct{})
		readies = append(readies, ready)
		cwg.Add(1)
		go func() { defer cwg.Done(); c.watchSSE(cctx, r, f.ident, ready) }()
	}
	for i := range p.sessions {
		var srs []*receiver
		var fs []wsFilter
		for j := range p.subs {
			f := wsFilters[j%len(wsFilters)]
			r := &receiver{name: fmt.Sprintf("ws%d.%d", i, j), match: f.match}
			srs, fs = append(srs, r), append(fs, f)
		}
		rs = append(rs, srs...)
		ready := make(chan struct{})
		readies = append(readies, ready)
		cwg.Add(1)
		go func() { defer cwg.Done(); c.session(cctx, srs, fs, ready) }()
	}
	deadline := time.After(2 * time.Minute)
	for _, ready := range readies {
		select {
		case <-ready:
		case <-deadline:
			return nil, fmt.Errorf("the clients were not all established within 2 minutes (last problem: %v)", c.lastErr.Load())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	fmt.Fprintf(out, "soak: %d streams established in %s\n", len(readies), time.Since(start).Round(time.Millisecond))

	res := &result{Slopes: map[string]float64{}}
	led := &ledger{}
	start = time.Now()
	c.lat.start = start

	// The notifier: paced sends through a pool, so that a slow answer does
	// not delay the next send.
	nctx, stopNotify := context.WithCancel(ctx)
	defer stopNotify()
	jobs := make(chan int, 256)
	var nwg sync.WaitGroup
	var sent atomic.Int64
	// Each sender has one connection of its own, busy all along, so that
	// herald's connection count stays the same through the run (a shared
	// pool would grow during the outage and then idle).
	for range notifySenders {
		nwg.Add(1)
		go func() {
			defer nwg.Done()
			tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			for n := range jobs {
				c.notify(ctx, hc, led, n)
			}
		}()
	}
	nwg.Add(1)
	go func() {
		defer nwg.Done()
		defer close(jobs)
		interval := time.Second / time.Duration(p.rate)
		for n := 0; ; n++ {
			// The run is bounded by the clock: on a machine too slow for
			// -rate the notifier falls behind its schedule and stops at
			// -duration anyway (the report gives the rate reached).
			at := start.Add(time.Duration(n) * interval)
			if at.Sub(start) >= p.duration || time.Since(start) >= p.duration {
				return
			}
			if d := time.Until(at); d > 0 {
				if benchproc.Pause(nctx, d) != nil {
					return
				}
			}
			select {
			case jobs <- n:
				sent.Add(1)
			case <-nctx.Done():
				return
			}
		}
	}()

	// Reloads and the nats-server restart.
	var ewg sync.WaitGroup
	var reloads, restarts atomic.Int64
	ewg.Add(1)
	go func() {
		defer ewg.Done()
		if p.reload <= 0 {
			return
		}
		extra := false
		t := time.NewTicker(p.reload)
		defer t.Stop()
		for {
			select {
			case <-nctx.Done():
				return
			case <-t.C:
				if time.Since(start) >= p.duration {
					return
				}
				extra = !extra
				if writeConfig(extra) == nil && h.Process.Signal(syscall.SIGHUP) == nil {
					reloads.Add(1)
				}
			}
		}
	}()
	if p.natsRestart > 0 && p.natsRestart < p.duration {
		ewg.Add(1)
		go func() {
			defer ewg.Done()
			if benchproc.Pause(nctx, p.natsRestart) != nil {
				return
			}
			fmt.Fprintf(out, "soak: %6.1fs nats-server stopped\n", time.Since(start).Seconds())
			nats.stop()
			_ = benchproc.Pause(ctx, p.outage)
			if err := nats.start(ctx); err != nil {
				c.surprise(fmt.Errorf("nats-server restart: %w", err))
				return
			}
			restarts.Add(1)
			fmt.Fprintf(out, "soak: %6.1fs nats-server started again\n", time.Since(start).Seconds())
		}()
	}

	// Reports until the notifier is done.
	delivered := func() int64 {
		var d int64
		for _, r := range rs {
			d += r.count.Load()
		}
		return d
	}
	reconnects := func() int64 {
		var d int64
		for _, r := range rs {
			d += r.reconnects.Load()
		}
		return d
	}
	notifierDone := make(chan struct{})
	go func() { nwg.Wait(); close(notifierDone) }()
	fmt.Fprintf(out, "%8s %9s %9s %10s %7s %10s %12s %10s\n", "t", "RSS MB", "live MB", "goroutines", "files", "notified", "delivered", "reconnects")
	takeSample := func() {
		m, err := scrape(ctx, c.http, metricsURL)
		if err != nil {
			c.surprise(err)
			return
		}
		s := sample{At: time.Since(start), RSS: m["process_resident_memory_bytes"], Heap: liveHeap(m),
			Goroutines: m["go_goroutines"], OpenFiles: m["process_open_fds"],
			Delivered: delivered(), Notified: sent.Load(), Reconnects: reconnects()}
		res.Samples = append(res.Samples, s)
		fmt.Fprintf(out, "%7.0fs %9.1f %9.1f %10.0f %7.0f %10d %12d %10d\n", s.At.Seconds(), s.RSS/1e6, s.Heap/1e6,
			s.Goroutines, s.OpenFiles, s.Notified, s.Delivered, s.Reconnects)
	}
	tick := time.NewTicker(p.report)
	takeSample()
loop:
	for {
		select {
		case <-tick.C:
			takeSample()
		case <-notifierDone:
			break loop
		case <-ctx.Done():
			tick.Stop()
			return nil, ctx.Err()
		}
	}
	tick.Stop()
	stopNotify()
	ewg.Wait()

	// Drain: wait until every expected delivery arrived, or -drain.
	outcomes := led.snapshot()
	drainStart := time.Now()
	for {
		// The receivers are written by their goroutines; counting what is
		// missing reads them, so it is done by comparing counts until the
		// clients stop.
		if delivered() >= expectedCount(outcomes, rs) || time.Since(drainStart) > p.drain {
			break
		}
		if benchproc.Pause(ctx, 100*time.Millisecond) != nil {
			return nil, ctx.Err()
		}
	}
	cancelClients()
	cwg.Wait()
	fmt.Fprintf(out, "soak: drained in %s\n", time.Since(drainStart).Round(time.Millisecond))

	if m, err := scrape(ctx, c.http, metricsURL); err == nil {
		res.ReloadsOK = int(m[`herald_reloads_total{outcome="ok"}`])
	}
	res.Verdict = judge(outcomes, rs)
	res.Minutes = c.lat.perMinute()
	res.Reloads, res.NATSRestarts = int(reloads.Load()), int(restarts.Load())
	res.Reconnects, res.Surprises = reconnects(), c.errs.Load()
	if s, ok := c.lastErr.Load().(string); ok {
		res.LastSurprise = s
	}
	for _, o := range outcomes {
		res.Sent++
		switch o {
		case accepted:
			res.Accepted++
		case refused:
			res.Refused++
		default:
			res.Unk++
		}
	}
	report(out, p, res)
	return res, nil
}

// expectedCount counts the (receiver, notification) pairs that must
// arrive: accepted notifications each receiver's filter selects. Deliveries
// of uncertain notifications also count in the receivers' totals, so the
// drain may end a little early when some arrive; the verdict is exact.
func expectedCount(outcomes []uint8, rs []*receiver) int64 {
	var e int64
	for _, r := range rs {
		for n, o := range outcomes {
			if o == accepted && r.match(n) {
				e++
			}
		}
	}
	return e
}

// report prints the summary of a soak.
func report(out io.Writer, p params, r *result) {
	window := 5 * time.Minute
	from := time.Duration(0)
	if len(r.Samples) > 0 {
		last := r.Samples[len(r.Samples)-1].At
		if last >= 2*window {
			from = last - window
		} else {
			from = last / 2
		}
	}
	fmt.Fprintf(out, "\nslopes from %s to the end (%% of the mean per minute; goal: flat, |slope| < 1):\n", from.Round(time.Second))
	for _, m := range []struct {
		name string
		v    func(sample) float64
	}{
		{"RSS", func(s sample) float64 { return s.RSS }},
		{"live heap", func(s sample) float64 { return s.Heap }},
		{"goroutines", func(s sample) float64 { return s.Goroutines }},
		{"open files", func(s sample) float64 { return s.OpenFiles }},
	} {
		sl, n := slope(r.Samples, from, m.v)
		r.Slopes[m.name] = sl
		verdict := "flat"
		if sl > 1 || sl < -1 {
			verdict = "NOT flat"
		}
		fmt.Fprintf(out, "  %-12s %+7.2f %%/min over %d samples: %s\n", m.name, sl, n, verdict)
	}
	v := r.Verdict
	fmt.Fprintf(out, "\nnotifications: %d sent (%.0f/s of the %d/s asked), %d accepted, %d refused (4xx), %d without an answer (503, timeouts)\n",
		r.Sent, float64(r.Sent)/p.duration.Seconds(), p.rate, r.Accepted, r.Refused, r.Unk)
	fmt.Fprintf(out, "reloads: %d sent, %d applied; nats-server restarts: %d; client reconnects: %d; client surprises: %d\n",
		r.Reloads, r.ReloadsOK, r.NATSRestarts, r.Reconnects, r.Surprises)
	if r.LastSurprise != "" {
		fmt.Fprintf(out, "  last surprise: %s\n", r.LastSurprise)
	}
	fmt.Fprintf(out, "deliveries: %d expected, %d delivered, %d lost, %d duplicated, %d phantom, %d of unanswered notifies\n",
		v.Expected, v.Delivered, v.Lost, v.Duplicated, v.Phantom, v.UncertainDelivered)
	if v.Worst != "" {
		fmt.Fprintf(out, "  %s\n", v.Worst)
		fmt.Fprintf(out, "  %d receivers lost deliveries; the first ten:\n", v.LosingReceivers)
		for _, l := range v.Losers {
			fmt.Fprintf(out, "    %s\n", l)
		}
	}
	verdict := "met"
	if !r.ok() {
		verdict = "NOT met"
	}
	fmt.Fprintf(out, "goal 0 lost, 0 duplicated: %s\n", verdict)
	fmt.Fprintf(out, "\ndelivery latency per minute (notify sent to event read):\n")
	for _, m := range r.Minutes {
		fmt.Fprintf(out, "  minute %2d: %10d deliveries, p50 %10s, p99 %10s\n", m.Minute+1, m.N, m.P50.Round(10*time.Microsecond), m.P99.Round(10*time.Microsecond))
	}
}
