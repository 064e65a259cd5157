package api_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/herald-gateway/herald/api"
)

// TestAccessLog: one line per request with method, path, status,
// duration, request id and remote address, at info level; the probes'
// paths at debug level.
func TestAccessLog(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := api.RequestID(api.AccessLog(log)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})))
	for _, p := range []string{"/api/v1/schema", "/missing", "/health", "/ready"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	line := `\{"time":"[^"]+","level":"%s","msg":"request","method":"GET","path":"%s","status":%d,"duration_ms":[0-9.e-]+,"request_id":"[0-9a-f-]{36}","remote":"192\.0\.2\.1:1234"\}\n`
	want := regexp.MustCompile("^" +
		fmt.Sprintf(line, "INFO", "/api/v1/schema", 200) + fmt.Sprintf(line, "INFO", "/missing", 404) +
		fmt.Sprintf(line, "DEBUG", "/health", 200) + fmt.Sprintf(line, "DEBUG", "/ready", 200) + "$")
	if !want.MatchString(out.String()) {
		t.Fatalf("access log:\n%s", out.String())
	}
}
