// Command producer measures producer throughput:
// notifications/s through one WebSocket session's producer, credit 16
// and batches of 100 (and 1,000), and through batch notify over HTTP
// (POST /api/v1/notifications: batches of -http-batches
// notifications from -http-concurrency clients), against raw JetStream
// asynchronous publishes of the same messages to the same server,
// measured in the same run. Goal: herald ≥ 0.5× the raw publishes.
//
// Usage:
//
//	go build -o /tmp/herald-prod . && go build -o /tmp/producer ./bench/producer
//	/tmp/producer -herald /tmp/herald-prod [-n 100000] [-batches 100,1000] [-rounds 3]
//	              [-http-batches 100] [-http-concurrency 4]
//	              [-backend external|embedded|inproc] [-raw-pending 256] [-feed-ref] [-cpuprofile DIR]
//
// Each round starts fresh servers on loopback with empty stores:
//
//   - -backend external (the default): a nats-server (this tool
//     re-executed with -serve-nats, JetStream on a file store, the
//     options of herald's embedded server) and the herald binary pointed
//     at it with nats_url. herald and the raw client both reach the
//     server over loopback TCP, and each of the three is its own process.
//   - -backend embedded: the herald binary on its default embedded
//     JetStream (file store in a temporary directory) with
//     notification_backend.jetstream.listen on a loopback port, to which
//     the raw client connects; herald's own engine talks to the server
//     in process.
//   - -backend inproc: the nats-server and herald (its packages, as
//     -serve-herald assembles them) in this tool's process, over
//     loopback TCP: for the smoke test, which needs no herald binary;
//     its rates and CPU times are not for reporting.
//
// herald's configuration has one event type (mars, identifier class and
// step) with allow_duplicates: true, so every notification is kept.
// Each round warms up (one batch of 100 through herald, then 100 raw
// publishes), then measures, in an order rotating from round to round:
//
//   - herald (h100): batch notify, -http-concurrency clients (one
//     keep-alive HTTP/1.1 connection each) posting batches of
//     -http-batches notifications each, the next as soon as its previous
//     answer is in. The figure is -n / time from the first request to
//     the last answer; every answer must be a 200 whose ids add up to
//     -n, and the stream must hold exactly -n more messages afterwards.
//
//   - herald (b100, b1000): one session (subprotocol herald.v1), one
//     producer opened with the session's credit (16 by default); the tool
//     keeps up to credit batches awaiting their outcome and sends the next
//     one as each terminal reply arrives. The figure is -n notifications /
//     time from the first publish frame to the last terminal reply; every
//     reply must be "completed", the ids they list must add up to -n, and
//     the stream must hold exactly -n more messages afterwards.
//
//   - raw: nats.go jetstream PublishMsgAsync of the same -n messages
//     (the subjects, headers and payload bytes herald stored for the
//     same notifications, read back from its stream at the warm-up, with
//     a fresh Nats-Msg-Id each) to a stream of the same configuration
//     (herald's, copied, with its base renamed to one of the same
//     length), with at most -raw-pending acknowledgements pending
//     (default 256, PublishBatch's batchWindow), then waiting for every
//     acknowledgement; the figure is -n / time from the first publish to
//     the last acknowledgement, and that stream must hold -n more.
//
//   - rawfeed (with -feed-ref): the raw publishes into herald's own
//     stream, which herald's live feed then reads as it reads herald's
//     notifications (herald's PublishBatch waits for that feed, the raw
//     reference does not): it tells what the feed costs the server.
//
// The payloads are fixed-width ({"n":"00001234"}), so both sides store
// messages of the same size (checked: the same stored bytes per message).
// Besides the rates it reports, from /proc/PID/stat, the CPU time per
// notification of herald's process, of the nats-server process (external
// backend) and of this tool: on a machine shared with other jobs they
// vary less than the rates. The summary gives the median and range over
// the rounds of each side, of the ratio herald : raw and of the CPU
// efficiency (raw's CPU per notification, all processes, / herald's),
// both computed per round.
//
// With -cpuprofile the herald side runs as herald's packages assembled
// in this tool re-executed (-serve-herald; herald exposes no pprof),
// profiled over each herald measurement only (files
// DIR/herald-b<size>-r<round>.pprof), and the nats-server process of the
// external backend over every measurement (DIR/nats-<side>-r<round>.pprof);
// figures of a profiled run are slower and not for reporting. Everything
// listens on 127.0.0.1 and is bounded by -timeout; children end with the
// tool. It owns nothing but its own measurement and must not be imported.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// params are the flags of a run.
type params struct {
	herald     string
	n          int
	batches    []int
	httpBatch  []int
	httpConc   int
	credit     int
	rounds     int
	rawPending int
	backend    string
	feedRef    bool
	profileDir string
	timeout    time.Duration
	settle     time.Duration // the pause after each measurement
}

