package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/tracing/tracingtest"
)

// wait bounds every wait of these tests.
const wait = 15 * time.Second

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the JSON lines written so far, decoded.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(s.b.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		delete(m, "time")
		out = append(out, m)
	}
	return out
}

// exportURL is the URL a config's endpoint for c becomes.
func exportURL(c *tracingtest.Collector) string {
	if c.Protocol() == tracingtest.HTTP {
		return c.Endpoint() + "/v1/logs"
	}
	return "http://" + c.Endpoint()
}

// pipeline is a Telemetry exporting to c and the logger herald would
// build on it, with stdout in a buffer.
type pipeline struct {
	tel    *Telemetry
	log    *slog.Logger
	stdout *syncBuffer
}

func newPipeline(t *testing.T, c *tracingtest.Collector, opts Options) *pipeline {
	t.Helper()
	p := &pipeline{stdout: &syncBuffer{}}
	stdout := slog.NewJSONHandler(p.stdout, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: ReplaceAttr})
	opts.Logs = &LogExport{Protocol: c.Protocol(), URL: exportURL(c)}
	opts.Diagnostics = slog.New(stdout).With("component", "otlp")
	tel, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	p.tel = tel
	p.log = slog.New(tel.Handler(stdout, slog.LevelInfo))
	return p
}

// flush exports what is queued.
func (p *pipeline) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.tel.ForceFlush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// collectors starts one collector of each protocol.
func collectors(t *testing.T) []*tracingtest.Collector {
	return []*tracingtest.Collector{tracingtest.StartGRPC(t), tracingtest.StartHTTP(t)}
}

// TestExport logs through the pipeline to a collector over each protocol
// and checks every field of what the collector receives (body,
// severity, attributes with groups as maps, an error as the exception
// attributes, the resource and the scope), that a record below the
// level goes nowhere, and that stdout got the same records.
func TestExport(t *testing.T) {
	for _, c := range collectors(t) {
		t.Run(c.Protocol(), func(t *testing.T) {
			p := newPipeline(t, c, Options{Version: "1.2.3", Env: []string{"HOSTNAME=node-7", "K8S_NAMESPACE_NAME=aviso"}})
			p.log.Info("request", "method", "POST", "status", 200, "request_id", "0b7c5a9e-1d2f-4e3a-9b8c-7d6e5f4a3b2c")
			p.log.Debug("below the level")
			p.log.Warn("slow consumer", slog.Group("stream", "event_type", "mars", "lag_ms", 1500))
			p.log.With("component", "backend").Error("publish failed", "error", errors.New("no responders"))
			if err := p.tel.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := c.Logs()
			type rec struct {
				Body     string
				Severity int32
				Text     string
				Attrs    map[string]any
			}
			want := []rec{
				{"request", 9, "INFO", map[string]any{"method": "POST", "status": int64(200), "request_id": "0b7c5a9e-1d2f-4e3a-9b8c-7d6e5f4a3b2c"}},
				{"slow consumer", 13, "WARN", map[string]any{"stream": map[string]any{"event_type": "mars", "lag_ms": int64(1500)}}},
				{"publish failed", 17, "ERROR", map[string]any{"component": "backend", "exception.message": "no responders", "exception.type": "*errors.errorString"}},
			}
			if len(got) != len(want) {
				t.Fatalf("collector got %d records, want %d: %+v", len(got), len(want), got)
			}
			for i, w := range want {
				g := got[i]
				if g.Body != w.Body || g.SeverityNumber != w.Severity ||
					g.SeverityText != w.Text || !reflect.DeepEqual(g.Attributes, w.Attrs) {
					t.Errorf("record %d = %q %d %q %v, want %+v", i, g.Body, g.SeverityNumber, g.SeverityText, g.Attributes, w)
				}
				if g.TimeUnixNano == 0 {
					t.Errorf("record %d has no timestamp", i)
				}
				if g.Scope != "herald" || g.ScopeVersion != "1.2.3" {
					t.Errorf("record %d scope %q %q", i, g.Scope, g.ScopeVersion)
				}
				res := g.Resource
				if res["service.name"] != "herald" || res["service.version"] != "1.2.3" || res["k8s.pod.name"] != "node-7" ||
					res["k8s.namespace.name"] != "aviso" || res["telemetry.sdk.language"] != "go" {
					t.Errorf("record %d resource %v", i, res)
				}
			}
			var msgs []any
			for _, l := range p.stdout.lines(t) {
				msgs = append(msgs, l["msg"])
			}
			if fmt.Sprint(msgs) != "[request slow consumer publish failed]" {
				t.Errorf("stdout messages %v", msgs)
			}
			if n := p.tel.OTLPExportFailures(); n != 0 {
				t.Errorf("export failures %d, want 0", n)
			}
		})
	}
}

