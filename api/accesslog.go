package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
)

// AccessLog logs one line per request: method, path, status, duration,
// request id and remote address; at info level, except /health and
// /ready (polled by probes) at debug level.
func AccessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw, ok := w.(*statusWriter) // Tracing's, when it is on
			if !ok {
				sw = &statusWriter{ResponseWriter: w}
			}
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

// statusWriter records the status of a response for the access log
// and the server span (one for both when tracing is on).
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
