package tracing

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Field numbers of the OTLP trace messages (opentelemetry/proto/trace/v1
// and common/v1), as the wire encoder writes them.
const (
	fResourceSpansResource   protowire.Number = 1
	fResourceSpansScopeSpans protowire.Number = 2
	fResourceSpansSchemaURL  protowire.Number = 3

	fScopeSpansScope     protowire.Number = 1
	fScopeSpansSpans     protowire.Number = 2
	fScopeSpansSchemaURL protowire.Number = 3

	fSpanTraceID           protowire.Number = 1
	fSpanSpanID            protowire.Number = 2
	fSpanTraceState        protowire.Number = 3
	fSpanParentSpanID      protowire.Number = 4
	fSpanName              protowire.Number = 5
	fSpanKind              protowire.Number = 6
	fSpanStart             protowire.Number = 7
	fSpanEnd               protowire.Number = 8
	fSpanAttributes        protowire.Number = 9
	fSpanDroppedAttributes protowire.Number = 10
	fSpanEvents            protowire.Number = 11
	fSpanDroppedEvents     protowire.Number = 12
	fSpanLinks             protowire.Number = 13
	fSpanDroppedLinks      protowire.Number = 14
	fSpanStatus            protowire.Number = 15
	fSpanFlags             protowire.Number = 16

	fEventTime              protowire.Number = 1
	fEventName              protowire.Number = 2
	fEventAttributes        protowire.Number = 3
	fEventDroppedAttributes protowire.Number = 4

	fLinkTraceID           protowire.Number = 1
	fLinkSpanID            protowire.Number = 2
	fLinkAttributes        protowire.Number = 4
	fLinkDroppedAttributes protowire.Number = 5
	fLinkFlags             protowire.Number = 6

	fStatusMessage protowire.Number = 2
	fStatusCode    protowire.Number = 3

	fKeyValueKey   protowire.Number = 1
	fKeyValueValue protowire.Number = 2

	fAnyString protowire.Number = 1
	fAnyBool   protowire.Number = 2
	fAnyInt    protowire.Number = 3
	fAnyDouble protowire.Number = 4
)

// lengthRoom is the room left for a nested message's length, the
// longest varint of a length that fits in 32 bits.
const lengthRoom = 5

// wireEncoder builds the OTLP requests of batches of encoded spans
// (appendSpanField) of one resource and instrumentation scope, written
// field by field (protowire) into a buffer it keeps from one batch to
// the next. The ResourceSpans message it returns carries its encoding as
// raw (unknown) fields, which proto.Marshal copies as they are: the
// client's marshal is a copy, and the request on the wire is the one the
// SDK's exporter sends for the same spans (TestSpanExporterMatchesSDK
// decodes and compares them).
//
// A proto3 field at its zero value is left out, as proto.Marshal leaves
// it out; a message field that the SDK always sets (a span's status, an
// attribute's value) is written even when empty.
type wireEncoder struct {
	res   *resource.Resource
	scope instrumentation.Scope

	buf []byte
	out [1]*tracepb.ResourceSpans

	// The encodings of the resource and the scope, made once.
	resWire   []byte
	scopeWire []byte
	hasScope  bool // not the zero scope: its message is written
}

// newWireEncoder returns the encoder of the spans of res and scope.
func newWireEncoder(res *resource.Resource, scope instrumentation.Scope) *wireEncoder {
	w := &wireEncoder{res: res, scope: scope, out: [1]*tracepb.ResourceSpans{new(tracepb.ResourceSpans)}}
	if res != nil {
		w.resWire = marshalled(&resourcepb.Resource{Attributes: keyValuesOf(res.Attributes())})
	}
	if scope != (instrumentation.Scope{}) {
		w.hasScope = true
		w.scopeWire = marshalled(&commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version, Attributes: keyValuesOf(scope.Attributes.ToSlice())})
	}
	return w
}

