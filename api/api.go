// Package api wires herald's HTTP surface: the chi router with every
// route, and the middleware around it (request id, recovery, access log,
// CORS, decompression, authentication through package auth's
// Authenticator, concurrent-stream limits). It owns no endpoint logic
// (package handlers) and no business rules: per-stream authorisation and
// the ECPDS check run in the handlers, on the identity the Authenticator
// puts into the request context.
package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"herald/api/httperr"
	"herald/auth"
	"herald/console"
	"herald/handlers"
	"herald/openapi"
)

// Options configure the router.
type Options struct {
	// Handlers serve the endpoints.
	Handlers *handlers.Handlers
	// Logger receives the access log and recovered panics.
	Logger *slog.Logger
	// Auth authenticates notify, watch, replay and admin requests; nil
	// means auth disabled (everything public).
	Auth *auth.Authenticator
	// CORS is the configured cross-origin policy; nil keeps Aviso's
	// behaviour (handled by the SSE writer).
	CORS *CORS
	// Limits bounds concurrent streams; nil means no limit.
	Limits *StreamLimiter
	// Metrics, when not nil, is the outermost middleware: the HTTP
	// request metrics (it reads the matched route from chi's context).
	Metrics func(http.Handler) http.Handler
	// Reload serves POST /api/v1/admin/reload (package server's); nil
	// answers 501.
	Reload http.HandlerFunc
}

// NewRouter returns the HTTP handler serving every herald route.
func NewRouter(opts Options) http.Handler {
	h := opts.Handlers
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	authStreams, authAdmin := passThrough, passThrough
	if opts.Auth != nil {
		authStreams, authAdmin = opts.Auth.Streams, opts.Auth.Admin
	}
	r := chi.NewRouter()
	if opts.Metrics != nil {
		r.Use(opts.Metrics)
	}
	r.Use(RequestID, Recoverer(log), AccessLog(log), opts.CORS.Middleware, Decompress)
	// Set before the routes: sub-routers inherit them when mounted.
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed(r))

	r.Get("/", h.Home)
	r.Get("/health", h.Health)
	r.Get("/ready", h.Ready)
	// The CloudEvent dataschema link (<base_url>/schema/<event_type>, as
	// aviso writes it) resolves to the event type's schema.
	r.Get("/schema/{event_type}", h.SchemaGet)
	r.Get("/api-docs/openapi.json", openapi.Document)
	r.Get("/api-docs/asyncapi.json", openapi.AsyncAPIDocument)
	r.Get("/swagger-ui", openapi.DocsPage)
	r.Get("/swagger-ui/", openapi.DocsPage)
	// The browser console: static files, no credentials (it sends the
	// user's token itself).
	r.Get("/console", console.Redirect)
	r.Get("/console/", console.Serve)
	r.Get("/console/{file}", console.Serve)

	r.Route("/api/v1", func(r chi.Router) {
		// Schema endpoints never authenticate: a malformed or bad
		// Authorization header cannot break them (reference §1).
		r.Get("/schema", h.SchemaList)
		r.Get("/schema/{event_type}", h.SchemaGet)
		r.Group(func(r chi.Router) {
			r.Use(authStreams)
			r.Post("/notification", h.Notify)
			r.Post("/notifications", h.NotifyBatch)
			r.Post("/events/{event_type}", h.Events)
			r.With(opts.Limits.Middleware).Post("/watch", h.Watch)
			r.With(opts.Limits.Middleware).Post("/replay", h.Replay)
			// The WebSocket session protocol: credentials on the upgrade
			// (checked here, 401 before the upgrade) or in a first auth
			// frame.
			r.Get("/session", h.Session)
		})
		r.Group(func(r chi.Router) {
			r.Use(authAdmin)
			r.Delete("/admin/notification/{notification_id}", h.AdminDelete)
			r.Delete("/admin/wipe/stream", h.AdminWipeStream)
			r.Delete("/admin/wipe/all", h.AdminWipeAll)
			reload := opts.Reload
			if reload == nil {
				reload = h.NoReload
			}
			r.Post("/admin/reload", reload)
		})
	})
	return r
}

// passThrough is the identity middleware.
func passThrough(next http.Handler) http.Handler { return next }

// RequestID gives every request a fresh UUID: in the X-Request-ID response
// header (404, 405 and SSE included) and in the request context. An
// inbound X-Request-ID is not adopted (reference §1).
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := uuid.NewString()
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(httperr.WithRequestID(r.Context(), id)))
	})
}

// Recoverer turns a panic in a handler into a logged 500 with the request
// id instead of a dropped connection.
func Recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				rec := recover()
				if rec == nil || rec == http.ErrAbortHandler {
					if rec != nil {
						panic(rec)
					}
					return
				}
				id := httperr.RequestID(r.Context())
				markRouteError(w)
				log.Error("panic serving request", "request_id", id, "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(rec))
				httperr.WriteJSON(w, http.StatusInternalServerError, httperr.ErrorBody{
					Code: "INTERNAL_ERROR", Error: "internal_error", Message: "internal server error",
					Details: "internal server error", RequestID: id,
				})
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// markRouteError tells the writer of the request metrics, if it wraps w,
// that the request failed with a recovered panic (route label "error").
func markRouteError(w http.ResponseWriter) {
	for {
		switch t := w.(type) {
		case interface{ RouteError() }:
			t.RouteError()
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return
		}
	}
}

// statusWriter records the status of a response for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flush, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// AccessLog logs one line per request at info level: method, path,
// status, duration and request id.
func AccessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			// Probes poll /health and /ready: their lines are DEBUG, so
			// that they do not drown the log.
			lvl := slog.LevelInfo
			if r.URL.Path == "/health" || r.URL.Path == "/ready" {
				lvl = slog.LevelDebug
			}
			log.Log(r.Context(), lvl, "request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000,
				"request_id", httperr.RequestID(r.Context()), "remote", r.RemoteAddr)
		})
	}
}
