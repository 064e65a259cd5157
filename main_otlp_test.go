package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// otlpConfig is contractConfig with metrics on metricsPort and the log
// exported to c, with a key logging.otlp does not have (ignored, as
// aviso-server ignores it).
func otlpConfig(c *tracingtest.Collector, metricsPort int) string {
	return contractConfig + fmt.Sprintf(`logging:
  level: info
  format: json
  otlp:
    enabled: true
    endpoint: %q
    protocol: %s
    compression: gzip
metrics: {enabled: true, host: 127.0.0.1, port: %d}
`, c.Endpoint(), c.Protocol(), metricsPort)
}

// runOTLP starts herald with config and env, and returns its base URL,
// its stdout and a stop function returning the exit code.
func runOTLP(t *testing.T, config string, env []string) (string, *testkit.Buffer, func() int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	out, errOut := &testkit.Buffer{}, &testkit.Buffer{}
	go func() { done <- run(ctx, []string{"--config", path}, env, out, errOut, ready) }()
	select {
	case addr := <-ready:
		return "http://" + addr.String(), out, func() int {
			cancel()
			select {
			case code := <-done:
				return code
			case <-time.After(time.Minute):
				t.Fatal("herald did not stop")
				return -1
			}
		}
	case code := <-done:
		t.Fatalf("herald exited with %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(20 * time.Second):
		t.Fatal("herald did not start")
	}
	return "", nil, nil
}

// stdoutRecords decodes herald's stdout, one JSON record per line.
func stdoutRecords(t *testing.T, out *testkit.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		recs = append(recs, m)
	}
	return recs
}

// waitAtLeast scrapes until name{labels} is at least want, or fails at
// the deadline (waitValue for a count that only grows).
func waitAtLeast(t *testing.T, url, name, labels string, want float64) float64 {
	t.Helper()
	var got float64
	testkit.WaitFor(t, 15*time.Second, fmt.Sprintf("%s{%s} to reach %v", name, labels, want), func() bool {
		v, ok := value(scrape(t, url), name, labels)
		got = v
		return ok && v >= want
	})
	return got
}

