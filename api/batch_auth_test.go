package api_test

import (
	"net/http"
	"testing"

	"github.com/herald-gateway/herald/auth"
)

// TestBatchNotifyAuthorization: batch notify runs each event type's
// write authorisation as notify does; the first refusal answers the
// whole batch with notify's body, and nothing of the batch is stored.
func TestBatchNotifyAuthorization(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	const path = "/api/v1/notifications"
	note := func(stream, k string) string {
		return `{"event_type":"` + stream + `","identifier":{"k":"` + k + `"}}`
	}
	batch := func(elems ...string) string {
		b := `{"notifications":[`
		for i, e := range elems {
			if i > 0 {
				b += ","
			}
			b += e
		}
		return b + "]}"
	}
	reader := bearer(hs256(t, user("rita", "ecmwf", "reader")))
	writer := bearer(hs256(t, user("walt", "ecmwf", "writer")))

	r := s.call(t, http.MethodPost, path, batch(note("public", "a"), note("writers", "a"), note("any", "a")), reader)
	wantAuthError(t, r, http.StatusForbidden, "FORBIDDEN", "forbidden", auth.MsgNoWriteRole, nil)
	r = s.call(t, http.MethodPost, path, batch(note("public", "a"), note("public", "b"), note("any", "a")), nil)
	wantAuthError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "unauthorized", auth.MsgStreamAuthRequired, []string{"Bearer"})
	// A parse error elsewhere in the batch does not hide the refusal.
	r = s.call(t, http.MethodPost, path, batch(`[]`, note("writers", "a")), reader)
	wantAuthError(t, r, http.StatusForbidden, "FORBIDDEN", "forbidden", auth.MsgNoWriteRole, nil)

	// Nothing was stored: the first stored batch starts at 1.
	r = s.call(t, http.MethodPost, path, batch(note("public", "a"), note("writers", "a"), note("public", "b")), writer)
	if r.Status != http.StatusOK || !equalJSON(map[string]any{"ids": r.Body["ids"]}, map[string]any{"ids": []any{"public@1", "writers@1", "public@2"}}) {
		t.Fatalf("writer: %d %s", r.Status, r.Raw)
	}
}
