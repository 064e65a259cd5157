package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/openapi"
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

// ReadyBody is the body of GET /ready (aviso-server 0.13's).
type ReadyBody struct {
	Status           string `json:"status"`
	BackendConnected bool   `json:"backend_connected"`
}

// Ready serves GET /ready: 200 {"status":"ready","backend_connected":true}
// while the backend answers, 503 {"status":"not_ready",
// "backend_connected":false} with Retry-After while it is down (for load
// balancers and orchestrators). Engines without a backend connection are
// always ready. Why the backend is down is logged at DEBUG (probes poll).
func (h *Handlers) Ready(w http.ResponseWriter, r *http.Request) {
	if state, err := h.backendState(r.Context()); state == "unavailable" {
		h.log.Debug("not ready: the backend is unavailable", "request_id", httperr.RequestID(r.Context()), "error", err)
		w.Header().Set("Retry-After", "5")
		httperr.WriteJSON(w, http.StatusServiceUnavailable, ReadyBody{Status: "not_ready"})
		return
	}
	httperr.WriteJSON(w, http.StatusOK, ReadyBody{Status: "ready", BackendConnected: true})
}

// HomepageSettings are what the built-in homepage links besides the API.
type HomepageSettings = openapi.HomeLinks

// Link is one link of the homepage.
type Link = openapi.Link

// Home serves GET /: the homepage (openapi.ServeHome) with the settings
// in force, so a reload shows: index.html from the static files path, or
// the built-in page with the configured event types.
func (h *Handlers) Home(w http.ResponseWriter, r *http.Request) {
	set := h.Settings()
	page := openapi.HomePage{Version: h.version, StaticFilesPath: set.StaticFilesPath, Links: set.Homepage}
	if reg := set.Registry; reg != nil {
		for _, name := range reg.Names() {
			et := openapi.HomeEventType{Name: name}
			if s, ok := reg.Schema(name); ok {
				for _, f := range s.Fields {
					et.Fields = append(et.Fields, f.Name)
				}
			}
			page.EventTypes = append(page.EventTypes, et)
		}
	}
	if err := openapi.ServeHome(w, r, page); err != nil {
		h.log.Error("homepage failed to render", "error", err, "request_id", httperr.RequestID(r.Context()))
		auth.WriteInternalError(w, r, "the homepage failed to render")
	}
}
