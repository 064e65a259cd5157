// Command fanout measures live fan-out throughput (B3):
// deliveries per second from one stream to 1,000 subscribers, herald
// against a bare broadcaster measured in the same run.
//
// Usage:
//
//	go build -o /tmp/herald-bench . && go build -o /tmp/fanout ./bench/fanout
//	/tmp/fanout -herald /tmp/herald-bench [-subscribers 1000] [-notifications 5000] [-rounds 3]
//	            [-transports ws,sse] [-sides herald,single,batch] [-send-buffer BYTES] [-cpuprofile DIR]
//	/tmp/fanout -herald /tmp/herald-bench -sides typed-row,typed-mixed   # typed payloads
//	/tmp/fanout -herald /tmp/herald-bench -centrifugo /tmp/centrifugo -transports ws -sides herald,centrifugo
//	/tmp/fanout -herald /tmp/herald-bench -centrifugo /tmp/centrifugo -transports ws -sides herald,centrifugo -rate 100 -notifications 3000
//	/tmp/fanout -herald /tmp/herald-bench -engine jetstream -transports ws -sides herald -rate 100 -notifications 3000
//
// (Centrifugo is built apart, never a dependency of herald's module:
// GOBIN=/tmp go install github.com/centrifugal/centrifugo/v6@v6.9.1.)
//
// Each measurement starts one server process, opens the subscribers on
// it from this process (so the clients' memory and CPU are not the
// server's), warms up with one notification that every subscriber must
// receive, then publishes -notifications notifications at full speed and
// waits until every subscriber has received every one. The figure is
// total events delivered / time from the first publish to the last
// delivery; each client counts the CloudEvents it receives.
//
//   - herald: the herald binary (-herald) on the in-memory backend with
//     one event type (-engine jetstream: the embedded JetStream
//     backend, whose streams then keep every notification). ws: 1,000 sessions (GET /api/v1/session), each
//     with one BLOCKING subscription to the whole stream; sse: 1,000
//     watchers (POST /api/v1/watch) of the same stream. The publisher is
//     one WebSocket producer, batches of 100 with credit 16.
//   - single, batch: the bare broadcaster (this tool re-executed with
//     -serve-bare; see bare.go) writing the CloudEvent herald rendered at
//     the warm-up to as many coder/websocket or net/http SSE connections:
//     single writes one frame (or event and flush) per notification,
//     batch coalesces what is pending as herald does.
//   - typed-row, typed-mixed: herald as for herald, but the
//     stream is an event type with a typed payload (WIRE JSON, with a
//     CBOR and an AVRO codec on the same schema) and the producer
//     publishes typed payloads. typed-row: every subscriber gets the
//     JSON row view (no format); typed-mixed: the subscribers are split
//     over three formats in turn (the row view, reading_cbor,
//     reading_avro). The summary gives typed-mixed : typed-row per
//     round: what rendering each record in three views costs against
//     one, when a record is encoded once per view and not per
//     subscriber.
//   - centrifugo (-centrifugo PATH; ws only): Centrifugo v6, a
//     general-purpose real-time fan-out server, as an outside
//     reference; see centrifugo.go. The subscribers use its JSON
//     protocol and one channel; the publisher its HTTP API, up to
//     -credit publishes in flight; each publication's data is the
//     CloudEvent herald rendered at its warm-up (so herald must come
//     first in -sides), so messages are the same size. The summary adds
//     herald : centrifugo per round.
//
// With -rate R the tool measures latency instead (herald and
// centrifugo, WebSocket only): -notifications notifications published
// one per publish at R per second, each carrying its publish time in its
// payload; every subscriber records publish to delivery for each, and
// the report gives p50, p99 and max over all deliveries, and the
// server's CPU per delivery.
//
// Every measurement checks that each subscriber received exactly every
// notification (the warm-up's and the measurement's), and fails naming
// the subscribers that did not, with their counts.
//
// Columns: deliveries/s; elapsed (first publish to last delivery);
// publish (first publish to the reply of the last batch, herald only);
// ev/frame (events per WebSocket frame received); ev/write(srv) (events
// per write system call of the server, from /proc/PID/io); srv µs/1k ev
// (the server's CPU time per 1,000 deliveries, from /proc/PID/stat: less
// sensitive than the rates to other jobs on a shared machine); client
// CPU (this process: subscribers and publisher). The summary gives the
// median and range over the rounds of each side and of the ratios
// herald : bare, computed per round. With -cpuprofile the
// herald side runs as herald's packages assembled in this tool
// re-executed (herald exposes no pprof), profiled over the measurement
// only. With -inproc the herald sides run in this process (the smoke
// test of the suite; the server's CPU figures then include the
// clients'), and after each measurement the tool checks that every
// record of the stream was rendered exactly once per view its
// subscribers asked for (engine.Record.RenderedViews), not once per
// subscriber. Everything listens on 127.0.0.1 and is bounded by -timeout. It
// owns nothing but its own measurement and must not be imported.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// params are the flags of a run.
type params struct {
	herald        string
	subscribers   int
	notifications int
	batch         int
	credit        int
	rounds        int
	transports    []string
	sides         []string
	profileDir    string
	sendBuffer    int
	timeout       time.Duration
	inproc        bool
	centrifugo    string  // the Centrifugo binary of the centrifugo side
	engine        string  // herald's backend: memory or jetstream
	rate          float64 // publishes per second of the latency mode (0: saturation)
}

