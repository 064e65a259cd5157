package api

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/herald-gateway/herald/api/httperr"
)

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
