package tracing

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// traceURL is the URL a tracing endpoint for c becomes.
func traceURL(c *tracingtest.Collector) string {
	if c.Protocol() == tracingtest.HTTP {
		return c.Endpoint() + "/v1/traces"
	}
	return "http://" + c.Endpoint()
}

// newTraced builds a Telemetry exporting spans to url over protocol.
func newTraced(t *testing.T, protocol, url string, ratio float64, queue int) *Telemetry {
	t.Helper()
	tel, err := New(t.Context(), Options{Version: "v-test",
		Traces:         &TraceExport{Protocol: protocol, URL: url, SampleRatio: ratio, MaxQueueSize: queue},
		ExportInterval: 10 * time.Millisecond, ExportTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tel.Shutdown(ctx)
	})
	return tel
}

// TestTracesExport: a publish span continuing a publisher's traceparent,
// with its store child, reaches the collector over both protocols with
// the messaging attributes, and the trace context herald stores for the
// notification is the publish span's.
func TestTracesExport(t *testing.T) {
	for _, start := range []func(testing.TB) *tracingtest.Collector{tracingtest.StartGRPC, tracingtest.StartHTTP} {
		c := start(t)
		t.Run(c.Protocol(), func(t *testing.T) {
			tel := newTraced(t, c.Protocol(), traceURL(c), 1, 0)
			tr := tel.Tracer()
			const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
			ctx := tr.ExtractFields(context.Background(), parent, "vendor=x")
			ctx, pub := tr.StartPublish(ctx, "mars", 123)
			tp, ts := tr.Format(ctx)
			_, store := tr.StartStore(ctx, "in_memory", "mars", 1, false)
			End(store, nil)
			pub.Done("mars@7", nil)
			if ts != "vendor=x" || len(tp) != 55 || tp[3:35] != "0af7651916cd43dd8448eb211c80319c" || tp[53:] != "01" {
				t.Fatalf("Format = %q, %q; want the publisher's trace id, sampled, and its tracestate", tp, ts)
			}
			spans := c.WaitSpans(t, wait, "two spans", func(s []tracingtest.Span) bool { return len(s) == 2 })
			st, p := spans[0], spans[1]
			if p.Name != "publish mars" || p.Kind != tracingtest.KindProducer || p.TraceID != "0af7651916cd43dd8448eb211c80319c" ||
				p.ParentSpanID != "b7ad6b7169203331" || p.SpanID != tp[36:52] {
				t.Errorf("publish span %+v", p)
			}
			want := map[string]any{"messaging.system": "herald", "messaging.operation.name": "publish", "messaging.operation.type": "send",
				"messaging.destination.name": "mars", "messaging.message.body.size": int64(123), "messaging.message.id": "mars@7"}
			if !reflect.DeepEqual(p.Attributes, want) {
				t.Errorf("publish attributes %v\nwant %v", p.Attributes, want)
			}
			if st.Name != "store mars" || st.Kind != tracingtest.KindInternal || st.ParentSpanID != p.SpanID || st.TraceID != p.TraceID {
				t.Errorf("store span %+v, want a child of %s", st, p.SpanID)
			}
			if p.Resource["service.name"] != "herald" || p.Scope != "herald" {
				t.Errorf("resource %v scope %q", p.Resource, p.Scope)
			}
			if err := tel.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := tel.TraceSpansExported(); got != 2 {
				t.Errorf("exported %d, want 2", got)
			}
		})
	}
}

