package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/herald-gateway/herald/internal/testkit"
)

const metricsSecret = "metrics-test-secret"

// metricsConfig is a config with metrics on port, trusted_proxy auth, the
// ECPDS plugin on stream diss (servers: ecpdsURL) and the backend.
func metricsConfig(backend string, port int, ecpdsURL string) string {
	return fmt.Sprintf(`application:
  host: 127.0.0.1
  port: 0
notification_backend:
  %s
watch_endpoint:
  replay_batch_delay_ms: 0
  replay_batch_size: 2
  sse_heartbeat_interval_sec: 3600
auth: {enabled: true, mode: trusted_proxy, jwt_secret: %s, admin_roles: {ecmwf: [admin]}}
metrics:
  enabled: true
  host: 127.0.0.1
  port: %d
ecpds:
  username: svc
  password: pw
  servers: [%s]
  match_key: destination
notification_schema:
  forecast:
    topic: {base: forecast, key_order: [region, step]}
    identifier:
      region: {type: EnumHandler, values: [europe, asia], required: true}
      step: {type: IntHandler, required: false}
  diss:
    topic: {base: diss, key_order: [destination]}
    identifier:
      destination: {type: StringHandler, required: true}
    auth: {required: true, plugins: [ecpds]}
`, backend, metricsSecret, port, ecpdsURL)
}

