package tracing

import (
	"context"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/herald-gateway/herald/internal/cowmap"
)

// W3C trace context header names, which are also the names of the
// CloudEvents distributed tracing extension attributes and of the
// session protocol's notify frame fields.
const (
	TraceParent = "traceparent"
	TraceState  = "tracestate"
)

// MessagingSystem is the messaging.system of herald's spans.
const MessagingSystem = "herald"

// Span operations of delivery (StartDelivery).
const (
	// OpProcess is a live burst: notifications pushed to a subscriber as
	// they arrive.
	OpProcess = "process"
	// OpReceive is a history page: stored notifications read for a
	// replay (or a watch's start cursor) and sent to the subscriber.
	OpReceive = "receive"
)

// Tracer records herald's spans, named and attributed by the
// OpenTelemetry messaging conventions, and reads and writes the W3C trace
// context. A nil *Tracer (tracing off) records nothing, extracts nothing
// and formats no trace context: every method is safe to call on it and
// then costs next to nothing.
//
// A notify's spans cost what the SDK needs and no more: span names are
// built once per event type, stream and route (names), the start
// options once per kind, and attributes reach each span in one
// SetAttributes call of exactly their number (set), most of them when
// the span ends, so that its attribute slice is allocated once.
type Tracer struct {
	t    trace.Tracer
	rec  *recorder // t, when it is the recorder
	prop propagation.TraceContext

	// Start options per span kind, for a tracer other than the recorder;
	// a consumer span (a delivery burst) is a new root.
	opts [trace.SpanKindConsumer + 1][]trace.SpanStartOption

	names cowmap.Map[nameKey, string] // at most maxNames
	bufs  sync.Pool                   // *attrBuf
}

// newTracerOf returns the Tracer recording with t.
func newTracerOf(t trace.Tracer) *Tracer {
	rec, _ := t.(*recorder)
	tr := &Tracer{t: t, rec: rec, names: cowmap.Map[nameKey, string]{Max: maxNames}}
	for k := range tr.opts {
		tr.opts[k] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKind(k))}
	}
	tr.opts[trace.SpanKindConsumer] = append(tr.opts[trace.SpanKindConsumer], trace.WithNewRoot())
	return tr
}

// start starts a span of kind named name (kind valid), a new root for a
// consumer span; the recorder starts it without building the options.
func (t *Tracer) start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if t.rec != nil {
		return t.rec.startKind(ctx, name, kind, kind == trace.SpanKindConsumer)
	}
	return t.t.Start(ctx, name, t.opts[kind]...)
}

// maxNames bounds the span names a Tracer keeps; those past it are built
// each time. herald's names come from its configuration (event types,
// streams, routes), far fewer.
const maxNames = 1024

// nameKey is a span name: "<op> <subject>".
type nameKey struct{ op, subject string }

// name returns the span name "<op> <subject>", built once.
func (t *Tracer) name(op, subject string) string {
	return t.names.Get(nameKey{op, subject}, func() string { return op + " " + subject })
}

// attrBuf holds the attributes of one SetAttributes call: passed from a
// pooled buffer, they are not allocated for the call (the SDK copies
// them into the span).
type attrBuf [8]attribute.KeyValue

// set sets kvs (at most 8) on span in one call.
func (t *Tracer) set(span trace.Span, kvs ...attribute.KeyValue) {
	if h, ok := span.(*spanRef); ok { // kvs does not escape
		h.SetAttributes(kvs...)
		return
	}
	b, _ := t.bufs.Get().(*attrBuf)
	if b == nil {
		b = new(attrBuf)
	}
	n := copy(b[:], kvs)
	span.SetAttributes(b[:n]...)
	clear(b[:n])
	t.bufs.Put(b)
}

// On reports whether tracing is on.
func (t *Tracer) On() bool { return t != nil }

// noSpan is the span of a nil Tracer: a no-op.
func noSpan() trace.Span { return trace.SpanFromContext(context.Background()) }

// Extract returns ctx carrying the remote span context of h's
// traceparent and tracestate headers; ctx unchanged when there is none
// (or it is malformed: the trace then starts here) or tracing is off.
func (t *Tracer) Extract(ctx context.Context, h http.Header) context.Context {
	if t == nil || first(h[canonicalTraceParent]) == "" {
		return ctx
	}
	return t.prop.Extract(ctx, headerFields(h))
}

