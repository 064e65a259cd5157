// Package tracing sets up OpenTelemetry for herald: the export of the
// log over OTLP (logging.otlp), where every record that goes to stdout
// also goes, through the log/slog bridge, a redaction guard and a
// bounded batch queue, to an OpenTelemetry collector over gRPC or HTTP;
// and herald's traces (the tracing block), a tracer provider beside the
// logger provider, set up and shut down by the same Telemetry, whose
// Tracer names spans by the OpenTelemetry messaging conventions and
// reads and writes the W3C trace context carried with notifications.
//
// Tracing is off unless configured: Telemetry.Tracer is then nil, and a
// nil *Tracer records nothing and formats no trace context, so that
// notifications carry none.
//
// The export never slows logging down: records wait in a bounded queue
// (the oldest are dropped when it is full) and a background goroutine
// exports them in batches; a collector that is down or slow costs failed
// batches, counted and logged to stdout, never a blocked log call.
//
// The package also holds the redaction rules of the log (SensitiveKey,
// RedactURLUserinfo, RedactMessage), which stdout applies through
// ReplaceAttr and the export through its guard.
//
// The span export never slows a notify down either: finished spans enter
// a bounded queue without waiting, and those that do not fit are dropped
// and counted.
//
// It imports no herald package; Telemetry keeps its own counts, which
// package metrics reads (aviso_otlp_export_failures_total,
// aviso_otlp_suppressed_log_records_total, herald_trace_*).
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
)

// OTLP protocols of LogExport.
const (
	// ProtocolGRPC is OTLP/gRPC (the collector's port 4317).
	ProtocolGRPC = "grpc"
	// ProtocolHTTP is OTLP/HTTP with protobuf bodies (port 4318).
	ProtocolHTTP = "http"
)

// ServiceName is the service.name of herald's telemetry unless the
// environment's OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names
// another.
const ServiceName = "herald"

// scopeName is the instrumentation scope of herald's log records.
const scopeName = "herald"

// LogExport is where the log is exported.
type LogExport struct {
	// Protocol is ProtocolGRPC or ProtocolHTTP.
	Protocol string
	// URL is the collector's URL: http:// or https:// (TLS), the host and
	// port; for ProtocolHTTP also the path (/v1/logs). For ProtocolGRPC
	// the path is not used.
	URL string
}

// Options configure New.
type Options struct {
	// Logs is where the log is exported; nil exports nothing (Handler
	// then returns the stdout handler as it is).
	Logs *LogExport
	// Traces is where spans are exported; nil turns tracing off (Tracer
	// is then nil).
	Traces *TraceExport
	// Version is herald's version: the resource's service.version and the
	// instrumentation scope's version.
	Version string
	// Env holds "KEY=value" entries (os.Environ()) from which the
	// resource takes k8s.namespace.name (K8S_NAMESPACE_NAME) and
	// k8s.pod.name (K8S_POD_NAME, else HOSTNAME), as aviso-server does.
	// The OpenTelemetry SDK's own variables (OTEL_SERVICE_NAME,
	// OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS, ...) are read
	// from the process environment, and win over these.
	Env []string
	// Diagnostics receives the export's own problems (failed batches,
	// recovery). It must not be a logger whose records are exported:
	// pass the stdout logger. nil discards them.
	Diagnostics *slog.Logger
	// MaxQueueSize bounds the records waiting for export (default 2048,
	// as aviso-server); when it is full the oldest are dropped.
	MaxQueueSize int
	// ExportInterval is the longest a record waits before its batch is
	// exported (default 1 s); a full batch (512 records) goes at once.
	ExportInterval time.Duration
	// ExportTimeout bounds one batch's export (default 10 s).
	ExportTimeout time.Duration
}

// Telemetry is herald's OpenTelemetry pipeline. Create it with New and
// call Shutdown when the process ends; it is safe for concurrent use.
type Telemetry struct {
	logs       *sdklog.LoggerProvider // nil when the log is not exported
	tracer     *Tracer                // nil when tracing is off
	spans      *spanQueue             // nil when tracing is off
	version    string
	failures   atomic.Uint64
	suppressed atomic.Uint64
}

// New builds the pipeline of opts. Nothing is dialled: the exporters
// connect when they first export, so a collector that is down does not
// delay startup.
func New(ctx context.Context, opts Options) (*Telemetry, error) {
	t := &Telemetry{version: opts.Version}
	if opts.Traces != nil {
		if err := newTracer(ctx, t, *opts.Traces, opts); err != nil {
			return nil, err
		}
	}
	if opts.Logs == nil {
		return t, nil
	}
	res, err := newResource(ctx, opts)
	if err != nil {
		return nil, err
	}
	exp, err := newLogExporter(ctx, *opts.Logs, opts.ExportTimeout)
	if err != nil {
		return nil, err
	}
	diag := opts.Diagnostics
	if diag == nil {
		diag = slog.New(slog.DiscardHandler)
	}
	metered := &meteredExporter{next: exp, failed: func() { t.failures.Add(1) }, log: diag, target: opts.Logs.URL, now: time.Now}
	var bopts []sdklog.BatchProcessorOption
	if opts.MaxQueueSize > 0 {
		bopts = append(bopts, sdklog.WithMaxQueueSize(opts.MaxQueueSize))
	}
	if opts.ExportInterval > 0 {
		bopts = append(bopts, sdklog.WithExportInterval(opts.ExportInterval))
	}
	batch := sdklog.NewBatchProcessor(metered, bopts...)
	guard := &redactor{next: batch, suppressed: func() { t.suppressed.Add(1) }}
	t.logs = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(guard))
	return t, nil
}

