package api_test

import (
	"slices"
	"strings"
	"testing"
)

// TestRouteErrors checks the answers of unknown paths (404) and of known
// paths with another method (405): the JSON error body with the request
// id of the header, the method and the path (cut at 200 bytes) in the
// message, and for a 405 the Allow header listing the route's methods.
// Routing comes before authentication: no token is needed for either.
func TestRouteErrors(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	long := "/api/v1/" + strings.Repeat("a", 300)
	// The cut at 200 bytes would fall inside "%2F": it moves before it.
	escaped := "/" + strings.Repeat("b", 198) + "%2Fc"
	tests := []struct {
		method, path string
		status       int
		code, label  string
		msg          string
		allow        []string
	}{
		{"GET", "/api/v1/nope", 404, "NOT_FOUND", "not_found", "no route for GET /api/v1/nope", nil},
		{"GET", "/nope", 404, "NOT_FOUND", "not_found", "no route for GET /nope", nil},
		{"POST", "/api/v2/watch", 404, "NOT_FOUND", "not_found", "no route for POST /api/v2/watch", nil},
		{"GET", "/api/v1/a%20b", 404, "NOT_FOUND", "not_found", "no route for GET /api/v1/a%20b", nil},
		{"GET", long, 404, "NOT_FOUND", "not_found", "no route for GET " + long[:200] + "...", nil},
		{"GET", escaped, 404, "NOT_FOUND", "not_found", "no route for GET " + escaped[:199] + "...", nil},
		{"BREW", "/nope", 404, "NOT_FOUND", "not_found", "no route for BREW /nope", nil},
		{"GET", "/api/v1/notification", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method GET is not allowed on /api/v1/notification; allowed: POST", []string{"POST"}},
		{"PUT", "/api/v1/watch", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method PUT is not allowed on /api/v1/watch; allowed: POST", []string{"POST"}},
		{"GET", "/api/v1/replay", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method GET is not allowed on /api/v1/replay; allowed: POST", []string{"POST"}},
		{"POST", "/health", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method POST is not allowed on /health; allowed: GET, HEAD", []string{"GET", "HEAD"}},
		{"DELETE", "/api/v1/schema/any", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method DELETE is not allowed on /api/v1/schema/any; allowed: GET, HEAD", []string{"GET", "HEAD"}},
		{"POST", "/api/v1/admin/wipe/all", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method POST is not allowed on /api/v1/admin/wipe/all; allowed: DELETE", []string{"DELETE"}},
		{"GET", "/api/v1/admin/notification/x@1", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method GET is not allowed on /api/v1/admin/notification/x@1; allowed: DELETE", []string{"DELETE"}},
		{"BREW", "/health", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method BREW is not allowed on /health; allowed: GET, HEAD", []string{"GET", "HEAD"}},
		{strings.Repeat("M", 40), "/health", 405, "METHOD_NOT_ALLOWED", "method_not_allowed",
			"method " + strings.Repeat("M", 32) + "... is not allowed on /health; allowed: GET, HEAD", []string{"GET", "HEAD"}},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path[:min(len(tc.path), 40)], func(t *testing.T) {
			r := s.call(t, tc.method, tc.path, "", nil)
			id := r.Header.Get("X-Request-ID")
			want := map[string]any{"code": tc.code, "error": tc.label, "message": tc.msg, "details": tc.msg, "request_id": id}
			if r.Status != tc.status || !equalJSON(r.Body, want) {
				t.Fatalf("got %d %s\nwant %d %v", r.Status, r.Raw, tc.status, want)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			if len(id) != 36 {
				t.Fatalf("X-Request-ID %q", id)
			}
			if got := r.Header.Values("Allow"); !slices.Equal(got, tc.allow) {
				t.Fatalf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
}
