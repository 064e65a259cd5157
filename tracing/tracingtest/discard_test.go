package tracingtest

import (
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// spansRequest encodes a request of two resources, the first with two
// scopes of 2 and 1 spans, the second with one scope of 3 spans, every
// message carrying the fields around the ones counted.
func spansRequest(t testing.TB) []byte {
	t.Helper()
	span := func(name string) *tracepb.Span {
		return &tracepb.Span{Name: name, TraceId: make([]byte, 16), SpanId: make([]byte, 8), Kind: tracepb.Span_SPAN_KIND_PRODUCER,
			Attributes: []*commonpb.KeyValue{{Key: "k", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}}}}
	}
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "herald"}}}}}
	scope := &commonpb.InstrumentationScope{Name: "herald", Version: "v"}
	req := &coltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{Resource: res, SchemaUrl: "s", ScopeSpans: []*tracepb.ScopeSpans{
			{Scope: scope, Spans: []*tracepb.Span{span("a"), span("b")}, SchemaUrl: "s"},
			{Scope: scope, Spans: []*tracepb.Span{span("c")}},
		}},
		{Resource: res, ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: []*tracepb.Span{span("d"), span("e"), span("f")}}}},
	}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCountSpans: the spans of an encoded request are counted across
// resources and scopes, other fields skipped; an empty request has
// none; a truncated body is an error.
func TestCountSpans(t *testing.T) {
	b := spansRequest(t)
	if n, err := countSpans(b); n != 6 || err != nil {
		t.Fatalf("countSpans = %d, %v; want 6, nil", n, err)
	}
	if n, err := countSpans(nil); n != 0 || err != nil {
		t.Fatalf("countSpans(empty) = %d, %v; want 0, nil", n, err)
	}
	if _, err := countSpans(b[:len(b)-3]); err == nil {
		t.Fatal("countSpans(truncated): no error")
	}
}

// FuzzCountSpans: countSpans never panics, and agrees with the protobuf
// decoder on every body the decoder accepts.
func FuzzCountSpans(f *testing.F) {
	f.Add(spansRequest(f))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := countSpans(b)
		var req coltrace.ExportTraceServiceRequest
		if proto.Unmarshal(b, &req) != nil || err != nil {
			return
		}
		want := 0
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				want += len(ss.GetSpans())
			}
		}
		if n != want {
			t.Fatalf("countSpans = %d, the decoder finds %d", n, want)
		}
	})
}
