package handlers_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
)

// hrefs returns the href attributes of page in order.
func hrefs(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// homeConfig has two event types and a homepage block of its own.
const homeConfig = `
application:
  host: 127.0.0.1
  port: 8000
  homepage:
    client_documentation_url: https://docs.example.org/client/
    client_repository_url: https://git.example.org/client
    server_documentation_url: https://docs.example.org/server/
    server_repository_url: https://git.example.org/server
notification_backend: {kind: in_memory}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od], required: true}
      step: {type: IntHandler, required: false}
  "flood area":
    topic: {base: flood, key_order: [date]}
    identifier:
      date: {type: DateHandler, required: false}
`

// TestHomepage: the built-in homepage links the console, the docs page, the OpenAPI
// and AsyncAPI documents, the schema list, health and readiness, the
// metrics listener when metrics are enabled, every configured event type
// (its schema, escaped) and the application.homepage links, in that
// order; every herald link answers 200; a reload shows its event types.
func TestHomepage(t *testing.T) {
	port := testkit.FreePort(t)
	config := homeConfig + "metrics: {enabled: true, host: 127.0.0.1, port: " + strconv.Itoa(port) + "}\n"
	s := startServer(t, config, nil)
	api := []string{"/console/", "/swagger-ui/", "/api-docs/openapi.json", "/api-docs/asyncapi.json", "/api/v1/schema", "/health", "/ready"}
	aviso := []string{"https://docs.example.org/client/", "https://git.example.org/client", "https://docs.example.org/server/", "https://git.example.org/server"}
	metrics := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	get := func() string {
		t.Helper()
		r := s.do(t, http.MethodGet, "/", "")
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET /: %d %q", r.Status, r.Header.Get("Content-Type"))
		}
		return r.Raw
	}
	page := get()
	want := append(append(append(append([]string{}, api...), metrics), "/api/v1/schema/flood%20area", "/api/v1/schema/mars"), aviso...)
	if got := hrefs(page); !reflect.DeepEqual(got, want) {
		t.Fatalf("links\n got %q\nwant %q", got, want)
	}
	for _, frag := range []string{
		"<h1>herald test</h1>",
		`<li><a href="` + metrics + `">` + metrics + `</a>: Prometheus metrics</li>`,
		`<li><a href="/api/v1/schema/flood%20area">flood area</a>: <code>date</code></li>`,
		`<li><a href="/api/v1/schema/mars">mars</a>: <code>class</code>, <code>step</code></li>`,
		`<li><a href="https://git.example.org/server">Server repository</a></li>`,
	} {
		if !strings.Contains(page, frag) {
			t.Errorf("page lacks %s\n%s", frag, page)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "src=") {
		t.Errorf("the homepage has a script or loads something:\n%s", page)
	}
	for _, l := range want {
		if !strings.HasPrefix(l, "/") {
			continue
		}
		if r := s.do(t, http.MethodGet, l, ""); r.Status != http.StatusOK {
			t.Errorf("GET %s (linked from the homepage): %d %s", l, r.Status, r.Raw)
		}
	}

	// After a reload the event types are the new configuration's; the
	// metrics link stays (metrics need a restart).
	reloaded := strings.Replace(config, "  \"flood area\":\n    topic: {base: flood, key_order: [date]}\n", "  venus:\n    topic: {base: venus, key_order: [date]}\n", 1)
	reloaded = strings.Replace(reloaded, "https://git.example.org/server", "https://git.example.org/herald", 1)
	if r := s.reload(t, reloaded); r.Status != http.StatusOK {
		t.Fatalf("reload: %d %s", r.Status, r.Raw)
	}
	page = get()
	want = append(append(append(append([]string{}, api...), metrics), "/api/v1/schema/mars", "/api/v1/schema/venus"), aviso[:3]...)
	want = append(want, "https://git.example.org/herald")
	if got := hrefs(page); !reflect.DeepEqual(got, want) {
		t.Fatalf("links after the reload\n got %q\nwant %q", got, want)
	}
}

// TestHomepageWithoutMetricsOrSchemas: no metrics link when metrics are
// disabled, Aviso's default homepage links, and a sentence instead of an
// empty list when no event type is configured.
func TestHomepageWithoutMetricsOrSchemas(t *testing.T) {
	s := startServer(t, "application: {host: 127.0.0.1, port: 8000}\nnotification_backend: {kind: in_memory}\n", nil)
	r := s.do(t, http.MethodGet, "/", "")
	want := []string{"/console/", "/swagger-ui/", "/api-docs/openapi.json", "/api-docs/asyncapi.json", "/api/v1/schema", "/health", "/ready",
		"https://sites.ecmwf.int/docs/aviso-client/main/", "https://github.com/ecmwf/aviso-client",
		"https://sites.ecmwf.int/docs/aviso-server/main/", "https://github.com/ecmwf/aviso-server"}
	if got := hrefs(r.Raw); r.Status != http.StatusOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d links\n got %q\nwant %q", r.Status, got, want)
	}
	if !strings.Contains(r.Raw, `<p id="event-types">No event types are configured.</p>`) {
		t.Fatalf("page:\n%s", r.Raw)
	}
}

// TestHomepageMetricsOnEveryInterface: a metrics listener on 0.0.0.0 or
// :: is linked on the host the request came to.
func TestHomepageMetricsOnEveryInterface(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "::"} {
		port := testkit.FreePort(t)
		s := startServer(t, homeConfig, func(c *configs.Config) {
			c.Metrics = configs.Metrics{Enabled: true, Host: host, Port: port}
		})
		for reqHost, want := range map[string]string{
			"herald.example.org:8000": "http://herald.example.org:" + strconv.Itoa(port) + "/metrics",
			"herald.example.org":      "http://herald.example.org:" + strconv.Itoa(port) + "/metrics",
			"[::1]:8000":              "http://[::1]:" + strconv.Itoa(port) + "/metrics",
		} {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/", nil)
			req.Host = reqHost
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if links := hrefs(string(b)); len(links) < 8 || links[7] != want {
				t.Errorf("metrics on %s, Host %s: links %q, want %s eighth", host, reqHost, links, want)
			}
		}
	}
}

// TestHomepageStaticIndex: an index.html in static_files_path replaces
// the built-in page, with {{SERVER_VERSION}} filled in (as Aviso); a
// static path without one keeps the built-in page.
func TestHomepageStaticIndex(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, homeConfig, func(c *configs.Config) { c.Application.StaticFilesPath = dir })
	if r := s.do(t, http.MethodGet, "/", ""); r.Status != http.StatusOK || !strings.Contains(r.Raw, `<a href="/swagger-ui/">API documentation</a>`) {
		t.Fatalf("without index.html: %d\n%s", r.Status, r.Raw)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>mine {{SERVER_VERSION}} {{SERVER_VERSION}}</p>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := s.do(t, http.MethodGet, "/", "")
	if r.Status != http.StatusOK || r.Raw != "<p>mine test test</p>\n" || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("with index.html: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
}
