package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	herald "github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
	"github.com/herald-gateway/herald/tracing"
)

// testConfig is the base config of the HTTP tests: a MARS-like stream, a
// polygon stream, a point-cloud stream and an optional-field stream.
const testConfig = `
application:
  host: 127.0.0.1
  port: 8000
  base_url: "http://herald.test"
notification_backend:
  kind: in_memory
  in_memory:
    max_history_per_topic: 1000
    max_topics: 10000
watch_endpoint:
  sse_heartbeat_interval_sec: 30
  connection_max_duration_sec: 3600
  replay_batch_size: 3
  replay_batch_delay_ms: 0
  max_historical_notifications: 10000
notification_schema:
  mars:
    payload:
      required: false
    topic:
      base: mars
      key_order: [class, expver, domain, date, time, stream, step]
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true, description: "MARS class."}
      expver: {type: ExpverHandler, default: "1", required: false}
      domain: {type: EnumHandler, values: [g, m], required: false}
      date: {type: DateHandler, canonical_format: "%Y%m%d", required: false}
      time: {type: TimeHandler, required: false}
      stream: {type: StringHandler, max_length: 16, required: false}
      step: {type: IntHandler, range: [0, 1000], required: false}
  dissemination:
    payload:
      required: true
    topic:
      base: diss
      key_order: [target, date]
    identifier:
      target: {type: StringHandler, required: false}
      date: {type: DateHandler, canonical_format: "%Y-%m-%d", required: false}
      polygon: {type: PolygonHandler, required: false}
  extreme:
    topic:
      base: extreme
      key_order: [region, anomaly]
    max_historical_notifications: 3
    identifier:
      region: {type: StringHandler, required: false}
      anomaly: {type: FloatHandler, range: [-100, 100], required: false}
  cloud:
    topic:
      base: cloud
      key_order: [source]
    identifier:
      source: {type: StringHandler, required: false}
      point_cloud: {type: PointCloudHandler, required: true, max_points: 100}
`

// jetStreamSuite is the test that reruns the end-to-end tests on the
// JetStream engine: startServer gives its subtests an embedded JetStream
// engine instead of the in-memory one.
const jetStreamSuite = "TestOnJetStream"

// server is herald's HTTP surface on a loopback port.
type server struct {
	URL      string
	Handlers *handlers.Handlers
	Engine   engine.Engine
	Server   *herald.Server
	srv      *httptest.Server
	path     string // the config file, which a reload reads again
}

// startServer starts herald in-process with the given config YAML and
// optional edits applied to the loaded config, on the suite's engine
// (suiteEngine).
func startServer(t testing.TB, yaml string, edit func(*configs.Config)) *server {
	t.Helper()
	return start(t, yaml, startOptions{edit: edit})
}

// startOptions say how start runs herald; the zero value is startServer's.
type startOptions struct {
	// edit changes the loaded config before herald starts.
	edit func(*configs.Config)
	// engine opens the engine for the config; nil is suiteEngine.
	engine func(testing.TB, *configs.Config) engine.Engine
	// tracer traces herald (nil: tracing off).
	tracer *tracing.Tracer
	// logger is herald's log (nil: herald's default).
	logger *slog.Logger
	// writeTimeout bounds one stream write; 0 is generous (5 minutes:
	// the race detector slows publishers in the slow watcher test while
	// the client deliberately reads nothing).
	writeTimeout time.Duration
}

// start is the one way the handlers tests run herald: the config YAML
// written to a file (which a reload reads again) and loaded, the engine
// opened, the server on a loopback port, all closed at the test's end.
func start(t testing.TB, yaml string, o startOptions) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(path, nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if o.edit != nil {
		o.edit(cfg)
	}
	open := o.engine
	if open == nil {
		open = suiteEngine
	}
	eng := open(t, cfg)
	timeout := o.writeTimeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	srv, err := herald.New(context.Background(), cfg, herald.Options{
		ConfigPath: path, Engine: eng, Version: "test", StreamWriteTimeout: timeout, Tracer: o.tracer, Logger: o.logger,
	})
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(func() {
		srv.Close()
		ts.CloseClientConnections()
		ts.Close()
		_ = eng.Close()
	})
	return &server{URL: ts.URL, Handlers: srv.Handlers(), Engine: eng, Server: srv, srv: ts, path: path}
}

// suiteEngine opens the engine of the running test: an embedded
// JetStream engine for the subtests of jetStreamSuite, which reruns the
// end-to-end tests on it, and for fuzz targets (the backend a bad request
// could break); the in-memory engine with the config's limits otherwise.
func suiteEngine(t testing.TB, cfg *configs.Config) engine.Engine {
	t.Helper()
	if onJetStream(t) {
		opts, err := herald.JetStreamOptions(cfg)
		if err != nil {
			t.Fatalf("jetstream options: %v", err)
		}
		return jetstreamtest.Open(t, opts.Streams, nil)
	}
	return memoryEngine(t, cfg)
}

// onJetStream reports whether t runs on the JetStream engine: a subtest
// of jetStreamSuite, or a fuzz target.
func onJetStream(t testing.TB) bool {
	return strings.HasPrefix(t.Name(), jetStreamSuite+"/") || strings.HasPrefix(t.Name(), "Fuzz")
}

// memoryEngine opens the in-memory engine with the config's limits.
func memoryEngine(_ testing.TB, cfg *configs.Config) engine.Engine {
	return engine.NewMemory(engine.MemoryOptions{
		MaxHistoryPerTopic: cfg.NotificationBackend.InMemory.MaxHistoryPerTopic,
		MaxTopics:          cfg.NotificationBackend.InMemory.MaxTopics,
	})
}

