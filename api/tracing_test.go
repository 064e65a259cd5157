package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/tracing"
	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// TestTracingMiddleware: a request gets a server span named by its
// method and chi route pattern (not the raw path), continuing the
// trace of its traceparent header, with the status; a nil tracer leaves
// the handler as it is.
func TestTracingMiddleware(t *testing.T) {
	c := tracingtest.StartGRPC(t)
	tel, err := tracing.New(t.Context(), tracing.Options{Traces: &tracing.TraceExport{Protocol: tracing.ProtocolGRPC, URL: "http://" + c.Endpoint(), SampleRatio: 1},
		ExportInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	var inner string
	r := chi.NewRouter()
	r.Use(api.Tracing(tel.Tracer()))
	r.Route("/api/v1", func(r chi.Router) {
		r.Delete("/admin/notification/{notification_id}", func(w http.ResponseWriter, r *http.Request) {
			inner, _ = tel.Tracer().Format(r.Context())
			w.WriteHeader(http.StatusNotFound)
		})
		r.Get("/boom", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	})
	req := httptest.NewRequest(http.MethodDelete, "/api/v1/admin/notification/mars@12", nil)
	req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	r.ServeHTTP(httptest.NewRecorder(), req)
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/v1/boom", nil))
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/nowhere", nil))
	spans := c.WaitSpans(t, 15*time.Second, "three server spans", func(s []tracingtest.Span) bool { return len(s) == 3 })
	d := spans[0]
	if d.Name != "DELETE /api/v1/admin/notification/{notification_id}" || d.Kind != tracingtest.KindServer ||
		d.TraceID != "0af7651916cd43dd8448eb211c80319c" || d.ParentSpanID != "b7ad6b7169203331" ||
		d.Attributes["http.route"] != "/api/v1/admin/notification/{notification_id}" || d.Attributes["http.response.status_code"] != int64(404) ||
		d.Attributes["url.path"] != "/api/v1/admin/notification/mars@12" || d.StatusCode != 0 {
		t.Errorf("span %+v", d)
	}
	if inner != "00-0af7651916cd43dd8448eb211c80319c-"+d.SpanID+"-01" {
		t.Errorf("the handler's context %q, want the server span's", inner)
	}
	if b := spans[1]; b.Name != "GET /api/v1/boom" || b.StatusCode != 2 || b.ParentSpanID != "" {
		t.Errorf("span %+v", b)
	}
	if n := spans[2]; n.Name != "GET" || n.Attributes["http.response.status_code"] != int64(404) {
		t.Errorf("unmatched span %+v", n)
	}

	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if got := api.Tracing(nil)(h); reflect.ValueOf(got).Pointer() != reflect.ValueOf(h).Pointer() {
		t.Fatal("a nil tracer wrapped the handler")
	}
}
