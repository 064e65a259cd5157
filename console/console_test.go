package console_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/console"
)

// get fetches path from h with optional headers (name, value pairs).
func get(t *testing.T, h *herald, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestServe: herald's router serves the console's files at /console/
// with their media types, the Content-Security-Policy, no-cache and an
// ETag that a revalidation matches (304); /console redirects; an unknown
// file is herald's JSON 404; the console needs no credentials where the
// API does.
func TestServe(t *testing.T) {
	cfg, path := fromYAML(t, authConfig)
	h := start(t, cfg, path)

	resp, _ := get(t, h, "/console")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/console/" {
		t.Errorf("GET /console: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	index, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/console/":            "text/html; charset=utf-8",
		"/console/index.html":  "text/html; charset=utf-8",
		"/console/console.js":  "text/javascript; charset=utf-8",
		"/console/console.css": "text/css; charset=utf-8",
	} {
		resp, body := get(t, h, path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), want)
			continue
		}
		for name, v := range map[string]string{
			"Content-Security-Policy": console.ContentSecurityPolicy, "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "no-referrer", "Cache-Control": "no-cache",
		} {
			if got := resp.Header.Get(name); got != v {
				t.Errorf("GET %s: %s %q, want %q", path, name, got, v)
			}
		}
		if strings.HasSuffix(path, "/") && body != string(index) {
			t.Errorf("GET %s is not static/index.html", path)
		}
		etag := resp.Header.Get("ETag")
		if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(etag) {
			t.Errorf("GET %s: ETag %q", path, etag)
		}
		if again, body := get(t, h, path, "If-None-Match", etag); again.StatusCode != http.StatusNotModified || body != "" {
			t.Errorf("GET %s with If-None-Match %s: %d %q", path, etag, again.StatusCode, body)
		}
	}

	resp, body := get(t, h, "/console/nope.js")
	var e map[string]any
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != http.StatusNotFound ||
		e["code"] != "NOT_FOUND" || e["message"] != "no route for GET /console/nope.js" || e["request_id"] != resp.Header.Get("X-Request-ID") {
		t.Errorf("GET /console/nope.js: %d %s", resp.StatusCode, body)
	}
	long := "/console/" + strings.Repeat("%41", 100)
	if _, body := get(t, h, long); !strings.Contains(body, `"message":"no route for GET /console/`+strings.Repeat("%41", 63)+`..."`) {
		t.Errorf("GET of a long path: %s", body)
	}
}

// TestStaticFilesKeepThePolicy: the page works under its own
// Content-Security-Policy only if it has no inline script, no inline
// event handler, no style attribute and loads nothing from elsewhere;
// every file is served (none is forgotten by the embed).
func TestStaticFilesKeepThePolicy(t *testing.T) {
	var names []string
	err := fs.WalkDir(os.DirFS("static"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, p)
		b, err := os.ReadFile("static/" + p)
		if err != nil {
			return err
		}
		s := string(b)
		// Every script element loads a file of the console and holds
		// nothing.
		for _, m := range regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(s, -1) {
			if !regexp.MustCompile(`\ssrc="[a-z]+\.js"`).MatchString(m[1]) || m[2] != "" {
				t.Errorf("%s has the script %q: only <script src=\"file.js\"></script> runs under the policy", p, m[0])
			}
		}
		for _, bad := range []struct{ what, re string }{
			{"an inline event handler", `\son[a-z]+\s*=\s*["']`},
			{"inline style", `\sstyle\s*=|<style`},
			{"a file from another origin", `(?:src|href)\s*=\s*["']?(?:[a-z]+:)?//`},
			{"markup built from text", `\beval\(|new Function\(|innerHTML|outerHTML|insertAdjacentHTML|document\.write`},
		} {
			if m := regexp.MustCompile(bad.re).FindString(s); m != "" {
				t.Errorf("%s has %s (%q): the policy forbids it or the console must not use it", p, bad.what, m)
			}
		}
		if strings.HasSuffix(p, ".css") && regexp.MustCompile(`@import|url\(`).MatchString(s) {
			t.Errorf("%s loads something (@import or url())", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if want := []string{"console.css", "console.js", "index.html"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("static files %q, want %q", names, want)
	}
}