// newResource describes the process as aviso-server does (service name
// and version, Kubernetes namespace and pod), merged under the
// environment's OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func newResource(ctx context.Context, opts Options) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{
		attribute.String("service.name", ServiceName),
		attribute.String("service.version", opts.Version),
	}
	if ns, ok := lookupEnv(opts.Env, "K8S_NAMESPACE_NAME"); ok {
		attrs = append(attrs, attribute.String("k8s.namespace.name", ns))
	}
	pod, ok := lookupEnv(opts.Env, "K8S_POD_NAME")
	if !ok {
		pod, ok = lookupEnv(opts.Env, "HOSTNAME")
	}
	if ok {
		attrs = append(attrs, attribute.String("k8s.pod.name", pod))
	}
	env, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && env == nil {
		return nil, fmt.Errorf("otlp: resource from the environment: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(attrs...), env)
	if err != nil {
		return nil, fmt.Errorf("otlp: resource: %w", err)
	}
	return res, nil
}

// lookupEnv returns the value of the last entry named key.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if name, value, ok := strings.Cut(env[i], "="); ok && name == key {
			return value, true
		}
	}
	return "", false
}

// Exporting reports whether the log is exported.
func (t *Telemetry) Exporting() bool { return t != nil && t.logs != nil }

// Handler returns the handler of herald's log: stdout alone when the log
// is not exported; else stdout and the export, both at level (records
// below it go to neither). The exported records come from the same
// slog.Record as stdout's, through the log/slog bridge: the message is
// the body, the level the severity, the attributes (groups as maps) the
// attributes.
func (t *Telemetry) Handler(stdout slog.Handler, level slog.Leveler) slog.Handler {
	if !t.Exporting() {
		return stdout
	}
	exp := otelslog.NewHandler(scopeName, otelslog.WithLoggerProvider(t.logs), otelslog.WithVersion(t.version))
	return &fanout{handlers: [2]slog.Handler{stdout, exp}, level: level}
}

// ForceFlush exports the records and the spans waiting in the queues.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	var errs [2]error
	if t != nil && t.spans != nil {
		errs[0] = t.spans.ForceFlush(ctx)
	}
	if t.Exporting() {
		errs[1] = t.logs.ForceFlush(ctx)
	}
	return errors.Join(errs[0], errs[1])
}

// Shutdown exports the records and spans still queued and stops the
// exporters, giving up at ctx's deadline. Records logged afterwards go
// to stdout only; spans ended afterwards are dropped.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs [2]error
	if t != nil && t.spans != nil {
		if err := t.spans.Shutdown(ctx); err != nil {
			errs[0] = fmt.Errorf("tracing: flush on shutdown: %w", err)
		}
	}
	if t.Exporting() {
		if err := t.logs.Shutdown(ctx); err != nil {
			errs[1] = fmt.Errorf("logging.otlp: flush on shutdown: %w", err)
		}
	}
	return errors.Join(errs[0], errs[1])
}

// OTLPExportFailures is the number of log batches the collector did not
// accept (aviso_otlp_export_failures_total).
func (t *Telemetry) OTLPExportFailures() uint64 {
	if t == nil {
		return 0
	}
	return t.failures.Load()
}

// OTLPSuppressedLogRecords is the number of log records kept out of the
// export because they carried a secret
// (aviso_otlp_suppressed_log_records_total).
func (t *Telemetry) OTLPSuppressedLogRecords() uint64 {
	if t == nil {
		return 0
	}
	return t.suppressed.Load()
}

// fanout sends each record to every handler, at one level.
type fanout struct {
	handlers [2]slog.Handler
	level    slog.Leveler
}

// Enabled implements slog.Handler.
func (f *fanout) Enabled(_ context.Context, l slog.Level) bool {
	return l >= f.level.Level()
}

// Handle implements slog.Handler.
func (f *fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs [2]error
	for i, h := range f.handlers {
		errs[i] = h.Handle(ctx, r)
	}
	return errors.Join(errs[0], errs[1])
}

// WithAttrs implements slog.Handler.
func (f *fanout) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &fanout{handlers: [2]slog.Handler{f.handlers[0].WithAttrs(attrs), f.handlers[1].WithAttrs(attrs)}, level: f.level}
}

// WithGroup implements slog.Handler.
func (f *fanout) WithGroup(name string) slog.Handler {
	return &fanout{handlers: [2]slog.Handler{f.handlers[0].WithGroup(name), f.handlers[1].WithGroup(name)}, level: f.level}
}