// response is a decoded JSON response.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// do sends a request with a JSON (or raw) body and decodes the answer.
func (s *server) do(t *testing.T, method, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: response is not JSON: %v: %s", method, path, err, raw)
		}
	}
	return r
}

// notify publishes one notification and fails the test unless it is stored.
func (s *server) notify(t *testing.T, body string) {
	t.Helper()
	r := s.do(t, http.MethodPost, "/api/v1/notification", body)
	if r.Status != http.StatusOK {
		t.Fatalf("notify %s: status %d: %s", body, r.Status, r.Raw)
	}
}

// event is one Server-Sent Event.
type event struct {
	Name string
	Data map[string]any
	Raw  string
}

// eventStream is an open event stream.
type eventStream struct {
	t      *testing.T
	resp   *http.Response
	events chan event
	errs   chan error
	cancel context.CancelFunc
	// gate, when not nil, holds the reader after the first event until
	// resume closes it.
	gate chan struct{}
}

// open posts a watch/replay request and returns the stream; it fails the
// test unless the answer is a 200 event stream.
func (s *server) open(t *testing.T, path, body string) *eventStream {
	t.Helper()
	return s.openStream(t, path, body, nil)
}

// openPaused is open with a client that stops reading after the first
// event until resume is called.
func (s *server) openPaused(t *testing.T, path, body string) *eventStream {
	t.Helper()
	return s.openStream(t, path, body, make(chan struct{}))
}

// resume lets a paused client read again.
func (st *eventStream) resume() { close(st.gate) }

func (s *server) openStream(t *testing.T, path, body string, gate chan struct{}) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("%s %s: status %d content-type %q: %s", path, body, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	st := &eventStream{t: t, resp: resp, events: make(chan event, 1<<16), errs: make(chan error, 1), cancel: cancel, gate: gate}
	go st.read()
	t.Cleanup(st.close)
	return st
}

func (st *eventStream) close() {
	st.cancel()
	st.resp.Body.Close()
}

// read parses the stream strictly: every event is exactly an `event:`
// line, a `data:` line and a blank line.
func (st *eventStream) read() {
	defer close(st.events)
	br := bufio.NewReaderSize(st.resp.Body, 64<<10)
	gate := st.gate
	for n := 0; ; n++ {
		if n == 1 && gate != nil {
			<-gate
		}
		name, err := br.ReadString('\n')
		if err != nil {
			if err != io.EOF {
				st.errs <- err
			}
			return
		}
		data, err := br.ReadString('\n')
		if err != nil {
			st.errs <- fmt.Errorf("truncated event after %q: %w", name, err)
			return
		}
		blank, err := br.ReadString('\n')
		if err != nil || blank != "\n" {
			st.errs <- fmt.Errorf("event %q not followed by a blank line: %q %v", name, blank, err)
			return
		}
		if !strings.HasPrefix(name, "event: ") || !strings.HasPrefix(data, "data: ") {
			st.errs <- fmt.Errorf("malformed event lines %q %q", name, data)
			return
		}
		ev := event{Name: strings.TrimSuffix(strings.TrimPrefix(name, "event: "), "\n"), Raw: strings.TrimSuffix(strings.TrimPrefix(data, "data: "), "\n")}
		if err := json.Unmarshal([]byte(ev.Raw), &ev.Data); err != nil {
			st.errs <- fmt.Errorf("event %q data is not a JSON object: %v: %s", ev.Name, err, ev.Raw)
			return
		}
		st.events <- ev
	}
}

// next returns the next event, failing the test after the deadline.
func (st *eventStream) next(timeout time.Duration) event {
	st.t.Helper()
	select {
	case ev, ok := <-st.events:
		if !ok {
			select {
			case err := <-st.errs:
				st.t.Fatalf("stream failed: %v", err)
			default:
			}
			st.t.Fatalf("stream ended, expected another event")
		}
		return ev
	case err := <-st.errs:
		st.t.Fatalf("stream failed: %v", err)
	case <-time.After(timeout):
		st.t.Fatalf("no event within %v", timeout)
	}
	return event{}
}

// skipBeats returns the next event that is not a heartbeat.
func (st *eventStream) skipBeats(timeout time.Duration) event {
	st.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ev := st.next(time.Until(deadline))
		if ev.Name != "heartbeat" {
			return ev
		}
	}
}

// expectEnd asserts the body ends with no further event.
func (st *eventStream) expectEnd(timeout time.Duration) {
	st.t.Helper()
	select {
	case ev, ok := <-st.events:
		if ok {
			st.t.Fatalf("expected end of stream, got event %s %s", ev.Name, ev.Raw)
		}
	case err := <-st.errs:
		st.t.Fatalf("stream failed: %v", err)
	case <-time.After(timeout):
		st.t.Fatalf("stream did not end within %v", timeout)
	}
}

// all reads every event until the stream ends.
func (st *eventStream) all(timeout time.Duration) []event {
	st.t.Helper()
	var out []event
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-st.events:
			if !ok {
				select {
				case err := <-st.errs:
					st.t.Fatalf("stream failed: %v", err)
				default:
				}
				return out
			}
			out = append(out, ev)
		case <-deadline:
			st.t.Fatalf("stream did not end within %v; got %d events", timeout, len(out))
		}
	}
}

// names lists the event names, and for CloudEvents "name:id".
func names(evs []event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch {
		case ev.Data["specversion"] != nil:
			out[i] = ev.Name + ":" + ev.Data["id"].(string)
		case ev.Data["type"] != nil:
			out[i] = ev.Name + ":" + ev.Data["type"].(string)
		case ev.Name == "connection-closing":
			out[i] = ev.Name + ":" + ev.Data["reason"].(string)
		default:
			out[i] = ev.Name
		}
	}
	return out
}

func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

const wait = 5 * time.Second
