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
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// spanExporter exports spans with the SDK's OTLP client (gRPC or HTTP,
// configured as otlptracegrpc and otlptracehttp configure it, from the
// environment too), as the SDK's otlptrace.Exporter does, but converts
// them to protobuf messages that it keeps from one batch to the next:
// the SDK's exporter allocates some twenty objects per span (three per
// attribute), which cost a traced notify more than recording its spans.
// The request it sends is the same, message for message.
//
// The client has marshalled a request when UploadTraces returns, so the
// messages can be reused for the next batch; exports are serialised.
type spanExporter struct {
	client otlptrace.Client

	mu       sync.Mutex
	stopped  bool
	conv     converter
	stopOnce sync.Once
}

// errExporterStopped is the error of an export after Shutdown.
var errExporterStopped = errors.New("traces export: the exporter is shut down")

// newOTLPExporter starts client and returns its exporter.
func newOTLPExporter(ctx context.Context, client otlptrace.Client) (*spanExporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &spanExporter{client: client}, nil
}

// finished is what the export reads of an ended span: the methods of
// sdktrace.ReadOnlySpan that the conversion to OTLP uses, which the
// recorder's spans have too.
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
	Resource() *resource.Resource
	InstrumentationScope() instrumentation.Scope
}

// Export converts spans and sends them in one request; none is sent for
// no spans.
func (e *spanExporter) Export(ctx context.Context, spans []finished) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errExporterStopped
	}
	req := e.conv.convert(spans)
	if len(req) == 0 {
		return nil
	}
	err := e.client.UploadTraces(ctx, req)
	e.conv.release()
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

// converter converts batches of spans to OTLP messages taken from slabs
// that it keeps, sized by the largest batch so far: after the first
// batches a conversion allocates nothing but the few messages of the
// batch's resources and scopes, and the values it does not hold in
// slabs (attributes that are lists or maps, which herald does not
// record).
type converter struct {
	spans    []tracepb.Span
	spanPtrs []*tracepb.Span
	statuses []tracepb.Status
	links    []tracepb.Span_Link
	linkPtrs []*tracepb.Span_Link
	events   []tracepb.Span_Event
	eventPts []*tracepb.Span_Event
	kvs      []commonpb.KeyValue
	kvPtrs   []*commonpb.KeyValue
	anys     []commonpb.AnyValue
	strs     []commonpb.AnyValue_StringValue
	ints     []commonpb.AnyValue_IntValue
	bools    []commonpb.AnyValue_BoolValue
	doubles  []commonpb.AnyValue_DoubleValue
	ids      []byte

	// The messages of the last resource and scope converted, kept
	// while they stay the same (herald has one of each).
	res      *resource.Resource
	resPB    *resourcepb.Resource
	scope    instrumentation.Scope
	scopePB  *commonpb.InstrumentationScope
	hasScope bool
}

