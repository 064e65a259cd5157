// Package api wires herald's HTTP surface: the chi router with every
// route, and the middleware around it (request id, recovery, access log,
// CORS, decompression, tracing, authentication through package auth's
// Authenticator, concurrent-stream limits). It owns no endpoint logic
// (package handlers) and no business rules: per-stream authorisation and
// the ECPDS check run in the handlers, on the identity the Authenticator
// puts into the request context.
package api

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/console"
	"github.com/herald-gateway/herald/docs"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/openapi"
	"github.com/herald-gateway/herald/tracing"
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
	// Tracer, when not nil, records a server span per request (Tracing),
	// inside the metrics middleware and around every other one.
	Tracer *tracing.Tracer
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
	if opts.Tracer != nil {
		r.Use(Tracing(opts.Tracer))
	}
	r.Use(RequestID, Recoverer(log), AccessLog(log), opts.CORS.Middleware, Decompress)
	// Set before the routes: sub-routers inherit them when mounted.
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed(r))

	// Every GET route but the WebSocket upgrade answers HEAD as well: the
	// same status and headers, no body.
	get := func(r chi.Router, pattern string, h http.HandlerFunc) {
		r.Get(pattern, h)
		r.Head(pattern, h)
	}
	get(r, "/", h.Home)
	get(r, "/health", h.Health)
	get(r, "/ready", h.Ready)
	// The CloudEvent dataschema link (<base_url>/schema/<event_type>, as
	// aviso writes it) resolves to the event type's schema.
	get(r, "/schema/{event_type}", h.SchemaGet)
	get(r, "/api-docs/openapi.json", openapi.Document)
	get(r, "/api-docs/asyncapi.json", openapi.AsyncAPIDocument)
	get(r, "/swagger-ui", openapi.DocsPage)
	get(r, "/swagger-ui/", openapi.DocsPage)
	// The docs page's script and stylesheet (its policy allows nothing
	// inline).
	get(r, "/swagger-ui/{file}", openapi.DocsAsset(notFound))
	// The browser console: static files, no credentials (it sends the
	// user's token itself).
	get(r, "/console", console.Redirect)
	get(r, "/console/", console.Serve)
	get(r, "/console/{file}", console.Serve)
	// The guides of docs/, rendered as the repository holds them.
	guides := openapi.Guides(docs.FS(), notFound)
	get(r, "/docs/", guides)
	get(r, "/docs/{file}", guides)

	r.Route("/api/v1", func(r chi.Router) {
		// Schema endpoints never authenticate: a malformed or bad
		// Authorization header cannot break them.
		get(r, "/schema", h.SchemaList)
		get(r, "/schema/{event_type}", h.SchemaGet)
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
