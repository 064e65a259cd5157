package tracing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// The span limits of the recorder: the SDK's defaults.
const (
	maxSpanAttributes = 128 // attributes per span
	maxSpanEvents     = 128 // events per span (the oldest are dropped)
	maxSpanLinks      = 128 // links per span (the oldest are dropped)
	maxItemAttributes = 128 // attributes per event or link

	// maxKeptWire bounds the encoding buffer a recycled span keeps.
	maxKeptWire = 4 << 10
)

// recorder is herald's trace.Tracer: it
// records spans as the SDK's tracer does, sampled as the SDK's
// ParentBased(TraceIDRatioBased) sampler does (parentRatio), and hands
// the sampled ones, when they end, to the span queue, which exports
// them with the SDK's OTLP clients.
//
// It exists for speed. The SDK's tracer allocates a span, a snapshot of
// it when it ends and its attributes apart (some 1.5 kB in four objects
// per span), and takes a lock for every ID; a notify records three spans.
// A recorder span is one object, encoded for the export queue as it
// ends and recycled at once (callers hold a spanRef of it), and its IDs
// come from math/rand/v2's lock-free generator. What reaches
// the collector is the same (TestRecorderMatchesSDK): names, kinds,
// parents, attributes (deduplicated, the last value of a key winning),
// events (RecordError's exception events, a panic's), links, statuses,
// and the SDK's default limits, with the dropped counts; the SDK's
// OTEL_SPAN_*_LIMIT and OTEL_*_ATTRIBUTE_* variables are not read.
type recorder struct {
	embedded.Tracer

	sampler sdktrace.Sampler
	queue   *spanQueue
	spans   sync.Pool // *span, recycled
}

var (
	_ trace.Tracer         = (*recorder)(nil)
	_ trace.TracerProvider = provider{}
	_ trace.Span           = (*spanRef)(nil)
	_ finished             = (*span)(nil)
)

// provider is the trace.TracerProvider of the recorder's spans.
type provider struct {
	embedded.TracerProvider
	r *recorder
}

// Tracer implements trace.TracerProvider: the recorder, whatever the
// name (herald has one instrumentation scope).
func (p provider) Tracer(string, ...trace.TracerOption) trace.Tracer { return p.r }

// newIDs returns a new trace ID and span ID, both valid (not zero).
func newIDs() (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		putUint64(tid[:8], rand.Uint64())
		putUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

// newSpanID returns a new valid span ID.
func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		putUint64(sid[:], rand.Uint64())
	}
	return sid
}

// putUint64 writes v into b[:8], big-endian.
func putUint64(b []byte, v uint64) {
	_ = b[7]
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// Start implements trace.Tracer as the SDK's tracer does: the new span
// is a child of the span context in ctx (none with trace.WithNewRoot),
// sampled by the recorder's sampler; a span that is not recorded still
// carries its new span context.
func (r *recorder) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	return r.start(ctx, name, cfg.SpanKind(), cfg.NewRoot(), &cfg)
}

// startKind is Start with the options trace.WithSpanKind(kind) and,
// with newRoot, trace.WithNewRoot(), without building their
// configuration (herald's own spans take no other).
func (r *recorder) startKind(ctx context.Context, name string, kind trace.SpanKind, newRoot bool) (context.Context, trace.Span) {
	return r.start(ctx, name, kind, newRoot, nil)
}

