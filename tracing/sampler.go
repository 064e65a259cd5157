package tracing

import (
	"encoding/binary"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// parentRatio is the sampler of herald's traces: the SDK's
// ParentBased(TraceIDRatioBased(ratio)), deciding alike
// (TestParentRatioMatchesSDK). A span with a parent is sampled when
// its parent is; a new trace when its trace ID falls in the ratio. The
// recorder calls decide with the parent it has already read, where the
// SDK's sampler would look it up in the context a second time.
type parentRatio struct {
	ratio float64
	bound uint64 // a new trace is sampled below it
}

var _ sdktrace.Sampler = parentRatio{}

// newParentRatio returns the sampler of ratio (at most 1: every trace;
// at most 0: none that does not continue a sampled one).
func newParentRatio(ratio float64) parentRatio {
	switch {
	case ratio >= 1:
		return parentRatio{ratio: 1, bound: 1 << 63}
	case ratio <= 0:
		return parentRatio{}
	}
	return parentRatio{ratio: ratio, bound: uint64(ratio * (1 << 63))}
}

// decide is the sampling result of a span of trace tid whose parent is
// psc (invalid for a new trace).
func (p parentRatio) decide(psc trace.SpanContext, tid trace.TraceID) sdktrace.SamplingResult {
	sampled := psc.IsSampled()
	if !psc.IsValid() {
		sampled = binary.BigEndian.Uint64(tid[8:16])>>1 < p.bound // always at 1 << 63
	}
	r := sdktrace.SamplingResult{Decision: sdktrace.Drop, Tracestate: psc.TraceState()}
	if sampled {
		r.Decision = sdktrace.RecordAndSample
	}
	return r
}

// ShouldSample implements sdktrace.Sampler.
func (p parentRatio) ShouldSample(params sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return p.decide(trace.SpanContextFromContext(params.ParentContext), params.TraceID)
}

// Description implements sdktrace.Sampler.
func (p parentRatio) Description() string {
	return fmt.Sprintf("ParentBased{root:TraceIDRatioBased{%g}}", p.ratio)
}
