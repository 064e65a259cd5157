// Package metrics owns herald's Prometheus metrics: one registry per
// server holding aviso-server's series (docs/operations.md) under their
// names and labels and herald's own (herald_*), the Go and process
// collectors, the HTTP request middleware, and the listener that serves
// /metrics. The packages that do the work report through small observer
// interfaces they define themselves (engine.OpObserver,
// jetstream.Observer, stream.Observer, handlers.Observer,
// auth.Observer, ecpds.Observer) with no-op defaults; Metrics
// implements them. The log's OTLP export, which starts before the
// metrics, keeps its own counts, which Metrics reads (OTLPCounts).
// Package server wires it.
//
// It holds no global state: every series lives in the Metrics of one
// server. It imports no herald package but engine (the operation
// names), so that everything above may report to it; engine, jetstream
// and stream never import it, nor Prometheus.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/herald-gateway/herald/engine"
)

// Options configure a Metrics.
type Options struct {
	// Version is the server version (aviso_build_info's label).
	Version string
	// Backend is the notification backend's kind ("in_memory",
	// "jetstream"): its operation series are created at zero.
	Backend string
	// EndReasons are the names of every reason a stream can end with
	// (stream.ReasonNames): herald_stream_ends_total starts at zero for
	// each.
	EndReasons []string
	// OTLP reports the counts of the log's OTLP export
	// (tracing.Telemetry); nil leaves its two series at zero. They exist
	// either way, as in aviso-server, whether logging.otlp is on or not.
	OTLP OTLPCounts
	// Traces reports the counts of the span export (tracing.Telemetry);
	// nil leaves its series at zero. They exist whether tracing is on or
	// not.
	Traces TraceCounts
}

// TraceCounts are the counts of the span export, read when scraped.
type TraceCounts interface {
	// TraceSpansDropped is the number of finished spans dropped because
	// the export queue was full.
	TraceSpansDropped() uint64
	// TraceExportFailures is the number of span batches the collector
	// did not accept.
	TraceExportFailures() uint64
	// TraceSpansExported is the number of spans the collector accepted.
	TraceSpansExported() uint64
}

// OTLPCounts are the counts of the log's OTLP export. The pipeline that
// keeps them starts before the metrics (it carries the log from the
// first line), so the metrics read them when scraped rather than being
// told each event.
type OTLPCounts interface {
	// OTLPExportFailures is the number of log batches the collector did
	// not accept.
	OTLPExportFailures() uint64
	// OTLPSuppressedLogRecords is the number of log records kept out of
	// the export because they carried a secret.
	OTLPSuppressedLogRecords() uint64
}

// Label values the metrics pre-create.
var (
	methods       = [...]string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "CONNECT", "TRACE", "other"}
	authModes     = [...]string{"direct", "trusted_proxy"}
	authOutcomes  = [...]string{"success", "unauthorized", "forbidden", "service_unavailable"}
	ecpdsDecision = [...]string{"allow", "deny_destination", "deny_match_key_missing", "unavailable", "admin_bypass", "error"}
	ecpdsFetch    = [...]string{"success", "http_401", "http_403", "http_4xx", "http_5xx", "invalid_response", "unreachable"}
	transports    = [...]string{"sse", "websocket"}
	sseRoutes     = [...]string{"/api/v1/watch", "/api/v1/replay"}
	reloadResults = [...]string{"ok", "refused", "error"}
)

// Reload outcomes (herald_reloads_total).
const (
	ReloadOK      = "ok"
	ReloadRefused = "refused"
	ReloadError   = "error"
)

