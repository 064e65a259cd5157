package tracing

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// TraceExport is where spans are exported, and which.
type TraceExport struct {
	// Protocol is ProtocolGRPC or ProtocolHTTP.
	Protocol string
	// URL is the collector's URL, as LogExport's (for ProtocolHTTP with
	// the path, /v1/traces).
	URL string
	// SampleRatio is the share of new traces recorded (0 to 1); a trace
	// continued from a publisher's traceparent follows its sampled flag.
	SampleRatio float64
	// MaxQueueSize bounds the finished spans waiting for export (default
	// 2048); spans that do not fit are dropped and counted.
	MaxQueueSize int
}

// newTracer builds the recorder of e and its bounded export queue.
func newTracer(ctx context.Context, t *Telemetry, e TraceExport, opts Options) error {
	res, err := newResource(ctx, opts)
	if err != nil {
		return err
	}
	scope := instrumentation.Scope{Name: scopeName, Version: opts.Version}
	exp, err := newSpanExporter(ctx, e, opts.ExportTimeout, res, scope)
	if err != nil {
		return err
	}
	q := newSpanQueue(exp, spanQueueOptions{
		size:     e.MaxQueueSize,
		interval: opts.ExportInterval,
		timeout:  opts.ExportTimeout,
		log:      opts.Diagnostics,
		target:   e.URL,
	})
	t.spans = q
	t.tracer = newTracerOf(&recorder{
		sampler: newParentRatio(e.SampleRatio),
		queue:   q,
	})
	return nil
}

// newSpanExporter builds the OTLP exporter of e for the spans of res
// and scope, without retries (a batch the collector refuses is counted
// and dropped): the SDK's OTLP client with herald's encoding of spans
// (spanExporter).
func newSpanExporter(ctx context.Context, e TraceExport, timeout time.Duration, res *resource.Resource, scope instrumentation.Scope) (*spanExporter, error) {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tracing: endpoint %q is not an http(s) URL with a host", e.URL)
	}
	var exp *spanExporter
	switch e.Protocol {
	case ProtocolGRPC:
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(e.URL), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(timeout))
		}
		exp, err = newOTLPExporter(ctx, otlptracegrpc.NewClient(opts...), res, scope)
	case ProtocolHTTP:
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(e.URL), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
		if timeout > 0 {
			opts = append(opts, otlptracehttp.WithTimeout(timeout))
		}
		exp, err = newOTLPExporter(ctx, otlptracehttp.NewClient(opts...), res, scope)
	default:
		return nil, fmt.Errorf("tracing: protocol %q: use %q or %q", e.Protocol, ProtocolGRPC, ProtocolHTTP)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: build the %s span exporter for %s: %w", e.Protocol, e.URL, err)
	}
	return exp, nil
}

// Tracer returns herald's tracer: nil when traces are not exported (a
// nil *Tracer records nothing and carries no trace context).
func (t *Telemetry) Tracer() *Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}

// TraceSpansDropped is the number of finished spans dropped because the
// export queue was full (herald_trace_spans_dropped_total).
func (t *Telemetry) TraceSpansDropped() uint64 {
	if t == nil || t.spans == nil {
		return 0
	}
	return t.spans.dropped.Load()
}

// TraceExportFailures is the number of span batches the collector did
// not accept (herald_trace_export_failures_total).
func (t *Telemetry) TraceExportFailures() uint64 {
	if t == nil || t.spans == nil {
		return 0
	}
	return t.spans.failed.Load()
}

// TraceSpansExported is the number of spans the collector accepted
// (herald_trace_spans_exported_total).
func (t *Telemetry) TraceSpansExported() uint64 {
	if t == nil || t.spans == nil {
		return 0
	}
	return t.spans.exported.Load()
}
