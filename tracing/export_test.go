package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exportSpans are spans with everything OTLP carries: every attribute
// type, links and events with attributes, statuses, dropped counts,
// remote and local parents, trace state, two resources (one with a
// schema URL), three scopes (one with version, schema URL and
// attributes).
func exportSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	ts, err := trace.ParseTraceState("k=v,x=y")
	if err != nil {
		t.Fatal(err)
	}
	sc := func(tid, sid byte, flags trace.TraceFlags, remote bool, state trace.TraceState) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{tid, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			SpanID: trace.SpanID{sid, 1, 2, 3, 4, 5, 6, 7}, TraceFlags: flags, Remote: remote, TraceState: state})
	}
	resA := resource.NewSchemaless(attribute.String("service.name", "herald"), attribute.String("service.version", "v1"))
	resB := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "other"))
	scopeA := instrumentation.Scope{Name: "herald", Version: "v1"}
	scopeB := instrumentation.Scope{Name: "b", Version: "2", SchemaURL: "https://example.com/s", Attributes: attribute.NewSet(attribute.Bool("x", true))}
	all := []attribute.KeyValue{
		attribute.String("s", "text"), attribute.Int("i", -7), attribute.Int64("i64", 1<<40), attribute.Bool("b", true),
		attribute.Float64("f", 2.5), attribute.StringSlice("ss", []string{"a", "b"}), attribute.IntSlice("is", []int{1, 2}),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Float64Slice("fs", []float64{0.5}),
		{Key: "empty"},
		// The lengths of scalar values written in place: empty, zero,
		// false, a key or a value longer than a one-byte length.
		attribute.String("", "no key"), attribute.String("blank", ""), attribute.Int("zero", 0), attribute.Bool("no", false),
		attribute.Float64("nf", -0.5), attribute.String(strings.Repeat("k", 130), strings.Repeat("v", 20000)),
	}
	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	stubs := tracetest.SpanStubs{
		{Name: "publish mars", SpanContext: sc(1, 1, trace.FlagsSampled, false, ts), Parent: sc(1, 9, trace.FlagsSampled, true, trace.TraceState{}),
			SpanKind: trace.SpanKindProducer, StartTime: start, EndTime: start.Add(time.Millisecond), Attributes: all,
			Status: sdktrace.Status{Code: codes.Error, Description: "backend down"}, DroppedAttributes: 3, DroppedEvents: 1, DroppedLinks: 2,
			Events: []sdktrace.Event{{Name: "exception", Time: start.Add(time.Microsecond), Attributes: []attribute.KeyValue{attribute.String("exception.message", "down")}, DroppedAttributeCount: 1},
				{Name: "bare", Time: start}},
			Resource: resA, InstrumentationScope: scopeA},
		{Name: "store mars", SpanContext: sc(1, 2, trace.FlagsSampled, false, trace.TraceState{}), Parent: sc(1, 1, trace.FlagsSampled, false, ts),
			SpanKind: trace.SpanKindInternal, StartTime: start, EndTime: start, Status: sdktrace.Status{Code: codes.Ok},
			Resource: resA, InstrumentationScope: scopeA},
		{Name: "process mars", SpanContext: sc(2, 3, 0, false, trace.TraceState{}), SpanKind: trace.SpanKindConsumer, StartTime: start, EndTime: start,
			Links: []sdktrace.Link{{SpanContext: sc(1, 1, trace.FlagsSampled, true, ts), Attributes: []attribute.KeyValue{attribute.String("messaging.message.id", "mars@1")}, DroppedAttributeCount: 2},
				{SpanContext: sc(3, 4, 0, false, trace.TraceState{})}},
			Resource: resA, InstrumentationScope: scopeB},
		{Name: "POST", SpanContext: sc(4, 5, trace.FlagsSampled, false, trace.TraceState{}), SpanKind: trace.SpanKindServer, StartTime: start, EndTime: start,
			Resource: resB, InstrumentationScope: scopeA},
		{Name: "client", SpanContext: sc(4, 6, trace.FlagsSampled, false, trace.TraceState{}), SpanKind: trace.SpanKindClient, StartTime: start, EndTime: start,
			Attributes: []attribute.KeyValue{attribute.Int("n", 1)}, Resource: resA, InstrumentationScope: scopeA},
		{Name: "unscoped", SpanContext: sc(5, 7, trace.FlagsSampled, false, trace.TraceState{}), StartTime: start, EndTime: start, Resource: resA},
	}
	return stubs.Snapshots()
}

