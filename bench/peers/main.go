// Command peers compares herald with aviso-server, the service herald is
// a drop-in replacement for, side by side on one machine:
//
//	go build -o /tmp/herald . && go build -o /tmp/peers ./bench/peers
//	go build -o /tmp/nats-server github.com/nats-io/nats-server/v2
//	/tmp/peers -herald /tmp/herald -aviso /path/to/aviso-server -nats /tmp/nats-server \
//	           [-rounds 3] [-duration 5s] [-engine jetstream|in_memory|both]
//
// aviso-server is the release from the Rust package registry:
//
//	cargo install aviso-server --version 0.13.1 --locked --root DIR   # DIR/bin/aviso_server
//
// (its build downloads the Swagger UI from GitHub; offline, point
// SWAGGER_UI_DOWNLOAD_URL at a local zip, file://..., which changes
// nothing but the /swagger-ui/ pages). -keep leaves the configs and each
// server's log in place.
//
// Both servers read the same config file (only keys aviso-server
// defines; see config.go), through AVISOSERVER_CONFIG_FILE, with the port
// and the NATS URL set by AVISOSERVER_ environment overrides. On
// JetStream each server gets a nats-server of its own (the -nats binary,
// started with a fresh store), so neither sees the other's streams.
//
// Each side runs alone on the machine: a round starts one server (and
// its nats-server), measures everything, stops it, then does the same
// for the other; the order alternates from round to round. The figures
// are the medians of the rounds:
//
//  1. notify: closed-loop POST /api/v1/notification at each -concurrency
//     for -duration, each worker over a keep-alive connection of its own
//     (a minimal HTTP/1.1 client, bench/internal/leanhttp, so that the
//     load generator's own CPU does not bound the figures): requests/s,
//     p50 and p99 latency of each request;
//  2. replay: -replay notifications are stored through notify, then one
//     SSE replay (POST /api/v1/replay from_id 1) reads them: events/s from
//     the request to replay_completed;
//  3. live fan-out: for each -watchers count W, W live SSE watches, then
//     -events notifies paced apart, each carrying its send time: p50 and
//     p99 of notify → delivery latency over all W × events deliveries;
//  4. batch notify (herald only, aviso-server has no batch endpoint):
//     closed-loop POST /api/v1/notifications of -batch-size notifications,
//     over the same minimal client.
//
// It checks as it goes and fails on the first difference: every notify
// answered 200, every replay delivering exactly what was stored and
// completing, every watcher receiving every notification exactly once,
// every batch storing all of its notifications. Without -aviso it
// measures herald alone and the aviso-server column reads "not run".
//
// It prints one markdown table: figure | herald | aviso-server | ratio
// (herald ÷ aviso-server), with the versions, the date and the load
// average before and after. Progress goes to standard error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// Side names, as the table's columns.
const (
	sideHerald = "herald"
	sideAviso  = "aviso-server"
)

// params are the flags of the tool.
type params struct {
	herald, aviso, nats string
	rounds              int
	duration            time.Duration
	engines             []string
	concurrency         []int
	replay              int
	replayBatch         int
	storeConcurrency    int
	watchers            []int
	events              int
	batchSize           int
	batchConcurrency    int
	logLevel            string
	// keep leaves the run's directory (configs, server logs) in place.
	keep bool
}