func main() {
	var p params
	var transports, sides string
	flag.StringVar(&p.herald, "herald", "", "path of the herald binary to measure (go build -o FILE .)")
	flag.IntVar(&p.subscribers, "subscribers", 1000, "subscribers of the stream (sessions or SSE watchers)")
	flag.IntVar(&p.notifications, "notifications", 5000, "notifications published per measurement")
	flag.IntVar(&p.batch, "batch", 100, "notifications per producer batch")
	flag.IntVar(&p.credit, "credit", 16, "producer batches awaiting their outcome at once")
	flag.IntVar(&p.rounds, "rounds", 3, "rounds (each measures every transport and side once)")
	flag.StringVar(&transports, "transports", "ws,sse", "transports to measure")
	flag.StringVar(&sides, "sides", "herald,single,batch", "sides to measure: herald, single (bare, a write per notification), batch (bare, coalescing); typed-row, typed-mixed (a typed payload in one view or in three)")
	flag.StringVar(&p.profileDir, "cpuprofile", "", "run herald in-process in a child and write CPU profiles of the measurements to `DIR`")
	flag.IntVar(&p.sendBuffer, "send-buffer", -1, "herald's watch_endpoint.stream_send_buffer_bytes (-1: herald's default; 0: the kernel's auto-tuned buffer)")
	flag.DurationVar(&p.timeout, "timeout", 15*time.Minute, "bound of the whole run")
	flag.BoolVar(&p.inproc, "inproc", false, "serve the herald sides in this process and check the renderings per record (smoke test)")
	flag.StringVar(&p.centrifugo, "centrifugo", "", "path of a Centrifugo v6 binary: measure it as the side centrifugo (added to -sides unless they name it)")
	flag.StringVar(&p.engine, "engine", "memory", "herald's backend: memory (in-memory) or jetstream (embedded JetStream)")
	flag.Float64Var(&p.rate, "rate", 0, "latency mode: publish one notification at a time, `R` per second, and report publish-to-delivery percentiles (0: saturation)")
	bareAddr := flag.String("serve-bare", "", "internal: serve the bare broadcaster on `ADDR`")
	bareCE := flag.String("ce", "", "internal: the CloudEvent file of the bare broadcaster")
	bareBatch := flag.Bool("coalesce", false, "internal: the bare broadcaster coalesces")
	inproc := flag.String("serve-herald", "", "internal: serve herald in-process with the config `FILE`")
	prof := flag.String("profile-to", "", "internal: CPU profile file of -serve-herald")
	flag.Parse()
	switch {
	case *bareAddr != "":
		serveBare(*bareAddr, *bareCE, *bareBatch)
		return
	case *inproc != "":
		if err := serveHerald(*inproc, *prof); err != nil {
			fmt.Fprintln(os.Stderr, "fanout: herald:", err)
			os.Exit(1)
		}
		return
	}
	p.transports = strings.Split(transports, ",")
	p.sides = strings.Split(sides, ",")
	sidesSet := false
	flag.Visit(func(f *flag.Flag) { sidesSet = sidesSet || f.Name == "sides" })
	if p.centrifugo != "" && !slices.Contains(p.sides, "centrifugo") {
		if sidesSet {
			fmt.Fprintln(os.Stderr, "fanout: -centrifugo is given but -sides does not name centrifugo")
			os.Exit(2)
		}
		p.sides = append(p.sides, "centrifugo")
	}
	if err := p.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(2)
	}
	if p.herald == "" && p.profileDir == "" && !p.inproc && slices.ContainsFunc(p.sides, isHerald) {
		fmt.Fprintln(os.Stderr, "fanout: -herald is required (go build -o /tmp/herald-bench . first)")
		os.Exit(2)
	}
	if err := raiseFileLimit(4*p.subscribers + 256); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	if err := run(ctx, p, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

// validate checks the combination of flags.
func (p params) validate() error {
	if p.engine != "memory" && p.engine != "jetstream" {
		return fmt.Errorf("-engine %q: want memory or jetstream", p.engine)
	}
	if slices.Contains(p.sides, "centrifugo") && p.centrifugo == "" {
		return errors.New("the side centrifugo needs -centrifugo PATH (a Centrifugo v6 binary)")
	}
	if p.rate < 0 {
		return fmt.Errorf("-rate %g: want a rate above 0, or 0 for saturation", p.rate)
	}
	if p.rate > 0 {
		for _, side := range p.sides {
			if side != "herald" && side != "centrifugo" {
				return fmt.Errorf("the latency mode (-rate) measures the sides herald and centrifugo, not %q", side)
			}
		}
		if !slices.Contains(p.transports, "ws") {
			return errors.New("the latency mode (-rate) measures WebSocket subscribers: -transports must include ws")
		}
	}
	if p.inproc && p.profileDir != "" {
		return errors.New("-inproc and -cpuprofile exclude each other")
	}
	return nil
}

// measured reports whether side is measured over transport tr: the
// centrifugo side and the latency mode are WebSocket only.
func (p params) measured(tr, side string) bool {
	return tr == "ws" || (side != "centrifugo" && p.rate == 0)
}

// raiseFileLimit makes sure the process (and its children, which inherit
// it) may open n files.
func raiseFileLimit(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	if lim.Cur >= uint64(n) {
		return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	if lim.Max < uint64(n) {
		return fmt.Errorf("the file descriptor limit (hard %d) is below the %d needed: raise ulimit -Hn", lim.Max, n)
	}
	lim.Cur = lim.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

// heraldConfig is herald on the in-memory backend with two event types:
// mars (an opaque JSON payload) and reading (a typed payload, the codecs
// of typedDefs).
// The watch limits are lifted so that 1,000 streams from one address
// are allowed and so that a backlog built on purpose (the publisher runs
// ahead of the fan-out) is not ended: the live queue holds a whole
// measurement and max_lag_sec is 10 minutes. Everything else is the
// default (session queue of 1024 frames and 1 MiB, 256 events per
// frame, 128 KiB stream send buffers, BLOCKING timeout 1 s). The backend
// is in-memory or, with -engine jetstream, the embedded JetStream
// server with its files in the measurement's own directory; its streams
// then keep every notification (allow_duplicates), not the newest per
// subject: with the default, SSE watchers that fall behind at
// saturation were seen to miss notifications superseded in the stream.
// The typed sides keep every
// record of a measurement in the in-memory history (its default keeps
// the newest per subject), as every side does with -inproc, so that the
// tool can read them back.
const heraldConfig = `
application: {host: 127.0.0.1, port: %[1]d}
logging: {level: warn}
notification_backend: {%[2]s}
watch_endpoint: {max_streams_per_client: 0, max_streams_per_user: 0, live_queue_size: %[3]d, max_lag_sec: 600%[4]s}
codecs: {definitions: %[5]s}
notification_schema:
  mars:%[6]s
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, required: false}
  reading:%[6]s
    payload: {codec: reading_json}
    topic: {base: reading, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, required: false}
`

// typedDefs are the codecs of the typed event type: a reading in WIRE
// JSON (the event type's codec), CBOR and AVRO on one internal schema,
// so that each is a format of the stream.
const typedDefs = `
CREATE SCHEMA reading (class STRING, step I32, temperature F64, humidity F32 OPTIONAL, at DATETIME);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (class string, step integer, temperature number, humidity number OPTIONAL, at string);
CREATE WIRE CBOR SCHEMA reading_wire MODE STRICT (class string, step integer, temperature number, humidity number OPTIONAL, at string);
CREATE WIRE AVRO SCHEMA reading_wire MODE STRICT (class STRING, step INT, temperature DOUBLE, humidity FLOAT OPTIONAL, at STRING);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_cbor FROM WIRE CBOR SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_avro FROM WIRE AVRO SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
`

// isHerald reports whether side is measured on herald (not the bare
// broadcaster).
func isHerald(side string) bool { return side == "herald" || strings.HasPrefix(side, "typed-") }

// eventType is the event type a herald side streams.
func eventType(side string) string {
	if strings.HasPrefix(side, "typed-") {
		return "reading"
	}
	return "mars"
}

// subscriberFormat is the payload format of subscriber i of side ("":
// the default view, for a typed event type the JSON row view).
func subscriberFormat(side string, i int) string {
	if side == "typed-mixed" {
		return [...]string{"", "reading_cbor", "reading_avro"}[i%3]
	}
	return ""
}

// views is the number of views the records of side are rendered in.
func views(side string, subscribers int) int {
	if side == "typed-mixed" {
		return min(3, subscribers)
	}
	return 1
}

// subscribeRequest is the subscribe frame (ws) or watch body (sse) of
// subscriber i of a herald side.
func subscribeRequest(tr, side string, i int) string {
	format := ""
	if f := subscriberFormat(side, i); f != "" {
		format = `,"format":"` + f + `"`
	}
	if tr == "ws" {
		return `{"id":1,"op":"subscribe","name":"s","event_type":"` + eventType(side) + `","identifier":{"class":"od"}` + format + `}`
	}
	return `{"event_type":"` + eventType(side) + `","identifier":{"class":"od"}` + format + `}`
}

// result is one measurement.
type result struct {
	transport, side string
	deliveries      int64
	elapsed         time.Duration // first publish to last delivery
	published       time.Duration // first publish to the last publish's reply (herald)
	frames          int64         // WebSocket frames carrying events
	serverCPU       time.Duration
	serverWrites    int64 // write system calls of the server
	clientCPU       time.Duration
	// rendered is the number of views every record was rendered in,
	// checked with -inproc (0: not checked).
	rendered int
	// The latency mode's publish-to-delivery percentiles.
	p50, p99, maxLat time.Duration
}

func (r result) rate() float64 { return float64(r.deliveries) / r.elapsed.Seconds() }

// cpuPerDelivery is the server's CPU time per delivery in microseconds.
func (r result) cpuPerDelivery() float64 {
	return float64(r.serverCPU.Nanoseconds()) / 1000 / float64(r.deliveries)
}

func run(ctx context.Context, p params, out io.Writer) error {
	dir, err := os.MkdirTemp("", "fanout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if p.profileDir != "" {
		if err := os.MkdirAll(p.profileDir, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "fanout: %s, %s/%s, %d CPUs, %d subscribers, %d notifications per measurement (%d deliveries), producer batches of %d with credit %d\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), p.subscribers, p.notifications,
		p.subscribers*p.notifications, p.batch, p.credit)
	sb := "herald's default (128 KiB)"
	if p.sendBuffer >= 0 {
		sb = strconv.Itoa(p.sendBuffer) + " bytes"
	}
	backend := "in-memory backend"
	if p.engine == "jetstream" {
		backend = "embedded JetStream backend"
	}
	fmt.Fprintf(out, "herald: %s, stream_send_buffer_bytes %s; bare: the kernel's auto-tuned send buffers\n", backend, sb)
	if p.centrifugo != "" {
		fmt.Fprintf(out, "centrifugo: %s, JSON protocol over WebSocket, published with POST /api/publish (%d in flight), client.queue_max_size raised to hold a measurement\n",
			benchproc.CentrifugoVersion(p.centrifugo), p.credit)
	}
	if p.rate > 0 {
		fmt.Fprintf(out, "latency mode: one notification per publish, %g publishes/s, WebSocket subscribers only; latency = publish to delivery, same clock\n", p.rate)
		fmt.Fprintf(out, "%-5s %-3s %-11s %11s %9s %9s %9s %9s %12s %11s\n", "round", "tr", "side", "deliveries", "p50", "p99", "max", "elapsed",
			"srv µs/1k ev", "client CPU")
	} else {
		fmt.Fprintf(out, "%-5s %-3s %-11s %13s %9s %9s %9s %13s %12s %11s\n", "round", "tr", "side", "deliveries/s", "elapsed", "publish",
			"ev/frame", "ev/write(srv)", "srv µs/1k ev", "client CPU")
	}
	ce := filepath.Join(dir, "cloudevent.json")
	if err := os.WriteFile(filepath.Join(dir, "typed.nspl"), []byte(typedDefs), 0o600); err != nil {
		return err
	}
	var all []result
	for round := 1; round <= p.rounds; round++ {
		for _, tr := range p.transports {
			for _, side := range p.sides {
				if !p.measured(tr, side) {
					continue
				}
				if !isHerald(side) {
					if _, err := os.Stat(ce); err != nil {
						return fmt.Errorf("the bare side needs the CloudEvent of a herald warm-up: put herald first in -sides")
					}
				}
				r, err := measure(ctx, p, dir, round, tr, side, ce)
				if err != nil {
					return fmt.Errorf("round %d, %s %s: %w", round, tr, side, err)
				}
				all = append(all, r)
				if p.rate > 0 {
					fmt.Fprintf(out, "%-5d %-3s %-11s %11d %9s %9s %9s %9s %12.0f %11s\n", round, tr, side, r.deliveries, round3(r.p50),
						round3(r.p99), round3(r.maxLat), round3(r.elapsed), r.cpuPerDelivery()*1000, round3(r.clientCPU))
					continue
				}
				fr := "-"
				if r.frames > 0 {
					fr = fmt.Sprintf("%.1f", float64(r.deliveries)/float64(r.frames))
				}
				fmt.Fprintf(out, "%-5d %-3s %-11s %13.0f %9s %9s %9s %13.1f %12.0f %11s", round, tr, side, r.rate(),
					round3(r.elapsed), round3(r.published), fr, float64(r.deliveries)/float64(max(r.serverWrites, 1)),
					r.cpuPerDelivery()*1000, round3(r.clientCPU))
				if r.rendered > 0 {
					fmt.Fprintf(out, "  views rendered per record: %d", r.rendered)
				}
				fmt.Fprintln(out)
			}
		}
	}
	summary(out, p, all)
	return nil
}

// summary prints the median and the range of each side and of the
// ratios herald : bare, computed per round.
func summary(out io.Writer, p params, all []result) {
	fmt.Fprintf(out, "\nmedian [min–max] over %d rounds\n", p.rounds)
	for _, tr := range p.transports {
		by := map[string][]result{}
		for _, r := range all {
			if r.transport == tr {
				by[r.side] = append(by[r.side], r)
			}
		}
		for _, side := range p.sides {
			if len(by[side]) == 0 {
				continue
			}
			var rates, cpu, p50, p99 []float64
			for _, r := range by[side] {
				rates = append(rates, r.rate())
				cpu = append(cpu, r.cpuPerDelivery())
				p50 = append(p50, float64(r.p50.Microseconds())/1000)
				p99 = append(p99, float64(r.p99.Microseconds())/1000)
			}
			if p.rate > 0 {
				fmt.Fprintf(out, "%-3s %-11s p50 %s ms, p99 %s ms, server CPU %s µs per delivery\n", tr, side, spread(p50, "%.2f"), spread(p99, "%.2f"), spread(cpu, "%.2f"))
				continue
			}
			fmt.Fprintf(out, "%-3s %-11s %s deliveries/s, server CPU %s µs per delivery\n", tr, side, spread(rates, "%.0f"), spread(cpu, "%.2f"))
		}
		if h, c := by["herald"], by["centrifugo"]; p.rate == 0 && len(h) > 0 && len(h) == len(c) {
			var ratios, cpu []float64
			for i := range h {
				ratios = append(ratios, h[i].rate()/c[i].rate())
				cpu = append(cpu, c[i].cpuPerDelivery()/h[i].cpuPerDelivery())
			}
			fmt.Fprintf(out, "%-3s herald : centrifugo deliveries/s %s, CPU efficiency (centrifugo's CPU per delivery / herald's) %s\n", tr, spread(ratios, "%.2f"), spread(cpu, "%.2f"))
		}
		if m, r := by["typed-mixed"], by["typed-row"]; len(m) > 0 && len(m) == len(r) {
			var ratios, cpu []float64
			for i := range m {
				ratios = append(ratios, m[i].rate()/r[i].rate())
				cpu = append(cpu, r[i].cpuPerDelivery()/m[i].cpuPerDelivery())
			}
			fmt.Fprintf(out, "%-3s typed-mixed : typed-row deliveries/s %s, CPU efficiency (row-view CPU per delivery / mixed's) %s\n", tr, spread(ratios, "%.2f"), spread(cpu, "%.2f"))
		}
		for _, ref := range []string{"single", "batch"} {
			if len(by["herald"]) == 0 || len(by[ref]) != len(by["herald"]) {
				continue
			}
			var ratios, cpu []float64
			for i, h := range by["herald"] {
				ratios = append(ratios, h.rate()/by[ref][i].rate())
				cpu = append(cpu, by[ref][i].cpuPerDelivery()/h.cpuPerDelivery())
			}
			fmt.Fprintf(out, "%-3s herald : %-6s deliveries/s %s, CPU efficiency (bare CPU per delivery / herald's) %s\n", tr, ref, spread(ratios, "%.2f"), spread(cpu, "%.2f"))
		}
	}
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

// measure runs one measurement on a fresh server.
func measure(ctx context.Context, p params, dir string, round int, tr, side, cePath string) (result, error) {
	res := result{transport: tr, side: side}
	port, err := benchproc.FreePort()
	if err != nil {
		return res, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	self, err := os.Executable()
	if err != nil {
		return res, err
	}
	var cmd *exec.Cmd
	var local *inprocHerald // the herald side in this process (-inproc)
	var ce []byte           // the CloudEvent of herald's warm-up (centrifugo)
	profiled := false
	switch {
	case isHerald(side):
		cfg := filepath.Join(dir, "config.yaml")
		extra := ""
		if p.sendBuffer >= 0 {
			extra = fmt.Sprintf(", stream_send_buffer_bytes: %d", p.sendBuffer)
		}
		backend, storage := "kind: in_memory", ""
		switch {
		case p.engine == "jetstream":
			js := filepath.Join(dir, fmt.Sprintf("jetstream-%s-%s-%d", tr, side, round))
			backend = fmt.Sprintf("kind: jetstream, jetstream: {data_dir: %q}", js)
			storage = "\n    storage_policy: {allow_duplicates: true}"
		case side != "herald" || p.inproc:
			backend += fmt.Sprintf(", in_memory: {max_history_per_topic: %d}", p.notifications+1)
		}
		text := fmt.Sprintf(heraldConfig, port, backend, p.notifications+1000, extra, filepath.Join(dir, "typed.nspl"), storage)
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			return res, err
		}
		switch {
		case p.inproc:
			if local, err = startInproc(ctx, cfg); err != nil {
				return res, err
			}
			defer local.close()
		case p.profileDir != "":
			name := fmt.Sprintf("herald-%s-%d.pprof", tr, round)
			if side != "herald" {
				name = fmt.Sprintf("herald-%s-%s-%d.pprof", tr, side, round)
			}
			cmd = exec.Command(self, "-serve-herald", cfg, "-profile-to", filepath.Join(p.profileDir, name))
			profiled = true
		default:
			cmd = exec.Command(p.herald, "--config", cfg)
		}
	case side == "centrifugo":
		if ce, err = os.ReadFile(cePath); err != nil {
			return res, err
		}
		cfg := filepath.Join(dir, "centrifugo.json")
		msg, err := centMessage(ce, p.payload(p.notifications, time.Now().UnixNano()))
		if err != nil {
			return res, err
		}
		if err := os.WriteFile(cfg, benchproc.CentrifugoConfig(port, centQueueBytes(p.notifications, len(msg))), 0o600); err != nil {
			return res, err
		}
		cmd = exec.Command(p.centrifugo, "--config", cfg)
		cmd.Dir = dir
	default:
		cmd = exec.Command(self, "-serve-bare", addr, "-ce", cePath, "-coalesce="+strconv.FormatBool(side == "batch"))
	}
	pid := os.Getpid()
	if cmd != nil {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		cmd.SysProcAttr = benchproc.OrphanGuard()
		if err := cmd.Start(); err != nil {
			return res, err
		}
		defer benchproc.Stop(cmd, 10*time.Second)
		pid = cmd.Process.Pid
	}
	if err := benchproc.WaitListening(ctx, addr, 2*time.Minute); err != nil {
		return res, err
	}
	if side == "centrifugo" {
		if err := centLive(ctx, addr); err != nil {
			return res, err
		}
	}

	// The subscribers.
	ctr := &counter{}
	warm := newPhase(p.subscribers, 1)
	ctr.cur.Store(warm)
	var capMu sync.Mutex
	var captured []byte
	capture := func(b []byte) {
		capMu.Lock()
		captured = b
		capMu.Unlock()
	}
	closers, err := openSubscribers(ctx, p.subscribers, func(i int) (io.Closer, error) {
		var cp func([]byte)
		if i == 0 && side == "herald" {
			cp = capture
		}
		switch {
		case side == "centrifugo":
			w, err := centSession(addr, centChannel)
			if err != nil {
				return nil, err
			}
			go countCent(i, w, ctr)
			return w.c, nil
		case tr == "ws" && isHerald(side):
			w, err := heraldSession(addr, subscribeRequest(tr, side, i))
			if err != nil {
				return nil, err
			}
			go countWS(i, w, ctr, cp)
			return w.c, nil
		case tr == "ws":
			w, err := wsDial(addr, "/api/v1/session")
			if err != nil {
				return nil, err
			}
			go countWS(i, w, ctr, nil)
			return w.c, nil
		default:
			body := "{}"
			if isHerald(side) {
				body = subscribeRequest(tr, side, i)
			}
			s, err := sseOpen(addr, "/api/v1/watch", body)
			if err != nil {
				return nil, err
			}
			go countSSE(i, s, ctr, cp)
			return s.c, nil
		}
	})
	defer func() {
		ctr.cur.Store(nil)
		for _, c := range closers {
			c.Close()
		}
	}()
	if err != nil {
		return res, err
	}

	// Warm-up: one notification that every subscriber receives.
	var start func() error
	pace := time.Duration(0)
	if p.rate > 0 {
		pace = time.Duration(float64(time.Second) / p.rate)
	}
	switch {
	case isHerald(side):
		et := eventType(side)
		pub, err := openPublisher(addr, et, p.credit)
		if err != nil {
			return res, fmt.Errorf("publisher: %w", err)
		}
		defer pub.w.c.Close()
		if _, err := pub.publish(ctx, encodeBatches(et, 0, 1, 1, 2)); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
		batches := encodeBatches(et, 1, p.notifications, p.batch, 10)
		start = func() error {
			var took time.Duration
			var err error
			if p.rate > 0 {
				took, err = pub.publishFunc(ctx, p.notifications, pace, func(i int) []byte { return encodeTimed(i+1, 10+i) })
			} else {
				took, err = pub.publish(ctx, batches)
			}
			res.published = took
			return err
		}
	case side == "centrifugo":
		cp := newCentPublisher(addr, p.credit)
		defer cp.close()
		msg, err := centMessage(ce, `{"n":0}`)
		if err != nil {
			return res, err
		}
		if err := cp.publishOne(ctx, centChannel, msg); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
		start = func() error {
			var fail error
			took, err := cp.publish(ctx, p.notifications, pace, func(i int) []byte {
				sent := int64(0)
				if p.rate > 0 {
					sent = time.Now().UnixNano()
				}
				m, err := centMessage(ce, p.payload(i+1, sent))
				if err != nil && fail == nil {
					fail = err
				}
				return m
			})
			res.published = took
			return errors.Join(err, fail)
		}
	default:
		if err := waitSubscribed(ctx, addr, p.subscribers); err != nil {
			return res, err
		}
		if err := bareBroadcast(addr, 1); err != nil {
			return res, err
		}
		start = func() error { return bareBroadcast(addr, p.notifications) }
	}
	if err := waitPhase(ctx, warm, 30*time.Second); err != nil {
		return res, fmt.Errorf("warm-up: %w (%v)", err, warm.check(1))
	}
	if err := warm.check(1); err != nil {
		return res, fmt.Errorf("warm-up: %w", err)
	}
	if side == "herald" {
		capMu.Lock()
		cap := captured
		capMu.Unlock()
		if err := saveCloudEvent(cePath, cap, tr); err != nil {
			return res, err
		}
	}

	// The measurement.
	ph := newPhase(p.subscribers, int64(p.notifications))
	if p.rate > 0 {
		ph.lat = new(latHist)
	}
	ctr.cur.Store(ph)
	cpu0, w0 := benchproc.ProcCPU(pid), benchproc.ProcWrites(pid)
	cl0 := benchproc.SelfCPU()
	if profiled {
		_ = cmd.Process.Signal(syscall.SIGUSR1)
	}
	t0 := time.Now()
	pubErr := make(chan error, 1)
	go func() { pubErr <- start() }()
	within := 5 * time.Minute
	if p.rate > 0 {
		within += time.Duration(float64(p.notifications) * float64(pace))
	}
	err = waitPhase(ctx, ph, within)
	if profiled {
		_ = cmd.Process.Signal(syscall.SIGUSR2)
	}
	if err != nil {
		return res, fmt.Errorf("%w (%d of %d delivered: %v)", err, ph.events.Load(), ph.target, ph.check(int64(p.notifications)))
	}
	if err := <-pubErr; err != nil {
		return res, fmt.Errorf("publish: %w", err)
	}
	if err := ph.check(int64(p.notifications)); err != nil {
		return res, err
	}
	res.serverCPU, res.serverWrites = benchproc.ProcCPU(pid)-cpu0, benchproc.ProcWrites(pid)-w0
	res.clientCPU = benchproc.SelfCPU() - cl0
	res.deliveries = ph.events.Load()
	res.elapsed = time.Duration(ph.last.Load() - t0.UnixNano())
	res.frames = ph.frames.Load()
	if ph.lat != nil {
		if n := ph.lat.n.Load(); n != res.deliveries {
			return res, fmt.Errorf("%d deliveries carried a publish time, want all %d", n, res.deliveries)
		}
		res.p50, res.p99, res.maxLat = ph.lat.quantile(0.50), ph.lat.quantile(0.99), time.Duration(ph.lat.max.Load())
	}
	if local != nil && p.engine != "jetstream" {
		want := views(side, p.subscribers)
		if res.rendered, err = local.renderedViews(ctx, eventType(side), p.notifications+1); err != nil {
			return res, err
		}
		if res.rendered != want {
			return res, fmt.Errorf("the records were rendered in %d views, want %d (one per format asked for, not per subscriber)", res.rendered, want)
		}
	}
	return res, nil
}

// payload is the payload of notification k: with sentNS (the latency
// mode) it carries its publish time.
func (p params) payload(k int, sentNS int64) string {
	if p.rate > 0 {
		return fmt.Sprintf(`{"n":%d,%s%d}`, k, sentMember, sentNS)
	}
	return fmt.Sprintf(`{"n":%d}`, k)
}

// openSubscribers opens n subscribers, a few at a time.
func openSubscribers(ctx context.Context, n int, open func(i int) (io.Closer, error)) ([]io.Closer, error) {
	out := make([]io.Closer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = open(i)
		}()
	}
	wg.Wait()
	var kept []io.Closer
	for _, c := range out {
		if c != nil {
			kept = append(kept, c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return kept, fmt.Errorf("opening the subscribers: %w", err)
	}
	return kept, ctx.Err()
}

// waitPhase waits until ph is complete or failed.
func waitPhase(ctx context.Context, ph *phase, within time.Duration) error {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-ph.done:
		return ph.failure()
	case <-t.C:
		return fmt.Errorf("not complete within %s", within)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// saveCloudEvent writes the CloudEvent of a captured events frame (ws)
// or data line (sse) for the bare broadcaster.
func saveCloudEvent(path string, captured []byte, tr string) error {
	ce := captured
	if tr == "ws" {
		s := string(captured)
		i := strings.Index(s, `"events":[`)
		if i < 0 || !strings.HasSuffix(s, "]}") {
			return fmt.Errorf("unexpected events frame %q", s)
		}
		ce = []byte(s[i+len(`"events":[`) : len(s)-2])
	}
	if len(ce) == 0 || ce[0] != '{' {
		return fmt.Errorf("no CloudEvent captured (%q)", captured)
	}
	return os.WriteFile(path, ce, 0o600)
}

// ---- the publisher ----

// publisher is a WebSocket producer on herald.
type publisher struct {
	w      *wsConn
	credit int
}

// openPublisher opens a session and a producer of eventType on it.
func openPublisher(addr, eventType string, credit int) (*publisher, error) {
	w, err := wsDial(addr, "/api/v1/session")
	if err != nil {
		return nil, err
	}
	if _, err := w.text(); err != nil {
		w.c.Close()
		return nil, err
	}
	reply, err := w.call(1, `{"id":1,"op":"open_producer","producer":"p","event_type":"`+eventType+`"}`)
	if err != nil {
		w.c.Close()
		return nil, err
	}
	s := string(reply)
	if i := strings.Index(s, `"credit":`); i >= 0 {
		j := i + len(`"credit":`)
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if c, err := strconv.Atoi(s[j:k]); err == nil && c < credit {
			credit = c
		}
	}
	return &publisher{w: w, credit: credit}, nil
}

// encodeBatches encodes n notifications of eventType from number first
// as publish frames of at most size each, with request ids from id. A
// reading's payload is a typed record (WIRE JSON), mars's an opaque
// object.
func encodeBatches(eventType string, first, n, size, id int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i += size {
		var b strings.Builder
		fmt.Fprintf(&b, `{"id":%d,"op":"publish","producer":"p","batch":[`, id)
		id++
		for j := i; j < min(i+size, n); j++ {
			if j > i {
				b.WriteByte(',')
			}
			k := first + j
			if eventType == "reading" {
				fmt.Fprintf(&b, `{"identifier":{"class":"od","step":%d},"payload":{"class":"od","step":%d,"temperature":%d.5,"humidity":0.25,"at":"2026-12-03T12:00:00Z"}}`, k%100, k%100, k%40)
				continue
			}
			fmt.Fprintf(&b, `{"identifier":{"class":"od","step":%d},"payload":{"n":%d}}`, k%100, k)
		}
		b.WriteString("]}")
		out = append(out, []byte(b.String()))
	}
	return out
}

// encodeTimed encodes notification k of mars, stamped with the time of
// the call, as a publish frame of its own with request id id.
func encodeTimed(k, id int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"op":"publish","producer":"p","batch":[{"identifier":{"class":"od","step":%d},"payload":{"n":%d,%s%d}}]}`,
		id, k%100, k, sentMember, time.Now().UnixNano())
}

// publish sends the batches, keeping at most credit of them awaiting
// their outcome, and returns once every one is answered completed.
func (p *publisher) publish(ctx context.Context, batches [][]byte) (time.Duration, error) {
	return p.publishFunc(ctx, len(batches), 0, func(i int) []byte { return batches[i] })
}

// publishFunc sends n publish frames, frame(i) for i from 0, keeping at
// most credit of them awaiting their outcome, and returns once every one
// is answered completed. With pace > 0, frame i is sent no earlier than
// pace×i after the start (frame is called then, so that it can stamp the
// time).
func (p *publisher) publishFunc(ctx context.Context, n int, pace time.Duration, frame func(i int) []byte) (time.Duration, error) {
	start := time.Now()
	sem := make(chan struct{}, p.credit)
	done := make(chan error, 1)
	go func() {
		for got := 0; got < n; {
			f, err := p.w.text()
			if err != nil {
				done <- err
				return
			}
			if !strings.Contains(string(f[:min(len(f), 64)]), `"type":"reply"`) {
				continue
			}
			if !strings.Contains(string(f), `"outcome":"completed"`) {
				done <- fmt.Errorf("batch refused: %.300s", f)
				return
			}
			got++
			<-sem
		}
		done <- nil
	}()
	for i := range n {
		if pace > 0 {
			if err := benchproc.Pause(ctx, time.Until(start.Add(time.Duration(i)*pace))); err != nil {
				return 0, err
			}
		}
		select {
		case sem <- struct{}{}:
		case err := <-done:
			if err == nil {
				err = errors.New("the replies ended early")
			}
			return 0, err
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if err := p.w.send(0x1, frame(i)); err != nil {
			return 0, err
		}
	}
	select {
	case err := <-done:
		return time.Since(start), err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// ---- the bare server's control ----

// bareBroadcast asks the bare broadcaster to send n notifications.
func bareBroadcast(addr string, n int) error {
	resp, err := http.Post(fmt.Sprintf("http://%s/broadcast?n=%d", addr, n), "text/plain", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("broadcast: %s", resp.Status)
	}
	return nil
}

// waitSubscribed waits until the bare server holds n subscribers.
func waitSubscribed(ctx context.Context, addr string, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s/subscribers", addr))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got, _ := strconv.Atoi(strings.TrimSpace(string(b))); got >= n {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the bare server did not register %d subscribers", n)
		}
		if err := benchproc.Pause(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// ---- process figures ----

// ---- helpers ----

// round3 rounds a duration for display.
func round3(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(100 * time.Microsecond).String()
	}
}