// The W3C headers' keys in an http.Header (canonical MIME keys).
const (
	canonicalTraceParent = "Traceparent"
	canonicalTraceState  = "Tracestate"
)

// first is the first of vs, "" when there is none.
func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// headerFields is the text map carrier of the traceparent and
// tracestate headers of an http.Header, as propagation.HeaderCarrier
// (the first value of each) but reading them by their canonical keys:
// HeaderCarrier canonicalises the propagator's lower-case names on
// every read, an allocation each.
type headerFields http.Header

// Get implements propagation.TextMapCarrier.
func (h headerFields) Get(key string) string {
	switch key {
	case TraceParent:
		return first(h[canonicalTraceParent])
	case TraceState:
		return first(h[canonicalTraceState])
	}
	return http.Header(h).Get(key)
}

// Set implements propagation.TextMapCarrier (read only: nothing).
func (headerFields) Set(string, string) {}

// Keys implements propagation.TextMapCarrier.
func (headerFields) Keys() []string { return []string{TraceParent, TraceState} }

// ExtractFields is Extract from the two values, as a session's notify
// frame carries them.
func (t *Tracer) ExtractFields(ctx context.Context, traceparent, tracestate string) context.Context {
	if t == nil || traceparent == "" {
		return ctx
	}
	return t.prop.Extract(ctx, fields{traceparent, tracestate})
}

// Format returns the W3C traceparent and tracestate of the span in ctx;
// both empty when tracing is off or ctx has no valid span context.
func (t *Tracer) Format(ctx context.Context) (traceparent, tracestate string) {
	if t == nil {
		return "", ""
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", ""
	}
	return FormatTraceParent(sc), sc.TraceState().String()
}

// FormatTraceParent returns the W3C traceparent of sc (version 00).
func FormatTraceParent(sc trace.SpanContext) string {
	tid, sid := sc.TraceID(), sc.SpanID()
	const hexdigits = "0123456789abcdef"
	b := make([]byte, 0, 55)
	b = append(b, "00-"...)
	for _, x := range tid {
		b = append(b, hexdigits[x>>4], hexdigits[x&15])
	}
	b = append(b, '-')
	for _, x := range sid {
		b = append(b, hexdigits[x>>4], hexdigits[x&15])
	}
	f := byte(sc.TraceFlags())
	b = append(b, '-', hexdigits[f>>4], hexdigits[f&15])
	return string(b)
}

// SpanContext parses a stored traceparent and tracestate; false when
// tracing is off or they do not make a valid span context.
func (t *Tracer) SpanContext(traceparent, tracestate string) (trace.SpanContext, bool) {
	if t == nil || traceparent == "" {
		return trace.SpanContext{}, false
	}
	sc := trace.SpanContextFromContext(t.prop.Extract(context.Background(), fields{traceparent, tracestate}))
	return sc, sc.IsValid()
}

// Publish is the `publish <event_type>` span of one notification
// (StartPublish). Its messaging attributes are set when it ends, with
// the message id (Done) or without (End), in one call.
type Publish struct {
	trace.Span
	t         *Tracer
	eventType string
	bodySize  int
}

// StartPublish starts the `publish <eventType>` span (kind producer) of
// one notification, a child of the span in ctx (the HTTP request's, or
// a publisher's remote context). bodySize is the size of the notify body
// (or of the notification's element in a batch). End it with Done.
func (t *Tracer) StartPublish(ctx context.Context, eventType string, bodySize int) (context.Context, Publish) {
	if t == nil {
		return ctx, Publish{Span: noSpan()}
	}
	ctx, span := t.start(ctx, t.name("publish", eventType), trace.SpanKindProducer)
	return ctx, Publish{Span: span, t: t, eventType: eventType, bodySize: bodySize}
}

// Done ends the publish span with its outcome: the notification id
// (messaging.message.id) when it was stored, else the error.
func (p Publish) Done(messageID string, err error) {
	if !p.IsRecording() {
		p.Span.End()
		return
	}
	if err != nil {
		p.attributes()
		p.RecordError(err)
		p.SetStatus(codes.Error, err.Error())
	} else {
		p.attributes(attribute.String("messaging.message.id", messageID))
	}
	p.Span.End()
}

// End ends the publish span with its attributes but no outcome.
func (p Publish) End(options ...trace.SpanEndOption) {
	if p.IsRecording() {
		p.attributes()
	}
	p.Span.End(options...)
}

