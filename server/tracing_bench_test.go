package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/tracing"
	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// newTracedBenchServer starts an in-memory herald (metrics off) traced
// by tr (nil: tracing off).
func newTracedBenchServer(b *testing.B, tr *tracing.Tracer) *server.Server {
	cfg, err := configs.Parse([]byte(benchConfig(0)), nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{Tracer: tr})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkNotifyTracing measures what tracing costs a notify: the
// whole router serving POST /api/v1/notification with a traceparent
// header in process, with tracing on at 100 % sampling (server, publish
// and store spans, exported over OTLP/gRPC to an in-process collector,
// and the trace context stored with the notification) against the same
// herald with tracing off. As BenchmarkNotifyMetrics, each iteration
// serves one notify on each, alternately, and it reports the medians
// (off-ns/op, on-ns/op) and the ratio of throughputs (off/on: 1 means
// no cost, 0.9 means tracing keeps 90 % of the notifies per second).
func BenchmarkNotifyTracing(b *testing.B) {
	c := tracingtest.StartGRPC(b)
	tel, err := tracing.New(b.Context(), tracing.Options{Version: "bench",
		Traces: &tracing.TraceExport{Protocol: tracing.ProtocolGRPC, URL: "http://" + c.Endpoint(), SampleRatio: 1, MaxQueueSize: 1 << 16}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	servers := [2]*server.Server{newTracedBenchServer(b, nil), newTracedBenchServer(b, tel.Tracer())}
	body := `{"event_type":"forecast","identifier":{"region":"europe","step":1}}`
	var spent [2][]time.Duration
	serve := func(srv *server.Server) time.Duration {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/notification", strings.NewReader(body))
		req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		w := httptest.NewRecorder()
		start := time.Now()
		srv.ServeHTTP(w, req)
		d := time.Since(start)
		if w.Code != 200 {
			b.Fatalf("notify: %d %s", w.Code, w.Body)
		}
		return d
	}
	n := 0
	for b.Loop() {
		first := n % 2
		spent[first] = append(spent[first], serve(servers[first]))
		spent[1-first] = append(spent[1-first], serve(servers[1-first]))
		n++
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds())
	}
	off, on := median(spent[0]), median(spent[1])
	b.ReportMetric(off, "off-ns/op")
	b.ReportMetric(on, "on-ns/op")
	b.ReportMetric(off/on, "on/off-throughput")
	if d := tel.TraceSpansDropped(); d > 0 {
		b.Logf("%d spans dropped", d)
	}
}
