package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/metrics"
	"github.com/herald-gateway/herald/stream"
)

// ListenMetrics binds the metrics listener of cfg (metrics.host,
// metrics.port), or returns nil when metrics are disabled. main binds it
// with the API port, before the backend starts, so that a port in use
// fails early.
func ListenMetrics(cfg *configs.Config) (net.Listener, error) {
	if !cfg.Metrics.Enabled {
		return nil, nil
	}
	addr := net.JoinHostPort(cfg.Metrics.Host, strconv.Itoa(cfg.Metrics.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener on %s (metrics.host, metrics.port): %w", addr, err)
	}
	return ln, nil
}

// handlersObserver adapts the metrics to handlers.Observer (the metrics
// package does not import handlers: its Stream takes plain labels).
type handlersObserver struct{ *metrics.Metrics }

// Stream implements handlers.StreamObservers.
func (o handlersObserver) Stream(l handlers.StreamLabels) handlers.StreamObserver {
	return o.Metrics.Stream(l.Transport, l.Route, l.EventType, l.User)
}

// newMetrics creates the metrics of a server whose configuration enables
// them, reading the OTLP export's counts from otlp (nil: zero), and
// the span export's when otlp has them (tracing.Telemetry does).
func newMetrics(cfg *configs.Config, version string, otlp metrics.OTLPCounts) *metrics.Metrics {
	traces, _ := otlp.(metrics.TraceCounts)
	return metrics.New(metrics.Options{Version: version, Backend: cfg.NotificationBackend.Kind, EndReasons: stream.ReasonNames(), OTLP: otlp, Traces: traces})
}

// describe creates the series of a Runtime's event types, codecs and
// ECPDS servers at zero (at start and after each reload).
func (s *Server) describe(rt *Runtime) {
	if s.metrics == nil {
		return
	}
	s.metrics.EventTypes(rt.Registry.Names())
	s.metrics.Codecs(codecNames(rt.Codecs))
	if rt.ECPDS != nil {
		s.metrics.ECPDSServers(rt.ECPDS.Servers())
	}
}

// serveMetrics starts the metrics listener (binding it when main did
// not).
func (s *Server) serveMetrics(cfg *configs.Config, ln net.Listener) error {
	if ln == nil {
		var err error
		if ln, err = ListenMetrics(cfg); err != nil {
			return err
		}
	}
	s.metricsSrv = s.metrics.Serve(ln, metrics.ServeOptions{Log: s.log.With("component", "metrics"), Pprof: cfg.Metrics.Pprof})
	s.metrics.ECPDSCacheSize(func() int {
		if e := s.Runtime().ECPDS; e != nil {
			return e.Stats().Entries
		}
		return 0
	})
	s.log.Info("metrics listening", "address", ln.Addr().String(), "path", "/metrics", "pprof", cfg.Metrics.Pprof)
	return nil
}

// MetricsAddr returns the address of the metrics listener (nil when
// metrics are disabled).
func (s *Server) MetricsAddr() net.Addr {
	if s.metricsSrv == nil {
		return nil
	}
	return s.metricsSrv.Addr()
}

// Metrics returns the server's metrics (nil when disabled).
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// stopMetrics stops the metrics listener.
func (s *Server) stopMetrics() {
	if s.metricsSrv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.metricsSrv.Shutdown(ctx)
}

// codecNames lists the codecs of a catalog.
func codecNames(cat *catalog.Catalog) []string {
	if cat == nil {
		return nil
	}
	var out []string
	for _, k := range cat.Keys() {
		if k.Kind == ddl.KindCodec {
			out = append(out, k.Name)
		}
	}
	return out
}
