package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/metrics"
	"github.com/herald-gateway/herald/sse"
	"github.com/herald-gateway/herald/tracing"
)

// Options configure a Server.
type Options struct {
	// ConfigPath is the file a reload reads again; empty disables reload
	// (POST /api/v1/admin/reload then answers 501).
	ConfigPath string
	// Env holds the "KEY=value" environment whose overrides a reload
	// applies again (os.Environ() for the herald command).
	Env []string
	// Logger receives every log line; nil discards them.
	Logger *slog.Logger
	// LogLevel, when not nil, is set to the configured level at start and
	// after every reload (the level of Logger's handler).
	LogLevel *slog.LevelVar
	// Version is the server version (homepage, logs).
	Version string
	// Engine, when not nil, is used instead of building the configured
	// backend (tests and tools that open their own); the Server then does
	// not close it.
	Engine engine.Engine
	// HTTPClient calls auth-o-tron and ECPDS; nil builds default ones.
	HTTPClient *http.Client
	// AuthNow and ECPDSNow are the clocks of token verification and of the
	// ECPDS cache; nil means time.Now.
	AuthNow, ECPDSNow func() time.Time
	// StreamWriteTimeout bounds one SSE write (default 30 s).
	StreamWriteTimeout time.Duration
	// Runtime, when not nil, is the Runtime of the configuration already
	// built (main validates the configuration before it binds the port);
	// New then does not build it again (with metrics enabled it builds
	// it again, with the metrics' observers).
	Runtime *Runtime
	// MetricsListener is the metrics listener main bound before the
	// backend started (ListenMetrics); with metrics enabled and no
	// listener, New binds metrics.host:metrics.port itself, before the
	// backend starts.
	MetricsListener net.Listener
	// OTLP reports the counts of the log's OTLP export (main's
	// tracing.Telemetry) to the metrics; nil leaves them at zero.
	OTLP metrics.OTLPCounts
	// Tracer records the spans of requests, notifies and deliveries and
	// carries trace context with notifications (main's
	// tracing.Telemetry.Tracer); nil turns tracing off.
	Tracer *tracing.Tracer
}

// BackendError is a failure of New to start or reach the backend, as
// opposed to a configuration error.
type BackendError struct{ Err error }

// Error implements error.
func (e *BackendError) Error() string { return "backend: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *BackendError) Unwrap() error { return e.Err }

// Server is a running herald: the engine, the handlers, the router and
// the Runtime in force. Create it with New; it is safe for concurrent
// use.
type Server struct {
	opts     Options
	log      *slog.Logger
	eng      engine.Engine
	ownsEng  bool
	h        *handlers.Handlers
	limits   *api.StreamLimiter
	rt       atomic.Pointer[Runtime]
	router   atomic.Pointer[http.Handler]
	reloadMu sync.Mutex // one reload at a time
	// current maps each typed event type to the fingerprint of the
	// payload schema last made current in the registry of past schemas
	// (activateSchemas); guarded by reloadMu after New.
	current map[string]string

	// metrics is nil when metrics are disabled; metricsSrv serves them.
	metrics    *metrics.Metrics
	metricsSrv *metrics.Server
}

// New builds herald from a loaded configuration: the Runtime first (so
// that every configuration error is reported before anything starts),
// then the engine (the embedded nats-server starts here unless
// opts.Engine is set), the handlers and the router.
func New(ctx context.Context, cfg *configs.Config, opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: log, eng: opts.Engine}
	if cfg.Metrics.Enabled {
		s.metrics = newMetrics(cfg, opts.Version, opts.OTLP)
	}
	rt := opts.Runtime
	if rt == nil || s.metrics != nil {
		var err error
		if rt, err = NewRuntime(cfg, s.runtimeOptions(), nil); err != nil {
			if opts.MetricsListener != nil {
				_ = opts.MetricsListener.Close()
			}
			return nil, err
		}
	}
	if opts.LogLevel != nil {
		opts.LogLevel.Set(rt.LogLevel)
	}
	if s.metrics != nil {
		// Bound before the backend starts: a port in use fails first.
		if err := s.serveMetrics(cfg, opts.MetricsListener); err != nil {
			return nil, err
		}
	}
	if s.eng == nil {
		eng, err := NewEngine(ctx, cfg, log, s.backendObserver(cfg))
		if err != nil {
			s.stopMetrics()
			return nil, &BackendError{Err: err}
		}
		s.eng, s.ownsEng = eng, true
	}
	hopts := handlers.Options{Settings: rt.Handlers, Engine: s.eng, StreamWriteTimeout: opts.StreamWriteTimeout,
		Version: opts.Version, Logger: log}
	if opts.Tracer != nil {
		kind := cfg.NotificationBackend.Kind
		hopts.Tracing = engine.Tracing{Tracer: opts.Tracer, Backend: kind, Remote: kind == configs.BackendJetStream}
	}
	if s.metrics != nil {
		hopts.Observer = handlersObserver{s.metrics}
	}
	s.h = handlers.New(hopts)
	s.limits = api.NewStreamLimiter(rt.Limits)
	s.loadHistory(ctx, rt)
	s.activateSchemas(ctx, rt)
	s.install(rt)
	s.describe(rt)
	return s, nil
}

// backendObserver is the observer of the engine New builds (nil without
// metrics).
func (s *Server) backendObserver(cfg *configs.Config) jetstream.Observer {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.Backend(cfg.NotificationBackend.Kind)
}

