package handlers

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
)

// Health serves GET /health: a constant liveness answer.
func (h *Handlers) Health(w http.ResponseWriter, r *http.Request) {
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

const builtinHome = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>herald</title></head>
<body>
<h1>herald {{SERVER_VERSION}}</h1>
<p>An Aviso-compatible notification gateway.</p>
<ul>
<li><a href="/api/v1/schema">/api/v1/schema</a>: the configured event types</li>
<li><a href="/api-docs/openapi.json">/api-docs/openapi.json</a>: the OpenAPI document</li>
<li><a href="/health">/health</a></li>
</ul>
</body></html>
`

// Home serves GET /: index.html from the static files path with
// {{SERVER_VERSION}} filled in, or a built-in page.
func (h *Handlers) Home(w http.ResponseWriter, r *http.Request) {
	page := []byte(builtinHome)
	if h.static != "" {
		if b, err := os.ReadFile(filepath.Join(h.static, "index.html")); err == nil {
			page = b
		}
	}
	page = bytes.ReplaceAll(page, []byte("{{SERVER_VERSION}}"), []byte(h.version))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}