// TestOTLPExport runs herald as main does with logging.otlp pointing at
// an in-process collector, over gRPC and over HTTP. The collector
// receives every record stdout gets (herald's
// startup, the access log line of a notify with the request id its
// answer carried, and "stopped", flushed at shutdown), with the
// resource naming herald and its pod; the two counters of the export
// are served at zero. The warning about the key logging.otlp ignores
// is on both.
func TestOTLPExport(t *testing.T) {
	for _, c := range []*tracingtest.Collector{tracingtest.StartGRPC(t), tracingtest.StartHTTP(t)} {
		t.Run(c.Protocol(), func(t *testing.T) {
			port := testkit.FreePort(t)
			base, out, stop := runOTLP(t, otlpConfig(c, port), []string{"HOSTNAME=herald-pod-1"})
			resp := post(t, base+"/api/v1/notification", `{"event_type":"forecast","identifier":{"region":"europe","step":1}}`)
			resp.Body.Close()
			id := resp.Header.Get("X-Request-ID")
			if resp.StatusCode != http.StatusOK || id == "" {
				t.Fatalf("notify: %d, X-Request-ID %q", resp.StatusCode, id)
			}
			c.WaitLogs(t, 15*time.Second, "the notify's access log record", func(logs []tracingtest.LogRecord) bool {
				for _, l := range logs {
					if l.Attributes["request_id"] == id {
						return true
					}
				}
				return false
			})
			murl := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
			fams := scrape(t, murl)
			for _, name := range []string{"aviso_otlp_export_failures_total", "aviso_otlp_suppressed_log_records_total"} {
				if v, ok := value(fams, name, ""); !ok || v != 0 {
					t.Errorf("%s = %v (exists %v), want 0", name, v, ok)
				}
			}
			if code := stop(); code != 0 {
				t.Fatalf("exit code %d: %s", code, out.String())
			}

			logs := c.Logs()
			recs := stdoutRecords(t, out)
			var exported, printed []string
			for _, l := range logs {
				exported = append(exported, l.SeverityText+" "+l.Body)
			}
			for _, r := range recs {
				printed = append(printed, fmt.Sprint(r["level"], " ", r["msg"]))
			}
			// The same records; two goroutines logging at once may reach
			// the two outputs in different orders, so they are compared
			// sorted.
			sortedExported, sortedPrinted := slices.Sorted(slices.Values(exported)), slices.Sorted(slices.Values(printed))
			if !reflect.DeepEqual(sortedExported, sortedPrinted) {
				t.Fatalf("the collector got\n%s\nstdout has\n%s", strings.Join(exported, "\n"), strings.Join(printed, "\n"))
			}
			if exported[len(exported)-1] != "INFO stopped" {
				t.Errorf("last exported record %q, want the stopped line", exported[len(exported)-1])
			}
			if first := printed[0]; !strings.HasPrefix(first, "WARN logging.otlp.compression (line ") ||
				!strings.HasSuffix(first, ") is not a key of logging.otlp (enabled, endpoint, protocol) and is ignored, as aviso-server ignores it") {
				t.Errorf("first record %q, want the warning about the ignored key", first)
			}
			if last := printed[len(printed)-1]; last != "INFO stopped" {
				t.Errorf("last record %q, want the stopped line", last)
			}
			var req *tracingtest.LogRecord
			for i := range logs {
				if logs[i].Body == "request" && logs[i].Attributes["request_id"] == id {
					req = &logs[i]
				}
				if logs[i].Body == "herald listening" {
					want := "otlp " + c.Protocol() + " http://" + strings.TrimPrefix(c.Endpoint(), "http://")
					if c.Protocol() == tracingtest.HTTP {
						want += "/v1/logs"
					}
					if got := logs[i].Attributes["log_export"]; got != want {
						t.Errorf("herald listening: log_export %v, want %s", got, want)
					}
				}
			}
			if req == nil {
				t.Fatal("no access log record of the notify")
			}
			if req.SeverityNumber != 9 || req.Attributes["method"] != "POST" || req.Attributes["path"] != "/api/v1/notification" ||
				req.Attributes["status"] != int64(200) || !strings.HasPrefix(fmt.Sprint(req.Attributes["remote"]), "127.0.0.1:") {
				t.Errorf("access log record %+v", *req)
			}
			if _, ok := req.Attributes["duration_ms"].(float64); !ok {
				t.Errorf("access log record's duration_ms %T, want a float", req.Attributes["duration_ms"])
			}
			res := req.Resource
			if res["service.name"] != "herald" || res["service.version"] != heraldVersion() || res["k8s.pod.name"] != "herald-pod-1" {
				t.Errorf("resource %v", res)
			}
		})
	}
}

// TestOTLPCollectorRefuses: with a collector that refuses every export,
// herald starts and serves as usual, stdout says the export failed, the
// failed batches are counted on /metrics, and herald stops at once.
func TestOTLPCollectorRefuses(t *testing.T) {
	c := tracingtest.StartHTTP(t)
	c.Refuse(true)
	port := testkit.FreePort(t)
	base, out, stop := runOTLP(t, otlpConfig(c, port), nil)
	resp := post(t, base+"/api/v1/notification", `{"event_type":"forecast","identifier":{"region":"asia","step":2}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("notify: %d", resp.StatusCode)
	}
	waitAtLeast(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/metrics", "aviso_otlp_export_failures_total", "", 1)
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d: %s", code, out.String())
	}
	if n := len(c.Logs()); n != 0 {
		t.Errorf("the refusing collector kept %d records", n)
	}
	var warned int
	for _, r := range stdoutRecords(t, out) {
		if r["component"] == "otlp" {
			warned++
			if r["level"] != "WARN" || r["msg"] != "OTLP log export failed; the records of the batch are dropped (stdout has them)" ||
				r["endpoint"] != c.Endpoint()+"/v1/logs" || !strings.Contains(fmt.Sprint(r["error"]), "tracingtest: collector refuses exports") {
				t.Errorf("export failure line %v", r)
			}
		}
	}
	if warned != 1 {
		t.Errorf("%d export failure lines on stdout, want 1 (then one a minute)", warned)
	}
}
