package tracing

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// testRes and testScope are the resource and scope of the recorder
// tests' spans, as the SDK's tracer they are compared with has them.
var (
	testRes   = resource.NewSchemaless(attribute.String("service.name", "herald"))
	testScope = instrumentation.Scope{Name: scopeName, Version: "v-test"}
)

// kept is an exporter that keeps the spans it is given, decoded from
// the request it would send (spans of testRes and testScope).
type kept struct {
	mu    sync.Mutex
	enc   *wireEncoder
	spans []*tracepb.Span
	err   error
}

// Export implements exporter.
func (k *kept) Export(_ context.Context, spans []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.enc == nil {
		k.enc = newWireEncoder(testRes, testScope)
	}
	rs, err := decodeRequest(k.enc.encode(spans))
	k.enc.release()
	if err != nil {
		k.err = err
		return err
	}
	for _, r := range rs {
		if !proto.Equal(r.Resource, rs[0].Resource) || len(r.ScopeSpans) != 1 {
			k.err = fmt.Errorf("a request of several resources or scopes: %v", rs)
		}
		k.spans = append(k.spans, r.ScopeSpans[0].Spans...)
	}
	return nil
}

// Shutdown implements exporter.
func (k *kept) Shutdown(context.Context) error { return nil }

// take returns the spans kept so far and forgets them.
func (k *kept) take(t *testing.T) []*tracepb.Span {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		t.Fatal(k.err)
	}
	s := k.spans
	k.spans = nil
	return s
}

// newRecorder returns a recorder sampling ratio of new traces, its spans
// going to k, and a function that waits until they are exported.
func newRecorder(t *testing.T, ratio float64, k *kept) (*recorder, func()) {
	t.Helper()
	q := newSpanQueue(k, spanQueueOptions{interval: time.Hour})
	t.Cleanup(func() { _ = q.Shutdown(context.Background()) })
	r := &recorder{sampler: newParentRatio(ratio), queue: q}
	return r, func() {
		if err := q.ForceFlush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// exercise records, through tr, everything herald records (a notify's
// server, publish and store spans with an error, a delivery burst with
// links) and what the trace API allows beyond it: attributes set twice
// and past the limit, invalid attributes, events and links past their
// limits, statuses in every order, a rename, a span ended twice, a
// panic recorded by a deferred End, start and end timestamps.
func exercise(tr *Tracer) {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/notification", nil)
	r.Header.Set(TraceParent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	r.Header.Set(TraceState, "vendor=x")
	ctx, server := tr.StartServer(r)
	ctx, pub := tr.StartPublish(ctx, "forecast", 68)
	tp, ts := tr.Format(ctx)
	sctx, store := tr.StartStore(ctx, "jetstream", "forecast", 1, true)
	End(store, errors.New("backend down"))
	_, store2 := tr.StartStore(sctx, "in_memory", "forecast", 2, false)
	End(store2, nil)
	pub.Done("forecast@1", nil)
	_, failed := tr.StartPublish(ctx, "forecast", 7)
	failed.Done("", fmt.Errorf("store: %w", errors.New("full")))
	_, ended := tr.StartPublish(ctx, "mars", 1)
	ended.End()
	tr.Served(server, http.MethodPost, "/api/v1/notification", "/api/v1/notification", http.StatusServiceUnavailable)
	server.End()

	burst := tr.StartDelivery(context.Background(), OpProcess, "forecast", "sse")
	tr.Link(burst, tp, ts, "forecast@1")
	tr.Link(burst, "not a traceparent", "", "forecast@2")
	tr.Link(burst, "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00", "", "forecast@3")
	Delivered(burst, 3, nil)
	page := tr.StartDelivery(context.Background(), OpReceive, "forecast", "ws")
	Delivered(page, 0, errors.New("client gone"))

	// The trace API past what herald uses.
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	_, s := tr.t.Start(ctx, "raw", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(at),
		trace.WithAttributes(attribute.String("a", "1"), attribute.String("a", "2")),
		trace.WithLinks(trace.Link{SpanContext: trace.SpanContextFromContext(ctx), Attributes: []attribute.KeyValue{attribute.Int("k", 1), attribute.Int("k", 2)}}))
	s.SetAttributes(attribute.String("b", "x"), attribute.KeyValue{}, attribute.String("a", "3"))
	for i := range maxSpanAttributes + 2 {
		s.SetAttributes(attribute.Int(fmt.Sprintf("n%03d", i), i))
	}
	s.SetAttributes(attribute.Bool("b", true))
	for i := range maxSpanEvents + 3 {
		s.AddEvent(fmt.Sprintf("e%d", i), trace.WithTimestamp(at), trace.WithAttributes(attribute.Int("i", i), attribute.Int("i", -i)))
	}
	for i := range maxSpanLinks + 5 {
		s.AddLink(trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(i + 1)}})})
	}
	s.AddLink(trace.Link{})
	s.SetStatus(codes.Error, "first")
	s.SetStatus(codes.Unset, "")
	s.SetStatus(codes.Error, "second")
	s.SetName("renamed")
	s.End(trace.WithTimestamp(at.Add(time.Second)))
	s.End()
	s.SetName("after the end")

	_, ok := tr.t.Start(ctx, "ok")
	ok.SetStatus(codes.Ok, "ignored")
	ok.SetStatus(codes.Error, "too late")
	ok.End()

	func() {
		defer func() { _ = recover() }()
		_, p := tr.t.Start(ctx, "panics")
		defer p.End()
		panic("boom")
	}()
}

