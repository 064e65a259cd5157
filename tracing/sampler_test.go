package tracing

import (
	"context"
	"math/rand/v2"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestParentRatioMatchesSDK: herald's sampler decides as the SDK's
// ParentBased(TraceIDRatioBased(ratio)) does, decision and trace state,
// for new traces (at ratios from none to all and beyond) and for
// children of remote and local parents, sampled or not.
func TestParentRatioMatchesSDK(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=x")
	if err != nil {
		t.Fatal(err)
	}
	parent := func(sampled, remote bool) trace.SpanContext {
		cfg := trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceState: ts, Remote: remote}
		if sampled {
			cfg.TraceFlags = trace.FlagsSampled
		}
		return trace.NewSpanContext(cfg)
	}
	parents := map[string]trace.SpanContext{
		"none":              {},
		"remote sampled":    parent(true, true),
		"remote unsampled":  parent(false, true),
		"local sampled":     parent(true, false),
		"local unsampled":   parent(false, false),
		"state, no context": trace.SpanContext{}.WithTraceState(ts),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ratio := range []float64{-1, 0, 1e-9, 0.1, 0.5, 0.999, 1, 2} {
		sdk, own := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), newParentRatio(ratio)
		sampled := 0
		for name, psc := range parents {
			ctx := trace.ContextWithSpanContext(context.Background(), psc)
			for range 2000 {
				var tid trace.TraceID
				putUint64(tid[:8], rng.Uint64())
				putUint64(tid[8:], rng.Uint64())
				p := sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: "s"}
				want, got, direct := sdk.ShouldSample(p), own.ShouldSample(p), own.decide(psc, tid)
				for _, g := range []sdktrace.SamplingResult{got, direct} {
					if g.Decision != want.Decision || g.Tracestate.String() != want.Tracestate.String() || len(g.Attributes) != 0 {
						t.Fatalf("ratio %g, parent %s, trace %s: %+v, the SDK %+v", ratio, name, tid, g, want)
					}
				}
				if name == "none" && got.Decision == sdktrace.RecordAndSample {
					sampled++
				}
			}
		}
		if ratio == 0.5 && (sampled < 900 || sampled > 1100) {
			t.Errorf("ratio 0.5 sampled %d of 2000 new traces", sampled)
		}
	}
}