// TestTracesDelivery: a delivery span is a new root linked to each
// notification's stored context, with the notification ids.
func TestTracesDelivery(t *testing.T) {
	c := tracingtest.StartGRPC(t)
	tel := newTraced(t, ProtocolGRPC, traceURL(c), 1, 0)
	tr := tel.Tracer()
	const a = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	const b = "00-11111111111111111111111111111111-2222222222222222-00"
	ctx, parent := tr.StartPublish(context.Background(), "x", 1) // not the delivery's parent
	span := tr.StartDelivery(ctx, OpProcess, "mars", "sse")
	tr.Link(span, a, "", "mars@1")
	tr.Link(span, b, "k=v", "mars@2")
	tr.Link(span, "garbage", "", "mars@3")
	span.End()
	parent.End()
	spans := c.WaitSpans(t, wait, "process span", func(s []tracingtest.Span) bool { return len(s) == 2 })
	d := spans[0]
	if d.Name != "process mars" || d.Kind != tracingtest.KindConsumer || d.ParentSpanID != "" || d.Attributes["herald.transport"] != "sse" {
		t.Fatalf("delivery span %+v", d)
	}
	want := []tracingtest.Link{
		{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", Attributes: map[string]any{"messaging.message.id": "mars@1"}},
		{TraceID: "11111111111111111111111111111111", SpanID: "2222222222222222", Attributes: map[string]any{"messaging.message.id": "mars@2"}},
	}
	if !reflect.DeepEqual(d.Links, want) {
		t.Fatalf("links %+v\nwant %+v", d.Links, want)
	}
}

// TestTracesOff: a nil Tracer records nothing, extracts nothing and
// formats no trace context.
func TestTracesOff(t *testing.T) {
	tel, err := New(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := tel.Tracer()
	if tr != nil || tr.On() {
		t.Fatalf("Tracer() = %v, want nil", tr)
	}
	h := http.Header{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	ctx := tr.Extract(context.Background(), h)
	ctx, span := tr.StartPublish(ctx, "mars", 1)
	defer span.End()
	if tp, ts := tr.Format(ctx); tp != "" || ts != "" || span.IsRecording() {
		t.Fatalf("off: Format %q %q, recording %v", tp, ts, span.IsRecording())
	}
	if _, ok := tr.SpanContext(h.Get("traceparent"), ""); ok {
		t.Fatal("off: SpanContext parsed")
	}
}

// TestTracesNewTrace: without incoming context a trace starts here; at
// ratio 0 it is not sampled (flags 00) but still has a traceparent.
func TestTracesNewTrace(t *testing.T) {
	tel := newTraced(t, ProtocolGRPC, "http://127.0.0.1:1", 0, 0)
	tr := tel.Tracer()
	ctx, span := tr.StartPublish(context.Background(), "mars", 1)
	span.End()
	tp, _ := tr.Format(ctx)
	if len(tp) != 55 || tp[:3] != "00-" || tp[53:] != "00" {
		t.Fatalf("traceparent %q, want a new unsampled one", tp)
	}
	// A sampled parent is followed whatever the ratio.
	ctx = tr.ExtractFields(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "")
	_, span = tr.StartPublish(ctx, "mars", 1)
	defer span.End()
	if !span.SpanContext().IsSampled() {
		t.Fatal("a sampled parent's child is not sampled")
	}
}

// TestTracesCollectorDown: with a collector that refuses connections,
// ending spans never waits; the spans the bounded queue cannot hold are
// dropped and counted, and failed batches counted.
func TestTracesCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more: connections are refused
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(protocol, func(t *testing.T) {
			tel := newTraced(t, protocol, "http://"+addr+"/v1/traces", 1, 8)
			tr := tel.Tracer()
			start := time.Now()
			for range 10_000 {
				_, span := tr.StartPublish(context.Background(), "mars", 1)
				span.End()
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("10000 spans took %s with the collector down", d)
			}
			if tel.TraceSpansDropped() == 0 {
				t.Error("no span dropped with a queue of 8")
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if err := tel.ForceFlush(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatal(err)
			}
			if tel.TraceExportFailures() == 0 || tel.TraceSpansExported() != 0 {
				t.Errorf("failures %d exported %d; want failures, nothing exported", tel.TraceExportFailures(), tel.TraceSpansExported())
			}
		})
	}
}

// TestFormatTraceParent: the traceparent herald writes is the W3C form
// the propagator reads back.
func TestFormatTraceParent(t *testing.T) {
	tr := &Tracer{}
	for _, tp := range []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-ffffffffffffffffffffffffffffffff-0000000000000001-00"} {
		sc, ok := tr.SpanContext(tp, "")
		if !ok || FormatTraceParent(sc) != tp {
			t.Errorf("%s: parsed %v, formatted %q", tp, ok, FormatTraceParent(sc))
		}
	}
}

// TestTracesQueueBound: while the collector holds an export, the spans
// ended meanwhile wait in the queue up to its size and the others are
// dropped, each counted; released, the held and queued spans arrive.
func TestTracesQueueBound(t *testing.T) {
	c := tracingtest.StartGRPC(t)
	release := c.Hold()
	defer release()
	tel, err := New(t.Context(), Options{Traces: &TraceExport{Protocol: ProtocolGRPC, URL: traceURL(c), SampleRatio: 1, MaxQueueSize: 4},
		ExportInterval: time.Hour, ExportTimeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	tr := tel.Tracer()
	end := func(n int) {
		for range n {
			_, span := tr.StartPublish(context.Background(), "mars", 1)
			span.End()
		}
	}
	end(4) // a batch's worth for a queue of 4: exported at once, and held
	c.WaitRequests(t, wait, 1)
	end(100) // 4 wait in the queue, 96 are dropped
	if got := tel.TraceSpansDropped(); got != 96 {
		t.Fatalf("dropped %d, want 96", got)
	}
	release()
	c.WaitSpans(t, wait, "the held and the queued spans", func(s []tracingtest.Span) bool { return len(s) == 8 })
}

// TestTracesDiscardCollector: the spans exported to a discarding
// collector (the benchmarks') are counted, all of them, and none kept.
func TestTracesDiscardCollector(t *testing.T) {
	c := tracingtest.StartDiscard(t)
	tel := newTraced(t, ProtocolHTTP, traceURL(c), 1, 0)
	tr := tel.Tracer()
	for range 5 {
		ctx, pub := tr.StartPublish(context.Background(), "mars", 1)
		_, store := tr.StartStore(ctx, "in_memory", "mars", 1, false)
		End(store, nil)
		End(pub, nil)
	}
	if err := tel.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.WaitSpanCount(t, wait, 10)
	if n, kept := c.SpanCount(), len(c.Spans()); n != 10 || kept != 0 || tel.TraceSpansExported() != 10 {
		t.Fatalf("counted %d, kept %d, exported %d; want 10, 0, 10", n, kept, tel.TraceSpansExported())
	}
}

// TestTracesPublishOutcome: a publish span ended by Done with an error
// has the error status and the messaging attributes but no message id;
// one ended by End has the messaging attributes alone; both are named
// by their event type.
func TestTracesPublishOutcome(t *testing.T) {
	c := tracingtest.StartGRPC(t)
	tel := newTraced(t, ProtocolGRPC, traceURL(c), 1, 0)
	tr := tel.Tracer()
	_, failed := tr.StartPublish(context.Background(), "mars", 9)
	failed.Done("", errors.New("backend down"))
	_, ended := tr.StartPublish(context.Background(), "mars", 9)
	ended.End()
	spans := c.WaitSpans(t, wait, "two publish spans", func(s []tracingtest.Span) bool { return len(s) == 2 })
	want := map[string]any{"messaging.system": "herald", "messaging.operation.name": "publish", "messaging.operation.type": "send",
		"messaging.destination.name": "mars", "messaging.message.body.size": int64(9)}
	for i, s := range spans {
		if s.Name != "publish mars" || !reflect.DeepEqual(s.Attributes, want) || s.StatusCode != [2]int32{2, 0}[i] {
			t.Errorf("span %d: %s status %d attributes %v\nwant publish mars, status %d, %v", i, s.Name, s.StatusCode, s.Attributes, [2]int32{2, 0}[i], want)
		}
	}
}

// TestTracerNames: span names are "<op> <subject>", the same string each
// time, and a Tracer keeps at most maxNames of them (the others are
// built each time, still right).
func TestTracerNames(t *testing.T) {
	tr := newTracerOf(nil)
	for i := range maxNames + 10 {
		s := strconv.Itoa(i)
		if got := tr.name("publish", s); got != "publish "+s {
			t.Fatalf("name(publish, %s) = %q", s, got)
		}
	}
	if n := tr.names.Len(); n != maxNames {
		t.Fatalf("%d names kept, want %d", n, maxNames)
	}
	if a, b := tr.name("store", "mars"), tr.name("store", "mars"); a != "store mars" || b != a {
		t.Fatalf("name(store, mars) = %q then %q", a, b)
	}
}

// TestTracesExtractHeaders: the traceparent and tracestate headers of a
// request (the first of each) are the context of the spans started in
// it; a request without traceparent has none, even with a tracestate.
func TestTracesExtractHeaders(t *testing.T) {
	tel := newTraced(t, ProtocolGRPC, "http://127.0.0.1:1", 1, 0)
	tr := tel.Tracer()
	h := http.Header{}
	h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	h.Add("tracestate", "vendor=x,other=y")
	h.Add("tracestate", "ignored=z")
	sc := trace.SpanContextFromContext(tr.Extract(context.Background(), h))
	if got := FormatTraceParent(sc); got != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" || sc.TraceState().String() != "vendor=x,other=y" || !sc.IsRemote() {
		t.Fatalf("extracted %s %q remote %v", got, sc.TraceState().String(), sc.IsRemote())
	}
	h.Del("traceparent")
	if sc := trace.SpanContextFromContext(tr.Extract(context.Background(), h)); sc.IsValid() {
		t.Fatalf("extracted %v without a traceparent", sc)
	}
}
