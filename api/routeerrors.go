package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/herald-gateway/herald/api/httperr"
)

// Limits on the request parts echoed in a 404 or 405 message, so that an
// unbounded request line never comes back unbounded.
const (
	maxEchoPath   = 200
	maxEchoMethod = 32
)

// routeMethods are the methods a 405 may list in Allow, in the order they
// are listed: chi's known methods.
var routeMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

// echo returns s cut to at most limit bytes, marked "..." when cut. A cut
// never splits a percent-escape (s is an escaped path or a method token,
// so it is ASCII).
func echo(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	if i := strings.LastIndexByte(s[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return s[:cut] + "..."
}

// notFound answers a request no route serves: 404 NOT_FOUND with the JSON
// error body (Aviso's HTTP API, docs/api.md says only that it is a 404 carrying
// X-Request-ID; the body is herald's).
func notFound(w http.ResponseWriter, r *http.Request) {
	msg := "no route for " + echo(r.Method, maxEchoMethod) + " " + echo(r.URL.EscapedPath(), maxEchoPath)
	httperr.WriteJSON(w, http.StatusNotFound, httperr.ErrorBody{
		Code: "NOT_FOUND", Error: "not_found", Message: msg, Details: msg,
		RequestID: httperr.RequestID(r.Context()),
	})
}

// methodNotAllowed returns the handler of a request whose path mux serves
// with other methods: 405 METHOD_NOT_ALLOWED with the JSON error body and
// an Allow header per allowed method. chi sets Allow only in its own
// default 405 handler, so the methods are looked up again in mux. A
// method chi does not know reaches this handler for any path; when no
// method is served on the path either, the answer is the 404.
func methodNotAllowed(mux *chi.Mux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		var allowed []string
		for _, m := range routeMethods {
			if mux.Match(chi.NewRouteContext(), m, path) {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) == 0 {
			notFound(w, r)
			return
		}
		for _, m := range allowed {
			w.Header().Add("Allow", m)
		}
		msg := "method " + echo(r.Method, maxEchoMethod) + " is not allowed on " + echo(r.URL.EscapedPath(), maxEchoPath) +
			"; allowed: " + strings.Join(allowed, ", ")
		httperr.WriteJSON(w, http.StatusMethodNotAllowed, httperr.ErrorBody{
			Code: "METHOD_NOT_ALLOWED", Error: "method_not_allowed", Message: msg, Details: msg,
			RequestID: httperr.RequestID(r.Context()),
		})
	}
}
