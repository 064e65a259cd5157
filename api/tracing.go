package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/herald-gateway/herald/internal/cowmap"
	"github.com/herald-gateway/herald/tracing"
)

// Tracing returns the middleware that records a server span for each
// request with tr: it continues the trace of the request's traceparent
// header (W3C trace context) when there is one, puts the span in the
// request's context (a notify's publish span is its child), and names it
// by the method and the matched route pattern ("POST /api/v1/watch",
// "DELETE /api/v1/admin/notification/{notification_id}"), never the raw
// path, which would make one name per notification id or event type.
// It must be used on the top router: it reads the route from chi's
// routing context once the request is served. A nil tr returns next
// as it is.
func Tracing(tr *tracing.Tracer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if tr == nil {
			return next
		}
		var routes cowmap.Map[routeKey, string]
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, span := tr.StartServer(r)
			path := r.URL.Path
			sw := &statusWriter{ResponseWriter: w}
			defer func() {
				route := ""
				if rc := chi.RouteContext(ctx); rc != nil {
					route = routePattern(&routes, rc)
				}
				status := sw.status
				if status == 0 {
					status = http.StatusOK
				}
				tr.Served(span, r.Method, path, route, status)
				span.End()
			}()
			next.ServeHTTP(sw, r.WithContext(ctx))
		})
	}
}

// routeKey is the route patterns of a request (chi.Context's
// RoutePatterns), up to four.
type routeKey struct {
	n int
	p [4]string
}

// routePattern is rc.RoutePattern(), kept in routes per list of
// patterns: chi joins and rewrites them on each call.
func routePattern(routes *cowmap.Map[routeKey, string], rc *chi.Context) string {
	k := routeKey{n: len(rc.RoutePatterns)}
	if k.n > len(k.p) {
		return rc.RoutePattern()
	}
	copy(k.p[:], rc.RoutePatterns)
	return routes.Get(k, rc.RoutePattern)
}