// start is Start; cfg, when not nil, brings the attributes, links and
// start time.
func (r *recorder) start(ctx context.Context, name string, kind trace.SpanKind, newRoot bool, cfg *trace.SpanConfig) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	var psc trace.SpanContext
	if newRoot {
		ctx = trace.ContextWithSpanContext(ctx, psc)
	} else {
		psc = trace.SpanContextFromContext(ctx)
	}
	var tid trace.TraceID
	var sid trace.SpanID
	if psc.TraceID().IsValid() {
		tid, sid = psc.TraceID(), newSpanID()
	} else {
		tid, sid = newIDs()
	}
	var sr sdktrace.SamplingResult
	if pr, ok := r.sampler.(parentRatio); ok {
		sr = pr.decide(psc, tid)
	} else {
		p := sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: name, Kind: kind}
		if cfg != nil {
			p.Attributes, p.Links = cfg.Attributes(), cfg.Links()
		}
		sr = r.sampler.ShouldSample(p)
	}
	flags := psc.TraceFlags() &^ trace.FlagsSampled
	if sr.Decision == sdktrace.RecordAndSample {
		flags |= trace.FlagsSampled
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: sr.Tracestate})
	if sr.Decision == sdktrace.Drop {
		s := nonRecording{r: r, sc: sc}
		return trace.ContextWithSpan(ctx, s), s
	}
	var start time.Time
	if cfg != nil {
		start = cfg.Timestamp()
	}
	if start.IsZero() {
		start = time.Now()
	}
	s, _ := r.spans.Get().(*span)
	if s == nil {
		s = &span{r: r}
	}
	s.mu.Lock()
	// The rest of spanData is zero: s is new or recycled.
	s.name, s.kind, s.sc, s.parent, s.start = name, trace.ValidateSpanKind(kind), sc, psc, start
	s.attrs = s.inline[:0]
	if cfg != nil {
		for _, l := range cfg.Links() {
			s.addLink(l)
		}
	}
	s.setAttributes(sr.Attributes)
	if cfg != nil {
		s.setAttributes(cfg.Attributes())
	}
	h := &spanRef{s: s, gen: s.gen, sc: sc}
	s.mu.Unlock()
	return trace.ContextWithSpan(ctx, h), h
}

// span is a span of the recorder, recycled once ended (and encoded for
// the export): what holds it is a spanRef of one generation of it, so
// that a span context or a trace.Span kept past its end reads and
// writes nothing of the span's next use. Once ended it changes no more,
// and its encoding reads it without the lock.
type span struct {
	r      *recorder // whose pool it is in: the same in every use
	mu     sync.Mutex
	gen    uint64                // the current use; spanRefs of an earlier one are stale
	inline [6]attribute.KeyValue // attrs' storage while it fits
	wire   []byte                // its encoding, when it ends (kept for the next use)
	spanData
}

// spanData is what a span records in one use.
type spanData struct {
	sc     trace.SpanContext
	parent trace.SpanContext
	kind   trace.SpanKind
	start  time.Time

	ended  bool
	name   string
	end    time.Time
	status sdktrace.Status
	attrs  []attribute.KeyValue
	dirty  bool // attrs may hold a key twice

	events        []sdktrace.Event
	links         []sdktrace.Link
	linkHead      int // links is a ring of maxSpanLinks from here once full
	droppedAttrs  int
	droppedEvents int
	droppedLinks  int
}

// recycle ends this use of s and puts it back in its recorder's pool:
// its spanRefs are stale from now on. Called once s ended and, if
// sampled, was encoded for the export.
func (s *span) recycle() {
	r := s.r
	s.mu.Lock()
	s.gen++
	clear(s.inline[:min(len(s.attrs), len(s.inline))]) // the rest is zero
	s.spanData = spanData{}
	s.mu.Unlock()
	r.spans.Put(s)
}

// spanRef is the trace.Span of one use of a recorder span. Its methods
// are safe for concurrent use; once the span ended, and after it was
// recycled, they do nothing, and SpanContext still returns the span's.
type spanRef struct {
	embedded.Span
	s   *span
	gen uint64
	sc  trace.SpanContext
}

// live locks and returns h's span while it records (not ended, not
// recycled); nil otherwise, unlocked.
func (h *spanRef) live() *span {
	s := h.s
	s.mu.Lock()
	if s.gen != h.gen || s.ended {
		s.mu.Unlock()
		return nil
	}
	return s
}

// End implements trace.Span: the span ends (a second End does nothing)
// and, if sampled, is queued for export. A panic that End is deferred
// through is recorded as an exception event, as the SDK does.
func (h *spanRef) End(options ...trace.SpanEndOption) {
	s := h.live()
	if s == nil {
		return
	}
	end := s.start.Add(time.Since(s.start))
	cfg := trace.NewSpanEndConfig(options...)
	if p := recover(); p != nil {
		defer panic(p)
		attrs := []attribute.KeyValue{
			attribute.String("exception.type", typeName(p)),
			attribute.String("exception.message", fmt.Sprint(p)),
		}
		if cfg.StackTrace() {
			attrs = append(attrs, attribute.String("exception.stacktrace", stackTrace()))
		}
		s.addEvent("exception", time.Now(), attrs)
	}
	if ts := cfg.Timestamp(); !ts.IsZero() {
		end = ts
	}
	s.end = end
	s.ended = true
	if s.dirty {
		s.attrs = dedupe(s.attrs)
	}
	if s.linkHead > 0 {
		s.links = slices.Concat(s.links[s.linkHead:], s.links[:s.linkHead])
		s.linkHead = 0
	}
	s.mu.Unlock()
	if s.sc.IsSampled() {
		s.wire = appendSpanField(s.wire[:0], s)
		s.r.queue.enqueue(s.wire)
		if cap(s.wire) > maxKeptWire {
			s.wire = nil
		}
	}
	s.recycle()
}