// Metrics is the registry of one herald server and every series in it.
// Create it with New; it is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	// Aviso's series (aviso-server's metrics, docs/operations.md).
	buildInfo      *prometheus.GaugeVec
	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	httpInFlight   *prometheus.GaugeVec
	backendOps     *prometheus.CounterVec
	backendOpTime  *prometheus.HistogramVec
	notifications  *prometheus.CounterVec
	sseActive      *prometheus.GaugeVec
	sseTotal       *prometheus.CounterVec
	sseUsers       *prometheus.GaugeVec
	sseSent        *prometheus.CounterVec
	sseErrors      *prometheus.CounterVec
	sseDuration    *prometheus.HistogramVec
	authRequests   *prometheus.CounterVec
	ecpdsHits      prometheus.Counter
	ecpdsMisses    prometheus.Counter
	ecpdsDecisions *prometheus.CounterVec
	ecpdsFetches   *prometheus.CounterVec

	// herald's own.
	accepted      *prometheus.CounterVec
	refused       *prometheus.CounterVec
	publishTime   *prometheus.HistogramVec
	watchersOpen  *prometheus.GaugeVec
	subsOpen      *prometheus.GaugeVec
	sessionsOpen  *prometheus.GaugeVec
	liveDelivered *prometheus.CounterVec
	streamEnds    *prometheus.CounterVec
	droppedRows   prometheus.Counter
	historyPages  *prometheus.CounterVec
	reconnects    prometheus.Counter
	gaps          prometheus.Counter
	reloads       *prometheus.CounterVec
	codecErrors   *prometheus.CounterVec
	codecBusy     *prometheus.CounterVec
	serverFetches *prometheus.CounterVec
	serverFetchT  *prometheus.HistogramVec

	// inFlight holds the in-flight gauge of each method label, in the
	// order of methods.
	inFlight [len(methods)]prometheus.Gauge
	// sessionsWS is herald_sessions_open{transport="websocket"}.
	sessionsWS prometheus.Gauge
	// status holds the labels of the status codes 100 to 599.
	status [500]string
	// routes caches the route label of each chain of chi patterns;
	// requests the request series by route, method and status; notified
	// the accepted-notification series by transport and event type.
	routes   sync.Map // routeKey → string
	requests sync.Map // requestKey → *requestSeries
	notified sync.Map // notifyKey → *notifySeries

	usersMu sync.Mutex
	users   map[string]map[string]int // route → user → open SSE streams

	cacheSizeMu sync.Mutex
	cacheSize   func() int
}

