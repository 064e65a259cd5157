package api_test

import (
	"net/http"
	"testing"
)

// TestHeadAnswersGet: every GET route but the WebSocket upgrade answers
// HEAD with GET's status and headers and no body.
func TestHeadAnswersGet(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	for _, path := range []string{"/", "/health", "/ready", "/schema/mars", "/schema/nope", "/api-docs/openapi.json",
		"/api-docs/asyncapi.json", "/swagger-ui", "/swagger-ui/", "/swagger-ui/docs.js", "/swagger-ui/docs.css",
		"/swagger-ui/nope.js", "/console", "/console/", "/console/console.js", "/console/nope.js", "/api/v1/schema", "/api/v1/schema/mars", "/api/v1/schema/nope"} {
		get := s.call(t, http.MethodGet, path, "", nil)
		head := s.call(t, http.MethodHead, path, "", nil)
		if head.Status != get.Status || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || head.Raw != "" ||
			head.Header.Get("X-Request-ID") == "" {
			t.Errorf("HEAD %s: %d %q body %q; GET: %d %q", path, head.Status, head.Header.Get("Content-Type"), head.Raw,
				get.Status, get.Header.Get("Content-Type"))
		}
	}
	// The WebSocket upgrade has no HEAD.
	if r := s.call(t, http.MethodHead, "/api/v1/session", "", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("HEAD /api/v1/session: %d", r.Status)
	}
}
