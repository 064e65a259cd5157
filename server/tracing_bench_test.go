package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/tracing"
	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// tracingBenchBody is the notify of the tracing benchmark, sent with
// tracingBenchParent (a sampled publisher's trace context).
const (
	tracingBenchBody   = `{"event_type":"forecast","identifier":{"region":"europe","step":1}}`
	tracingBenchParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// controlRatio, given to newSampledBench for a ratio, makes the control
// pair of BenchmarkNotifyTracing: both heralds untraced.
const controlRatio = -1

// tracingBench is a pair of heralds alike but for tracing, off ([0])
// and on ([1], at 100 % sampling), each served over loopback HTTP.
type tracingBench struct {
	parent  string // the traceparent header sent; "" for none
	tel     *tracing.Telemetry
	c       *tracingtest.Collector
	servers [2]*server.Server
	urls    [2]string
	clients [2]*http.Client
	ext     *extClient // the client process, when the clients run in one
}

// phaseResult is what a phase measured.
type phaseResult struct {
	wall time.Duration
	// cpu is the CPU time this process used: the heralds, the collector
	// and, unless they run in a process of their own, the clients.
	cpu time.Duration
	// clientCPU is the client process's CPU time, when there is one.
	clientCPU time.Duration
}

// newTracingBench starts the pair on backend ("memory" or "jetstream":
// an embedded nats-server storing in a temporary directory), each with
// an HTTP client keeping up to conns connections alive. The traced one
// exports over OTLP/HTTP to a collector that counts the spans and
// discards them (tracingtest.StartDiscard), so that the collector, on
// the same cores, costs next to nothing beside herald's own work:
// recording the spans, converting them to protobuf and sending them.
func newTracingBench(tb testing.TB, backend string, conns int) *tracingBench {
	return newSampledBench(tb, backend, conns, 1)
}

// newSampledBench is newTracingBench with the traced herald sampling
// ratio of new traces; below 1 the notifies carry no traceparent, so
// that herald starts (and samples) their traces itself. A ratio of
// controlRatio makes the control pair: both heralds untraced.
func newSampledBench(tb testing.TB, backend string, conns int, ratio float64) *tracingBench {
	tb.Helper()
	t := &tracingBench{c: tracingtest.StartDiscard(tb), parent: tracingBenchParent}
	if ratio < 1 {
		t.parent = ""
	}
	control := ratio == controlRatio
	if control {
		t.parent, ratio = tracingBenchParent, 1
	}
	tel, err := tracing.New(context.Background(), tracing.Options{Version: "bench",
		Traces: &tracing.TraceExport{Protocol: tracing.ProtocolHTTP, URL: t.c.Endpoint() + "/v1/traces", SampleRatio: ratio, MaxQueueSize: 1 << 16}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	t.tel = tel
	tracers := []*tracing.Tracer{nil, tel.Tracer()}
	if control {
		tracers[1] = nil
	}
	for i, tr := range tracers {
		yaml := benchConfig(0)
		if backend == "jetstream" {
			yaml = strings.Replace(yaml, "notification_backend: {kind: in_memory}",
				"notification_backend:\n  kind: jetstream\n  jetstream: {data_dir: "+filepath.Join(tb.TempDir(), "js")+"}", 1)
		}
		cfg, err := configs.Parse([]byte(yaml), nil)
		if err != nil {
			tb.Fatal(err)
		}
		srv, err := server.New(context.Background(), cfg, server.Options{Tracer: tr})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(srv.Close)
		url, c := benchListen(tb, srv, conns, [2]string{"off", "on"}[i])
		t.servers[i], t.urls[i], t.clients[i] = srv, url+"/api/v1/notification", c
	}
	return t
}

// notify posts one notify to herald i over its keep-alive connection
// and reads the answer.
func (t *tracingBench) notify(i int) error {
	req, err := http.NewRequest(http.MethodPost, t.urls[i], strings.NewReader(tracingBenchBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.parent != "" {
		req.Header.Set("traceparent", t.parent)
	}
	resp, err := t.clients[i].Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("notify: %d %s", resp.StatusCode, body)
	}
	return nil
}

// phase posts n notifies to herald i from conc clients at once (n/conc
// each, one after the other), in this process or in t's client process,
// and returns how long they took and the CPU time used meanwhile.
func (t *tracingBench) phase(i, conc, n int) (phaseResult, error) {
	cpu0, err := processCPU()
	if err != nil {
		return phaseResult{}, err
	}
	var r phaseResult
	if t.ext != nil {
		r.wall, r.clientCPU, err = t.ext.phase(i, n)
	} else {
		r.wall, err = t.post(i, conc, n)
	}
	cpu1, cerr := processCPU()
	r.cpu = cpu1 - cpu0
	return r, errors.Join(err, cerr)
}

// post posts n notifies to herald i from conc clients at once (n/conc
// each, one after the other) and returns how long they took.
func (t *tracingBench) post(i, conc, n int) (time.Duration, error) {
	var wg sync.WaitGroup
	errs := make([]error, conc)
	start := time.Now()
	for w := range conc {
		wg.Go(func() {
			for range n / conc {
				if err := t.notify(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// median returns the median of ds, in nanoseconds.
func median(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Nanoseconds())
}

// BenchmarkNotifyTracing measures what tracing costs a notify as a
// client sees it: POST /api/v1/notification with a sampled traceparent
// header over loopback HTTP (herald's HTTP server on 127.0.0.1, Go
// clients on keep-alive connections), with tracing on at 100 % sampling
// (server, publish and store spans, the trace context stored with the
// notification, the spans exported over OTLP/HTTP) against the same
// herald with tracing off, on the in-memory engine and on embedded
// JetStream, from 1 and from 16 concurrent clients. The collector is
// tracingtest.StartDiscard: it counts the spans it receives without
// decoding or keeping them, so that what the traced herald pays is its
// own work (recording, converting to protobuf, sending).
//
// Each iteration is a phase of 256 notifies (32 per client from 16
// clients: 512) on each herald, one after the other (which goes first
// alternates), so that the machine's load weighs on both alike; a
// traced phase ends at least 768 spans, so its exports (a batch per 512
// spans) run within it. It reports the median phase time per notify of
// each (off-ns/op, on-ns/op: the inverse of throughput, medians so that
// the stalls of a shared machine do not count), their ratio
// on/off-throughput (the traced herald's notifies per second against
// the untraced one's: 1 means no cost, 0.9 keeps 90 %), the ratio of
// the process's CPU time in the phases (on/off-cpu: untraced over
// traced, medians, the clients' share included; what the throughput
// ratio becomes where the CPU is the limit, and less sensitive to the
// load of other processes), that CPU time per notify of each
// (off-cpu-ns/op, on-cpu-ns/op), the spans exported per traced notify (3
// when none is dropped) and the spans dropped because the export queue
// was full.
//
// The -sampled-10pct variants send no traceparent and sample 10 % of
// the traces herald starts (tracing.sample_ratio 0.1): what tracing
// costs as a deployment would usually run it (spans/notify about 0.3).
//
// The -extclient variants run the clients in a process of their own (the
// test binary again, serveBenchClient), as a deployment's publishers
// are: the heralds' process then has its own garbage collector and
// caches, and on/off-herald-cpu is the ratio of its CPU time alone
// (off-herald-cpu-ns/op and on-herald-cpu-ns/op that time per notify);
// on/off-cpu counts both processes.
//
// The -control variants are the measurement's control: both heralds of
// the pair untraced, the notifies as at 100 %. Their ratios are 1 but
// for the noise of the measurement (0.98-1.03 over 200 rounds on the
// 2-core machine of BENCHMARKS.md), which bounds what a difference in
// the other variants' ratios means.
//
// In a CPU profile of it (-cpuprofile) the loopback heralds' request
// goroutines carry the label herald=off or herald=on (benchListen): go
// tool pprof -tagfocus herald=on shows the traced one's request path;
// the span export and the garbage collector carry no label.
//
// memory-inprocess is the in-memory engine without HTTP: the router
// serving one notify at a time in process (httptest), alternately on
// each herald, medians of single notifies; it shows the cost of tracing
// against the bare handler.
func BenchmarkNotifyTracing(b *testing.B) {
	for _, backend := range []string{"memory", "jetstream"} {
		for _, conc := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s-http-c%d", backend, conc), func(b *testing.B) {
				benchTracingHTTP(b, backend, conc)
			})
		}
	}
	for _, backend := range []string{"memory", "jetstream"} {
		b.Run(backend+"-http-c16-sampled-10pct", func(b *testing.B) {
			benchSampledHTTP(b, newSampledBench(b, backend, 16, 0.1), 16)
		})
	}
	for _, backend := range []string{"memory", "jetstream"} {
		for _, conc := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s-http-c%d-extclient", backend, conc), func(b *testing.B) {
				t := newTracingBench(b, backend, conc)
				t.ext = startExtClient(b, t, conc)
				benchSampledHTTP(b, t, conc)
			})
		}
	}
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprintf("memory-http-c%d-control", conc), func(b *testing.B) {
			benchSampledHTTP(b, newSampledBench(b, "memory", conc, controlRatio), conc)
		})
	}
	b.Run("memory-inprocess", benchTracingInProcess)
}

// benchTracingHTTP is a loopback variant of BenchmarkNotifyTracing.
func benchTracingHTTP(b *testing.B, backend string, conc int) {
	benchSampledHTTP(b, newTracingBench(b, backend, conc), conc)
}

// benchSampledHTTP runs the phases of t from conc clients.
func benchSampledHTTP(b *testing.B, t *tracingBench, conc int) {
	n := max(256, 32*conc)
	for i := range 2 { // open the connections
		if _, err := t.phase(i, conc, conc); err != nil {
			b.Fatal(err)
		}
	}
	var spent, cpu, heraldCPU [2][]time.Duration
	traced := 0
	round := 0
	for b.Loop() {
		for _, i := range [2][2]int{{0, 1}, {1, 0}}[round%2] {
			r, err := t.phase(i, conc, n)
			if err != nil {
				b.Fatal(err)
			}
			spent[i] = append(spent[i], r.wall)
			cpu[i] = append(cpu[i], r.cpu+r.clientCPU)
			heraldCPU[i] = append(heraldCPU[i], r.cpu)
		}
		traced += n
		round++
	}
	b.StopTimer()
	off, on := median(spent[0])/float64(n), median(spent[1])/float64(n)
	b.ReportMetric(off, "off-ns/op")
	b.ReportMetric(on, "on-ns/op")
	b.ReportMetric(off/on, "on/off-throughput")
	b.ReportMetric(median(cpu[0])/median(cpu[1]), "on/off-cpu")
	b.ReportMetric(median(cpu[0])/float64(n), "off-cpu-ns/op")
	b.ReportMetric(median(cpu[1])/float64(n), "on-cpu-ns/op")
	if t.ext != nil {
		b.ReportMetric(median(heraldCPU[0])/median(heraldCPU[1]), "on/off-herald-cpu")
		b.ReportMetric(median(heraldCPU[0])/float64(n), "off-herald-cpu-ns/op")
		b.ReportMetric(median(heraldCPU[1])/float64(n), "on-herald-cpu-ns/op")
	}
	t.report(b, traced+conc)
}

// report flushes the spans and reports how many reached the collector
// per traced notify, and how many were dropped.
func (t *tracingBench) report(b *testing.B, traced int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := t.tel.ForceFlush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(t.c.SpanCount())/float64(traced), "spans/notify")
	b.ReportMetric(float64(t.tel.TraceSpansDropped()), "dropped-spans")
}

