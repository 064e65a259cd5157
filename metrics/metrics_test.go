package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/herald-gateway/herald/tracing"
	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// TestEnginesDoNotImportPrometheus enforces the design rule: the engines
// and the stream runner report through their own observer interfaces and
// never import Prometheus (go list -deps).
func TestEnginesDoNotImportPrometheus(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/herald-gateway/herald/engine", "github.com/herald-gateway/herald/jetstream", "github.com/herald-gateway/herald/stream").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, d := range deps {
		if strings.Contains(d, "prometheus") || d == "github.com/herald-gateway/herald/metrics" {
			t.Errorf("engine, jetstream or stream depends on %s", d)
		}
	}
}

// TestMiddlewareRoutes checks the route and method labels: the matched
// pattern through a mounted sub-router, unmatched for no route (404) and
// a method the path does not serve (405), other for a non-standard
// method, error for a handler that panicked, and the in-flight gauge.
func TestMiddlewareRoutes(t *testing.T) {
	m := New(Options{Version: "test"})
	inside := make(chan float64, 1)
	r := chi.NewRouter()
	r.Use(m.Middleware)
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if rec := recover(); rec != nil {
					// What package api's recoverer does.
					w.(interface{ RouteError() }).RouteError()
					w.WriteHeader(500)
				}
			}()
			next.ServeHTTP(w, r)
		})
	})
	r.Get("/a", func(w http.ResponseWriter, r *http.Request) {
		inside <- testutil.ToFloat64(m.httpInFlight.WithLabelValues("GET"))
	})
	r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	r.Route("/api/v1", func(r chi.Router) {
		r.Post("/x/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) })
	})
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/a", 200}, {"POST", "/api/v1/x/1", 202}, {"POST", "/api/v1/x/2", 202},
		{"GET", "/api/v1/nope", 404}, {"GET", "/nope", 404}, {"GET", "/api/v1/x/1", 405},
		{"BREW", "/a", 405}, {"GET", "/boom", 500},
	} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		if w.Code != c.status {
			t.Fatalf("%s %s: %d, want %d", c.method, c.path, w.Code, c.status)
		}
	}
	if got := <-inside; got != 1 {
		t.Errorf("in flight inside the handler: %v, want 1", got)
	}
	for _, c := range []struct {
		route, method, status string
		want                  float64
	}{
		{"/a", "GET", "200", 1}, {"/api/v1/x/{id}", "POST", "202", 2},
		{"unmatched", "GET", "404", 2}, {"unmatched", "GET", "405", 1},
		{"unmatched", "other", "405", 1}, {"error", "GET", "500", 1},
	} {
		if got := testutil.ToFloat64(m.httpRequests.WithLabelValues(c.route, c.method, c.status)); got != c.want {
			t.Errorf("requests{%s,%s,%s} = %v, want %v", c.route, c.method, c.status, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.httpRequests); n != 6 {
		t.Errorf("%d request series, want 6", n)
	}
	for _, meth := range []string{"GET", "POST", "other"} {
		if got := testutil.ToFloat64(m.httpInFlight.WithLabelValues(meth)); got != 0 {
			t.Errorf("in flight %s after the requests: %v", meth, got)
		}
	}
}

// TestOTLPCounters: aviso-server's two series of the log's OTLP export
// exist at zero without an export, and read the export's counts when
// scraped: here one batch the collector refused and one record kept
// out for its secret.
func TestOTLPCounters(t *testing.T) {
	const head = `# HELP aviso_otlp_export_failures_total Failed OTLP log batch export attempts: each is one batch (up to 512 records) that the collector did not accept; its records are dropped from the export while stdout stays complete.
# TYPE aviso_otlp_export_failures_total counter
aviso_otlp_export_failures_total %d
# HELP aviso_otlp_suppressed_log_records_total Log records withheld from OTLP export by the redaction guard (a sensitive attribute key or a URL with credentials); stdout still has each, with its values redacted.
# TYPE aviso_otlp_suppressed_log_records_total counter
aviso_otlp_suppressed_log_records_total %d
`
	names := []string{"aviso_otlp_export_failures_total", "aviso_otlp_suppressed_log_records_total"}
	m := New(Options{Version: "test"})
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(fmt.Sprintf(head, 0, 0)), names...); err != nil {
		t.Error(err)
	}

	c := tracingtest.StartGRPC(t)
	tel, err := tracing.New(context.Background(), tracing.Options{Logs: &tracing.LogExport{Protocol: tracing.ProtocolGRPC, URL: "http://" + c.Endpoint()}})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	m = New(Options{Version: "test", OTLP: tel})
	log := slog.New(tel.Handler(slog.DiscardHandler, slog.LevelInfo))
	c.Refuse(true)
	log.Info("refused")
	log.Info("kept out", "password", "hunter2")
	if err := tel.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(fmt.Sprintf(head, 1, 1)), names...); err != nil {
		t.Error(err)
	}
}
