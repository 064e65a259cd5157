package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/herald-gateway/herald/api/httperr"
)

// RequestID gives every request a fresh UUID: in the X-Request-ID response
// header (404, 405 and SSE included) and in the request context. An
// inbound X-Request-ID is not adopted (Aviso's HTTP API, docs/api.md).
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := uuid.NewString()
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(httperr.WithRequestID(r.Context(), id)))
	})
}