func main() {
	var p params
	var engine, conc, watch string
	flag.StringVar(&p.herald, "herald", "", "herald binary (go build -o /tmp/herald .)")
	flag.StringVar(&p.aviso, "aviso", "", "aviso-server binary; without it only herald is measured")
	flag.StringVar(&p.nats, "nats", "", "nats-server binary for the JetStream engine (go build -o /tmp/nats-server github.com/nats-io/nats-server/v2)")
	flag.IntVar(&p.rounds, "rounds", 3, "rounds; each side measured once per round, alone, order alternating; medians reported")
	flag.DurationVar(&p.duration, "duration", 5*time.Second, "notify and batch notify: measuring time per concurrency level")
	flag.StringVar(&engine, "engine", "jetstream", "backend: jetstream, in_memory or both")
	flag.StringVar(&conc, "concurrency", "1,16,64", "notify: concurrency levels")
	flag.IntVar(&p.replay, "replay", 120000, "replay: notifications stored, then replayed")
	flag.IntVar(&p.replayBatch, "replay-batch", 1000, "replay: watch_endpoint.replay_batch_size of both servers")
	flag.IntVar(&p.storeConcurrency, "store-concurrency", 16, "replay: concurrent notifies storing the notifications (not measured)")
	flag.StringVar(&watch, "watchers", "100,1000", "live fan-out: watcher counts")
	flag.IntVar(&p.events, "events", 200, "live fan-out: notifications per watcher count")
	flag.IntVar(&p.batchSize, "batch-size", 1000, "batch notify (herald): notifications per request")
	flag.IntVar(&p.batchConcurrency, "batch-concurrency", 4, "batch notify (herald): concurrent requests")
	flag.StringVar(&p.logLevel, "log-level", "info", "logging.level of both servers (their output goes to files)")
	flag.BoolVar(&p.keep, "keep", false, "keep the run's directory (the config files and each server's log) and print its path")
	timeout := flag.Duration("timeout", time.Hour, "bound of the whole run")
	flag.Parse()
	var err error
	if p.concurrency, err = benchproc.Ints(conc); err == nil {
		if p.watchers, err = benchproc.Ints(watch); err == nil {
			p.engines, err = engines(engine)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, p, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		cancel()
		os.Exit(1)
	}
}

// engines parses -engine.
func engines(s string) ([]string, error) {
	switch s {
	case "jetstream", "in_memory":
		return []string{s}, nil
	case "both":
		return []string{"jetstream", "in_memory"}, nil
	}
	return nil, fmt.Errorf("-engine %q: want jetstream, in_memory or both", s)
}

// check refuses parameters the run cannot work with.
func (p params) check() error {
	switch {
	case p.herald == "":
		return fmt.Errorf("-herald is required (go build -o /tmp/herald .)")
	case p.nats == "" && slices.Contains(p.engines, "jetstream"):
		return fmt.Errorf("-nats is required for the JetStream engine (go build -o /tmp/nats-server github.com/nats-io/nats-server/v2)")
	case p.rounds < 1, p.replay < 1, p.replayBatch < 1, p.events < 1, p.batchSize < 1, p.batchConcurrency < 1, p.storeConcurrency < 1:
		return fmt.Errorf("-rounds, -replay, -replay-batch, -events, -batch-size, -batch-concurrency and -store-concurrency must be at least 1")
	case p.duration <= 0:
		return fmt.Errorf("-duration %s: want a positive duration", p.duration)
	case len(p.engines) == 0 || len(p.concurrency) == 0 || len(p.watchers) == 0:
		return fmt.Errorf("no engine, concurrency or watcher count to measure")
	}
	return nil
}

// figure is one row of the table.
type figure struct {
	name string
	// unit formats a value: "/s" (a rate, higher is better), "ms" (a
	// latency in milliseconds, lower is better) or "µs" (CPU time per
	// operation, lower is better).
	unit string
}

// results holds each figure's value per side, one per round.
type results struct {
	order []figure
	vals  map[string]map[string][]float64 // figure name → side → rounds
}

func (r *results) add(f figure, side string, v float64) {
	if r.vals == nil {
		r.vals = map[string]map[string][]float64{}
	}
	if r.vals[f.name] == nil {
		r.vals[f.name] = map[string][]float64{}
		r.order = append(r.order, f)
	}
	r.vals[f.name][side] = append(r.vals[f.name][side], v)
}

// run measures the sides and writes the report to out and the progress
// to progress.
func run(ctx context.Context, p params, out, progress io.Writer) error {
	if err := p.check(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "peers-")
	if err != nil {
		return err
	}
	if p.keep {
		fmt.Fprintf(progress, "configs and server logs are kept in %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	sides := []string{sideHerald}
	bins := map[string]string{sideHerald: p.herald}
	if p.aviso != "" {
		sides = append(sides, sideAviso)
		bins[sideAviso] = p.aviso
	}
	versions := map[string]string{sideHerald: version(p.herald, "version"), sideAviso: "not run"}
	natsVersion := ""
	if slices.Contains(p.engines, "jetstream") {
		natsVersion = version(p.nats, "--version")
	}
	loadBefore := loadAverage()
	began := time.Now().UTC()
	var res results
	for _, engine := range p.engines {
		cfgText, err := writeConfig(configParams{engine: engine, replayBatch: p.replayBatch, logLevel: p.logLevel,
			maxTopics: 2*loadSubjects + p.replay + p.events*len(p.watchers) + 1000})
		if err != nil {
			return err
		}
		cfgPath := filepath.Join(dir, "config-"+engine+".yaml")
		if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
			return err
		}
		for round := range p.rounds {
			for k := range sides {
				side := sides[(k+round)%len(sides)]
				fmt.Fprintf(progress, "round %d, %s, %s:\n", round+1, engine, side)
				v, err := measure(ctx, p, side, bins[side], engine, cfgPath, dir, &res, progress)
				if err != nil {
					return fmt.Errorf("round %d, %s, %s: %w", round+1, engine, side, err)
				}
				if side == sideAviso && v != "" {
					versions[sideAviso] = v
				}
			}
		}
	}
	loadAfter := loadAverage()
	report(out, p, &res, sides, versions, natsVersion, began, loadBefore, loadAfter)
	return nil
}

// measure runs one round of one side: it starts the server alone (with
// a nats-server of its own on JetStream), takes every figure, stops it,
// and returns the version the server reports.
func measure(ctx context.Context, p params, side, bin, engine, cfgPath, dir string, res *results, progress io.Writer) (string, error) {
	in, err := start(ctx, side, bin, p.nats, cfgPath, engine, dir)
	if err != nil {
		return "", err
	}
	defer in.stop()
	c := newClient(in.base)
	defer c.close()
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("%w\n%s's log ends:\n%s", err, side, tail(in.logPath, 10))
	}
	ver := openAPIVersion(in.base)
	prefix := engine + ": "
	meter := in.meter()
	for _, conc := range p.concurrency {
		before := meter.sample()
		l, err := benchproc.ClosedLoop(ctx, conc, p.duration, func(i int) error {
			return c.notify(ctx, notifyBody(typeNotify, i, i%1000, `{"i":`+strconv.Itoa(i)+`}`))
		})
		if err != nil {
			return fail(fmt.Errorf("notify at concurrency %d: %w", conc, err))
		}
		after := meter.sample()
		server, nats, self := perOp(before, after, l.Ops)
		name := fmt.Sprintf("%snotify c=%d", prefix, conc)
		res.add(figure{name + ", req/s", "/s"}, side, l.Rate())
		res.add(figure{name + ", p50", "ms"}, side, ms(benchproc.Pct(l.Lat, .5)))
		res.add(figure{name + ", p99", "ms"}, side, ms(benchproc.Pct(l.Lat, .99)))
		res.add(figure{name + ", server CPU per notify", "µs"}, side, server)
		if meter.nats != 0 {
			res.add(figure{name + ", nats-server CPU per notify", "µs"}, side, nats)
		}
		fmt.Fprintf(progress, "  notify c=%d: %d requests, all 200, %.0f req/s, p50 %s, p99 %s; CPU per notify: server %.1f µs, nats-server %.1f µs, load generator %.1f µs\n",
			conc, l.Ops, l.Rate(), benchproc.Pct(l.Lat, .5), benchproc.Pct(l.Lat, .99), server, nats, self)
	}
	t := time.Now()
	if err := c.store(ctx, typeReplay, p.replay, p.storeConcurrency); err != nil {
		return fail(err)
	}
	fmt.Fprintf(progress, "  stored %d notifications for the replay in %s\n", p.replay, time.Since(t).Round(time.Millisecond))
	n, took, err := c.replay(ctx, typeReplay)
	if err != nil {
		return fail(err)
	}
	if n != p.replay {
		return fail(fmt.Errorf("the replay delivered %d events, %d were stored", n, p.replay))
	}
	rate := float64(n) / took.Seconds()
	res.add(figure{fmt.Sprintf("%sreplay of %d, events/s", prefix, p.replay), "/s"}, side, rate)
	fmt.Fprintf(progress, "  replay: %d/%d events in %s, %.0f events/s\n", n, p.replay, took.Round(time.Millisecond), rate)
	for _, w := range p.watchers {
		gap := max(2*time.Millisecond, time.Duration(w)*20*time.Microsecond)
		lat, err := c.fanout(ctx, typeLive, w, p.events, gap)
		if err != nil {
			return fail(fmt.Errorf("live fan-out to %d watchers: %w", w, err))
		}
		name := fmt.Sprintf("%slive fan-out W=%d", prefix, w)
		res.add(figure{name + ", p50", "ms"}, side, ms(benchproc.Pct(lat, .5)))
		res.add(figure{name + ", p99", "ms"}, side, ms(benchproc.Pct(lat, .99)))
		fmt.Fprintf(progress, "  live fan-out: %d watchers × %d notifications = %d deliveries, each exactly once, p50 %s, p99 %s\n",
			w, p.events, len(lat), benchproc.Pct(lat, .5), benchproc.Pct(lat, .99))
	}
	if side == sideHerald {
		l, err := benchproc.ClosedLoop(ctx, p.batchConcurrency, p.duration, func(i int) error {
			return c.batch(ctx, batchBody(i*p.batchSize, p.batchSize), p.batchSize)
		})
		if err != nil {
			return fail(fmt.Errorf("batch notify: %w", err))
		}
		nps := l.Rate() * float64(p.batchSize)
		name := fmt.Sprintf("%sbatch notify (%d per request, c=%d)", prefix, p.batchSize, p.batchConcurrency)
		res.add(figure{name + ", notifications/s", "/s"}, side, nps)
		res.add(figure{name + ", request p50", "ms"}, side, ms(benchproc.Pct(l.Lat, .5)))
		res.add(figure{name + ", request p99", "ms"}, side, ms(benchproc.Pct(l.Lat, .99)))
		fmt.Fprintf(progress, "  batch notify: %d requests of %d, all stored, %.0f notifications/s, p50 %s, p99 %s\n",
			l.Ops, p.batchSize, nps, benchproc.Pct(l.Lat, .5), benchproc.Pct(l.Lat, .99))
	}
	return ver, nil
}

// ms converts a latency to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// version runs bin with arg and returns the first line it prints.
func version(bin, arg string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := exec.CommandContext(ctx, bin, arg).Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	return line
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// report writes the markdown report.
func report(out io.Writer, p params, res *results, sides []string, versions map[string]string, natsVersion string,
	began time.Time, loadBefore, loadAfter string) {
	fmt.Fprintf(out, "## herald and aviso-server side by side\n\n")
	fmt.Fprintf(out, "- date: %s UTC; %s/%s, %d CPUs\n", began.Format("2006-01-02 15:04"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Fprintf(out, "- herald: %s; aviso-server: %s", versions[sideHerald], versions[sideAviso])
	if natsVersion != "" {
		fmt.Fprintf(out, "; %s (one per server, fresh store)", natsVersion)
	}
	fmt.Fprintf(out, "\n- load average (1, 5, 15 min) before: %s; after: %s\n", loadBefore, loadAfter)
	fmt.Fprintf(out, "- %d round(s), each side alone on the machine, order alternating per round; medians of the rounds; "+
		"notify %s per level; replay batch %d; fan-out %d notifications per watcher count; logging.level %s\n\n",
		p.rounds, p.duration, p.replayBatch, p.events, p.logLevel)
	fmt.Fprintf(out, "| figure | herald | aviso-server | ratio |\n|---|---|---|---|\n")
	for _, f := range res.order {
		h := benchproc.Median(res.vals[f.name][sideHerald])
		hs, as, ratio := format(h, f.unit), "not run", "–"
		if strings.Contains(f.name, "batch notify") {
			as = "–" // aviso-server has no batch notify
		} else if slices.Contains(sides, sideAviso) {
			a := benchproc.Median(res.vals[f.name][sideAviso])
			as = format(a, f.unit)
			if a > 0 {
				ratio = fmt.Sprintf("%.2f", h/a)
			}
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", f.name, hs, as, ratio)
	}
	fmt.Fprintf(out, "\nratio = herald ÷ aviso-server: above 1 herald is faster on rates (/s), below 1 on latencies (ms) and CPU per notify (µs: the process's user and system time over the phase, in ticks of 10 ms, divided by the notifies).\n")
}

// format prints a value in its unit.
func format(v float64, unit string) string {
	if unit == "µs" {
		return fmt.Sprintf("%.1f µs", v)
	}
	if unit == "ms" {
		switch {
		case v >= 100:
			return fmt.Sprintf("%.0f ms", v)
		case v >= 1:
			return fmt.Sprintf("%.2f ms", v)
		default:
			return fmt.Sprintf("%.3f ms", v)
		}
	}
	return fmt.Sprintf("%.0f/s", v)
}