// AddEvent implements trace.Span.
func (h *spanRef) AddEvent(name string, options ...trace.EventOption) {
	cfg := trace.NewEventConfig(options...)
	if s := h.live(); s != nil {
		s.addEvent(name, cfg.Timestamp(), cfg.Attributes())
		s.mu.Unlock()
	}
}

// addEvent adds an event; s.mu is held.
func (s *span) addEvent(name string, at time.Time, attrs []attribute.KeyValue) {
	e := sdktrace.Event{Name: name, Time: at, Attributes: attrs}
	if n := len(e.Attributes); n > maxItemAttributes {
		e.DroppedAttributeCount, e.Attributes = n-maxItemAttributes, e.Attributes[:maxItemAttributes]
	}
	if len(s.events) == maxSpanEvents {
		copy(s.events, s.events[1:])
		s.events = s.events[:maxSpanEvents-1]
		s.droppedEvents++
	}
	s.events = append(s.events, e)
}

// AddLink implements trace.Span; a link without a valid span context,
// attributes or trace state is ignored, as the SDK ignores it.
func (h *spanRef) AddLink(link trace.Link) {
	if s := h.live(); s != nil {
		s.addLink(link)
		s.mu.Unlock()
	}
}

// addLink adds a link (AddLink); s.mu is held.
func (s *span) addLink(link trace.Link) {
	if !link.SpanContext.IsValid() && len(link.Attributes) == 0 && link.SpanContext.TraceState().Len() == 0 {
		return
	}
	l := sdktrace.Link{SpanContext: link.SpanContext, Attributes: link.Attributes}
	if n := len(l.Attributes); n > maxItemAttributes {
		l.DroppedAttributeCount, l.Attributes = n-maxItemAttributes, l.Attributes[:maxItemAttributes]
	}
	if len(s.links) < maxSpanLinks {
		s.links = append(s.links, l)
		return
	}
	s.links[s.linkHead] = l // over the oldest
	s.linkHead = (s.linkHead + 1) % maxSpanLinks
	s.droppedLinks++
}

// IsRecording implements trace.Span: true until the span ends.
func (h *spanRef) IsRecording() bool {
	s := h.live()
	if s != nil {
		s.mu.Unlock()
	}
	return s != nil
}

// RecordError implements trace.Span: an "exception" event with the
// error's type and message.
func (h *spanRef) RecordError(err error, options ...trace.EventOption) {
	if err == nil {
		return
	}
	cfg := trace.NewEventConfig(options...)
	attrs := append(slices.Clip(cfg.Attributes()),
		attribute.String("exception.type", typeName(err)),
		attribute.String("exception.message", err.Error()))
	if cfg.StackTrace() {
		attrs = append(attrs, attribute.String("exception.stacktrace", stackTrace()))
	}
	if s := h.live(); s != nil {
		s.addEvent("exception", cfg.Timestamp(), attrs)
		s.mu.Unlock()
	}
}

// SpanContext implements trace.Span.
func (h *spanRef) SpanContext() trace.SpanContext { return h.sc }

// SetStatus implements trace.Span: Ok is final, an Error keeps its
// description, Unset changes nothing.
func (h *spanRef) SetStatus(code codes.Code, description string) {
	s := h.live()
	if s == nil {
		return
	}
	defer s.mu.Unlock()
	if s.status.Code > code {
		return
	}
	st := sdktrace.Status{Code: code}
	if code == codes.Error {
		st.Description = description
	}
	s.status = st
}

// SetName implements trace.Span.
func (h *spanRef) SetName(name string) {
	if s := h.live(); s != nil {
		s.name = name
		s.mu.Unlock()
	}
}

// SetAttributes implements trace.Span: invalid attributes and those past
// the limit are dropped (counted); a key set again takes the new value.
func (h *spanRef) SetAttributes(kvs ...attribute.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	if s := h.live(); s != nil {
		s.setAttributes(kvs)
		s.mu.Unlock()
	}
}