// New returns the metrics of one server with every bounded label set at
// zero.
func New(opts Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), users: map[string]map[string]int{}}
	for i := range m.status {
		m.status[i] = strconv.Itoa(100 + i)
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(g)
		return g
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	plain := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		m.reg.MustRegister(c)
		return c
	}

	m.buildInfo = gauge("aviso_build_info", "Build information: constant 1 with the server version as a label.", "version")
	m.buildInfo.WithLabelValues(opts.Version).Set(1)
	m.httpRequests = counter("aviso_http_requests_total",
		"HTTP requests on the API listener by matched route pattern (unmatched: no route; error: the handler panicked), method (other: non-standard) and status code.",
		"route", "method", "status_code")
	m.httpDuration = histogram("aviso_http_request_duration_seconds",
		"Time from a request's arrival to its response headers, by route and method; for watch, replay and session streams the setup time.",
		prometheus.DefBuckets, "route", "method")
	m.httpInFlight = gauge("aviso_http_requests_in_flight", "HTTP requests whose response headers are not sent yet, by method.", "method")
	for i, meth := range methods {
		m.inFlight[i] = m.httpInFlight.WithLabelValues(meth)
	}
	m.backendOps = counter("aviso_backend_operations_total",
		"Notification backend operations by backend, operation (publish, get_batch, wipe_stream, wipe_all, delete_message) and outcome (ok, error).",
		"backend", "operation", "outcome")
	m.backendOpTime = histogram("aviso_backend_operation_duration_seconds",
		"Caller-observed duration of notification backend operations (labels of aviso_backend_operations_total).",
		prometheus.DefBuckets, "backend", "operation", "outcome")
	if opts.Backend != "" {
		for _, op := range engine.Ops {
			for _, outcome := range [...]string{"ok", "error"} {
				m.backendOps.WithLabelValues(opts.Backend, op.String(), outcome)
				m.backendOpTime.WithLabelValues(opts.Backend, op.String(), outcome)
			}
		}
	}
	m.notifications = counter("aviso_notifications_total",
		"HTTP notify requests by event type (unknown: refused before its validation passed; generic: schema-less) and status (success, error, rejected: refused by authorisation).",
		"event_type", "status")
	for _, status := range [...]string{"error", "rejected"} {
		m.notifications.WithLabelValues("unknown", status)
	}
	m.sseActive = gauge("aviso_sse_connections_active", "Open SSE watch and replay streams by route and event type.", "route", "event_type")
	m.sseTotal = counter("aviso_sse_connections_total", "SSE watch and replay streams opened, by route and event type.", "route", "event_type")
	m.sseUsers = gauge("aviso_sse_unique_users_active", "Distinct authenticated users with an open SSE stream, by route.", "route")
	for _, route := range sseRoutes {
		m.sseUsers.WithLabelValues(route)
	}
	m.sseSent = counter("aviso_sse_events_sent_total",
		"Notification events written to SSE streams (replay and live; not heartbeats, control or closing events), by route and event type.",
		"route", "event_type")
	m.sseErrors = counter("aviso_sse_stream_errors_total",
		"Error events sent into SSE streams after they started (unrenderable notifications, failed history reads), by route and event type.",
		"route", "event_type")
	m.sseDuration = histogram("aviso_sse_connection_duration_seconds", "Lifetime of SSE streams, observed when they end, by route.",
		[]float64{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400}, "route")
	m.authRequests = counter("aviso_auth_requests_total",
		"Authentication attempts by mode (direct, trusted_proxy) and outcome (success, unauthorized, forbidden, service_unavailable).",
		"mode", "outcome")
	for _, mode := range authModes {
		for _, o := range authOutcomes {
			m.authRequests.WithLabelValues(mode, o)
		}
	}
	m.ecpdsHits = plain("aviso_ecpds_cache_hits_total", "ECPDS destination-list lookups served from the cache.")
	m.ecpdsMisses = plain("aviso_ecpds_cache_misses_total", "ECPDS destination-list lookups not served from the cache (callers that joined a fetch in flight included).")
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aviso_ecpds_cache_size", Help: "Users whose ECPDS destination list is cached."},
		func() float64 {
			m.cacheSizeMu.Lock()
			f := m.cacheSize
			m.cacheSizeMu.Unlock()
			if f == nil {
				return 0
			}
			return float64(f())
		}))
	m.ecpdsDecisions = counter("aviso_ecpds_access_decisions_total",
		"ECPDS access decisions (allow, deny_destination, deny_match_key_missing, unavailable, admin_bypass, error).", "outcome")
	for _, o := range ecpdsDecision {
		m.ecpdsDecisions.WithLabelValues(o)
	}
	m.ecpdsFetches = counter("aviso_ecpds_fetch_total",
		"ECPDS fetches of a user's destination lists (one per fetch however many callers waited for it), by outcome.", "outcome")
	for _, o := range ecpdsFetch {
		m.ecpdsFetches.WithLabelValues(o)
	}

	m.accepted = counter("herald_notifications_accepted_total",
		"Notifications stored, by transport (http, websocket) and event type.", "transport", "event_type")
	m.refused = counter("herald_notifications_refused_total",
		"Notifications refused, by transport (http, websocket), event type (unknown before it was known) and API error code.",
		"transport", "event_type", "code")
	m.publishTime = histogram("herald_publish_duration_seconds",
		"Time from a notify request's arrival to the backend's acknowledgement, for the notifications stored (HTTP and WebSocket notify; not producer batches), by event type.",
		prometheus.DefBuckets, "event_type")
	m.watchersOpen = gauge("herald_watchers_open", "Watch and replay streams running: SSE streams (sse) and session subscriptions (websocket).", "transport")
	m.subsOpen = gauge("herald_session_subscriptions",
		"Open subscriptions, by event type and transport: SSE watch and replay streams (sse) and WebSocket session subscriptions (websocket).",
		"event_type", "transport")
	m.sessionsOpen = gauge("herald_sessions_open", "Client connections carrying streams: SSE streams (sse) and WebSocket sessions (websocket).", "transport")
	m.liveDelivered = counter("herald_live_deliveries_total", "Live notifications handed to a stream's transport, by transport.", "transport")
	m.streamEnds = counter("herald_stream_ends_total",
		"Streams that ended after they opened, by transport and reason (overflow: the watcher could not keep up; lagging, gap, max_duration, ...).",
		"transport", "reason")
	m.historyPages = counter("herald_history_pages_total", "History pages read by streams, by transport.", "transport")
	for _, t := range transports {
		m.watchersOpen.WithLabelValues(t)
		m.sessionsOpen.WithLabelValues(t)
		m.liveDelivered.WithLabelValues(t)
		m.historyPages.WithLabelValues(t)
		for _, r := range opts.EndReasons {
			m.streamEnds.WithLabelValues(t, r)
		}
	}
	m.sessionsWS = m.sessionsOpen.WithLabelValues("websocket")
	m.droppedRows = plain("herald_session_subscription_dropped_rows_total",
		"Events that DROPPING session subscriptions discarded because the client read too slowly (reported to it in dropped frames).")
	m.reconnects = plain("herald_backend_reconnects_total", "Connections to the NATS server re-established (by the client library or by a re-dial).")
	m.gaps = plain("herald_backend_gaps_total", "Live feeds that lost notifications they could not recover and ended their stream's subscriptions (gap).")
	m.reloads = counter("herald_reloads_total",
		"Configuration reloads by outcome: ok, refused (a setting that needs a restart, or a stream change the backend cannot apply), error (an invalid file, a backend failure).",
		"outcome")
	for _, o := range reloadResults {
		m.reloads.WithLabelValues(o)
	}
	m.codecErrors = counter("herald_codec_decode_errors_total", "Payloads a codec could not decode, by codec.", "codec")
	m.codecBusy = counter("herald_codec_busy_total", "Payloads refused because their codec was busy (BUSY), by codec.", "codec")
	m.serverFetches = counter("herald_ecpds_fetches_total",
		"Requests to each ECPDS server, by server and outcome (the outcomes of aviso_ecpds_fetch_total).", "server", "outcome")
	m.serverFetchT = histogram("herald_ecpds_fetch_duration_seconds", "Duration of requests to each ECPDS server.", prometheus.DefBuckets, "server")
	m.otlpCounters(opts.OTLP)
	m.traceCounters(opts.Traces)
	return m
}