// normalise replaces the trace and span IDs of spans by their order of
// first appearance and the times by zero, keeping whether each span
// ended at or after it started.
func normalise(t *testing.T, spans []*tracepb.Span) {
	t.Helper()
	ids := map[string][]byte{}
	id := func(b []byte) []byte {
		if len(b) == 0 {
			return b
		}
		n, ok := ids[string(b)]
		if !ok {
			n = []byte{byte(len(ids))}
			ids[string(b)] = n
		}
		return n
	}
	for _, s := range spans {
		if s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %q ends before it starts", s.Name)
		}
		if s.Name != "raw" {
			s.StartTimeUnixNano, s.EndTimeUnixNano = 0, 0
		}
		s.TraceId, s.SpanId, s.ParentSpanId = id(s.TraceId), id(s.SpanId), id(s.ParentSpanId)
		for _, e := range s.Events {
			if s.Name != "raw" {
				e.TimeUnixNano = 0
			}
		}
		for _, l := range s.Links {
			l.TraceId, l.SpanId = id(l.TraceId), id(l.SpanId)
		}
	}
}

// TestRecorderMatchesSDK: what the recorder exports for everything
// herald records, and for the trace API's edge cases, is what the SDK's
// tracer exports for the same calls (same resource, scope, sampler and
// the SDK's default limits), span for span, once IDs and times are
// normalised; the trace context herald formats for the notification is
// the same.
func TestRecorderMatchesSDK(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(testRes), sdktrace.WithSyncer(mem),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(1))))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	exercise(newTracerOf(tp.Tracer(testScope.Name, trace.WithInstrumentationVersion(testScope.Version))))
	snaps := mem.GetSpans().Snapshots()
	if len(snaps) == 0 || !snaps[0].Resource().Equal(testRes) || snaps[0].InstrumentationScope() != testScope {
		t.Fatalf("the SDK's spans are not of the recorder's resource and scope (%d spans)", len(snaps))
	}
	want := decoded(t, testRes, testScope, asFinished(snaps)).ScopeSpans[0].Spans

	k := &kept{}
	r, flush := newRecorder(t, 1, k)
	// Twice: the second time on the spans the first one recycled.
	for run := range 2 {
		exercise(newTracerOf(r))
		flush()
		compareSpans(t, fmt.Sprintf("run %d", run), want, k.take(t))
	}
}

// compareSpans compares what the recorder exported (got) with what the
// SDK did (want), span for span, once normalised.
func compareSpans(t *testing.T, run string, want, got []*tracepb.Span) {
	t.Helper()
	ws, gs := cloneSpans(want), cloneSpans(got)
	if len(ws) != 11 || len(gs) != len(ws) {
		t.Fatalf("%s: the recorder exported %d spans, the SDK %d, want 11", run, len(gs), len(ws))
	}
	normalise(t, ws)
	normalise(t, gs)
	for i := range ws {
		if !proto.Equal(ws[i], gs[i]) {
			t.Errorf("%s: span %d %q: %s", run, i, ws[i].Name, spanDiff(ws[i], gs[i]))
		}
	}
	raw := gs[slices.IndexFunc(gs, func(s *tracepb.Span) bool { return s.Name == "renamed" })]
	if raw.DroppedAttributesCount != 5 || raw.DroppedEventsCount != 3 || raw.DroppedLinksCount != 6 || len(raw.Links) != maxSpanLinks {
		t.Errorf("%s: limits: dropped %d attributes, %d events, %d links; %d links kept", run, raw.DroppedAttributesCount, raw.DroppedEventsCount, raw.DroppedLinksCount, len(raw.Links))
	}
}

// cloneSpans is a deep copy of spans.
func cloneSpans(spans []*tracepb.Span) []*tracepb.Span {
	out := make([]*tracepb.Span, len(spans))
	for i, s := range spans {
		out[i] = proto.CloneOf(s)
	}
	return out
}

