package tracingtest

import (
	"context"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span kinds, as OTLP numbers them.
const (
	KindInternal = int32(tracepb.Span_SPAN_KIND_INTERNAL)
	KindServer   = int32(tracepb.Span_SPAN_KIND_SERVER)
	KindClient   = int32(tracepb.Span_SPAN_KIND_CLIENT)
	KindProducer = int32(tracepb.Span_SPAN_KIND_PRODUCER)
	KindConsumer = int32(tracepb.Span_SPAN_KIND_CONSUMER)
)

// Span is one span the collector received.
type Span struct {
	// Name is the span's name.
	Name string
	// Kind is one of the Kind constants.
	Kind int32
	// TraceID, SpanID and ParentSpanID are lower-case hex ("" for a root
	// span's parent).
	TraceID, SpanID, ParentSpanID string
	// Attributes are the span's attributes (as LogRecord's).
	Attributes map[string]any
	// Links are the span's links.
	Links []Link
	// StatusCode is 0 unset, 1 ok, 2 error.
	StatusCode int32
	// Resource holds the attributes of the span's resource.
	Resource map[string]any
	// Scope names the instrumentation scope.
	Scope string
}

// Link is one link of a span.
type Link struct {
	TraceID, SpanID string
	Attributes      map[string]any
}

// Spans returns the spans received so far, in arrival order.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// WaitSpans waits until cond holds for the spans received, and returns
// them; the test fails if it does not within timeout.
func (c *Collector) WaitSpans(t testing.TB, timeout time.Duration, what string, cond func([]Span) bool) []Span {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		spans, changed := append([]Span(nil), c.spans...), c.changed
		c.mu.Unlock()
		if cond(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline.C:
			var names []string
			for _, s := range spans {
				names = append(names, s.Name)
			}
			t.Fatalf("tracingtest: %s: not within %s; the collector has %d spans %q from %d requests", what, timeout, len(spans), names, c.Requests())
			return nil
		}
	}
}

// keepSpans stores the spans of an export request.
func (c *Collector) keepSpans(req *coltrace.ExportTraceServiceRequest) {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		res := attributes(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				s := Span{
					Name:         sp.GetName(),
					Kind:         int32(sp.GetKind()),
					TraceID:      hex.EncodeToString(sp.GetTraceId()),
					SpanID:       hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: hex.EncodeToString(sp.GetParentSpanId()),
					Attributes:   attributes(sp.GetAttributes()),
					StatusCode:   int32(sp.GetStatus().GetCode()),
					Resource:     res,
					Scope:        ss.GetScope().GetName(),
				}
				for _, l := range sp.GetLinks() {
					s.Links = append(s.Links, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId()),
						Attributes: attributes(l.GetAttributes())})
				}
				got = append(got, s)
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, got...)
	c.signal()
}

// traceService is the gRPC TraceService.
type traceService struct {
	coltrace.UnimplementedTraceServiceServer
	c *Collector
}

// Export implements coltrace.TraceServiceServer.
func (s *traceService) Export(ctx context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	if err := s.c.admitGRPC(ctx); err != nil {
		return nil, err
	}
	s.c.keepSpans(req)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// serveTracesHTTP is the OTLP/HTTP traces endpoint.
func (c *Collector) serveTracesHTTP(w http.ResponseWriter, r *http.Request) {
	var req coltrace.ExportTraceServiceRequest
	c.exportHTTP(w, r, &req, &coltrace.ExportTraceServiceResponse{}, func() { c.keepSpans(&req) })
}