// asFinished is spans as the export reads them.
func asFinished(spans []sdktrace.ReadOnlySpan) []finished {
	out := make([]finished, len(spans))
	for i, s := range spans {
		out[i] = s
	}
	return out
}

// decoded is spans encoded by a wireEncoder and decoded again as the
// collector decodes them.
func decoded(t *testing.T, spans []finished) []*tracepb.ResourceSpans {
	t.Helper()
	var w wireEncoder
	var out []*tracepb.ResourceSpans
	for _, rs := range w.encode(spans) {
		b, err := proto.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		m := new(tracepb.ResourceSpans)
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		if len(m.ProtoReflect().GetUnknown()) != 0 {
			t.Fatalf("fields the OTLP messages do not have: %x", m.ProtoReflect().GetUnknown())
		}
		out = append(out, m)
	}
	w.release()
	return out
}

// captured is an OTLP/HTTP endpoint that keeps the requests it receives.
type captured struct {
	mu   sync.Mutex
	reqs []*coltrace.ExportTraceServiceRequest
}

func (c *captured) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	req := new(coltrace.ExportTraceServiceRequest)
	if err := proto.Unmarshal(b, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// take returns the requests received and forgets them.
func (c *captured) take() []*coltrace.ExportTraceServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reqs
	c.reqs = nil
	return r
}

// sameRequest reports whether a and b hold the same resource spans, in
// any order of resources (the SDK's exporter orders them by a map's
// iteration).
func sameRequest(a, b *coltrace.ExportTraceServiceRequest) bool {
	ra, rb := a.GetResourceSpans(), b.GetResourceSpans()
	if len(ra) != len(rb) {
		return false
	}
	used := make([]bool, len(rb))
	for _, x := range ra {
		found := false
		for j, y := range rb {
			if !used[j] && proto.Equal(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestSpanExporterMatchesSDK: herald's exporter sends the request the
// SDK's OTLP exporter sends for the same spans, message for message,
// batch after batch (its messages are reused: a smaller batch after a
// larger one, then the larger again, still match).
func TestSpanExporterMatchesSDK(t *testing.T) {
	c := &captured{}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	url := srv.URL + "/v1/traces"
	ctx := context.Background()
	sdkExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdkExp.Shutdown(ctx) })
	ours, err := newOTLPExporter(ctx, otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(url)))
	if err != nil {
		t.Fatal(err)
	}
	spans := exportSpans(t)
	for _, batch := range [][]sdktrace.ReadOnlySpan{spans, spans[2:3], spans[:2], spans} {
		if err := sdkExp.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := ours.Export(ctx, asFinished(batch)); err != nil {
			t.Fatal(err)
		}
		reqs := c.take()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		if !sameRequest(reqs[0], reqs[1]) {
			t.Fatalf("batch of %d: herald sent\n%v\nthe SDK\n%v", len(batch), reqs[1], reqs[0])
		}
	}
	if err := ours.Export(ctx, nil); err != nil || len(c.take()) != 0 {
		t.Fatalf("an empty batch: %v, or a request sent", err)
	}
	if err := ours.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ours.Export(ctx, asFinished(spans)); err == nil || len(c.take()) != 0 {
		t.Fatalf("export after Shutdown: %v, or a request sent", err)
	}
}