// TestRecorderStaleSpan: a trace.Span (and a context holding it) kept
// past its span's export changes nothing of the recycled span, reports
// that it does not record, and keeps its span context; a span dropped
// by a full queue is recycled at its end.
func TestRecorderStaleSpan(t *testing.T) {
	k := &kept{}
	r, flush := newRecorder(t, 1, k)
	ctx, held := r.Start(context.Background(), "first", trace.WithAttributes(attribute.String("k", "v")))
	sc := held.SpanContext()
	ref := held.(*spanRef)
	held.End()
	s := ref.s
	if s.gen != ref.gen+1 || s.name != "" || s.attrs != nil {
		t.Fatalf("once ended the span is at generation %d (ref %d), name %q, attributes %v; want recycled", s.gen, ref.gen, s.name, s.attrs)
	}
	flush()
	if got := k.take(t); len(got) != 1 || got[0].Name != "first" || len(got[0].Attributes) != 1 {
		t.Fatalf("exported %v, want the first span with its attribute", got)
	}
	held.SetAttributes(attribute.String("stale", "x"))
	held.SetName("stale")
	held.SetStatus(codes.Error, "stale")
	held.AddEvent("stale")
	held.AddLink(trace.Link{SpanContext: sc})
	held.RecordError(errors.New("stale"))
	held.End()
	if s.gen != ref.gen+1 || s.name != "" || s.attrs != nil || s.events != nil || s.links != nil || s.status.Code != codes.Unset || s.ended {
		t.Errorf("a stale span wrote into the recycled one: %+v", s.spanData)
	}
	flush()
	if got := k.take(t); len(got) != 0 {
		t.Errorf("a stale span's End exported %v", got)
	}
	if _, s := held.TracerProvider().Tracer("again").Start(context.Background(), "after"); !s.IsRecording() {
		t.Error("the tracer of a stale span does not record")
	}
	if held.IsRecording() || !held.SpanContext().Equal(sc) || !trace.SpanContextFromContext(ctx).Equal(sc) {
		t.Errorf("stale span: recording %v, span context %v (context %v), want %v", held.IsRecording(), held.SpanContext(), trace.SpanContextFromContext(ctx), sc)
	}

	full := &spanRef{s: &span{r: &recorder{queue: &spanQueue{full: make(chan struct{}, 1)}}}}
	full.s.sc = sc
	full.End()
	if full.s.gen != 1 || full.s.sc.IsValid() || full.s.r.queue.dropped.Load() != 1 {
		t.Errorf("a span the full queue dropped is at generation %d (dropped %d), want recycled", full.s.gen, full.s.r.queue.dropped.Load())
	}
}

// spanDiff says where the recorder's span g differs from the SDK's w.
func spanDiff(w, g *tracepb.Span) string {
	var d []string
	for i := range max(len(w.Attributes), len(g.Attributes)) {
		if i >= len(w.Attributes) || i >= len(g.Attributes) || !proto.Equal(w.Attributes[i], g.Attributes[i]) {
			d = append(d, fmt.Sprintf("attribute %d of %d/%d", i, len(w.Attributes), len(g.Attributes)))
			break
		}
	}
	for i := range max(len(w.Events), len(g.Events)) {
		if i >= len(w.Events) || i >= len(g.Events) || !proto.Equal(w.Events[i], g.Events[i]) {
			d = append(d, fmt.Sprintf("event %d of %d/%d", i, len(w.Events), len(g.Events)))
			break
		}
	}
	for i := range max(len(w.Links), len(g.Links)) {
		if i >= len(w.Links) || i >= len(g.Links) || !proto.Equal(w.Links[i], g.Links[i]) {
			d = append(d, fmt.Sprintf("link %d of %d/%d", i, len(w.Links), len(g.Links)))
			break
		}
	}
	w2, g2 := proto.Clone(w).(*tracepb.Span), proto.Clone(g).(*tracepb.Span)
	w2.Attributes, w2.Events, w2.Links, g2.Attributes, g2.Events, g2.Links = nil, nil, nil, nil, nil, nil
	if !proto.Equal(w2, g2) {
		d = append(d, fmt.Sprintf("SDK %v, recorder %v", w2, g2))
	}
	return strings.Join(d, "; ")
}

