package handlers

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"herald/api/httperr"
	"herald/auth"
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
type HomepageSettings struct {
	// Links are the application.homepage links (Aviso's client and
	// server documentation and repositories), in order.
	Links []Link
	// MetricsHost and MetricsPort are the metrics listener's address;
	// MetricsPort is 0 when metrics are disabled.
	MetricsHost string
	MetricsPort int
}

// Link is one link of the homepage.
type Link struct {
	Label string
	URL   string
}

// homeEventType is one configured event type on the homepage.
type homeEventType struct {
	Name   string
	Path   string // its GET /api/v1/schema/{event_type}
	Fields []string
}

// homeData is what the built-in homepage shows.
type homeData struct {
	Version    string
	MetricsURL string
	EventTypes []homeEventType
	Links      []Link
}

// homeTemplate is the built-in homepage. It needs no script and loads
// nothing.
var homeTemplate = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>herald {{.Version}}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:50em;margin:1.5em auto;padding:0 1em;color:#1d2330}code{font-size:.9em}</style>
</head>
<body>
<h1>herald {{.Version}}</h1>
<p>An Aviso-compatible notification gateway.</p>
<h2>API</h2>
<ul id="api">
<li><a href="/console/">Browser console</a>: watch, replay and publish notifications in the browser</li>
<li><a href="/swagger-ui/">API documentation</a>: every endpoint, its requests and answers, with forms to try the JSON ones</li>
<li><a href="/api-docs/openapi.json">OpenAPI document</a> (<code>/api-docs/openapi.json</code>)</li>
<li><a href="/api-docs/asyncapi.json">AsyncAPI document</a> of the WebSocket session protocol (<code>/api-docs/asyncapi.json</code>)</li>
<li><a href="/api/v1/schema">/api/v1/schema</a>: the schemas of all event types</li>
<li><a href="/health">/health</a> and <a href="/ready">/ready</a></li>
{{- if .MetricsURL}}
<li><a href="{{.MetricsURL}}">{{.MetricsURL}}</a>: Prometheus metrics</li>
{{- end}}
</ul>
<h2>Event types</h2>
{{- if .EventTypes}}
<ul id="event-types">
{{- range .EventTypes}}
<li><a href="{{.Path}}">{{.Name}}</a>{{if .Fields}}: {{range $i, $f := .Fields}}{{if $i}}, {{end}}<code>{{$f}}</code>{{end}}{{end}}</li>
{{- end}}
</ul>
{{- else}}
<p id="event-types">No event types are configured.</p>
{{- end}}
{{- if .Links}}
<h2>Aviso</h2>
<ul id="links">
{{- range .Links}}
<li><a href="{{.URL}}">{{.Label}}</a></li>
{{- end}}
</ul>
{{- end}}
</body></html>
`))

// Home serves GET /: index.html from the static files path with
// {{SERVER_VERSION}} filled in, as Aviso does, or else a built-in page
// linking the browser console, the API documentation, the OpenAPI and AsyncAPI documents,
// the metrics listener when metrics are enabled, and the configured
// event types (from the settings in force, so a reload shows).
func (h *Handlers) Home(w http.ResponseWriter, r *http.Request) {
	set := h.Settings()
	if static := set.StaticFilesPath; static != "" {
		if b, err := os.ReadFile(filepath.Join(static, "index.html")); err == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(bytes.ReplaceAll(b, []byte("{{SERVER_VERSION}}"), []byte(h.version)))
			return
		}
	}
	data := homeData{Version: h.version, Links: set.Homepage.Links, MetricsURL: metricsURL(set.Homepage, r)}
	if reg := set.Registry; reg != nil {
		for _, name := range reg.Names() {
			et := homeEventType{Name: name, Path: "/api/v1/schema/" + url.PathEscape(name)}
			if s, ok := reg.Schema(name); ok {
				for _, f := range s.Fields {
					et.Fields = append(et.Fields, f.Name)
				}
			}
			data.EventTypes = append(data.EventTypes, et)
		}
	}
	var b bytes.Buffer
	if err := homeTemplate.Execute(&b, data); err != nil {
		h.log.Error("homepage failed to render", "error", err, "request_id", httperr.RequestID(r.Context()))
		auth.WriteInternalError(w, r, "the homepage failed to render")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// metricsURL is the /metrics URL of the metrics listener, "" when metrics
// are disabled. A listener on every interface (0.0.0.0, ::) is named by
// the host the request reached herald on.
func metricsURL(hs HomepageSettings, r *http.Request) string {
	if hs.MetricsPort == 0 {
		return ""
	}
	host := hs.MetricsHost
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(hs.MetricsPort)) + "/metrics"
}
