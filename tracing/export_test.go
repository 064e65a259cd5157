package tracing

import (
	"context"
	"fmt"
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

// encodeSpans is spans encoded as the recorder queues them
// (appendSpanField).
func encodeSpans(spans []finished) []byte {
	var b []byte
	for _, s := range spans {
		b = appendSpanField(b, s)
	}
	return b
}

// decoded is spans, all of res and scope, encoded as the exporter sends
// them and decoded again as the collector decodes them.
func decoded(t *testing.T, res *resource.Resource, scope instrumentation.Scope, spans []finished) *tracepb.ResourceSpans {
	t.Helper()
	w := newWireEncoder(res, scope)
	rs, err := decodeRequest(w.encode(encodeSpans(spans)))
	w.release()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || len(rs[0].ScopeSpans) != 1 {
		t.Fatalf("%d resource spans, want 1 of 1 scope: %v", len(rs), rs)
	}
	return rs[0]
}

// decodeRequest is what a collector decodes of rs (wireEncoder.encode):
// an error if it holds fields the OTLP messages do not have.
func decodeRequest(rs []*tracepb.ResourceSpans) ([]*tracepb.ResourceSpans, error) {
	var out []*tracepb.ResourceSpans
	for _, r := range rs {
		b, err := proto.Marshal(r)
		if err != nil {
			return nil, err
		}
		m := new(tracepb.ResourceSpans)
		if err := proto.Unmarshal(b, m); err != nil {
			return nil, err
		}
		if len(m.ProtoReflect().GetUnknown()) != 0 {
			return nil, fmt.Errorf("fields the OTLP messages do not have: %x", m.ProtoReflect().GetUnknown())
		}
		out = append(out, m)
	}
	return out, nil
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

// TestSpanExporterMatchesSDK: herald's exporter sends the request the
// SDK's OTLP exporter sends for the same spans, message for message,
// for each resource and scope of exportSpans (one with a schema URL,
// the empty scope), batch after batch (its buffer is reused: a smaller
// batch after a larger one, then the larger again, still match).
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
	type group struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var groups []group
	spans := map[group][]sdktrace.ReadOnlySpan{}
	for _, s := range exportSpans(t) {
		g := group{s.Resource(), s.InstrumentationScope()}
		if spans[g] == nil {
			groups = append(groups, g)
		}
		spans[g] = append(spans[g], s)
	}
	if len(groups) != 4 || len(spans[groups[0]]) != 3 {
		t.Fatalf("%d groups, the first of %d spans; want 4, 3", len(groups), len(spans[groups[0]]))
	}
	for _, g := range groups {
		ours, err := newOTLPExporter(ctx, otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(url)), g.res, g.scope)
		if err != nil {
			t.Fatal(err)
		}
		all := spans[g]
		for _, batch := range [][]sdktrace.ReadOnlySpan{all, all[len(all)-1:], all} {
			if err := sdkExp.ExportSpans(ctx, batch); err != nil {
				t.Fatal(err)
			}
			if err := ours.Export(ctx, encodeSpans(asFinished(batch))); err != nil {
				t.Fatal(err)
			}
			reqs := c.take()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if !proto.Equal(reqs[0], reqs[1]) {
				t.Fatalf("batch of %d: herald sent\n%v\nthe SDK\n%v", len(batch), reqs[1], reqs[0])
			}
		}
		if err := ours.Export(ctx, nil); err != nil || len(c.take()) != 0 {
			t.Fatalf("an empty batch: %v, or a request sent", err)
		}
		if err := ours.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ours.Export(ctx, encodeSpans(asFinished(all))); err == nil || len(c.take()) != 0 {
			t.Fatalf("export after Shutdown: %v, or a request sent", err)
		}
	}
}