// traceCounters registers the series of the span export, read from
// counts when scraped.
func (m *Metrics) traceCounters(counts TraceCounts) {
	read := func(f func(TraceCounts) uint64) func() float64 {
		return func() float64 {
			if counts == nil {
				return 0
			}
			return float64(f(counts))
		}
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "herald_trace_spans_dropped_total",
		Help: "Finished spans dropped because the export queue (tracing.max_queue_size) was full: the collector is slow or down; notifies never wait for it."},
		read(TraceCounts.TraceSpansDropped)))
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "herald_trace_export_failures_total",
		Help: "Failed OTLP span batch exports: each is one batch (up to 512 spans) that the collector did not accept; its spans are dropped."},
		read(TraceCounts.TraceExportFailures)))
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "herald_trace_spans_exported_total",
		Help: "Spans the OTLP collector accepted."},
		read(TraceCounts.TraceSpansExported)))
}

// otlpCounters registers aviso-server's two series of the log's OTLP
// export, read from counts when scraped.
func (m *Metrics) otlpCounters(counts OTLPCounts) {
	read := func(f func(OTLPCounts) uint64) func() float64 {
		return func() float64 {
			if counts == nil {
				return 0
			}
			return float64(f(counts))
		}
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aviso_otlp_export_failures_total",
		Help: "Failed OTLP log batch export attempts: each is one batch (up to 512 records) that the collector did not accept; its records are dropped from the export while stdout stays complete."},
		read(OTLPCounts.OTLPExportFailures)))
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "aviso_otlp_suppressed_log_records_total",
		Help: "Log records withheld from OTLP export by the redaction guard (a sensitive attribute key or a URL with credentials); stdout still has each, with its values redacted."},
		read(OTLPCounts.OTLPSuppressedLogRecords)))
}

// Registry returns the registry (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// EventTypes creates the per-event-type series at zero: the notify
// outcomes (aviso_notifications_total success and error,
// herald_notifications_accepted_total per transport). Call it at start
// and after each reload; it is idempotent.
func (m *Metrics) EventTypes(names []string) {
	for _, n := range names {
		m.notifications.WithLabelValues(n, "success")
		m.notifications.WithLabelValues(n, "error")
		m.accepted.WithLabelValues("http", n)
		m.accepted.WithLabelValues("websocket", n)
		m.publishTime.WithLabelValues(n)
	}
}

// Codecs creates the codec series at zero for each codec name.
func (m *Metrics) Codecs(names []string) {
	for _, n := range names {
		m.codecErrors.WithLabelValues(n)
		m.codecBusy.WithLabelValues(n)
	}
}

// ECPDSServers creates the per-server ECPDS series at zero.
func (m *Metrics) ECPDSServers(servers []string) {
	for _, s := range servers {
		for _, o := range ecpdsFetch {
			m.serverFetches.WithLabelValues(s, o)
		}
		m.serverFetchT.WithLabelValues(s)
	}
}

// ECPDSCacheSize sets the function aviso_ecpds_cache_size reads (the
// cache of the ECPDS client in force; nil: 0).
func (m *Metrics) ECPDSCacheSize(f func() int) {
	m.cacheSizeMu.Lock()
	m.cacheSize = f
	m.cacheSizeMu.Unlock()
}

