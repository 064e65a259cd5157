package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// failureReport is how often, while exports keep failing, a failure is
// logged again (with the count since the last line).
const failureReport = time.Minute

// newLogExporter builds the OTLP exporter of e. The URL was checked by
// the configuration, but the exporters keep their default endpoint
// (localhost) on a URL they cannot parse, so it is checked again here.
// Retries are off, as in aviso-server: a batch the collector refuses is
// counted and dropped, and the next one is tried at its time.
func newLogExporter(ctx context.Context, e LogExport, timeout time.Duration) (sdklog.Exporter, error) {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("logging.otlp: endpoint %q is not an http(s) URL with a host", e.URL)
	}
	var exp sdklog.Exporter
	switch e.Protocol {
	case ProtocolGRPC:
		opts := []otlploggrpc.Option{otlploggrpc.WithEndpointURL(e.URL), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false})}
		if timeout > 0 {
			opts = append(opts, otlploggrpc.WithTimeout(timeout))
		}
		exp, err = otlploggrpc.New(ctx, opts...)
	case ProtocolHTTP:
		opts := []otlploghttp.Option{otlploghttp.WithEndpointURL(e.URL), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false})}
		if timeout > 0 {
			opts = append(opts, otlploghttp.WithTimeout(timeout))
		}
		exp, err = otlploghttp.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("logging.otlp: protocol %q: use %q or %q", e.Protocol, ProtocolGRPC, ProtocolHTTP)
	}
	if err != nil {
		return nil, fmt.Errorf("logging.otlp: build the %s exporter for %s: %w", e.Protocol, e.URL, err)
	}
	return exp, nil
}

// meteredExporter counts the batches the collector does not accept
// (failed), and says so on stdout: the first failure at once, then one
// line a minute while they go on (with how many failed since), and one
// line when a batch goes through again. It returns nil even for a
// failed batch, since it has reported it: the batch processor would
// otherwise hand the error to OpenTelemetry's global error handler,
// which writes to stderr outside herald's log.
type meteredExporter struct {
	next   sdklog.Exporter
	failed func()
	log    *slog.Logger
	target string
	now    func() time.Time

	mu       sync.Mutex
	failing  bool
	reported time.Time // the last failure line
	since    int       // failures not yet in a line
	first    time.Time // the first failure of the current run
}

// Export implements sdklog.Exporter.
func (m *meteredExporter) Export(ctx context.Context, records []sdklog.Record) error {
	err := m.next.Export(ctx, records)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if err != nil {
		m.failed()
		m.since++
		switch {
		case !m.failing:
			m.failing, m.first, m.reported, m.since = true, now, now, 0
			m.log.Warn("OTLP log export failed; the records of the batch are dropped (stdout has them)",
				"endpoint", m.target, "records", len(records), "error", err.Error())
		case now.Sub(m.reported) >= failureReport:
			m.log.Warn("OTLP log export still failing", "endpoint", m.target, "failed_batches", m.since,
				"failing_for", now.Sub(m.first).Round(time.Second).String(), "error", err.Error())
			m.reported, m.since = now, 0
		}
		return nil
	}
	if m.failing {
		m.log.Info("OTLP log export recovered", "endpoint", m.target, "failed_for", now.Sub(m.first).Round(time.Millisecond).String())
		m.failing, m.since = false, 0
	}
	return nil
}

// Shutdown implements sdklog.Exporter.
func (m *meteredExporter) Shutdown(ctx context.Context) error { return m.next.Shutdown(ctx) }

// ForceFlush implements sdklog.Exporter.
func (m *meteredExporter) ForceFlush(ctx context.Context) error { return m.next.ForceFlush(ctx) }