// marshalled is m's encoding; nil if it does not marshal (a message of
// scalar attributes always does).
func marshalled(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// encode returns the ResourceSpans of spans, none for none; it is valid
// until release.
func (w *wireEncoder) encode(spans []byte) []*tracepb.ResourceSpans {
	if len(spans) == 0 {
		return nil
	}
	b := w.buf[:0]
	if w.res != nil {
		b = appendTag(b, fResourceSpansResource, protowire.BytesType)
		b = appendLenBytes(b, w.resWire)
	}
	var at int
	b, at = beginMessage(b, fResourceSpansScopeSpans)
	if w.hasScope {
		b = appendTag(b, fScopeSpansScope, protowire.BytesType)
		b = appendLenBytes(b, w.scopeWire)
	}
	b = append(b, spans...)
	b = appendString(b, fScopeSpansSchemaURL, w.scope.SchemaURL)
	b = endMessage(b, at)
	if w.res != nil {
		b = appendString(b, fResourceSpansSchemaURL, w.res.SchemaURL())
	}
	w.buf = b
	w.out[0].ProtoReflect().SetUnknown(protoreflect.RawFields(b))
	return w.out[:]
}

// release forgets the last batch's encoding (the buffer is kept).
func (w *wireEncoder) release() {
	w.out[0].ProtoReflect().SetUnknown(nil)
}

// appendSpanField appends s as a span of a ScopeSpans message: the
// field's tag and length and s's Span message.
func appendSpanField(b []byte, s finished) []byte {
	var at int
	b, at = beginMessage(b, fScopeSpansSpans)
	b = appendSpan(b, s)
	return endMessage(b, at)
}

// appendSpan appends the fields of s's Span message.
func appendSpan(b []byte, s finished) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	if ts := sc.TraceState(); ts.Len() > 0 {
		b = appendString(b, fSpanTraceState, ts.String())
	}
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, fSpanParentSpanID, psid[:])
	}
	b = appendString(b, fSpanName, s.Name())
	b = appendVarint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, fSpanStart, unixNano(s.StartTime()))
	b = appendFixed64(b, fSpanEnd, unixNano(s.EndTime()))
	b = appendKeyValues(b, fSpanAttributes, s.Attributes())
	b = appendVarint(b, fSpanDroppedAttributes, uint64(clampUint32(s.DroppedAttributes())))
	for _, ev := range s.Events() {
		var at int
		b, at = beginMessage(b, fSpanEvents)
		b = appendFixed64(b, fEventTime, unixNano(ev.Time))
		b = appendString(b, fEventName, ev.Name)
		b = appendKeyValues(b, fEventAttributes, ev.Attributes)
		b = appendVarint(b, fEventDroppedAttributes, uint64(clampUint32(ev.DroppedAttributeCount)))
		b = endMessage(b, at)
	}
	b = appendVarint(b, fSpanDroppedEvents, uint64(clampUint32(s.DroppedEvents())))
	for _, l := range s.Links() {
		b = appendLink(b, l)
	}
	b = appendVarint(b, fSpanDroppedLinks, uint64(clampUint32(s.DroppedLinks())))
	st := s.Status()
	var at int
	b, at = beginMessage(b, fSpanStatus)
	b = appendString(b, fStatusMessage, st.Description)
	b = appendVarint(b, fStatusCode, uint64(statusCode(st.Code)))
	b = endMessage(b, at)
	if flags := spanFlags(sc.TraceFlags(), parent); flags != 0 {
		b = appendTag(b, fSpanFlags, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, flags)
	}
	return b
}

// appendLink appends l as a span's Link message.
func appendLink(b []byte, l sdktrace.Link) []byte {
	var at int
	b, at = beginMessage(b, fSpanLinks)
	tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
	b = appendBytes(b, fLinkTraceID, tid[:])
	b = appendBytes(b, fLinkSpanID, sid[:])
	b = appendKeyValues(b, fLinkAttributes, l.Attributes)
	b = appendVarint(b, fLinkDroppedAttributes, uint64(clampUint32(l.DroppedAttributeCount)))
	if flags := spanFlags(l.SpanContext.TraceFlags(), l.SpanContext); flags != 0 {
		b = appendTag(b, fLinkFlags, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, flags)
	}
	return endMessage(b, at)
}

// appendKeyValues appends attrs as repeated KeyValue messages of field
// num. A scalar value's message is small and its length known, so it is
// written in place (appendScalar); lists, maps, bytes and empty values,
// which herald does not record, go through the generated message.
func appendKeyValues(b []byte, num protowire.Number, attrs []attribute.KeyValue) []byte {
	for i := range attrs {
		a := &attrs[i]
		if out, ok := appendScalar(b, num, a); ok {
			b = out
			continue
		}
		var at, vat int
		b, at = beginMessage(b, num)
		b = appendString(b, fKeyValueKey, string(a.Key))
		b, vat = beginMessage(b, fKeyValueValue)
		if wire, err := proto.Marshal(anyValue(a.Value)); err == nil {
			b = append(b, wire...)
		}
		b = endMessage(b, vat)
		b = endMessage(b, at)
	}
	return b
}

