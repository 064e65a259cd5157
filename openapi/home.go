package openapi

import (
	"bytes"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HomeLinks are what the built-in homepage links besides the API.
type HomeLinks struct {
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

// HomeEventType is one configured event type on the homepage.
type HomeEventType struct {
	Name string
	// Fields are its identifier fields, in declaration order.
	Fields []string
}

// homeEventType is an event type as the template shows it.
type homeEventType struct {
	Name   string
	Path   string // its GET /api/v1/schema/{event_type}
	Fields []string
}

// HomePage is what the homepage shows.
type HomePage struct {
	Version string
	// StaticFilesPath holds an index.html that replaces the built-in
	// page ("" for none).
	StaticFilesPath string
	Links           HomeLinks
	EventTypes      []HomeEventType
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

// ServeHome answers GET / with page: index.html from the static files
// path with {{SERVER_VERSION}} filled in, as Aviso does, or else the
// built-in page linking the browser console, the API documentation, the
// OpenAPI and AsyncAPI documents, the metrics listener when metrics are
// enabled, and the event types. An error is a page that did not render
// (nothing was written).
func ServeHome(w http.ResponseWriter, r *http.Request, page HomePage) error {
	if static := page.StaticFilesPath; static != "" {
		if b, err := os.ReadFile(filepath.Join(static, "index.html")); err == nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(bytes.ReplaceAll(b, []byte("{{SERVER_VERSION}}"), []byte(page.Version)))
			return nil
		}
	}
	data := homeData{Version: page.Version, Links: page.Links.Links, MetricsURL: metricsURL(page.Links, r)}
	for _, et := range page.EventTypes {
		data.EventTypes = append(data.EventTypes, homeEventType{Name: et.Name, Path: "/api/v1/schema/" + url.PathEscape(et.Name), Fields: et.Fields})
	}
	var b bytes.Buffer
	if err := homeTemplate.Execute(&b, data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
	return nil
}

// metricsURL is the /metrics URL of the metrics listener, "" when metrics
// are disabled. A listener on every interface (0.0.0.0, ::) is named by
// the host the request reached herald on.
func metricsURL(hs HomeLinks, r *http.Request) string {
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