// benchTracingInProcess is the memory-inprocess variant of
// BenchmarkNotifyTracing.
func benchTracingInProcess(b *testing.B) {
	t := newTracingBench(b, "memory", 1)
	var spent [2][]time.Duration
	serve := func(srv *server.Server) time.Duration {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/notification", strings.NewReader(tracingBenchBody))
		req.Header.Set("traceparent", tracingBenchParent)
		w := httptest.NewRecorder()
		start := time.Now()
		srv.ServeHTTP(w, req)
		d := time.Since(start)
		if w.Code != http.StatusOK {
			b.Fatalf("notify: %d %s", w.Code, w.Body)
		}
		return d
	}
	round := 0
	for b.Loop() {
		for _, i := range [2][2]int{{0, 1}, {1, 0}}[round%2] {
			spent[i] = append(spent[i], serve(t.servers[i]))
		}
		round++
	}
	b.StopTimer()
	off, on := median(spent[0]), median(spent[1])
	b.ReportMetric(off, "off-ns/op")
	b.ReportMetric(on, "on-ns/op")
	b.ReportMetric(off/on, "on/off-throughput")
	t.report(b, round)
}

// TestNotifyTracingBench is the smoke test of BenchmarkNotifyTracing: on
// both engines, and from the client process of the -extclient variants
// on the in-memory one, notifies over loopback HTTP are accepted by both
// heralds, only the traced one stores the publisher's trace context
// with the notification, and the traced one's three spans per notify
// (server, publish, store) reach the discarding collector; the
// untraced one exports none.
func TestNotifyTracingBench(t *testing.T) {
	for _, v := range []struct {
		backend string
		ext     bool
	}{{"memory", false}, {"jetstream", false}, {"memory", true}} {
		name := v.backend
		if v.ext {
			name += "-extclient"
		}
		t.Run(name, func(t *testing.T) {
			backend := v.backend
			b := newTracingBench(t, backend, 4)
			if v.ext {
				b.ext = startExtClient(t, b, 4)
			}
			for i := range 2 {
				if _, err := b.phase(i, 4, 8); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.tel.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			b.c.WaitSpanCount(t, time.Minute, 24)
			if n := b.c.SpanCount(); n != 24 {
				t.Errorf("collector counted %d spans, want 24 (3 per traced notify)", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i, srv := range b.servers {
				rd, err := srv.Engine().History(ctx, engine.Query{Stream: "forecast"}, engine.Range{ToSeq: 1 << 62})
				if err != nil {
					t.Fatal(err)
				}
				recs, _, err := rd.Next(ctx, 100)
				rd.Close()
				// One per identifier (allow_duplicates is off): the last.
				if err != nil || len(recs) != 1 || recs[0].Seq != 8 {
					t.Fatalf("herald %d stores %d notifications (%v), want the 8th alone", i, len(recs), err)
				}
				for _, r := range recs {
					if traced := strings.HasPrefix(r.TraceParent, "00-0af7651916cd43dd8448eb211c80319c-"); traced != (i == 1) || (i == 0 && r.TraceParent != "") {
						t.Errorf("herald %d stored traceparent %q", i, r.TraceParent)
					}
				}
			}
		})
	}
}
