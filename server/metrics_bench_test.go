package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/server"
)

// benchConfig is an in-memory herald, metrics on port (0: off).
func benchConfig(port int) string {
	m := "metrics: {enabled: false}\n"
	if port != 0 {
		m = fmt.Sprintf("metrics: {enabled: true, port: %d}\n", port)
	}
	return `application: {host: 127.0.0.1, port: 8000}
notification_backend: {kind: in_memory}
notification_schema:
  forecast:
    topic: {base: forecast, key_order: [region, step]}
    identifier:
      region: {type: EnumHandler, values: [europe, asia], required: true}
      step: {type: IntHandler, required: false}
` + m
}

// newBenchServer starts an in-memory herald with metrics on or off.
func newBenchServer(b *testing.B, on bool) *server.Server {
	port := 0
	if on {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	cfg, err := configs.Parse([]byte(benchConfig(port)), nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	if (srv.Metrics() != nil) != on {
		b.Fatalf("metrics on: %v, want %v", srv.Metrics() != nil, on)
	}
	return srv
}

// BenchmarkNotifyMetrics measures what metrics cost a notify: the whole
// router (middleware, handler, in-memory engine) serving POST
// /api/v1/notification in process, with metrics on (the HTTP
// middleware, the notify and backend observers) against the same
// herald with metrics off (the no-op observers). Each iteration serves
// one notify on each, alternately, so that the machine's load weighs on
// both alike; it reports the median time of each (off-ns/op, on-ns/op:
// medians, so that the stalls of a shared machine do not count) and
// their ratio (on/off).
func BenchmarkNotifyMetrics(b *testing.B) {
	servers := [2]*server.Server{newBenchServer(b, false), newBenchServer(b, true)}
	body := `{"event_type":"forecast","identifier":{"region":"europe","step":1}}`
	var spent [2][]time.Duration
	serve := func(srv *server.Server) time.Duration {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/notification", strings.NewReader(body))
		w := httptest.NewRecorder()
		start := time.Now()
		srv.ServeHTTP(w, req)
		d := time.Since(start)
		if w.Code != 200 {
			b.Fatalf("notify: %d %s", w.Code, w.Body)
		}
		return d
	}
	n := 0
	for b.Loop() {
		first := n % 2 // alternate which goes first
		spent[first] = append(spent[first], serve(servers[first]))
		spent[1-first] = append(spent[1-first], serve(servers[1-first]))
		n++
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds())
	}
	off, on := median(spent[0]), median(spent[1])
	b.ReportMetric(off, "off-ns/op")
	b.ReportMetric(on, "on-ns/op")
	b.ReportMetric(on/off, "on/off")
}
