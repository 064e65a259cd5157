package handlers

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"herald/api/httperr"
	"herald/engine"
)

// readiness is implemented by engines that depend on something that can
// be down (the JetStream engine's NATS connection).
type readiness interface {
	Ready(ctx context.Context) error
}

// readyTimeout bounds one readiness check.
const readyTimeout = 5 * time.Second

// backendState checks the engine's readiness: "" when the engine has no
// such notion, else "ok" or "unavailable" with the error.
func (h *Handlers) backendState(ctx context.Context) (string, error) {
	rd, ok := h.eng.(readiness)
	if !ok {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := rd.Ready(ctx); err != nil {
		return "unavailable", err
	}
	return "ok", nil
}

// liveness is implemented by engines that can tell a backend outage they
// recover from by themselves from a state only a restart can end (the
// JetStream engine: reconnecting, or its embedded server stopped).
// Healthy returns nil while healthy, an error wrapping
// engine.ErrUnavailable while recovering (engine.ErrClosed once closed),
// and any other error when it cannot recover.
type liveness interface {
	Healthy() error
}

// Health serves GET /health: liveness. It is 200 {"status":"ok"}, as in
// Aviso; engines with a backend connection add "backend": "ok", or
// "unavailable" while the backend is down and the engine is reconnecting
// (a restart would not help, so liveness holds). When the engine reports
// a state it cannot leave by itself, Health answers 503
// {"status":"unhealthy","backend":"failed"} so that an orchestrator
// restarts herald; the reason is logged, not sent.
func (h *Handlers) Health(w http.ResponseWriter, r *http.Request) {
	if lv, ok := h.eng.(liveness); ok {
		if err := lv.Healthy(); err != nil && !errors.Is(err, engine.ErrUnavailable) && !errors.Is(err, engine.ErrClosed) {
			h.log.Error("health check failed: the backend cannot recover without a restart", "error", err, "request_id", httperr.RequestID(r.Context()))
			httperr.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unhealthy", "backend": "failed"})
			return
		}
	}
	body := map[string]string{"status": "ok"}
	if state, _ := h.backendState(r.Context()); state != "" {
		body["backend"] = state
	}
	httperr.WriteJSON(w, http.StatusOK, body)
}

// Ready serves GET /ready: 200 {"status":"ready"} when the backend
// answers, 503 with Retry-After while it is down (for load balancers and
// orchestrators).
func (h *Handlers) Ready(w http.ResponseWriter, r *http.Request) {
	if state, err := h.backendState(r.Context()); state == "unavailable" {
		w.Header().Set("Retry-After", "5")
		httperr.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{
			"status": "unavailable", "error": err.Error(), "request_id": httperr.RequestID(r.Context()),
		})
		return
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

const builtinHome = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>herald</title></head>
<body>
<h1>herald {{SERVER_VERSION}}</h1>
<p>An Aviso-compatible notification gateway.</p>
<ul>
<li><a href="/api/v1/schema">/api/v1/schema</a>: the configured event types</li>
<li><a href="/api-docs/openapi.json">/api-docs/openapi.json</a>: the OpenAPI document</li>
<li><a href="/api-docs/asyncapi.json">/api-docs/asyncapi.json</a>: the AsyncAPI document of the WebSocket session protocol</li>
<li><a href="/health">/health</a></li>
</ul>
</body></html>
`

// Home serves GET /: index.html from the static files path with
// {{SERVER_VERSION}} filled in, or a built-in page.
func (h *Handlers) Home(w http.ResponseWriter, r *http.Request) {
	page := []byte(builtinHome)
	if static := h.Settings().StaticFilesPath; static != "" {
		if b, err := os.ReadFile(filepath.Join(static, "index.html")); err == nil {
			page = b
		}
	}
	page = bytes.ReplaceAll(page, []byte("{{SERVER_VERSION}}"), []byte(h.version))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}