// appendScalar appends a as a KeyValue message of field num when its
// value is a string, an integer, a boolean or a float, its lengths
// computed first; false (b unchanged) for any other value.
func appendScalar(b []byte, num protowire.Number, a *attribute.KeyValue) ([]byte, bool) {
	v := &a.Value
	var size int // of the AnyValue message
	switch v.Type() {
	case attribute.STRING:
		size = 1 + sizeBytes(len(v.AsString()))
	case attribute.INT64:
		size = 1 + protowire.SizeVarint(uint64(v.AsInt64())) //nolint:gosec // two's complement, as protobuf's int64
	case attribute.BOOL:
		size = 2
	case attribute.FLOAT64:
		size = 9
	default:
		return b, false
	}
	kv := 1 + sizeBytes(size) // the value field
	if a.Key != "" {
		kv += 1 + sizeBytes(len(a.Key))
	}
	b = appendTag(b, num, protowire.BytesType)
	b = appendUvarint(b, uint64(kv))
	b = appendString(b, fKeyValueKey, string(a.Key))
	b = appendTag(b, fKeyValueValue, protowire.BytesType)
	b = appendUvarint(b, uint64(size))
	switch v.Type() {
	case attribute.STRING:
		b = appendTag(b, fAnyString, protowire.BytesType)
		b = appendLenString(b, v.AsString())
	case attribute.INT64:
		b = appendTag(b, fAnyInt, protowire.VarintType)
		b = appendUvarint(b, uint64(v.AsInt64())) //nolint:gosec // two's complement, as protobuf's int64
	case attribute.BOOL:
		b = appendTag(b, fAnyBool, protowire.VarintType)
		b = appendUvarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.FLOAT64:
		b = appendTag(b, fAnyDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	}
	return b, true
}

// beginMessage appends the tag of the message field num and room for its
// length; endMessage, given the offset it returns, writes the length.
func beginMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = appendTag(b, num, protowire.BytesType)
	b = append(b, make([]byte, lengthRoom)...)
	return b, len(b)
}

// endMessage writes the length of the message that began at start (an
// offset from beginMessage) before it, moving it down over the room not
// needed.
func endMessage(b []byte, start int) []byte {
	n := len(b) - start
	room := start - lengthRoom
	l := protowire.SizeVarint(uint64(n))
	protowire.AppendVarint(b[room:room], uint64(n))
	copy(b[room+l:], b[start:])
	return b[:room+l+n]
}

// appendString appends a string field, left out when empty.
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, protowire.BytesType)
	return appendLenString(b, s)
}

// appendBytes appends a bytes field, left out when empty.
func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = appendTag(b, num, protowire.BytesType)
	return appendLenBytes(b, v)
}

// appendVarint appends a varint field (an enum or an unsigned count),
// left out when zero.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.VarintType)
	return appendUvarint(b, v)
}

// appendFixed64 appends a fixed64 field, left out when zero.
func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// unixNano is t in nanoseconds since the epoch, 0 before it (as the
// SDK's exporter writes it).
func unixNano(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano())) //nolint:gosec // not negative
}

// appendTag appends the tag of field num of type typ (protowire.AppendTag,
// one byte without a call for fields below 16).
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	if num < 16 {
		return append(b, byte(num)<<3|byte(typ&7))
	}
	return protowire.AppendTag(b, num, typ)
}

// appendUvarint appends v as a varint (protowire.AppendVarint), the one
// byte of a small value (most tags and lengths) without a call.
func appendUvarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// sizeBytes is the size of a length-delimited value of n bytes, its
// length included (protowire.SizeBytes).
func sizeBytes(n int) int {
	if n < 0x80 {
		return 1 + n
	}
	return protowire.SizeBytes(n)
}

// appendLenString appends s with its length (protowire.AppendString).
func appendLenString(b []byte, s string) []byte {
	return append(appendUvarint(b, uint64(len(s))), s...)
}

// appendLenBytes appends v with its length (protowire.AppendBytes).
func appendLenBytes(b []byte, v []byte) []byte {
	return append(appendUvarint(b, uint64(len(v))), v...)
}
