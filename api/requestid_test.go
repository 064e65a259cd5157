package api_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/api/httperr"
)

// TestRequestID: every request gets a fresh UUID in the X-Request-ID
// header and in its context; an inbound X-Request-ID is not adopted.
func TestRequestID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	var seen string
	h := api.RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = httperr.RequestID(r.Context()) }))
	ids := map[string]bool{}
	for range 3 {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("X-Request-ID", "chosen-by-the-client")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		id := rec.Header().Get("X-Request-ID")
		if !uuid.MatchString(id) || seen != id || ids[id] {
			t.Fatalf("header %q context %q (seen before: %v)", id, seen, ids[id])
		}
		ids[id] = true
	}
}