// TestRedaction: a record carrying a sensitive key (at any depth) with a
// value that is not already redacted, or a string with URL credentials,
// is kept out of the export and counted; stdout still gets it, with the
// values redacted. Other records are exported with the password=,
// token= and bearer secrets of their body and strings hidden.
func TestRedaction(t *testing.T) {
	c := tracingtest.StartGRPC(t)
	p := newPipeline(t, c, Options{})
	cases := []struct {
		name     string
		log      func(*slog.Logger)
		exported map[string]any // nil: suppressed
		body     string         // the exported body, when exported
		stdout   string         // a fragment of the stdout line
	}{
		{"benign", func(l *slog.Logger) { l.Info("request handled", "event.name", "api.request.succeeded") },
			map[string]any{"event.name": "api.request.succeeded"}, "request handled", `"event.name":"api.request.succeeded"`},
		{"sensitive key", func(l *slog.Logger) { l.Info("auth check", "api_key", "super-secret") },
			nil, "", `"api_key":"[REDACTED]"`},
		{"sensitive key in any case", func(l *slog.Logger) { l.Info("upstream", "Authorization", "Basic dTpw") },
			nil, "", `"Authorization":"[REDACTED]"`},
		{"sensitive key in a group", func(l *slog.Logger) { l.Info("config", slog.Group("auth", "jwt_secret", "s3cret", "mode", "direct")) },
			nil, "", `"auth":{"jwt_secret":"[REDACTED]","mode":"direct"}`},
		{"sensitive key already redacted", func(l *slog.Logger) {
			l.Info("config", slog.Group("auth", "jwt_secret", "[redacted]", "mode", "direct"), "nats_token", "")
		}, map[string]any{"auth": map[string]any{"jwt_secret": "[redacted]", "mode": "direct"}, "nats_token": ""}, "config",
			`"auth":{"jwt_secret":"[redacted]","mode":"direct"},"nats_token":""`},
		{"URL credentials", func(l *slog.Logger) { l.Info("backend connected", "nats_url", "nats://user:pass@nats:4222") },
			nil, "", `"nats_url":"nats://[REDACTED]@nats:4222"`},
		{"URL credentials in an error", func(l *slog.Logger) {
			l.Warn("dial failed", "error", errors.New("dial nats://u:p@nats:4222/x: refused"))
		}, nil, "", `"error":"dial nats://[REDACTED]@nats:4222/x: refused"`},
		{"URL without credentials", func(l *slog.Logger) { l.Info("backend connected", "nats_url", "nats://nats:4222") },
			map[string]any{"nats_url": "nats://nats:4222"}, "backend connected", `"nats_url":"nats://nats:4222"`},
		{"password in the body", func(l *slog.Logger) { l.Info("login with password=hunter2 done") },
			map[string]any{}, "login with password=[REDACTED] done", `"msg":"login with password=[REDACTED] done"`},
		{"bearer and token in strings", func(l *slog.Logger) {
			l.Info("forwarded", "header", "Bearer abc.DEF-123_x", "query", "a=1&Token: xyz&b=2")
		}, map[string]any{"header": "Bearer [REDACTED]", "query": "a=1&Token: [REDACTED]"}, "forwarded",
			`"header":"Bearer [REDACTED]","query":"a=1&Token: [REDACTED]"`},
	}
	suppressed := 0
	var want []tracingtest.LogRecord
	for _, tc := range cases {
		tc.log(p.log)
		if tc.exported == nil {
			suppressed++
			continue
		}
		want = append(want, tracingtest.LogRecord{Body: tc.body, Attributes: tc.exported})
	}
	p.flush(t)
	got := c.Logs()
	if len(got) != len(want) {
		t.Fatalf("exported %d records, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Body != want[i].Body || !reflect.DeepEqual(got[i].Attributes, want[i].Attributes) {
			t.Errorf("exported record %d: %q %v, want %q %v", i, got[i].Body, got[i].Attributes, want[i].Body, want[i].Attributes)
		}
	}
	if n := p.tel.OTLPSuppressedLogRecords(); n != uint64(suppressed) {
		t.Errorf("suppressed %d, want %d", n, suppressed)
	}
	p.stdout.mu.Lock()
	out := strings.Split(strings.TrimSuffix(p.stdout.b.String(), "\n"), "\n")
	p.stdout.mu.Unlock()
	if len(out) != len(cases) {
		t.Fatalf("stdout has %d lines, want %d:\n%s", len(out), len(cases), strings.Join(out, "\n"))
	}
	for i, tc := range cases {
		if !strings.Contains(out[i], tc.stdout) {
			t.Errorf("%s: stdout line %s, want it to contain %s", tc.name, out[i], tc.stdout)
		}
		for _, secret := range []string{"super-secret", "dTpw", "s3cret", "user:pass", "u:p@", "hunter2", "abc.DEF", "xyz"} {
			if strings.Contains(out[i], secret) {
				t.Errorf("%s: stdout line %s shows %q", tc.name, out[i], secret)
			}
		}
	}
}

