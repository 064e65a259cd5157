package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"

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
// store spans): the time per span and the bytes per span.
func BenchmarkWireEncoder(b *testing.B) {
	q := newSpanQueue(&kept{}, spanQueueOptions{size: 1024, interval: time.Hour})
	b.Cleanup(func() { _ = q.Shutdown(context.Background()) })
	tr := newTracerOf(&recorder{sampler: newParentRatio(1), queue: q,
		res: resource.NewSchemaless(attribute.String("service.name", "herald")), scope: instrumentation.Scope{Name: scopeName, Version: "bench"}})
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
	spans := make([]finished, 0, 510)
	for len(spans) < 510 { // below a batch's worth: the queue keeps them
		spans = append(spans, <-q.q)
	}
	var w wireEncoder
	for b.Loop() {
		w.encode(spans)
		w.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(spans)), "ns/span")
	b.ReportMetric(float64(len(w.buf))/float64(len(spans)), "bytes/span")
}