// setAttributes sets kvs (SetAttributes); s.mu is held.
func (s *span) setAttributes(kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		if !kv.Valid() {
			s.droppedAttrs++
			continue
		}
		if len(s.attrs) >= maxSpanAttributes && s.dirty {
			s.attrs, s.dirty = dedupe(s.attrs), false
		}
		i := indexOf(s.attrs, kv.Key)
		switch {
		case len(s.attrs) < maxSpanAttributes:
			s.dirty = s.dirty || i >= 0
			s.attrs = append(s.attrs, kv)
		case i >= 0:
			s.attrs[i] = kv
		default:
			s.droppedAttrs++
		}
	}
}

// TracerProvider implements trace.Span.
func (h *spanRef) TracerProvider() trace.TracerProvider { return provider{r: h.s.r} }

// The methods the export reads (finished); called once the span ended.

// Name is the span's name.
func (s *span) Name() string { return s.name }

// SpanContext is the span's span context.
func (s *span) SpanContext() trace.SpanContext { return s.sc }

// Parent is the parent's span context (invalid for a root).
func (s *span) Parent() trace.SpanContext { return s.parent }

// SpanKind is the span's kind.
func (s *span) SpanKind() trace.SpanKind { return s.kind }

// StartTime is when the span started.
func (s *span) StartTime() time.Time { return s.start }

// EndTime is when the span ended.
func (s *span) EndTime() time.Time { return s.end }

// Attributes are the span's attributes.
func (s *span) Attributes() []attribute.KeyValue { return s.attrs }

// Links are the span's links, oldest first.
func (s *span) Links() []sdktrace.Link { return s.links }

// Events are the span's events, oldest first.
func (s *span) Events() []sdktrace.Event { return s.events }

// Status is the span's status.
func (s *span) Status() sdktrace.Status { return s.status }

// DroppedAttributes is the number of attributes dropped.
func (s *span) DroppedAttributes() int { return s.droppedAttrs }

// DroppedLinks is the number of links dropped.
func (s *span) DroppedLinks() int { return s.droppedLinks }

// DroppedEvents is the number of events dropped.
func (s *span) DroppedEvents() int { return s.droppedEvents }

// nonRecording is a span the sampler dropped: it records nothing and
// carries its span context, so that the trace continues downstream.
type nonRecording struct {
	embedded.Span
	r  *recorder
	sc trace.SpanContext
}

// End implements trace.Span (nothing).
func (nonRecording) End(...trace.SpanEndOption) {}

// AddEvent implements trace.Span (nothing).
func (nonRecording) AddEvent(string, ...trace.EventOption) {}

// AddLink implements trace.Span (nothing).
func (nonRecording) AddLink(trace.Link) {}

// IsRecording implements trace.Span: false.
func (nonRecording) IsRecording() bool { return false }

// RecordError implements trace.Span (nothing).
func (nonRecording) RecordError(error, ...trace.EventOption) {}

// SpanContext implements trace.Span.
func (n nonRecording) SpanContext() trace.SpanContext { return n.sc }

// SetStatus implements trace.Span (nothing).
func (nonRecording) SetStatus(codes.Code, string) {}

// SetName implements trace.Span (nothing).
func (nonRecording) SetName(string) {}

// SetAttributes implements trace.Span (nothing).
func (nonRecording) SetAttributes(...attribute.KeyValue) {}

// TracerProvider implements trace.Span.
func (n nonRecording) TracerProvider() trace.TracerProvider { return provider{r: n.r} }

// indexOf is the index of key in kvs, -1 when it is not there.
func indexOf(kvs []attribute.KeyValue, key attribute.Key) int {
	for i := range kvs {
		if kvs[i].Key == key {
			return i
		}
	}
	return -1
}

// dedupe keeps the first place of each key with its last value, in
// place, as the SDK deduplicates.
func dedupe(kvs []attribute.KeyValue) []attribute.KeyValue {
	out := kvs[:0]
	for _, kv := range kvs {
		if i := indexOf(out, kv.Key); i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	clear(kvs[len(out):])
	return out
}

// typeName is the exception.type of v, as the SDK names it.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// stackTrace is the current goroutine's stack, at most 2 kB.
func stackTrace() string {
	b := make([]byte, 2048)
	return string(b[:runtime.Stack(b, false)])
}