// TestExportFailures: a collector that refuses exports, or is not there
// at all, costs one count per failed batch and a warning on stdout, and
// the records of that batch; once it accepts again the next batch goes
// through, uncounted, and stdout says so.
func TestExportFailures(t *testing.T) {
	for _, c := range collectors(t) {
		t.Run(c.Protocol(), func(t *testing.T) {
			p := newPipeline(t, c, Options{})
			c.Refuse(true)
			p.log.Info("lost while refused")
			p.flush(t)
			if n := p.tel.OTLPExportFailures(); n != 1 {
				t.Fatalf("export failures %d after one refused batch, want 1", n)
			}
			p.log.Info("lost too")
			p.flush(t)
			if n := p.tel.OTLPExportFailures(); n != 2 {
				t.Fatalf("export failures %d after two refused batches, want 2", n)
			}
			c.Refuse(false)
			p.log.Info("delivered")
			p.flush(t)
			if n := p.tel.OTLPExportFailures(); n != 2 {
				t.Errorf("export failures %d after an accepted batch, want 2", n)
			}
			if got := c.Logs(); len(got) != 1 || got[0].Body != "delivered" {
				t.Errorf("collector got %+v, want only the delivered record", got)
			}
			if r := c.Requests(); r != 3 {
				t.Errorf("collector saw %d requests, want 3 (no retries)", r)
			}
			var diag []string
			for _, l := range p.stdout.lines(t) {
				if l["component"] == "otlp" {
					diag = append(diag, fmt.Sprint(l["level"], " ", l["msg"], " ", l["endpoint"], " ", l["records"]))
				}
			}
			want := []string{
				"WARN OTLP log export failed; the records of the batch are dropped (stdout has them) " + exportURL(c) + " 1",
				"INFO OTLP log export recovered " + exportURL(c) + " <nil>",
			}
			if !reflect.DeepEqual(diag, want) {
				t.Errorf("diagnostics on stdout:\n%s\nwant\n%s", strings.Join(diag, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("no collector", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
			out := &syncBuffer{}
			stdout := slog.NewJSONHandler(out, nil)
			tel, err := New(context.Background(), Options{Logs: &LogExport{Protocol: proto, URL: "http://" + addr + "/v1/logs"}, Diagnostics: slog.New(stdout)})
			if err != nil {
				t.Fatal(err)
			}
			log := slog.New(tel.Handler(stdout, slog.LevelInfo))
			log.Info("nobody listens")
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			_ = tel.ForceFlush(ctx)
			cancel()
			if n := tel.OTLPExportFailures(); n != 1 {
				t.Errorf("%s: export failures %d, want 1", proto, n)
			}
			if err := tel.Shutdown(context.Background()); err != nil {
				t.Errorf("%s: shutdown: %v", proto, err)
			}
		}
	})
}

// TestStuckCollectorDoesNotBlockLogging: while the collector holds an
// export unanswered, logging goes on at once (the test would hang
// otherwise): the queue keeps the newest records and drops the oldest.
// Once the collector answers, what the queue holds is exported, the
// newest record last.
func TestStuckCollectorDoesNotBlockLogging(t *testing.T) {
	c := tracingtest.StartHTTP(t)
	const queue = 64
	p := newPipeline(t, c, Options{MaxQueueSize: queue, ExportInterval: time.Millisecond})
	release := c.Hold()
	defer release()
	p.log.Info("record 0")
	c.WaitRequests(t, wait, 1)
	const n = 20 * queue
	for i := 1; i < n; i++ {
		p.log.Info(fmt.Sprintf("record %d", i))
	}
	if got := len(c.Logs()); got != 0 {
		t.Fatalf("the held collector has %d records", got)
	}
	release()
	if err := p.tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := c.Logs()
	if len(got) < 2 || len(got) > 2*queue {
		t.Fatalf("exported %d records, want between 2 and %d (the held batch and the queue)", len(got), 2*queue)
	}
	if got[0].Body != "record 0" || got[len(got)-1].Body != fmt.Sprintf("record %d", n-1) {
		t.Errorf("exported %q first and %q last, want record 0 and record %d", got[0].Body, got[len(got)-1].Body, n-1)
	}
	if lines := len(p.stdout.lines(t)); lines != n {
		t.Errorf("stdout has %d lines, want %d", lines, n)
	}
}

// TestNoExport: without an export the handler is stdout's own and the
// counts stay zero.
func TestNoExport(t *testing.T) {
	tel, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	stdout := slog.NewJSONHandler(&bytes.Buffer{}, nil)
	if h := tel.Handler(stdout, slog.LevelInfo); h != slog.Handler(stdout) {
		t.Errorf("handler %T, want the stdout handler itself", h)
	}
	if tel.Exporting() || tel.OTLPExportFailures() != 0 || tel.OTLPSuppressedLogRecords() != 0 {
		t.Error("a Telemetry without export exports or counts")
	}
	if err := tel.ForceFlush(context.Background()); err != nil {
		t.Error(err)
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestNewRefusesBadExports: an endpoint or protocol the exporter could
// not use is an error, not a silent export to localhost.
func TestNewRefusesBadExports(t *testing.T) {
	for _, tc := range []struct {
		e    LogExport
		want string
	}{
		{LogExport{Protocol: ProtocolGRPC, URL: "collector:4317"}, `logging.otlp: endpoint "collector:4317" is not an http(s) URL with a host`},
		{LogExport{Protocol: ProtocolHTTP, URL: "http://"}, `logging.otlp: endpoint "http://" is not an http(s) URL with a host`},
		{LogExport{Protocol: "udp", URL: "http://c:4317"}, `logging.otlp: protocol "udp": use "grpc" or "http"`},
	} {
		if _, err := New(context.Background(), Options{Logs: &tc.e}); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %s", tc.e, err, tc.want)
		}
	}
}
