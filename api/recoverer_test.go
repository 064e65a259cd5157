package api_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/api"
)

// TestRecoverer: a panic in a handler becomes a logged 500 with the JSON
// error body and the request id; http.ErrAbortHandler passes through (the
// server aborts the connection).
func TestRecoverer(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	h := api.RequestID(api.Recoverer(log)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(errors.New("boom")) })))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	id := rec.Header().Get("X-Request-ID")
	want := `{"code":"INTERNAL_ERROR","error":"internal_error","message":"internal server error","details":"internal server error","request_id":"` + id + `"}` + "\n"
	if rec.Code != http.StatusInternalServerError || rec.Body.String() != want {
		t.Fatalf("%d %q\nwant %q", rec.Code, rec.Body.String(), want)
	}
	if !strings.Contains(logged.String(), `"msg":"panic serving request","request_id":"`+id+`","method":"GET","path":"/x","panic":"boom"`) {
		t.Fatalf("log: %s", logged.String())
	}
	abort := api.Recoverer(log)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if r := recover(); r != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler passed on", r)
		}
	}()
	abort.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
}