// scrape reads the metrics listener and parses the text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Request-ID") == "" {
		t.Fatalf("scrape: status %d, X-Request-ID %q", resp.StatusCode, resp.Header.Get("X-Request-ID"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return fams
}

// value returns the value of the series name{labels} (labels as
// "k=v,k=v"): a counter's or gauge's value, a histogram's sample count.
// ok is false when the series does not exist.
func value(fams map[string]*dto.MetricFamily, name, labels string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	want := map[string]string{}
	if labels != "" {
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			want[k] = v
		}
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(want) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// waitValue scrapes until name{labels} has want, or fails at the deadline.
func waitValue(t *testing.T, url, name, labels string, want float64) {
	t.Helper()
	testkit.WaitFor(t, 15*time.Second, fmt.Sprintf("%s{%s} to be %v", name, labels, want), func() bool {
		got, ok := value(scrape(t, url), name, labels)
		return ok && got == want
	})
}

func token(t *testing.T, user string, roles ...string) string {
	t.Helper()
	claims := jwt.MapClaims{"username": user, "realm": "ecmwf", "roles": roles, "exp": time.Now().Add(time.Hour).Unix()}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(metricsSecret))
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + s
}

// call sends one request and returns its status and body.
func call(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsScrape runs herald as main does with metrics on a free
// loopback port, on both engines, does known traffic (notifies, refusals
// with known codes, a 404, an authentication failure, a replay, SSE
// watchers opened and closed, a WebSocket session with a subscription
// and a notify, ECPDS checks, reloads ok, refused and invalid) and
// asserts the exact values of the series.
func TestMetricsScrape(t *testing.T) {
	for _, backend := range []string{"in_memory", "jetstream"} {
		t.Run(backend, func(t *testing.T) { testMetricsScrape(t, backend) })
	}
}

func testMetricsScrape(t *testing.T, backend string) {
	ecpdsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dests := `[]`
		if r.URL.Query().Get("id") == "rita" {
			dests = `[{"name":"CIP","active":true}]`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"destinationList":`+dests+`,"success":"yes"}`)
	}))
	defer ecpdsSrv.Close()
	kind := "kind: in_memory"
	if backend == "jetstream" {
		kind = "kind: jetstream\n  jetstream: {data_dir: " + filepath.Join(t.TempDir(), "js") + "}"
	}
	port := testkit.FreePort(t)
	config := metricsConfig(kind, port, ecpdsSrv.URL)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	var logs testkit.Buffer
	go func() { done <- run(ctx, []string{"--config", path}, nil, &logs, &logs, ready) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr.String()
	case code := <-done:
		t.Fatalf("exited %d: %s", code, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("did not start")
	}
	murl := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	admin, rita, nina := token(t, "ada", "admin"), token(t, "rita", "reader"), token(t, "nina", "reader")

	// Before any traffic: the bounded label sets exist at zero.
	fams := scrape(t, murl)
	for _, s := range []struct{ name, labels string }{
		{"aviso_auth_requests_total", "mode=direct,outcome=service_unavailable"},
		{"aviso_notifications_total", "event_type=unknown,status=rejected"},
		{"aviso_notifications_total", "event_type=diss,status=success"},
		{"aviso_backend_operations_total", "backend=" + backend + ",operation=wipe_all,outcome=error"},
		{"aviso_ecpds_access_decisions_total", "outcome=deny_match_key_missing"},
		{"aviso_ecpds_fetch_total", "outcome=http_5xx"},
		{"herald_stream_ends_total", "transport=websocket,reason=overflow"},
		{"herald_reloads_total", "outcome=refused"},
		{"herald_ecpds_fetches_total", "server=" + ecpdsSrv.URL + ",outcome=unreachable"},
		{"herald_session_subscription_dropped_rows_total", ""},
		{"herald_backend_gaps_total", ""},
	} {
		if v, ok := value(fams, s.name, s.labels); !ok || v != 0 {
			t.Errorf("at start %s{%s} = %v (exists %v), want 0", s.name, s.labels, v, ok)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}

	notify := func(region string, step int) (int, string) {
		return call(t, "POST", base+"/api/v1/notification", "", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":%q,"step":%d}}`, region, step))
	}
	for step := 1; step <= 5; step++ {
		if st, body := notify("europe", step); st != 200 {
			t.Fatalf("notify %d: %d %s", step, st, body)
		}
	}
	if st, _ := notify("mars", 1); st != 400 {
		t.Fatalf("bad region: %d", st)
	}
	if st, _ := call(t, "POST", base+"/api/v1/notification", "", `{"event_type":"nope","identifier":{}}`); st != 400 {
		t.Fatalf("unknown event type: %d", st)
	}
	if st, _ := call(t, "POST", base+"/api/v1/notification", "Bearer not-a-jwt", `{"event_type":"forecast","identifier":{"region":"asia"}}`); st != 401 {
		t.Fatalf("bad token: %d", st)
	}
	if st, _ := call(t, "GET", base+"/nope", "", ""); st != 404 {
		t.Fatalf("/nope: %d", st)
	}
	if st, _ := call(t, "GET", base+"/metrics", "", ""); st != 404 {
		t.Fatalf("/metrics on the API port: %d, want 404", st)
	}
	// A replay of the 5 stored notifications, pages of 2.
	if st, body := call(t, "POST", base+"/api/v1/replay", "", `{"event_type":"forecast","identifier":{"region":"europe"},"from_id":"1"}`); st != 200 || strings.Count(body, "event: replay\n") != 5 {
		t.Fatalf("replay: %d %s", st, body)
	}

	// Two SSE watchers, one of them authenticated.
	watch := func(auth string) (*http.Response, context.CancelFunc) {
		wctx, wcancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(wctx, "POST", base+"/api/v1/watch", strings.NewReader(`{"event_type":"forecast","identifier":{"region":"europe"}}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("watch: %v %v", err, resp)
		}
		return resp, wcancel
	}
	w1, stop1 := watch("")
	defer w1.Body.Close()
	w2, stop2 := watch(rita)
	defer w2.Body.Close()
	waitValue(t, murl, "aviso_sse_connections_active", "route=/api/v1/watch,event_type=forecast", 2)
	waitValue(t, murl, "herald_watchers_open", "transport=sse", 2)
	// The session gauge counts open subscriptions by event type and
	// transport: here two SSE watchers of forecast, none of diss.
	waitValue(t, murl, "herald_session_subscriptions", "event_type=forecast,transport=sse", 2)
	waitValue(t, murl, "aviso_sse_unique_users_active", "route=/api/v1/watch", 1)

	// A WebSocket session: a live subscription, then a notify through it.
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/session"
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"herald.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	read := func(want string) string {
		t.Helper()
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		defer rcancel()
		for {
			_, b, err := c.Read(rctx)
			if err != nil {
				t.Fatalf("session: waiting for %s: %v", want, err)
			}
			if strings.Contains(string(b), want) {
				return string(b)
			}
		}
	}
	send := func(frame string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	read(`"type":"welcome"`)
	send(`{"id":1,"op":"subscribe","name":"s1","event_type":"forecast","identifier":{"region":"europe"}}`)
	if f := read(`"id":1`); !strings.Contains(f, `"ok":true`) {
		t.Fatalf("subscribe: %s", f)
	}
	waitValue(t, murl, "herald_sessions_open", "transport=websocket", 1)
	waitValue(t, murl, "herald_watchers_open", "transport=websocket", 1)
	waitValue(t, murl, "herald_session_subscriptions", "event_type=forecast,transport=websocket", 1)
	waitValue(t, murl, "herald_session_subscriptions", "event_type=forecast,transport=sse", 2)
	send(`{"id":2,"op":"notify","event_type":"forecast","identifier":{"region":"europe","step":6}}`)
	// The live event may come before or after the notify's reply (the
	// reply waits for the backend's acknowledgement; the event for the
	// live feed): read until both have come.
	var reply, events bool
	for !reply || !events {
		f := read(`"type":`)
		switch {
		case strings.Contains(f, `"type":"events"`):
			events = true
		case strings.Contains(f, `"id":2`):
			if !strings.Contains(f, `"ok":true`) {
				t.Fatalf("notify: %s", f)
			}
			reply = true
		}
	}
	// Both SSE watchers get the live notification.
	waitValue(t, murl, "herald_live_deliveries_total", "transport=sse", 2)
	waitValue(t, murl, "herald_live_deliveries_total", "transport=websocket", 1)
	c.Close(websocket.StatusNormalClosure, "")
	waitValue(t, murl, "herald_sessions_open", "transport=websocket", 0)
	waitValue(t, murl, "herald_watchers_open", "transport=websocket", 0)
	waitValue(t, murl, "herald_session_subscriptions", "event_type=forecast,transport=websocket", 0)
	stop1()
	waitValue(t, murl, "aviso_sse_connections_active", "route=/api/v1/watch,event_type=forecast", 1)
	stop2()
	waitValue(t, murl, "aviso_sse_connections_active", "route=/api/v1/watch,event_type=forecast", 0)
	waitValue(t, murl, "herald_session_subscriptions", "event_type=forecast,transport=sse", 0)
	waitValue(t, murl, "aviso_sse_unique_users_active", "route=/api/v1/watch", 0)

	// ECPDS: rita may read CIP (fetched, then cached), not XYZ; nina has
	// no destination; an admin bypasses the check.
	replayDiss := func(auth, dest string) int {
		st, _ := call(t, "POST", base+"/api/v1/replay", auth, `{"event_type":"diss","identifier":{"destination":"`+dest+`"},"from_id":"1"}`)
		return st
	}
	for _, c := range []struct {
		auth, dest string
		status     int
	}{{rita, "CIP", 200}, {rita, "CIP", 200}, {rita, "XYZ", 403}, {nina, "CIP", 403}, {admin, "ANY", 200}} {
		if st := replayDiss(c.auth, c.dest); st != c.status {
			t.Fatalf("replay diss %s: %d, want %d", c.dest, st, c.status)
		}
	}

	// Reloads: unchanged (ok), a new port (refused), an invalid file.
	if st, body := call(t, "POST", base+"/api/v1/admin/reload", admin, ""); st != 200 {
		t.Fatalf("reload: %d %s", st, body)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(config, "  port: 0\n", "  port: 1\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, body := call(t, "POST", base+"/api/v1/admin/reload", admin, ""); st != 409 {
		t.Fatalf("refused reload: %d %s", st, body)
	}
	if err := os.WriteFile(path, []byte("application: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, body := call(t, "POST", base+"/api/v1/admin/reload", admin, ""); st != 400 {
		t.Fatalf("invalid reload: %d %s", st, body)
	}

	// The replay of 5 read pages of 2: 3 pages (the third says it is the
	// end).
	const pages = 3
	fams = scrape(t, murl)
	type series struct {
		name, labels string
		want         float64
	}
	want := []series{
		{"aviso_build_info", "version=" + heraldVersion(), 1},
		{"aviso_http_requests_total", "route=/api/v1/notification,method=POST,status_code=200", 5},
		{"aviso_http_requests_total", "route=/api/v1/notification,method=POST,status_code=400", 2},
		{"aviso_http_requests_total", "route=/api/v1/notification,method=POST,status_code=401", 1},
		{"aviso_http_requests_total", "route=unmatched,method=GET,status_code=404", 2},
		{"aviso_http_requests_total", "route=/api/v1/replay,method=POST,status_code=200", 4},
		{"aviso_http_requests_total", "route=/api/v1/replay,method=POST,status_code=403", 2},
		{"aviso_http_requests_total", "route=/api/v1/watch,method=POST,status_code=200", 2},
		{"aviso_http_requests_total", "route=/api/v1/session,method=GET,status_code=101", 1},
		{"aviso_http_requests_total", "route=/api/v1/admin/reload,method=POST,status_code=200", 1},
		{"aviso_http_requests_total", "route=/api/v1/admin/reload,method=POST,status_code=409", 1},
		{"aviso_http_requests_total", "route=/api/v1/admin/reload,method=POST,status_code=400", 1},
		{"aviso_http_request_duration_seconds", "route=/api/v1/notification,method=POST", 8},
		{"aviso_http_requests_in_flight", "method=POST", 0},
		{"aviso_http_requests_in_flight", "method=GET", 0},
		{"aviso_backend_operations_total", "backend=" + backend + ",operation=publish,outcome=ok", 6},
		{"aviso_backend_operations_total", "backend=" + backend + ",operation=publish,outcome=error", 0},
		{"aviso_backend_operations_total", "backend=" + backend + ",operation=get_batch,outcome=ok", pages},
		{"aviso_backend_operation_duration_seconds", "backend=" + backend + ",operation=publish,outcome=ok", 6},
		{"aviso_notifications_total", "event_type=forecast,status=success", 5},
		{"aviso_notifications_total", "event_type=unknown,status=error", 2},
		{"aviso_notifications_total", "event_type=unknown,status=rejected", 0},
		{"aviso_sse_connections_total", "route=/api/v1/watch,event_type=forecast", 2},
		{"aviso_sse_connections_total", "route=/api/v1/replay,event_type=forecast", 1},
		{"aviso_sse_connections_total", "route=/api/v1/replay,event_type=diss", 3},
		{"aviso_sse_connections_active", "route=/api/v1/replay,event_type=forecast", 0},
		{"aviso_sse_events_sent_total", "route=/api/v1/replay,event_type=forecast", 5},
		{"aviso_sse_events_sent_total", "route=/api/v1/watch,event_type=forecast", 2},
		{"aviso_sse_stream_errors_total", "route=/api/v1/watch,event_type=forecast", 0},
		{"aviso_sse_connection_duration_seconds", "route=/api/v1/watch", 2},
		{"aviso_sse_connection_duration_seconds", "route=/api/v1/replay", 4},
		{"aviso_auth_requests_total", "mode=trusted_proxy,outcome=unauthorized", 1},
		{"aviso_auth_requests_total", "mode=trusted_proxy,outcome=success", 1 + 5 + 3},
		{"aviso_auth_requests_total", "mode=trusted_proxy,outcome=forbidden", 0},
		{"aviso_ecpds_cache_hits_total", "", 2},
		{"aviso_ecpds_cache_misses_total", "", 2},
		{"aviso_ecpds_cache_size", "", 2},
		{"aviso_ecpds_access_decisions_total", "outcome=allow", 2},
		{"aviso_ecpds_access_decisions_total", "outcome=deny_destination", 2},
		{"aviso_ecpds_access_decisions_total", "outcome=admin_bypass", 1},
		{"aviso_ecpds_fetch_total", "outcome=success", 2},
		{"herald_ecpds_fetches_total", "server=" + ecpdsSrv.URL + ",outcome=success", 2},
		{"herald_ecpds_fetch_duration_seconds", "server=" + ecpdsSrv.URL, 2},
		{"herald_notifications_accepted_total", "transport=http,event_type=forecast", 5},
		{"herald_notifications_accepted_total", "transport=websocket,event_type=forecast", 1},
		{"herald_notifications_accepted_total", "transport=http,event_type=diss", 0},
		{"herald_notifications_refused_total", "transport=http,event_type=forecast,code=INVALID_NOTIFICATION_REQUEST", 1},
		{"herald_notifications_refused_total", "transport=http,event_type=unknown,code=UNKNOWN_EVENT_TYPE", 1},
		{"herald_publish_duration_seconds", "event_type=forecast", 6},
		{"herald_watchers_open", "transport=sse", 0},
		{"herald_sessions_open", "transport=sse", 0},
		{"herald_live_deliveries_total", "transport=sse", 2},
		{"herald_live_deliveries_total", "transport=websocket", 1},
		{"herald_stream_ends_total", "transport=sse,reason=end_of_stream", 4},
		{"herald_stream_ends_total", "transport=sse,reason=client_gone", 2},
		{"herald_stream_ends_total", "transport=websocket,reason=client_gone", 1},
		{"herald_stream_ends_total", "transport=sse,reason=overflow", 0},
		{"herald_history_pages_total", "transport=sse", pages},
		{"herald_history_pages_total", "transport=websocket", 0},
		{"herald_session_subscription_dropped_rows_total", "", 0},
		{"herald_backend_reconnects_total", "", 0},
		{"herald_backend_gaps_total", "", 0},
		{"herald_reloads_total", "outcome=ok", 1},
		{"herald_reloads_total", "outcome=refused", 1},
		{"herald_reloads_total", "outcome=error", 1},
		{"aviso_otlp_export_failures_total", "", 0},
		{"aviso_otlp_suppressed_log_records_total", "", 0},
	}
	var bad []string
	for _, s := range want {
		if got, ok := value(fams, s.name, s.labels); !ok || got != s.want {
			bad = append(bad, fmt.Sprintf("%s{%s} = %v (exists %v), want %v", s.name, s.labels, got, ok, s.want))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		t.Errorf("%d series wrong:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d: %s", code, logs.String())
	}
	// Stopped with the server.
	if _, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after exit, the metrics port: %v, want connection refused", err)
	}
}

// TestMetricsDisabled: with metrics.enabled false nothing listens on the
// configured metrics port, and the API port has no /metrics.
func TestMetricsDisabled(t *testing.T) {
	port := testkit.FreePort(t)
	base, stop := startHerald(t, contractConfig+fmt.Sprintf("metrics: {enabled: false, port: %d}\n", port))
	if _, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("metrics disabled, the metrics port: %v, want connection refused", err)
	}
	if st, _ := call(t, "GET", base+"/metrics", "", ""); st != 404 {
		t.Errorf("/metrics on the API port: %d, want 404", st)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestMetricsPortInUse: a metrics port in use fails startup with a
// message naming it, before the embedded JetStream starts.
func TestMetricsPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dir := filepath.Join(t.TempDir(), "js")
	config := strings.Replace(contractConfig, "kind: in_memory\n  in_memory:\n    max_history_per_topic: 100\n",
		"kind: jetstream\n  jetstream: {data_dir: "+dir+"}\n", 1) + fmt.Sprintf("metrics: {enabled: true, port: %d}\n", port)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut testkit.Buffer
	code := run(context.Background(), []string{"--config", path}, nil, &out, &errOut, nil)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	want := "herald: metrics listener on " + addr + " (metrics.host, metrics.port): listen tcp " + addr + ": bind: address already in use\n"
	if code != 1 || errOut.String() != want {
		t.Fatalf("exit %d, stderr %q, want 1 and %q", code, errOut.String(), want)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the JetStream data directory exists (%v): the backend started before the port was checked", err)
	}
}