// Reloaded counts a configuration reload with its outcome (ReloadOK,
// ReloadRefused, ReloadError).
func (m *Metrics) Reloaded(outcome string) { m.reloads.WithLabelValues(outcome).Inc() }

// Notified implements handlers.NotifyObserver.
func (m *Metrics) Notified(transport, eventType, code string, n int, d time.Duration) {
	if n <= 0 {
		return
	}
	if code == "" {
		s := m.notifySeries(transport, eventType)
		s.accepted.Add(float64(n))
		if d > 0 {
			for range n {
				s.publish.Observe(d.Seconds())
			}
		}
		if s.success != nil {
			s.success.Add(float64(n))
		}
		return
	}
	m.refused.WithLabelValues(transport, eventType, code).Add(float64(n))
	if transport != "http" {
		return
	}
	// Aviso's label: the event type once validation passed (a success or
	// a storage failure), else unknown; rejected for authorisation.
	switch code {
	case "NOTIFICATION_STORAGE_FAILED", "SERVICE_UNAVAILABLE":
		m.notifications.WithLabelValues(eventType, "error").Add(float64(n))
	case "UNAUTHORIZED", "FORBIDDEN":
		m.notifications.WithLabelValues("unknown", "rejected").Add(float64(n))
	default:
		m.notifications.WithLabelValues("unknown", "error").Add(float64(n))
	}
}

// notifyKey names the series of accepted notifications.
type notifyKey struct{ transport, eventType string }

// notifySeries are the series an accepted notification counts in (success
// is nil for a transport other than http).
type notifySeries struct {
	accepted, success prometheus.Counter
	publish           prometheus.Observer
}

// notifySeries returns the series of accepted notifications of a
// transport and event type, cached (event types are configured names).
func (m *Metrics) notifySeries(transport, eventType string) *notifySeries {
	k := notifyKey{transport, eventType}
	if v, ok := m.notified.Load(k); ok {
		return v.(*notifySeries)
	}
	s := &notifySeries{accepted: m.accepted.WithLabelValues(transport, eventType), publish: m.publishTime.WithLabelValues(eventType)}
	if transport == "http" {
		s.success = m.notifications.WithLabelValues(eventType, "success")
	}
	v, _ := m.notified.LoadOrStore(k, s)
	return v.(*notifySeries)
}

// SessionOpened implements handlers.SessionObserver.
func (m *Metrics) SessionOpened() { m.sessionsWS.Inc() }

// SessionClosed implements handlers.SessionObserver.
func (m *Metrics) SessionClosed() { m.sessionsWS.Dec() }

// DroppedRows implements handlers.SessionObserver.
func (m *Metrics) DroppedRows(n int) { m.droppedRows.Add(float64(n)) }

// ECPDSDecision implements handlers.ECPDSObserver.
func (m *Metrics) ECPDSDecision(outcome string) { m.ecpdsDecisions.WithLabelValues(outcome).Inc() }

// CodecDecodeError implements handlers.CodecObserver.
func (m *Metrics) CodecDecodeError(codec string) { m.codecErrors.WithLabelValues(codec).Inc() }

// CodecBusy implements handlers.CodecObserver.
func (m *Metrics) CodecBusy(codec string) { m.codecBusy.WithLabelValues(codec).Inc() }

// AuthAttempt implements auth.Observer.
func (m *Metrics) AuthAttempt(mode, outcome string) {
	m.authRequests.WithLabelValues(mode, outcome).Inc()
}

// CacheHit implements ecpds.Observer.
func (m *Metrics) CacheHit() { m.ecpdsHits.Inc() }

// CacheMiss implements ecpds.Observer.
func (m *Metrics) CacheMiss() { m.ecpdsMisses.Inc() }

// Fetched implements ecpds.Observer.
func (m *Metrics) Fetched(outcome string) { m.ecpdsFetches.WithLabelValues(outcome).Inc() }

// ServerFetched implements ecpds.Observer.
func (m *Metrics) ServerFetched(server, outcome string, d time.Duration) {
	m.serverFetches.WithLabelValues(server, outcome).Inc()
	m.serverFetchT.WithLabelValues(server).Observe(d.Seconds())
}

// Backend returns the observer of the engine of kind backend
// (engine.OpObserver and jetstream.Observer).
func (m *Metrics) Backend(backend string) *Backend {
	b := &Backend{m: m}
	for i, op := range engine.Ops {
		for j, outcome := range [...]string{"ok", "error"} {
			b.ops[i][j] = m.backendOps.WithLabelValues(backend, op.String(), outcome)
			b.times[i][j] = m.backendOpTime.WithLabelValues(backend, op.String(), outcome)
		}
	}
	return b
}

