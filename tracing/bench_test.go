package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// BenchmarkNotifySpans measures the tracing work of one notify alone,
// as herald does it: the server span continuing the request's
// traceparent, the publish span, the trace context formatted for the
// notification, the store span, the outcome and the route, the three
// spans ended and exported over OTLP/HTTP to a collector that counts
// and discards them. Every 128 notifies it waits for the spans to be
// exported (ForceFlush), so that the export's work, which runs beside
// in the span queue's goroutine, counts too and no span is dropped.
// Besides the time per notify it reports the CPU time the process
// spent per notify (cpu-ns/op: the collector's included, which is
// small), which the machine's load does not inflate as it does the
// time.
func BenchmarkNotifySpans(b *testing.B) {
	c := tracingtest.StartDiscard(b)
	tel, err := New(context.Background(), Options{Traces: &TraceExport{Protocol: ProtocolHTTP, URL: c.Endpoint() + "/v1/traces", SampleRatio: 1, MaxQueueSize: 1 << 16}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	tr := tel.Tracer()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/notification", nil)
	r.Header.Set(TraceParent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	b.ReportAllocs()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		if n++; n%128 == 0 {
			if err := tel.ForceFlush(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		ctx, server := tr.StartServer(r)
		ctx, pub := tr.StartPublish(ctx, "forecast", 68)
		if tp, _ := tr.Format(ctx); len(tp) != 55 {
			b.Fatal(tp)
		}
		_, store := tr.StartStore(ctx, "in_memory", "forecast", 1, false)
		End(store, nil)
		pub.Done("forecast@1", nil)
		tr.Served(server, http.MethodPost, "/api/v1/notification", "/api/v1/notification", http.StatusOK)
		server.End()
	}
	if err := tel.ForceFlush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(tel.TraceSpansDropped()), "dropped-spans")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWireEncoder measures the encoding of a batch of 510 spans,
// those of 170 notifies as herald records them (server, publish and
// store spans; recorded by the SDK's tracer, whose spans stay readable):
// each span as it ends (appendSpanField), then the request: the time
// per span and the bytes per span.
func BenchmarkWireEncoder(b *testing.B) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(testRes), sdktrace.WithSyncer(mem))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := newTracerOf(tp.Tracer(testScope.Name, trace.WithInstrumentationVersion(testScope.Version)))
	r := httptest.NewRequest(http.MethodPost, "/api/v1/notification", nil)
	r.Header.Set(TraceParent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	for range 170 {
		ctx, server := tr.StartServer(r)
		ctx, pub := tr.StartPublish(ctx, "forecast", 68)
		_, store := tr.StartStore(ctx, "in_memory", "forecast", 1, false)
		End(store, nil)
		pub.Done("forecast@1", nil)
		tr.Served(server, http.MethodPost, "/api/v1/notification", "/api/v1/notification", http.StatusOK)
		server.End()
	}
	spans := asFinished(mem.GetSpans().Snapshots())
	w := newWireEncoder(testRes, testScope)
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for _, s := range spans {
			buf = appendSpanField(buf, s)
		}
		w.encode(buf)
		w.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
	b.ReportMetric(float64(len(w.buf))/float64(len(spans)), "bytes/span")
}
