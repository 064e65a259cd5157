package tracing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// spanExporter exports the spans of one resource and instrumentation
// scope with the SDK's OTLP client (gRPC or HTTP, configured as
// otlptracegrpc and otlptracehttp configure it, from the environment
// too), as the SDK's otlptrace.Exporter does, but takes them encoded
// (appendSpanField) and builds the request itself (wireEncoder) in a
// buffer it keeps from one batch to the next: the SDK's exporter
// allocates some twenty objects per span (three per attribute) and the
// client's proto.Marshal walks them by reflection, which cost a traced
// notify more than recording its spans. The request it sends is the
// same, message for message.
//
// The client has marshalled a request when UploadTraces returns, so the
// buffer can be reused for the next batch; exports are serialised.
type spanExporter struct {
	client otlptrace.Client

	mu       sync.Mutex
	stopped  bool
	enc      *wireEncoder
	stopOnce sync.Once
}

// errExporterStopped is the error of an export after Shutdown.
var errExporterStopped = errors.New("traces export: the exporter is shut down")

// newOTLPExporter starts client and returns its exporter of the spans
// of res and scope.
func newOTLPExporter(ctx context.Context, client otlptrace.Client, res *resource.Resource, scope instrumentation.Scope) (*spanExporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &spanExporter{client: client, enc: newWireEncoder(res, scope)}, nil
}

// finished is what the encoding reads of an ended span (appendSpan):
// the methods of sdktrace.ReadOnlySpan that the conversion to OTLP
// uses, which the recorder's spans have too.
type finished interface {
	Name() string
	SpanContext() trace.SpanContext
	Parent() trace.SpanContext
	SpanKind() trace.SpanKind
	StartTime() time.Time
	EndTime() time.Time
	Attributes() []attribute.KeyValue
	Links() []sdktrace.Link
	Events() []sdktrace.Event
	Status() sdktrace.Status
	DroppedAttributes() int
	DroppedLinks() int
	DroppedEvents() int
}

// Export sends spans, encoded (appendSpanField), in one request; none
// is sent for no spans.
func (e *spanExporter) Export(ctx context.Context, spans []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errExporterStopped
	}
	req := e.enc.encode(spans)
	if len(req) == 0 {
		return nil
	}
	err := e.client.UploadTraces(ctx, req)
	e.enc.release()
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the client; exports fail afterwards.
func (e *spanExporter) Shutdown(ctx context.Context) error {
	var err error
	e.stopOnce.Do(func() {
		e.mu.Lock()
		e.stopped = true
		e.mu.Unlock()
		err = e.client.Stop(ctx)
	})
	return err
}

// keyValuesOf converts attributes, allocating (as the SDK does).
func keyValuesOf(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(attrs))
	for i, a := range attrs {
		out[i] = &commonpb.KeyValue{Key: string(a.Key), Value: anyValue(a.Value)}
	}
	return out
}

// anyValue converts v, allocating, as the SDK's exporter does.
func anyValue(v attribute.Value) *commonpb.AnyValue {
	av := new(commonpb.AnyValue)
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = arrayOf(v.AsBoolSlice(), func(b bool) attribute.Value { return attribute.BoolValue(b) })
	case attribute.INT64SLICE:
		av.Value = arrayOf(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		av.Value = arrayOf(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		av.Value = arrayOf(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		av.Value = arrayOf(v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValuesOf(v.AsMap())}}
	case attribute.EMPTY:
	default:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: "INVALID"}
	}
	return av
}

// arrayOf converts a list value.
func arrayOf[T any](vs []T, conv func(T) attribute.Value) *commonpb.AnyValue_ArrayValue {
	out := make([]*commonpb.AnyValue, len(vs))
	for i, v := range vs {
		out[i] = anyValue(conv(v))
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: out}}
}

// statusCode is the OTLP status code of c.
func statusCode(c codes.Code) tracepb.Status_StatusCode {
	switch c {
	case codes.Ok:
		return tracepb.Status_STATUS_CODE_OK
	case codes.Error:
		return tracepb.Status_STATUS_CODE_ERROR
	}
	return tracepb.Status_STATUS_CODE_UNSET
}

// spanKind is the OTLP span kind of k.
func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// spanFlags are the OTLP flags of a span or link: the W3C trace flags,
// and whether its parent (or the linked span) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return flags
}

// clampUint32 is v within [0, MaxUint32].
func clampUint32(v int) uint32 {
	return uint32(min(max(v, 0), math.MaxUint32)) //nolint:gosec // clamped
}