// Backend is the observer of one engine: its operations, reconnections
// and gaps.
type Backend struct {
	m     *Metrics
	ops   [len(engine.Ops)][2]prometheus.Counter
	times [len(engine.Ops)][2]prometheus.Observer
}

// BackendOp implements engine.OpObserver.
func (b *Backend) BackendOp(op engine.Op, d time.Duration, err error) {
	if int(op) >= len(b.ops) {
		return
	}
	j := 0
	if err != nil {
		j = 1
	}
	b.ops[op][j].Inc()
	b.times[op][j].Observe(d.Seconds())
}

// Reconnected implements jetstream.Observer.
func (b *Backend) Reconnected() { b.m.reconnects.Inc() }

// Gap implements jetstream.Observer.
func (b *Backend) Gap(string) { b.m.gaps.Inc() }

// Stream returns the observer of one stream (handlers.StreamObserver):
// transport "sse" or "websocket", the route, the event type and the user
// ("" when anonymous). The SSE series of Aviso count only "sse".
func (m *Metrics) Stream(transport, route, eventType, user string) *Stream {
	s := &Stream{
		m: m, route: route, eventType: eventType, user: user,
		watchers:  m.watchersOpen.WithLabelValues(transport),
		subs:      m.subsOpen.WithLabelValues(eventType, transport),
		live:      m.liveDelivered.WithLabelValues(transport),
		pages:     m.historyPages.WithLabelValues(transport),
		transport: transport,
	}
	if transport == "sse" {
		s.sse = true
		s.sessions = m.sessionsOpen.WithLabelValues(transport)
		s.sent = m.sseSent.WithLabelValues(route, eventType)
		s.errors = m.sseErrors.WithLabelValues(route, eventType)
	}
	return s
}

// Stream is the observer of one stream. Its methods are called from the
// goroutine running the stream.
type Stream struct {
	m                           *Metrics
	transport, route, eventType string
	user                        string
	sse                         bool
	watchers, sessions, subs    prometheus.Gauge
	live, pages, sent, errors   prometheus.Counter
	opened                      time.Time
}

// Opened implements stream.Observer.
func (s *Stream) Opened() {
	s.opened = time.Now()
	s.watchers.Inc()
	s.subs.Inc()
	if !s.sse {
		return
	}
	s.sessions.Inc()
	s.m.sseActive.WithLabelValues(s.route, s.eventType).Inc()
	s.m.sseTotal.WithLabelValues(s.route, s.eventType).Inc()
	if s.user != "" {
		s.m.usersMu.Lock()
		byUser := s.m.users[s.route]
		if byUser == nil {
			byUser = map[string]int{}
			s.m.users[s.route] = byUser
		}
		byUser[s.user]++
		if byUser[s.user] == 1 {
			s.m.sseUsers.WithLabelValues(s.route).Inc()
		}
		s.m.usersMu.Unlock()
	}
}

// Delivered implements stream.Observer.
func (s *Stream) Delivered(live bool) {
	if live {
		s.live.Inc()
	}
}

// HistoryPage implements stream.Observer.
func (s *Stream) HistoryPage() { s.pages.Inc() }

// Ended implements stream.Observer.
func (s *Stream) Ended(reason string) {
	s.watchers.Dec()
	s.subs.Dec()
	s.m.streamEnds.WithLabelValues(s.transport, reason).Inc()
	if !s.sse {
		return
	}
	s.sessions.Dec()
	s.m.sseActive.WithLabelValues(s.route, s.eventType).Dec()
	s.m.sseDuration.WithLabelValues(s.route).Observe(time.Since(s.opened).Seconds())
	if s.user != "" {
		s.m.usersMu.Lock()
		byUser := s.m.users[s.route]
		byUser[s.user]--
		if byUser[s.user] <= 0 {
			delete(byUser, s.user)
			s.m.sseUsers.WithLabelValues(s.route).Dec()
		}
		s.m.usersMu.Unlock()
	}
}

// EventSent counts a notification event written to an SSE stream.
func (s *Stream) EventSent() {
	if s.sent != nil {
		s.sent.Inc()
	}
}

// StreamError counts an error event sent into an SSE stream.
func (s *Stream) StreamError() {
	if s.errors != nil {
		s.errors.Inc()
	}
}