func main() {
	var p params
	var batches, httpBatches string
	flag.StringVar(&p.herald, "herald", "", "path of the herald binary to measure (go build -o FILE .)")
	flag.IntVar(&p.n, "n", 100_000, "notifications per measurement")
	flag.StringVar(&batches, "batches", "100,1000", "herald producer batch sizes to measure (\"\": none)")
	flag.StringVar(&httpBatches, "http-batches", "", "herald batch notify (HTTP) batch sizes to measure (\"\": none)")
	flag.IntVar(&p.httpConc, "http-concurrency", 4, "batch notify: clients posting at once")
	flag.IntVar(&p.credit, "credit", 16, "producer batches awaiting their outcome at once (at most the session's credit)")
	flag.IntVar(&p.rounds, "rounds", 3, "rounds (each measures raw and every batch size once, on fresh servers)")
	flag.IntVar(&p.rawPending, "raw-pending", 256, "raw reference: acknowledgements pending at most (PublishAsyncMaxPending)")
	flag.StringVar(&p.backend, "backend", "external", "external (a nats-server process, herald with nats_url), embedded (herald's own server, listen) or inproc (both in this process: smoke tests only)")
	flag.BoolVar(&p.feedRef, "feed-ref", false, "also measure rawfeed: the raw publishes into herald's own stream, which herald's live feed reads as it reads herald's")
	flag.StringVar(&p.profileDir, "cpuprofile", "", "run herald in-process in a child and write CPU profiles of its measurements to `DIR`")
	flag.DurationVar(&p.timeout, "timeout", 10*time.Minute, "bound of the whole run")
	flag.DurationVar(&p.settle, "settle", 500*time.Millisecond, "pause after each measurement, for the servers to settle")
	natsAddr := flag.String("serve-nats", "", "internal: serve nats-server with JetStream on `ADDR`")
	store := flag.String("store", "", "internal: the store directory of -serve-nats")
	inproc := flag.String("serve-herald", "", "internal: serve herald in-process with the config `FILE`")
	prof := flag.String("profile-to", "", "internal: CPU profile file prefix of -serve-herald and -serve-nats")
	flag.Parse()
	switch {
	case *natsAddr != "":
		if err := serveNATS(*natsAddr, *store, *prof); err != nil {
			fmt.Fprintln(os.Stderr, "producer: nats-server:", err)
			os.Exit(1)
		}
		return
	case *inproc != "":
		if err := serveHerald(*inproc, *prof); err != nil {
			fmt.Fprintln(os.Stderr, "producer: herald:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if p.batches, err = sizes(batches); err == nil {
		p.httpBatch, err = sizes(httpBatches)
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(2)
	case len(p.batches)+len(p.httpBatch) == 0:
		fmt.Fprintln(os.Stderr, "producer: nothing to measure: -batches and -http-batches are both empty")
		os.Exit(2)
	case p.httpConc <= 0:
		fmt.Fprintln(os.Stderr, "producer: -http-concurrency must be positive")
		os.Exit(2)
	case p.herald == "" && p.profileDir == "" && p.backend != "inproc":
		fmt.Fprintln(os.Stderr, "producer: -herald is required (go build -o /tmp/herald-prod . first)")
		os.Exit(2)
	case p.backend != "external" && p.backend != "embedded" && p.backend != "inproc":
		fmt.Fprintln(os.Stderr, "producer: -backend is external, embedded or inproc")
		os.Exit(2)
	case p.backend == "inproc" && p.profileDir != "":
		fmt.Fprintln(os.Stderr, "producer: -cpuprofile needs a herald of its own: not with -backend inproc")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if err := run(ctx, p, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}

// sizes parses a comma-separated list of batch sizes ("" is none).
func sizes(s string) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b <= 0 {
			return nil, fmt.Errorf("batch sizes are positive integers, comma-separated: %q", s)
		}
		out = append(out, b)
	}
	return out, nil
}

// heraldConfig is herald on JetStream (%s: the backend's settings) with
// one event type that keeps every notification.
const heraldConfig = `
application: {host: 127.0.0.1, port: %d, max_batch_notifications: %d}
logging: {level: warn}
notification_backend:
  kind: jetstream
  jetstream: {%s}
notification_schema:
  mars:
    storage_policy: {allow_duplicates: true}
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, required: false}
`

// The base of the raw reference's stream: herald's base renamed, of the
// same length, so that subjects are as long as herald's.
const (
	heraldBase = "mars"
	rawBase    = "rawm"
)

// steps is the number of distinct subjects (identifier step k % steps).
const steps = 100

// payloadOf is the payload of notification k, of fixed width.
func payloadOf(k int) []byte { return fmt.Appendf(nil, `{"n":"%08d"}`, k) }

// result is one measurement.
type result struct {
	round     int
	side      string // raw, b100, b1000, …
	n         int
	took      time.Duration
	heraldCPU time.Duration
	natsCPU   time.Duration // external backend only
	selfCPU   time.Duration
}

func (r result) rate() float64 { return float64(r.n) / r.took.Seconds() }

// totalCPU is the CPU time per notification of all the processes (herald,
// nats-server, this tool) in microseconds.
func (r result) totalCPU() float64 { return r.perNote(r.heraldCPU + r.natsCPU + r.selfCPU) }

// perNote is a CPU time per notification in microseconds.
func (r result) perNote(d time.Duration) float64 {
	return float64(d.Nanoseconds()) / 1000 / float64(r.n)
}

func run(ctx context.Context, p params, out io.Writer) error {
	dir, err := os.MkdirTemp("", "producer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if p.profileDir != "" {
		if err := os.MkdirAll(p.profileDir, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "producer: %s, %s/%s, %d CPUs, %s, backend %s, %d notifications per measurement, credit %d, batches %v; batch notify: batches %v, %d clients; raw: PublishMsgAsync, %d pending\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), p.backend, p.n, p.credit, p.batches,
		p.httpBatch, p.httpConc, p.rawPending)
	fmt.Fprintf(out, "%-5s %-7s %15s %9s %15s %13s %13s %8s\n", "round", "side", "notifications/s", "elapsed", "herald µs/note", "nats µs/note", "tool µs/note", "stored")
	var all []result
	for round := 1; round <= p.rounds; round++ {
		rs, err := runRound(ctx, p, dir, round, out)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		all = append(all, rs...)
	}
	summary(out, p, all)
	return nil
}

// sides lists the measurements of a round, rotated by round.
func sides(p params, round int) []string {
	s := []string{"raw"}
	if p.feedRef {
		s = append(s, "rawfeed")
	}
	for _, b := range p.batches {
		s = append(s, "b"+strconv.Itoa(b))
	}
	for _, b := range p.httpBatch {
		s = append(s, "h"+strconv.Itoa(b))
	}
	k := (round - 1) % len(s)
	return append(s[k:], s[:k]...)
}

// runRound starts the servers, warms up and measures every side once.
func runRound(ctx context.Context, p params, dir string, round int, out io.Writer) ([]result, error) {
	rdir := filepath.Join(dir, fmt.Sprintf("round-%d", round))
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(rdir)
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	httpPort, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	natsPort, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	natsAddr := fmt.Sprintf("127.0.0.1:%d", natsPort)

	// The servers.
	var backend string
	var natsCmd *exec.Cmd
	natsPID := 0
	natsPrefix := ""
	var natsProfiles []string // the profile of each measurement, in order
	if p.backend == "external" {
		args := []string{"-serve-nats", natsAddr, "-store", filepath.Join(rdir, "nats")}
		if p.profileDir != "" {
			natsPrefix = filepath.Join(p.profileDir, fmt.Sprintf("nats-r%d", round))
			args = append(args, "-profile-to", natsPrefix)
		}
		natsCmd = exec.Command(self, args...)
		natsCmd.Stdout, natsCmd.Stderr = os.Stderr, os.Stderr
		natsCmd.SysProcAttr = benchproc.OrphanGuard()
		if err := natsCmd.Start(); err != nil {
			return nil, err
		}
		defer func() {
			benchproc.Stop(natsCmd, 30*time.Second)
			for i, name := range natsProfiles {
				_ = os.Rename(fmt.Sprintf("%s-%d.pprof", natsPrefix, i+1), filepath.Join(p.profileDir, name))
			}
		}()
		if err := benchproc.WaitListening(ctx, natsAddr, 2*time.Minute); err != nil {
			return nil, err
		}
		natsPID = natsCmd.Process.Pid
		backend = "nats_url: 'nats://" + natsAddr + "'"
	} else if p.backend == "inproc" {
		ns, err := benchproc.StartNATS(natsAddr, filepath.Join(rdir, "nats"))
		if err != nil {
			return nil, err
		}
		defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
		backend = "nats_url: 'nats://" + natsAddr + "'"
	} else {
		backend = fmt.Sprintf("data_dir: '%s', listen: '%s'", filepath.Join(rdir, "herald"), natsAddr)
	}
	cfg := filepath.Join(rdir, "config.yaml")
	maxBatch := slices.Max(append([]int{1000}, p.httpBatch...))
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(heraldConfig, httpPort, maxBatch, backend)), 0o600); err != nil {
		return nil, err
	}
	var hc *exec.Cmd
	prefix := ""
	var profiles []string // the profile of each herald measurement, in order
	heraldPID := 0
	if p.backend == "inproc" {
		stopHerald, err := startHerald(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer stopHerald()
	} else {
		if p.profileDir != "" {
			prefix = filepath.Join(p.profileDir, fmt.Sprintf("herald-r%d", round))
			hc = exec.Command(self, "-serve-herald", cfg, "-profile-to", prefix)
		} else {
			hc = exec.Command(p.herald, "--config", cfg)
		}
		hc.Stdout, hc.Stderr = os.Stderr, os.Stderr
		hc.SysProcAttr = benchproc.OrphanGuard()
		if err := hc.Start(); err != nil {
			return nil, err
		}
		defer func() {
			benchproc.Stop(hc, 30*time.Second)
			for i, name := range profiles {
				_ = os.Rename(fmt.Sprintf("%s-%d.pprof", prefix, i+1), filepath.Join(p.profileDir, name))
			}
		}()
		heraldPID = hc.Process.Pid
	}
	if err := benchproc.WaitListening(ctx, addr, 2*time.Minute); err != nil {
		return nil, err
	}
	if err := benchproc.WaitListening(ctx, natsAddr, 2*time.Minute); err != nil {
		return nil, err
	}

	// The raw client.
	nc, err := nats.Connect("nats://"+natsAddr, nats.Name("producer-bench raw"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(p.rawPending), jetstream.WithDefaultTimeout(30*time.Second))
	if err != nil {
		return nil, err
	}

	// Warm-up: herald creates its stream and stores notifications 0..99,
	// which give the raw reference its messages.
	pub, err := openPublisher(addr, p.credit, slices.Max(append([]int{steps}, p.batches...)))
	if err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	defer pub.w.c.Close()
	if _, ids, err := pub.publish(pub.encode(0, steps, steps), time.Minute); err != nil || ids != steps {
		return nil, fmt.Errorf("warm-up: %d ids, %v", ids, err)
	}
	heraldStream, err := js.StreamNameBySubject(ctx, heraldBase+".>")
	if err != nil {
		return nil, fmt.Errorf("herald's stream: %w", err)
	}
	ref, feedRef, err := newRawRef(ctx, js, heraldStream)
	if err != nil {
		return nil, err
	}
	if err := ref.publish(ctx, 0, steps); err != nil {
		return nil, fmt.Errorf("raw warm-up: %w", err)
	}
	shape, err := compareShapes(ctx, js, heraldStream, ref.name)
	if err != nil {
		return nil, err
	}
	if round == 1 {
		fmt.Fprintln(out, shape)
	}
	if p.feedRef {
		if err := feedRef.publish(ctx, 0, steps); err != nil {
			return nil, fmt.Errorf("rawfeed warm-up: %w", err)
		}
	}

	hp := newHTTPPublisher(addr, p.httpConc)
	defer hp.client.CloseIdleConnections()
	var rs []result
	for _, side := range sides(p, round) {
		r := result{round: round, side: side, n: p.n}
		stream := ref.name
		if side != "raw" {
			stream = heraldStream
		}
		before, err := streamMsgs(ctx, js, stream)
		if err != nil {
			return nil, err
		}
		var batches [][]byte
		switch size, _ := strconv.Atoi(side[1:]); side[0] {
		case 'b':
			batches = pub.encode(0, p.n, size)
		case 'h':
			batches = encodeHTTP(0, p.n, size)
		}
		runtime.GC()
		if natsPrefix != "" {
			_ = natsCmd.Process.Signal(syscall.SIGUSR1)
			natsProfiles = append(natsProfiles, fmt.Sprintf("nats-%s-r%d.pprof", side, round))
		}
		h0, n0, s0 := benchproc.ProcCPU(heraldPID), benchproc.ProcCPU(natsPID), benchproc.SelfCPU()
		switch side {
		case "raw", "rawfeed":
			rr := ref
			if side == "rawfeed" {
				rr = feedRef
			}
			t0 := time.Now()
			err = rr.publish(ctx, 0, p.n)
			r.took = time.Since(t0)
		default:
			if prefix != "" {
				_ = hc.Process.Signal(syscall.SIGUSR1)
				profiles = append(profiles, fmt.Sprintf("herald-%s-r%d.pprof", side, round))
			}
			var ids int
			if side[0] == 'h' {
				r.took, ids, err = hp.publish(ctx, batches, 5*time.Minute)
			} else {
				r.took, ids, err = pub.publish(batches, 5*time.Minute)
			}
			if prefix != "" {
				_ = hc.Process.Signal(syscall.SIGUSR2)
			}
			if err == nil && ids != p.n {
				err = fmt.Errorf("the replies list %d ids, want %d", ids, p.n)
			}
		}
		r.heraldCPU, r.selfCPU = benchproc.ProcCPU(heraldPID)-h0, benchproc.SelfCPU()-s0
		if natsPrefix != "" {
			_ = natsCmd.Process.Signal(syscall.SIGUSR2)
		}
		if natsPID != 0 {
			r.natsCPU = benchproc.ProcCPU(natsPID) - n0
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", side, err)
		}
		after, err := streamMsgs(ctx, js, stream)
		if err != nil {
			return nil, err
		}
		if after-before != uint64(p.n) {
			return nil, fmt.Errorf("%s: stream %s holds %d more messages, want %d", side, stream, after-before, p.n)
		}
		rs = append(rs, r)
		nats := "-"
		if natsPID != 0 {
			nats = fmt.Sprintf("%.2f", r.perNote(r.natsCPU))
		}
		fmt.Fprintf(out, "%-5d %-7s %15.0f %9s %15.2f %13s %13.2f %8d\n", round, side, r.rate(), r.took.Round(time.Millisecond),
			r.perNote(r.heraldCPU), nats, r.perNote(r.selfCPU), after-before)
		// Let the servers settle (herald's live feed, the store's
		// flushes) before the next measurement.
		if err := benchproc.Pause(ctx, p.settle); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// summary prints the median and the range of each side and of the ratios
// herald : raw, computed per round.
func summary(out io.Writer, p params, all []result) {
	fmt.Fprintf(out, "\nmedian [min–max] over %d rounds\n", p.rounds)
	by := map[string][]result{}
	for _, r := range all {
		by[r.side] = append(by[r.side], r)
	}
	for _, side := range sides(p, 1) {
		var rates, hcpu, ncpu, tcpu []float64
		for _, r := range by[side] {
			rates = append(rates, r.rate())
			hcpu = append(hcpu, r.perNote(r.heraldCPU))
			ncpu = append(ncpu, r.perNote(r.natsCPU))
			tcpu = append(tcpu, r.totalCPU())
		}
		line := fmt.Sprintf("%-7s %s notifications/s, CPU µs/notification: herald process %s", side, spread(rates, "%.0f"), spread(hcpu, "%.2f"))
		if p.backend == "external" {
			line += fmt.Sprintf(", nats-server %s", spread(ncpu, "%.2f"))
		}
		line += fmt.Sprintf(", all processes %s", spread(tcpu, "%.2f"))
		fmt.Fprintln(out, line)
	}
	for _, side := range sides(p, 1) {
		if side == "raw" || side == "rawfeed" {
			continue
		}
		var ratios []float64
		for i, h := range by[side] {
			ratios = append(ratios, h.rate()/by["raw"][i].rate())
		}
		med := benchproc.Median(ratios)
		verdict := "met"
		if med < 0.5 {
			verdict = "NOT met"
		}
		fmt.Fprintf(out, "herald %s : raw %s (goal ≥ 0.5: %s)\n", side, spread(ratios, "%.3f"), verdict)
		var eff []float64
		for i, h := range by[side] {
			eff = append(eff, by["raw"][i].totalCPU()/h.totalCPU())
		}
		fmt.Fprintf(out, "herald %s : raw CPU efficiency (raw's CPU per notification, all processes, / herald's) %s\n", side, spread(eff, "%.3f"))
		if p.feedRef {
			ratios = ratios[:0]
			for i, h := range by[side] {
				ratios = append(ratios, h.rate()/by["rawfeed"][i].rate())
			}
			fmt.Fprintf(out, "herald %s : rawfeed %s\n", side, spread(ratios, "%.3f"))
		}
	}
	if p.feedRef {
		var ratios []float64
		for i, r := range by["rawfeed"] {
			ratios = append(ratios, r.rate()/by["raw"][i].rate())
		}
		fmt.Fprintf(out, "rawfeed : raw %s (the cost of herald's live feed reading the stream)\n", spread(ratios, "%.3f"))
	}
}

// spread renders the median and range of xs.
func spread(xs []float64, f string) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf(f+" ["+f+"–"+f+"]", benchproc.Median(xs), slices.Min(xs), slices.Max(xs))
}

// ---- the herald producer ----

// publisher is a WebSocket producer on herald.
type publisher struct {
	w      *wsConn
	credit int
	id     int // the next request id
}

// openPublisher opens a session and a producer of mars on it; credit is
// lowered to the producer's if that is smaller.
func openPublisher(addr string, credit, maxBatch int) (*publisher, error) {
	w, err := wsDial(addr, "/api/v1/session")
	if err != nil {
		return nil, err
	}
	_ = w.c.SetDeadline(time.Now().Add(30 * time.Second))
	defer w.c.SetDeadline(time.Time{})
	if f, err := w.text(); err != nil || !bytes.Contains(f, []byte(`"type":"welcome"`)) {
		w.c.Close()
		return nil, fmt.Errorf("no welcome frame (%q, %v)", f, err)
	}
	if err := w.send(0x1, []byte(`{"id":1,"op":"open_producer","producer":"p","event_type":"mars"}`)); err != nil {
		w.c.Close()
		return nil, err
	}
	f, err := w.text()
	if err != nil || !bytes.Contains(f, []byte(`"ok":true`)) {
		w.c.Close()
		return nil, fmt.Errorf("open_producer answered %q (%v)", f, err)
	}
	if c := intMember(f, "credit"); c > 0 && c < credit {
		credit = c
	}
	if m := intMember(f, "max_batch"); m > 0 && m < maxBatch {
		w.c.Close()
		return nil, fmt.Errorf("the producer takes batches of at most %d notifications", m)
	}
	return &publisher{w: w, credit: credit, id: 2}, nil
}

// intMember reads the integer member name of a JSON frame (0 if absent).
func intMember(f []byte, name string) int {
	s := string(f)
	i := strings.Index(s, `"`+name+`":`)
	if i < 0 {
		return 0
	}
	j := i + len(name) + 3
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	v, _ := strconv.Atoi(s[j:k])
	return v
}

// encode encodes notifications first..first+n-1 as publish frames of at
// most size notifications each.
func (p *publisher) encode(first, n, size int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i += size {
		b := fmt.Appendf(nil, `{"id":%d,"op":"publish","producer":"p","batch":[`, p.id)
		p.id++
		for j := i; j < min(i+size, n); j++ {
			if j > i {
				b = append(b, ',')
			}
			k := first + j
			b = fmt.Appendf(b, `{"identifier":{"class":"od","step":%d},"payload":%s}`, k%steps, payloadOf(k))
		}
		out = append(out, append(b, "]}"...))
	}
	return out
}

// idMarker occurs once per id in a completed reply.
var idMarker = []byte(`"` + heraldBase + `@`)

// publish sends the batches, keeping at most credit of them awaiting
// their outcome and sending the next as each terminal reply arrives;
// it returns once every one is answered, with the ids the replies list.
// Any reply other than completed, or any other frame, is an error.
func (p *publisher) publish(batches [][]byte, within time.Duration) (time.Duration, int, error) {
	_ = p.w.c.SetDeadline(time.Now().Add(within))
	defer p.w.c.SetDeadline(time.Time{})
	sem := make(chan struct{}, p.credit)
	type outcome struct {
		ids int
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		ids := 0
		for got := 0; got < len(batches); got++ {
			f, err := p.w.text()
			if err != nil {
				done <- outcome{ids, err}
				return
			}
			if !bytes.HasPrefix(f, []byte(`{"type":"reply"`)) || !bytes.Contains(f, []byte(`"outcome":"completed"`)) {
				done <- outcome{ids, fmt.Errorf("unexpected frame: %.300s", f)}
				return
			}
			ids += bytes.Count(f, idMarker)
			<-sem
		}
		done <- outcome{ids, nil}
	}()
	for _, b := range batches {
		select {
		case sem <- struct{}{}:
		case o := <-done:
			return 0, o.ids, errors.Join(o.err, errors.New("the replies ended early"))
		}
		if err := p.w.send(0x1, b); err != nil {
			return 0, 0, err
		}
	}
	o := <-done
	return time.Since(start), o.ids, o.err
}

// ---- the raw reference ----

// rawMsg is one of the messages herald stored at the warm-up, moved to
// the raw stream.
type rawMsg struct {
	subject string
	header  nats.Header // without Nats-Msg-Id
}

// rawRef publishes the raw reference.
type rawRef struct {
	js   jetstream.JetStream
	name string
	msgs []rawMsg // by step
}

// newRawRef creates the raw stream, herald's stream's configuration with
// its base renamed, and reads the messages of the warm-up (notifications
// 0..steps-1, the stream's first messages) from herald's stream: ref
// publishes them to the raw stream, feed to herald's own.
func newRawRef(ctx context.Context, js jetstream.JetStream, heraldStream string) (ref, feed *rawRef, err error) {
	hs, err := js.Stream(ctx, heraldStream)
	if err != nil {
		return nil, nil, err
	}
	info, err := hs.Info(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := info.Config
	name := strings.ToUpper(rawBase)
	if len(heraldStream) != len(name) {
		name = strings.ToUpper(rawBase) + "_" + heraldStream
	}
	cfg.Name, cfg.Description, cfg.Metadata = name, "bench/producer raw reference", nil
	cfg.Subjects = nil
	for _, s := range info.Config.Subjects {
		rest, ok := strings.CutPrefix(s, heraldBase)
		if !ok {
			return nil, nil, fmt.Errorf("herald's stream subject %q does not start with %s", s, heraldBase)
		}
		cfg.Subjects = append(cfg.Subjects, rawBase+rest)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return nil, nil, fmt.Errorf("raw stream: %w", err)
	}
	ref = &rawRef{js: js, name: name}
	feed = &rawRef{js: js, name: heraldStream}
	first := info.State.FirstSeq
	for k := range steps {
		m, err := hs.GetMsg(ctx, first+uint64(k))
		if err != nil {
			return nil, nil, fmt.Errorf("herald's message %d: %w", first+uint64(k), err)
		}
		if !bytes.Equal(m.Data, payloadOf(k)) {
			return nil, nil, fmt.Errorf("herald stored payload %q for notification %d, want %q", m.Data, k, payloadOf(k))
		}
		rest, ok := strings.CutPrefix(m.Subject, heraldBase+".")
		if !ok {
			return nil, nil, fmt.Errorf("herald's subject %q", m.Subject)
		}
		h := nats.Header{}
		for key, v := range m.Header {
			switch key {
			case nats.MsgIdHdr, "Nats-Stream", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Subject", "Nats-Last-Sequence", "Nats-Num-Pending":
				// A fresh id per publish; the others are added by the
				// direct get, not stored.
			case nats.ExpectedStreamHdr:
				h[key] = []string{name}
			default:
				h[key] = slices.Clone(v)
			}
		}
		ref.msgs = append(ref.msgs, rawMsg{subject: rawBase + "." + rest, header: h})
		fh := maps.Clone(h)
		fh[nats.ExpectedStreamHdr] = []string{heraldStream}
		feed.msgs = append(feed.msgs, rawMsg{subject: m.Subject, header: fh})
	}
	return ref, feed, nil
}

// publish publishes notifications first..first+n-1 asynchronously and
// waits for every acknowledgement.
func (r *rawRef) publish(ctx context.Context, first, n int) error {
	futures := make([]jetstream.PubAckFuture, n)
	for i := range n {
		k := first + i
		t := &r.msgs[k%steps]
		h := make(nats.Header, len(t.header)+1)
		for key, v := range t.header {
			h[key] = v
		}
		h[nats.MsgIdHdr] = []string{nuid.Next()}
		f, err := r.js.PublishMsgAsync(&nats.Msg{Subject: t.subject, Header: h, Data: payloadOf(k)}, jetstream.WithStallWait(time.Minute))
		if err != nil {
			return fmt.Errorf("publish %d: %w", k, err)
		}
		futures[i] = f
	}
	select {
	case <-r.js.PublishAsyncComplete():
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("%d acknowledgements still pending", r.js.PublishAsyncPending())
	case <-ctx.Done():
		return ctx.Err()
	}
	for i, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("publish %d: %w", first+i, err)
		}
	}
	return nil
}

// compareShapes checks that both streams hold the same bytes for the
// warm-up's notifications (the messages differ only in their
// Nats-Msg-Id, of fixed length, and in the stream and base names, of
// the same length) and describes the last message of each.
func compareShapes(ctx context.Context, js jetstream.JetStream, heraldStream, rawStream string) (string, error) {
	var shapes [2]string
	var bytesPer [2]uint64
	for i, name := range []string{heraldStream, rawStream} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			return "", err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return "", err
		}
		m, err := s.GetMsg(ctx, info.State.LastSeq)
		if err != nil {
			return "", err
		}
		var keys []string
		for k := range m.Header {
			switch k {
			case "Nats-Stream", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Subject", "Nats-Last-Sequence", "Nats-Num-Pending":
			default:
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		bytesPer[i] = info.State.Bytes / max(info.State.Msgs, 1)
		shapes[i] = fmt.Sprintf("%s: %d messages, %d bytes each in the store; subject %s, headers %v, payload %s",
			name, info.State.Msgs, bytesPer[i], m.Subject, keys, m.Data)
	}
	if bytesPer[0] != bytesPer[1] {
		return "", fmt.Errorf("the stored messages differ: herald's %s; raw %s", shapes[0], shapes[1])
	}
	return "stored messages: herald's " + shapes[0] + "\n                 raw     " + shapes[1], nil
}

// streamMsgs returns the messages a stream holds.
func streamMsgs(ctx context.Context, js jetstream.JetStream, name string) (uint64, error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// ---- processes ----
