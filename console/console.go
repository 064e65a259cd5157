// Package console serves herald's browser console at /console/: a page
// that watches, replays and publishes notifications through herald's
// public API only (the schema endpoints, POST /api/v1/notification and
// the WebSocket session protocol), with a filter form generated from each
// event type's schema and several subscriptions side by side.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: no
// build step, nothing loaded from elsewhere. Every file is served with a
// strict Content-Security-Policy (scripts and styles from herald's own
// origin only, no inline script, connections to herald only), so that the
// page keeps working where such a policy is required and a token typed
// into it cannot be sent elsewhere by injected markup.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
)

// Prefix is the URL path the console is served under.
const Prefix = "/console/"

// ContentSecurityPolicy is sent with every console file. connect-src
// 'self' covers the page's fetches and its WebSocket to the same host.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed static
var static embed.FS

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// contentType is a console file's media type by its extension: fixed
// here rather than read from the system's mime.types, which differ
// between machines.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// files reads the embedded files once: name (relative to Prefix) to file.
var files = sync.OnceValue(func() map[string]file {
	out := map[string]file{}
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[strings.TrimPrefix(p, "static/")] = file{body: b, contentType: contentType(p), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return out
})

// Redirect serves GET /console: a permanent redirect to /console/, where
// the page's relative links resolve.
func Redirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
}

// Serve serves GET /console/ (the page) and the files under /console/,
// each with the Content-Security-Policy, an ETag and Cache-Control
// no-cache (a browser revalidates, so an upgraded herald's console is
// seen at once). Anything else under /console/ is herald's JSON 404
// (in the router's words: no route).
func Serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	if name == "" {
		name = "index.html"
	}
	f, ok := files()[name]
	if !ok || !strings.HasPrefix(r.URL.Path, Prefix) {
		msg := "no route for GET " + echo(r.URL.EscapedPath())
		httperr.WriteJSON(w, http.StatusNotFound, httperr.ErrorBody{
			Code: "NOT_FOUND", Error: "not_found", Message: msg, Details: msg,
			RequestID: httperr.RequestID(r.Context()),
		})
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", f.contentType)
	h.Set("ETag", f.etag)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
}

// echo bounds the escaped path echoed in a 404 message, never cutting a
// percent-escape in two.
func echo(p string) string {
	const limit = 200
	if len(p) <= limit {
		return p
	}
	cut := limit
	if i := strings.LastIndexByte(p[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return p[:cut] + "..."
}
