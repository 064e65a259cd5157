package api_test

import (
	"net/http"
	"testing"

	"github.com/herald-gateway/herald/auth"
)

// TestDuplicateAuthorizationHeader sends two Authorization headers to
// every authenticated route in both modes: a 400
// INVALID_AUTHORIZATION_HEADER before any credential is looked at
// (auth-o-tron is not called), on public streams too; schema endpoints
// ignore the headers.
func TestDuplicateAuthorizationHeader(t *testing.T) {
	tron := newFakeTron(t)
	reader := hs256(t, user("rita", "ecmwf", "reader"))
	admin := hs256(t, user("ada", "ecmwf", "admin"))
	tron.answers["Bearer "+admin] = func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Authorization", "Bearer "+admin)
	}
	two := []struct {
		name   string
		values []string
	}{
		{"two valid tokens", []string{"Bearer " + reader, "Bearer " + admin}},
		{"valid then malformed", []string{"Bearer " + admin, "Digest abc"}},
		{"malformed then valid", []string{"Digest abc", "Bearer " + admin}},
		{"two empty", []string{"", ""}},
	}
	routes := []struct{ method, path, body string }{
		{http.MethodPost, "/api/v1/notification", `{"event_type":"public","identifier":{"k":"v"}}`},
		{http.MethodPost, "/api/v1/watch", `{"event_type":"public","identifier":{}}`},
		{http.MethodPost, "/api/v1/replay", `{"event_type":"any","identifier":{},"from_id":"0"}`},
		{http.MethodDelete, "/api/v1/admin/wipe/all", ""},
		{http.MethodDelete, "/api/v1/admin/wipe/stream", `{"stream_name":"public"}`},
		{http.MethodDelete, "/api/v1/admin/notification/public@1", ""},
	}
	for _, mode := range []string{"trusted_proxy", "direct"} {
		s := start(t, setup{yaml: matrixConfig(mode, tron.ts.URL)})
		for _, h := range two {
			hdr := http.Header{"Authorization": h.values}
			for _, rt := range routes {
				t.Run(mode+"/"+h.name+"/"+rt.method+" "+rt.path, func(t *testing.T) {
					r := s.call(t, rt.method, rt.path, rt.body, hdr)
					wantAuthError(t, r, http.StatusBadRequest, "INVALID_AUTHORIZATION_HEADER", "bad_request", auth.MsgDuplicateAuthorization, nil)
				})
			}
			for _, path := range []string{"/api/v1/schema", "/api/v1/schema/any"} {
				if r := s.call(t, http.MethodGet, path, "", hdr); r.Status != http.StatusOK {
					t.Fatalf("%s GET %s with %s: %d %s", mode, path, h.name, r.Status, r.Raw)
				}
			}
		}
		if got := tron.lastSeen(); got != "" {
			t.Fatalf("%s: auth-o-tron was called with %q", mode, got)
		}
		// One header still works.
		if r := s.call(t, http.MethodDelete, "/api/v1/admin/wipe/all", "", bearer(admin)); r.Status != http.StatusOK {
			t.Fatalf("%s one header: %d %s", mode, r.Status, r.Raw)
		}
	}
}