// TestRecorderSampling: a new trace at ratio 0 is not recorded or
// exported but has a valid, unsampled span context, which herald still
// formats; a sampled publisher's trace is recorded at ratio 0 (parent
// based) and keeps its trace ID and state; an unsampled publisher's is
// not recorded.
func TestRecorderSampling(t *testing.T) {
	k := &kept{}
	r, flush := newRecorder(t, 0, k)
	tr := newTracerOf(r)

	ctx, pub := tr.StartPublish(context.Background(), "forecast", 1)
	tp, _ := tr.Format(ctx)
	if pub.IsRecording() || len(tp) != 55 || tp[53:] != "00" {
		t.Errorf("new trace at ratio 0: recording %v, traceparent %q", pub.IsRecording(), tp)
	}
	pub.Done("forecast@1", nil)

	ctx = tr.ExtractFields(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "v=1")
	ctx, sampled := tr.StartPublish(ctx, "forecast", 1)
	tp, ts := tr.Format(ctx)
	if !sampled.IsRecording() || tp[3:35] != "0af7651916cd43dd8448eb211c80319c" || tp[53:] != "01" || ts != "v=1" {
		t.Errorf("sampled parent: recording %v, %q %q", sampled.IsRecording(), tp, ts)
	}
	sampled.Done("forecast@2", nil)

	ctx = tr.ExtractFields(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", "")
	_, unsampled := tr.StartPublish(ctx, "forecast", 1)
	if unsampled.IsRecording() {
		t.Error("unsampled parent: recording")
	}
	unsampled.Done("forecast@3", nil)

	flush()
	got := k.take(t)
	if len(got) != 1 || got[0].Name != "publish forecast" || hex.EncodeToString(got[0].ParentSpanId) != "b7ad6b7169203331" {
		t.Fatalf("exported %d spans, want the sampled parent's publish span alone", len(got))
	}
}

// TestRecorderConcurrentSpan: one span used from many goroutines at once
// (attributes, links, events, status, name, ends) is exported once,
// with every attribute and link added before its first End.
func TestRecorderConcurrentSpan(t *testing.T) {
	k := &kept{}
	r, flush := newRecorder(t, 1, k)
	_, s := r.Start(context.Background(), "shared")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				s.SetAttributes(attribute.Int(fmt.Sprintf("g%d-%d", g, i), i))
				s.AddLink(trace.Link{Attributes: []attribute.KeyValue{attribute.Int("g", g)}})
				s.AddEvent("e")
				s.SetStatus(codes.Error, "x")
				s.SetName("shared")
				_ = s.IsRecording()
			}
		})
	}
	wg.Wait()
	var ends sync.WaitGroup
	for range 4 {
		ends.Go(func() { s.End() })
	}
	ends.Wait()
	s.SetAttributes(attribute.String("late", "x"))
	flush()
	got := k.take(t)
	if len(got) != 1 {
		t.Fatalf("exported %d times, want once", len(got))
	}
	sp := got[0]
	if len(sp.Attributes) != 80 || len(sp.Links) != 80 || len(sp.Events) != 80 || sp.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("%d attributes, %d links, %d events, status %v; want 80, 80, 80, error", len(sp.Attributes), len(sp.Links), len(sp.Events), sp.Status)
	}
}

// TestSpanQueueTake: the queue holds copies of the spans it is given,
// up to its size (the rest dropped and counted); a take on the "full"
// signal (whole) moves out whole batches' worth only, none while less
// than a batch waits, and one on a tick or a flush moves out the rest;
// the spans taken no longer count against the size, and the buffers
// handed back are reused.
func TestSpanQueueTake(t *testing.T) {
	q := &spanQueue{size: 8, batchAt: 4, full: make(chan struct{}, 1)}
	span := []byte{0}
	enqueue := func(from, to byte) {
		for b := from; b < to; b++ {
			span[0] = b
			q.enqueue(span)
		}
	}
	enqueue(0, 10) // 8 wait, 2 are dropped
	if q.dropped.Load() != 2 || len(q.full) != 1 {
		t.Fatalf("dropped %d, full signals %d; want 2 and 1", q.dropped.Load(), len(q.full))
	}
	span[0] = 99 // the queue keeps copies
	seq := func(from, to byte) string {
		var b []byte
		for i := from; i < to; i++ {
			b = append(b, i)
		}
		return fmt.Sprint(b)
	}
	for i, step := range []struct {
		whole bool
		add   [2]byte // the spans enqueued before the take
		want  string
		ends  string
	}{
		{whole: true, want: seq(0, 8), ends: "[1 2 3 4 5 6 7 8]"},
		{whole: true, add: [2]byte{10, 15}, want: seq(10, 14), ends: "[1 2 3 4]"},
		{whole: true, want: "[]", ends: "[]"},
		{whole: false, add: [2]byte{15, 16}, want: seq(14, 16), ends: "[1 2]"},
		{whole: false, want: "[]", ends: "[]"},
	} {
		enqueue(step.add[0], step.add[1])
		buf, ends := q.take(step.whole)
		if fmt.Sprint([]byte(buf)) != step.want || fmt.Sprint(ends) != step.ends {
			t.Errorf("take %d (whole %v): %v ending at %v; want %s ending at %s", i, step.whole, []byte(buf), ends, step.want, step.ends)
		}
		q.giveBack(buf, ends)
	}
	if q.dropped.Load() != 2 || len(q.ends) != 0 || cap(q.buf) == 0 {
		t.Errorf("dropped %d, %d waiting, buffer capacity %d; want 2, none, a reused buffer", q.dropped.Load(), len(q.ends), cap(q.buf))
	}
}
