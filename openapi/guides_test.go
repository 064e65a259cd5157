package openapi_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/docs"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/openapi"
)

// href matches the target of a link in a rendered page.
var href = regexp.MustCompile(`href="([^"]*)"`)

// TestGuidesServed: every guide of docs/ is served at /docs/<name> as an
// HTML page (the index at /docs/), as the document says; every relative
// link of a guide resolves on the server, to a guide or a picture, and
// its anchor to a heading of that page; no link leaves /docs/.
func TestGuidesServed(t *testing.T) {
	router := api.NewRouter(api.Options{Handlers: handlers.New(handlers.Options{})})
	get := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	names, err := fs.Glob(docs.FS(), "*.md")
	if err != nil || len(names) < 10 {
		t.Fatalf("guides %q: %v", names, err)
	}
	pages := map[string]string{} // path → body
	for _, name := range append(names, "") {
		path := openapi.GuidesPath + name
		docPath := "/docs/{file}"
		if name == "" {
			docPath = "/docs/"
		}
		rec := get(http.MethodGet, path)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		for _, e := range openapi.CheckResponse(http.MethodGet, docPath, rec.Code, rec.Header(), rec.Body.Bytes()) {
			t.Error(e)
		}
		if head := get(http.MethodHead, path); head.Code != http.StatusOK || head.Body.Len() != 0 {
			t.Errorf("HEAD %s: %d, %d bytes", path, head.Code, head.Body.Len())
		}
		pages[path] = rec.Body.String()
	}
	if pages[openapi.GuidesPath] != pages[openapi.GuidesPath+"README.md"] {
		t.Error("/docs/ is not the index, README.md")
	}
	for path, body := range pages {
		base, _ := url.Parse(path)
		for _, m := range href.FindAllStringSubmatch(body, -1) {
			target := strings.ReplaceAll(m[1], "&amp;", "&")
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "/") && !strings.HasPrefix(target, openapi.GuidesPath) {
				continue // another site, or another page of herald (the nav)
			}
			u, err := base.Parse(target)
			if err != nil {
				t.Errorf("%s: link %q: %v", path, target, err)
				continue
			}
			if !strings.HasPrefix(u.Path, openapi.GuidesPath) {
				t.Errorf("%s: link %q leaves the guides", path, target)
				continue
			}
			page, ok := pages[u.Path]
			if !ok {
				rec := get(http.MethodGet, u.Path)
				if rec.Code != http.StatusOK {
					t.Errorf("%s: link %q: GET %s is %d", path, target, u.Path, rec.Code)
				}
				continue
			}
			if u.Fragment != "" && !strings.Contains(page, `id="`+u.Fragment+`"`) {
				t.Errorf("%s: link %q: no heading #%s", path, target, u.Fragment)
			}
		}
	}
	if !strings.Contains(pages[openapi.GuidesPath+"benchmarks.md"], "BENCHMARKS.md") || strings.Contains(pages[openapi.GuidesPath+"benchmarks.md"], `href="../`) {
		t.Error("benchmarks.md: the link out of docs/ is not its text")
	}
	for _, path := range []string{"/docs/nosuch.md", "/docs/docs.go", "/docs/..%2Fmain.go"} {
		rec := get(http.MethodGet, path)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
		for _, e := range openapi.CheckResponse(http.MethodGet, "/docs/{file}", rec.Code, rec.Header(), rec.Body.Bytes()) {
			t.Error(e)
		}
	}
	if rec := get(http.MethodGet, "/docs/console.png"); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/png" {
		t.Errorf("GET /docs/console.png: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}
