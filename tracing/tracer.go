package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
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
type Tracer struct {
	t    trace.Tracer
	prop propagation.TraceContext
}

// On reports whether tracing is on.
func (t *Tracer) On() bool { return t != nil }

// noSpan is the span of a nil Tracer: a no-op.
func noSpan() trace.Span { return trace.SpanFromContext(context.Background()) }

// Extract returns ctx carrying the remote span context of h's
// traceparent and tracestate headers; ctx unchanged when there is none
// (or it is malformed: the trace then starts here) or tracing is off.
func (t *Tracer) Extract(ctx context.Context, h http.Header) context.Context {
	if t == nil || h.Get(TraceParent) == "" {
		return ctx
	}
	return t.prop.Extract(ctx, propagation.HeaderCarrier(h))
}

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

// StartPublish starts the `publish <eventType>` span (kind producer) of
// one notification, a child of the span in ctx (the HTTP request's, or
// a publisher's remote context). bodySize is the size of the notify body
// (or of the notification's element in a batch).
func (t *Tracer) StartPublish(ctx context.Context, eventType string, bodySize int) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan()
	}
	return t.t.Start(ctx, "publish "+eventType, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		attribute.String("messaging.system", MessagingSystem),
		attribute.String("messaging.operation.name", "publish"),
		attribute.String("messaging.operation.type", "send"),
		attribute.String("messaging.destination.name", eventType),
		attribute.Int("messaging.message.body.size", bodySize),
	))
}

// Published records the outcome of a publish span: the notification id
// (messaging.message.id) when it was stored, else the error. It does not
// end the span.
func Published(span trace.Span, messageID string, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return
	}
	span.SetAttributes(attribute.String("messaging.message.id", messageID))
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
	return t.t.Start(ctx, "store "+stream, trace.WithSpanKind(kind), trace.WithAttributes(
		attribute.String("herald.backend", backend),
		attribute.String("messaging.destination.name", stream),
		attribute.Int("messaging.batch.message_count", count),
	))
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
	_, span := t.t.Start(ctx, op+" "+stream, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("messaging.system", MessagingSystem),
		attribute.String("messaging.operation.name", op),
		attribute.String("messaging.operation.type", op),
		attribute.String("messaging.destination.name", stream),
		attribute.String("herald.transport", transport),
	))
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
// named by the method until the route is known (Route).
func (t *Tracer) StartServer(r *http.Request) (context.Context, trace.Span) {
	ctx := r.Context()
	if t == nil {
		return ctx, noSpan()
	}
	ctx = t.Extract(ctx, r.Header)
	return t.t.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", r.Method),
		attribute.String("url.path", r.URL.Path),
	))
}

// Served names the server span of an HTTP request by its route pattern
// ("POST /api/v1/watch"; the method alone when no route matched) and
// records the response status (an error status from 500 on).
func Served(span trace.Span, method, route string, status int) {
	if !span.IsRecording() {
		return
	}
	if route != "" {
		span.SetName(method + " " + route)
		span.SetAttributes(attribute.String("http.route", route))
	}
	span.SetAttributes(attribute.Int("http.response.status_code", status))
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