// slab returns s with length n, zeroed, reallocated when too small.
func slab[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// group is the ScopeSpans of one resource and scope in a batch.
type group struct {
	res   attribute.Distinct
	scope instrumentation.Scope
	ss    *tracepb.ScopeSpans
}

// convert returns the ResourceSpans of spans, in the order their
// resources and scopes first appear; the messages are valid until
// release.
func (c *converter) convert(spans []finished) []*tracepb.ResourceSpans {
	var nSpans, nLinks, nEvents, nKVs int
	for _, s := range spans {
		if s == nil {
			continue
		}
		nSpans++
		nKVs += len(s.Attributes())
		for _, l := range s.Links() {
			nLinks++
			nKVs += len(l.Attributes)
		}
		for _, ev := range s.Events() {
			nEvents++
			nKVs += len(ev.Attributes)
		}
	}
	if nSpans == 0 {
		return nil
	}
	c.spans, c.spanPtrs, c.statuses = slab(c.spans, nSpans), slab(c.spanPtrs, nSpans), slab(c.statuses, nSpans)
	c.links, c.linkPtrs = slab(c.links, nLinks), slab(c.linkPtrs, nLinks)
	c.events, c.eventPts = slab(c.events, nEvents), slab(c.eventPts, nEvents)
	c.kvs, c.kvPtrs, c.anys = slab(c.kvs, nKVs), slab(c.kvPtrs, nKVs), slab(c.anys, nKVs)
	c.strs, c.ints = slab(c.strs, nKVs), slab(c.ints, nKVs)
	c.bools, c.doubles = slab(c.bools, nKVs), slab(c.doubles, nKVs)
	c.ids = slab(c.ids, 40*nSpans+24*nLinks)

	var scopes []group
	var resources []attribute.Distinct
	var out []*tracepb.ResourceSpans
	var next struct{ span, link, event, kv, id int }
	for _, s := range spans {
		if s == nil {
			continue
		}
		res, scope := s.Resource(), s.InstrumentationScope()
		key := res.Equivalent()
		var ss *tracepb.ScopeSpans
		for _, g := range scopes {
			if g.res == key && g.scope == scope {
				ss = g.ss
				break
			}
		}
		if ss == nil {
			ss = &tracepb.ScopeSpans{Scope: c.scopeOf(scope), SchemaUrl: scope.SchemaURL}
			var rs *tracepb.ResourceSpans
			for i, k := range resources {
				if k == key {
					rs = out[i]
					break
				}
			}
			if rs == nil {
				rs = &tracepb.ResourceSpans{Resource: c.resourceOf(res), SchemaUrl: res.SchemaURL()}
				resources, out = append(resources, key), append(out, rs)
			}
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
			scopes = append(scopes, group{res: key, scope: scope, ss: ss})
		}

		p := &c.spans[next.span]
		c.spanPtrs[next.span] = p
		st := &c.statuses[next.span]
		next.span++
		sc := s.SpanContext()
		p.TraceId, p.SpanId = c.traceID(&next.id, sc.TraceID()), c.spanID(&next.id, sc.SpanID())
		p.TraceState = sc.TraceState().String()
		st.Code, st.Message = statusCode(s.Status().Code), s.Status().Description
		p.Status = st
		p.StartTimeUnixNano = uint64(max(0, s.StartTime().UnixNano())) //nolint:gosec // not negative
		p.EndTimeUnixNano = uint64(max(0, s.EndTime().UnixNano()))     //nolint:gosec // not negative
		p.Kind = spanKind(s.SpanKind())
		p.Name = s.Name()
		p.Attributes = c.keyValues(&next.kv, s.Attributes())
		p.DroppedAttributesCount = clampUint32(s.DroppedAttributes())
		p.DroppedEventsCount = clampUint32(s.DroppedEvents())
		p.DroppedLinksCount = clampUint32(s.DroppedLinks())
		if ls := s.Links(); len(ls) > 0 {
			p.Links = c.linkPtrs[next.link : next.link+len(ls) : next.link+len(ls)]
			for i, l := range ls {
				pl := &c.links[next.link+i]
				p.Links[i] = pl
				pl.TraceId, pl.SpanId = c.traceID(&next.id, l.SpanContext.TraceID()), c.spanID(&next.id, l.SpanContext.SpanID())
				pl.Attributes = c.keyValues(&next.kv, l.Attributes)
				pl.DroppedAttributesCount = clampUint32(l.DroppedAttributeCount)
				pl.Flags = spanFlags(l.SpanContext.TraceFlags(), l.SpanContext)
			}
			next.link += len(ls)
		}
		if es := s.Events(); len(es) > 0 {
			p.Events = c.eventPts[next.event : next.event+len(es) : next.event+len(es)]
			for i, ev := range es {
				pe := &c.events[next.event+i]
				p.Events[i] = pe
				pe.Name = ev.Name
				pe.TimeUnixNano = uint64(max(0, ev.Time.UnixNano())) //nolint:gosec // not negative
				pe.Attributes = c.keyValues(&next.kv, ev.Attributes)
				pe.DroppedAttributesCount = clampUint32(ev.DroppedAttributeCount)
			}
			next.event += len(es)
		}
		parent := s.Parent()
		if psid := parent.SpanID(); psid.IsValid() {
			p.ParentSpanId = c.spanID(&next.id, psid)
		}
		p.Flags = spanFlags(sc.TraceFlags(), parent)
		ss.Spans = append(ss.Spans, p)
	}
	return out
}

// release clears the slabs' references to the spans' strings and values
// so that the last batch is not kept alive until the next.
func (c *converter) release() {
	clear(c.spans)
	clear(c.statuses)
	clear(c.links)
	clear(c.events)
	clear(c.kvs)
	clear(c.anys)
	clear(c.strs)
}

// traceID copies id into the id slab.
func (c *converter) traceID(next *int, id trace.TraceID) []byte {
	b := c.ids[*next : *next+16 : *next+16]
	*next += copy(b, id[:])
	return b
}

// spanID copies id into the id slab.
func (c *converter) spanID(next *int, id trace.SpanID) []byte {
	b := c.ids[*next : *next+8 : *next+8]
	*next += copy(b, id[:])
	return b
}

// keyValues converts attributes into the slabs.
func (c *converter) keyValues(next *int, attrs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	i := *next
	*next += len(attrs)
	out := c.kvPtrs[i : i+len(attrs) : i+len(attrs)]
	for j, a := range attrs {
		kv := &c.kvs[i+j]
		out[j] = kv
		kv.Key = string(a.Key)
		kv.Value = c.value(i+j, a.Value)
	}
	return out
}

// value converts v into the slabs' entry i (scalars; others as the SDK
// does).
func (c *converter) value(i int, v attribute.Value) *commonpb.AnyValue {
	av := &c.anys[i]
	switch v.Type() {
	case attribute.STRING:
		w := &c.strs[i]
		w.StringValue = v.AsString()
		av.Value = w
	case attribute.INT64:
		w := &c.ints[i]
		w.IntValue = v.AsInt64()
		av.Value = w
	case attribute.BOOL:
		w := &c.bools[i]
		w.BoolValue = v.AsBool()
		av.Value = w
	case attribute.FLOAT64:
		w := &c.doubles[i]
		w.DoubleValue = v.AsFloat64()
		av.Value = w
	default:
		return anyValue(v)
	}
	return av
}

// resourceOf converts res, once while it stays the same.
func (c *converter) resourceOf(res *resource.Resource) *resourcepb.Resource {
	if res == nil {
		return nil
	}
	if res != c.res {
		c.res, c.resPB = res, &resourcepb.Resource{Attributes: keyValuesOf(res.Attributes())}
	}
	return c.resPB
}

// scopeOf converts scope, once while it stays the same.
func (c *converter) scopeOf(scope instrumentation.Scope) *commonpb.InstrumentationScope {
	if scope == (instrumentation.Scope{}) {
		return nil
	}
	if !c.hasScope || scope != c.scope {
		c.scope, c.hasScope = scope, true
		c.scopePB = &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version, Attributes: keyValuesOf(scope.Attributes.ToSlice())}
	}
	return c.scopePB
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