// runtimeOptions are the RuntimeOptions of the server: its options' and
// the metrics' observers.
func (s *Server) runtimeOptions() RuntimeOptions {
	ro := s.opts.runtimeOptions(s.log)
	if s.metrics != nil {
		ro.AuthObserver, ro.ECPDSObserver = s.metrics, s.metrics
	}
	return ro
}

// runtimeOptions are the RuntimeOptions of the server's options.
func (o *Options) runtimeOptions(log *slog.Logger) RuntimeOptions {
	return RuntimeOptions{Logger: log, HTTPClient: o.HTTPClient, AuthNow: o.AuthNow, ECPDSNow: o.ECPDSNow}
}

// NewEngine builds the configured backend: the in-memory engine, or the
// JetStream engine (embedded nats-server, or an external one by URL).
// obs, when not nil, is told the engine's operations (metrics).
func NewEngine(ctx context.Context, cfg *configs.Config, log *slog.Logger, obs jetstream.Observer) (engine.Engine, error) {
	switch cfg.NotificationBackend.Kind {
	case configs.BackendInMemory:
		m := cfg.NotificationBackend.InMemory
		mo := engine.MemoryOptions{MaxHistoryPerTopic: m.MaxHistoryPerTopic, MaxTopics: m.MaxTopics}
		if obs != nil {
			mo.Observer = obs
		}
		return engine.NewMemory(mo), nil
	case configs.BackendJetStream:
		opts, err := JetStreamOptions(cfg)
		if err != nil {
			return nil, err
		}
		opts.Logger = log.With("component", "jetstream")
		opts.Observer = obs
		return jetstream.Open(ctx, opts)
	default:
		return nil, fmt.Errorf("notification_backend.kind %q is not available in this build", cfg.NotificationBackend.Kind)
	}
}

// install makes rt the Runtime in force: the router of its
// authentication and CORS, the limits, the logging level (the handlers'
// settings are applied by the caller where order matters).
func (s *Server) install(rt *Runtime) {
	s.limits.Configure(rt.Limits)
	ao := api.Options{Handlers: s.h, Logger: s.log, Auth: rt.Auth, CORS: rt.CORS, Limits: s.limits, Reload: s.AdminReload, Tracer: s.opts.Tracer}
	if s.metrics != nil {
		ao.Metrics = s.metrics.Middleware
	}
	var h http.Handler = api.NewRouter(ao)
	s.router.Store(&h)
	s.rt.Store(rt)
	if s.opts.LogLevel != nil {
		s.opts.LogLevel.Set(rt.LogLevel)
	}
}

// ServeHTTP serves a request with the router in force.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.router.Load()).ServeHTTP(w, r)
}

// Runtime returns the Runtime in force.
func (s *Server) Runtime() *Runtime { return s.rt.Load() }

// Engine returns the engine.
func (s *Server) Engine() engine.Engine { return s.eng }

// Handlers returns the handlers.
func (s *Server) Handlers() *handlers.Handlers { return s.h }

// Limits returns the concurrent-stream limiter.
func (s *Server) Limits() *api.StreamLimiter { return s.limits }

// HTTPServer returns an http.Server serving herald with the configured
// header timeout; stream connections get their send buffers capped
// (sse.ConnContext).
func (s *Server) HTTPServer() *http.Server {
	cfg := s.Runtime().Config
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: time.Duration(cfg.Application.ReadHeaderTimeoutSec) * time.Second,
		IdleTimeout:       2 * time.Minute,
		ConnContext:       sse.ConnContext,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// engineShutdown is implemented by engines whose Close can be bounded by
// a deadline (the JetStream engine stopping its embedded server).
type engineShutdown interface {
	Shutdown(ctx context.Context) error
}

// Drain stops herald within grace, the backend included: open streams
// are told to end (server_shutdown), open requests get the grace minus
// the time reserved for the backend, connections still open then are
// closed, and the backend gets what is left. srv may be nil (nothing to
// drain but streams and the backend).
func (s *Server) Drain(srv *http.Server, grace time.Duration) {
	deadline := time.Now().Add(grace)
	s.h.Shutdown()
	if srv != nil {
		// The backend needs a moment to stop (the embedded nats-server
		// flushes its store): keep a quarter of the grace for it, at most
		// 2 s.
		reserve := min(grace/4, 2*time.Second)
		sctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-reserve))
		err := srv.Shutdown(sctx)
		cancel()
		if err != nil {
			s.log.Warn("graceful drain incomplete; closing remaining connections", "error", err)
			_ = srv.Close()
		}
	}
	s.closeEngine(deadline)
	if rt := s.Runtime(); rt.ECPDS != nil {
		rt.ECPDS.Close()
	}
	s.stopMetrics()
}

// Close ends every stream and closes the backend it built (tests).
func (s *Server) Close() {
	s.h.Shutdown()
	s.closeEngine(time.Now().Add(10 * time.Second))
	if rt := s.Runtime(); rt.ECPDS != nil {
		rt.ECPDS.Close()
	}
	s.stopMetrics()
}

func (s *Server) closeEngine(deadline time.Time) {
	if !s.ownsEng {
		return
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var err error
	if es, ok := s.eng.(engineShutdown); ok {
		err = es.Shutdown(ctx)
	} else {
		err = s.eng.Close()
	}
	if err != nil {
		s.log.Warn("backend shutdown incomplete", "error", err)
	}
}