// attributes sets the messaging attributes of the span, and id (none
// or the message id).
func (p Publish) attributes(id ...attribute.KeyValue) {
	kvs := [6]attribute.KeyValue{
		attribute.String("messaging.system", MessagingSystem),
		attribute.String("messaging.operation.name", "publish"),
		attribute.String("messaging.operation.type", "send"),
		attribute.String("messaging.destination.name", p.eventType),
		attribute.Int("messaging.message.body.size", p.bodySize),
	}
	n := 5 + copy(kvs[5:], id)
	p.t.set(p.Span, kvs[:n]...)
}

// StartStore starts the span of a backend store (`store <stream>`, kind
// client for a remote backend, internal for the in-memory one), a child
// of the publish span in ctx; count is how many notifications it stores.
func (t *Tracer) StartStore(ctx context.Context, backend, stream string, count int, remote bool) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan()
	}
	kind := trace.SpanKindInternal
	if remote {
		kind = trace.SpanKindClient
	}
	ctx, span := t.start(ctx, t.name("store", stream), kind)
	if span.IsRecording() {
		t.set(span,
			attribute.String("herald.backend", backend),
			attribute.String("messaging.destination.name", stream),
			attribute.Int("messaging.batch.message_count", count))
	}
	return ctx, span
}

// End ends span, with err as its error status when not nil.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// StartDelivery starts the span of one delivery burst of a stream (op
// OpProcess or OpReceive, kind consumer), named `<op> <stream>`, a root
// span: the notifications it carries are linked to it (Link), not
// parents of it, since one burst carries many.
func (t *Tracer) StartDelivery(ctx context.Context, op, stream, transport string) trace.Span {
	if t == nil {
		return noSpan()
	}
	_, span := t.start(ctx, t.name(op, stream), trace.SpanKindConsumer)
	if span.IsRecording() {
		t.set(span,
			attribute.String("messaging.system", MessagingSystem),
			attribute.String("messaging.operation.name", op),
			attribute.String("messaging.operation.type", op),
			attribute.String("messaging.destination.name", stream),
			attribute.String("herald.transport", transport))
	}
	return span
}

// Link links span to a notification's creation context (its stored
// traceparent and tracestate), with its id; nothing when there is none.
func (t *Tracer) Link(span trace.Span, traceparent, tracestate, messageID string) {
	if !span.IsRecording() {
		return
	}
	sc, ok := t.SpanContext(traceparent, tracestate)
	if !ok {
		return
	}
	span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("messaging.message.id", messageID)}})
}

// StartServer starts the server span of an HTTP request (kind server),
// continuing the trace of its traceparent header if it has one. It is
// named by the method until the route is known; Served names it and
// sets its attributes.
func (t *Tracer) StartServer(r *http.Request) (context.Context, trace.Span) {
	ctx := r.Context()
	if t == nil {
		return ctx, noSpan()
	}
	ctx = t.Extract(ctx, r.Header)
	return t.start(ctx, r.Method, trace.SpanKindServer)
}

// Served names the server span of a request to path by its route
// pattern ("POST /api/v1/watch"; the method alone when no route
// matched), sets its attributes (method, path, route, response status)
// and an error status from 500 on. It does not end the span.
func (t *Tracer) Served(span trace.Span, method, path, route string, status int) {
	if !span.IsRecording() {
		return
	}
	kvs := [4]attribute.KeyValue{
		attribute.String("http.request.method", method),
		attribute.String("url.path", path),
		attribute.Int("http.response.status_code", status),
	}
	n := 3
	if route != "" {
		span.SetName(t.name(method, route))
		kvs[3] = attribute.String("http.route", route)
		n = 4
	}
	t.set(span, kvs[:n]...)
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

// fields is the text map carrier of a traceparent and a tracestate.
type fields struct{ traceparent, tracestate string }

// Get implements propagation.TextMapCarrier.
func (f fields) Get(key string) string {
	switch key {
	case TraceParent:
		return f.traceparent
	case TraceState:
		return f.tracestate
	}
	return ""
}

// Set implements propagation.TextMapCarrier (read only: nothing).
func (fields) Set(string, string) {}

// Keys implements propagation.TextMapCarrier.
func (fields) Keys() []string { return []string{TraceParent, TraceState} }

// Delivered ends the span of a delivery burst of count notifications
// (messaging.batch.message_count), with err as its error when the burst
// could not be sent.
func Delivered(span trace.Span, count int, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("messaging.batch.message_count", count))
	}
	End(span, err)
}
