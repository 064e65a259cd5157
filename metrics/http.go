package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
)

// Route labels that are not a route's pattern.
const (
	// RouteUnmatched labels a request no route serves (404, 405).
	RouteUnmatched = "unmatched"
	// RouteError labels a request whose handler panicked.
	RouteError = "error"
)

// methodIndex returns the index in methods of a request method's label
// (the last, "other", for a non-standard one).
func methodIndex(method string) int {
	for i, m := range methods[:len(methods)-1] {
		if m == method {
			return i
		}
	}
	return len(methods) - 1
}

// Middleware records the request metrics of the API listener
// (aviso_http_requests_total, aviso_http_request_duration_seconds,
// aviso_http_requests_in_flight). It must be the outermost middleware of
// a chi router: it reads the matched route from chi's routing context.
// A request counts when its response headers are written (for a stream
// or a session, when it is set up), and is in flight until then.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := methodIndex(r.Method)
		rw := &recorder{ResponseWriter: w, m: m, r: r, method: i, start: time.Now()}
		m.inFlight[i].Inc()
		defer rw.finish()
		next.ServeHTTP(rw, r)
	})
}

// recorder records one request when its headers are written.
type recorder struct {
	http.ResponseWriter
	m        *Metrics
	r        *http.Request
	method   int
	start    time.Time
	done     bool
	panicked bool
}

// WriteHeader records the request at its final status (101 included;
// other 1xx are informational).
func (rw *recorder) WriteHeader(code int) {
	if !rw.done && (code >= 200 || code == http.StatusSwitchingProtocols) {
		rw.record(code)
	}
	rw.ResponseWriter.WriteHeader(code)
}

// Write records the request at 200 when nothing was written before.
func (rw *recorder) Write(b []byte) (int, error) {
	if !rw.done {
		rw.record(http.StatusOK)
	}
	return rw.ResponseWriter.Write(b)
}

// Unwrap returns the underlying writer (http.ResponseController, the
// WebSocket upgrade's hijack).
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// RouteError marks a request whose handler panicked (package api's
// recoverer calls it before answering 500).
func (rw *recorder) RouteError() { rw.panicked = true }

// finish records a request that wrote nothing (200) or that panicked
// through (500, route error).
func (rw *recorder) finish() {
	if rec := recover(); rec != nil {
		if !rw.done {
			rw.panicked = true
			rw.record(http.StatusInternalServerError)
		}
		panic(rec)
	}
	if !rw.done {
		rw.record(http.StatusOK)
	}
}

func (rw *recorder) record(code int) {
	rw.done = true
	m := rw.m
	s := m.requestSeries(rw.route(), rw.method, code)
	s.count.Inc()
	s.duration.Observe(time.Since(rw.start).Seconds())
	m.inFlight[rw.method].Dec()
}

// requestKey names the series of one route, method and status.
type requestKey struct {
	route  string
	method int
	status int
}

// requestSeries are the counter and the histogram of one requestKey.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// requestSeries returns the series of a route, method and status, cached
// (the label sets are bounded: routes, methods and statuses).
func (m *Metrics) requestSeries(route string, method, status int) *requestSeries {
	k := requestKey{route, method, status}
	if v, ok := m.requests.Load(k); ok {
		return v.(*requestSeries)
	}
	s := &requestSeries{
		count:    m.httpRequests.WithLabelValues(route, methods[method], m.statusLabel(status)),
		duration: m.httpDuration.WithLabelValues(route, methods[method]),
	}
	v, _ := m.requests.LoadOrStore(k, s)
	return v.(*requestSeries)
}

// routeKey is a chain of chi patterns (a router and a sub-router).
type routeKey struct{ a, b string }

// route is the request's route label: the matched pattern (the patterns
// of the routers it went through, joined as chi does), RouteUnmatched
// when no route matched (a chain that ends in a mount's "/*"), or
// RouteError.
func (rw *recorder) route() string {
	if rw.panicked {
		return RouteError
	}
	rctx := chi.RouteContext(rw.r.Context())
	if rctx == nil || len(rctx.RoutePatterns) == 0 {
		return RouteUnmatched
	}
	ps := rctx.RoutePatterns
	var key routeKey
	switch len(ps) {
	case 1:
		key.a = ps[0]
	case 2:
		key.a, key.b = ps[0], ps[1]
	default:
		return joinRoute(ps)
	}
	if v, ok := rw.m.routes.Load(key); ok {
		return v.(string)
	}
	label := joinRoute(ps)
	rw.m.routes.Store(key, label)
	return label
}

// joinRoute joins a chain of chi patterns into one route pattern.
func joinRoute(ps []string) string {
	p := strings.Join(ps, "")
	for strings.Contains(p, "/*/") {
		p = strings.ReplaceAll(p, "/*/", "/")
	}
	if strings.HasSuffix(p, "*") {
		return RouteUnmatched
	}
	return p
}

// statusLabel is the label of a status code, without allocating for the
// valid ones.
func (m *Metrics) statusLabel(code int) string {
	if code >= 100 && code < 100+len(m.status) {
		return m.status[code-100]
	}
	return strconv.Itoa(code)
}

// Server serves /metrics on its own listener. Create it with Serve.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// Log receives the listener's errors; nil discards them.
	Log *slog.Logger
	// Pprof also serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/ (metrics.pprof).
	Pprof bool
}

// Serve serves the registry on ln at /metrics, and with opts.Pprof the
// profiles at /debug/pprof/ (anything else is a 404); every response
// carries a fresh X-Request-ID. It returns at once; stop it with
// Shutdown.
func (m *Metrics) Serve(ln net.Listener, opts ServeOptions) *Server {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	if opts.Pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-ID", uuid.NewString())
		mux.ServeHTTP(w, r)
	})
	s := &Server{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "address", ln.Addr().String(), "error", err)
		}
	}()
	return s
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops the listener, waiting for scrapes in progress until ctx
// ends (then closing them).
func (s *Server) Shutdown(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}
