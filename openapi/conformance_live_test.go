package openapi_test

// These tests start herald as it runs (server.New on a configuration file,
// served over a real listener) and check its answers on the routes added
// after the first document — reload, the WebSocket session, the global
// 404/405, compressed bodies, admin failures, WHERE and the stream ends of
// a reload — against openapi.json: each answer must match its documented
// response, and the document's examples must be answers the code gives.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/openapi"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
)

// exampleConfig is the configuration the document's examples are
// checked on where the shipped configs/config.yaml cannot serve (reloads
// of a file the test rewrites, a backend the test replaces, the in-memory
// kind whose change is refused): its mars event type is the shipped one
// (TestExampleConfigIsTheShippedOne), in memory. Line numbers matter: the
// CONFIG_INVALID example names line 16 (the first line after this text).
const exampleConfig = `
application: {host: 127.0.0.1, port: 8000, base_url: "http://localhost:8000"}
notification_backend: {kind: in_memory, in_memory: {max_history_per_topic: 100, max_topics: 1000}}
notification_schema:
  mars:
    payload: {required: false}
    topic: {base: mars, key_order: [class, expver, domain, date, time, stream, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd, ea, ei, mc], required: true, description: "MARS class, e.g. od for operational data."}
      expver: {type: ExpverHandler, default: "0001", required: false, description: "Experiment version; numbers are zero-padded to four digits."}
      domain: {type: EnumHandler, values: [g, m], required: false, description: "g for global, m for Mediterranean."}
      date: {type: DateHandler, canonical_format: "%Y%m%d", required: false, description: Base date of the forecast.}
      time: {type: TimeHandler, required: false, description: "Base time of the forecast (00, 06, 12 or 18 UTC)."}
      stream: {type: StringHandler, max_length: 8, required: false, description: "MARS stream, e.g. oper or enfo."}
      step: {type: IntHandler, range: [0, 360], required: false, description: Forecast step in hours.}
`

// alertType adds the shipped alert event type to exampleConfig.
const alertType = `  alert:
    payload: {required: true}
    topic: {base: alert, key_order: [region, severity, date]}
    identifier:
      region: {type: EnumHandler, values: [europe, africa, asia, americas, oceania], required: true, description: Region the alert is issued for.}
      severity: {type: IntHandler, range: [1, 5], required: false, description: 1 (minor) to 5 (extreme).}
      date: {type: DateHandler, canonical_format: "%Y-%m-%d", required: false}
      polygon: {type: PolygonHandler, required: false, description: "Affected area as [[lat, lon], ...], first point repeated last."}
`

// live is herald serving a configuration file.
type live struct {
	srv  *server.Server
	ts   *httptest.Server
	path string
}

// startLive starts herald on yaml; eng, when not nil, replaces the
// configured backend.
func startLive(t *testing.T, yaml string, eng engine.Engine) *live {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(path, nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{ConfigPath: path, Engine: eng, Version: "test"})
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close) // runs first: open streams end, then the listener closes
	return &live{srv: srv, ts: ts, path: path}
}

// reply is one complete HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send sends one request to base and reads the whole answer.
func send(t *testing.T, base, method, path string, header map[string]string, body []byte) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

// conform checks an answer against the document entry of method and
// docPath (the templated path, or the raw one for a global answer).
func conform(t *testing.T, r reply, method, docPath string, status int) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s %s: status %d, want %d: %s", method, docPath, r.status, status, r.body)
	}
	for _, e := range openapi.CheckResponse(method, docPath, r.status, r.header, r.body) {
		t.Error(e)
	}
}

// sameAsExample checks that a JSON answer equals a named example of the
// document, request_id aside and with edit applied to the example first.
func sameAsExample(t *testing.T, r reply, method, docPath, name string, edit func(map[string]any)) {
	t.Helper()
	want, ok := openapi.DocExample(method, docPath, r.status, "application/json", name).(map[string]any)
	if !ok {
		t.Errorf("%s %s %d: no JSON example %q", method, docPath, r.status, name)
		return
	}
	want = clone(want)
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Errorf("%s %s %d: body %q: %v", method, docPath, r.status, r.body, err)
		return
	}
	if _, ok := got["request_id"]; ok {
		got["request_id"] = want["request_id"]
	}
	if edit != nil {
		edit(want)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s %s %d: the answer differs from example %q\n got %s\nwant %s", method, docPath, r.status, name, g, w)
	}
}

// sameAsTextExample checks that a plain-text answer equals a named example.
func sameAsTextExample(t *testing.T, r reply, method, docPath, name string) {
	t.Helper()
	want, ok := openapi.DocExample(method, docPath, r.status, "text/plain", name).(string)
	if !ok {
		t.Errorf("%s %s %d: no text example %q", method, docPath, r.status, name)
		return
	}
	if string(r.body) != want {
		t.Errorf("%s %s %d: body %q, example %q says %q", method, docPath, r.status, r.body, name, want)
	}
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestRouteErrorsMatchDocument checks the global answers: 404 on paths no
// route serves and 405, with Allow, on every documented path asked with
// another method.
func TestRouteErrorsMatchDocument(t *testing.T) {
	ts := httptest.NewServer(api.NewRouter(api.Options{Handlers: handlers.New(handlers.Options{})}))
	defer ts.Close()
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/nope"}, {"POST", "/nope"}, {"DELETE", "/api/v1/admin/notification/a/b"},
		{"GET", "/api/v1/schema/a/b"}, {"PUT", "/api/v1/session/x"},
	} {
		r := send(t, ts.URL, c.method, c.path, nil, nil)
		conform(t, r, c.method, c.path, http.StatusNotFound)
		var body struct{ Message string }
		_ = json.Unmarshal(r.body, &body)
		if want := "no route for " + c.method + " " + c.path; body.Message != want {
			t.Errorf("%s %s: message %q, want %q", c.method, c.path, body.Message, want)
		}
	}
	sameAsExample(t, send(t, ts.URL, "GET", "/api/v1/nope", nil, nil), "GET", "/api/v1/nope", "not_found", nil)

	concrete := strings.NewReplacer("{event_type}", "alert", "{notification_id}", "alert@42")
	served := map[string]map[string]bool{} // path -> methods served on it
	for _, key := range openapi.RouteKeys() {
		method, docPath, _ := strings.Cut(key, " ")
		if served[docPath] == nil {
			served[docPath] = map[string]bool{}
		}
		served[docPath][method] = true
	}
	for docPath, methods := range served {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "TRACE"} {
			if methods[m] {
				continue
			}
			r := send(t, ts.URL, m, concrete.Replace(docPath), nil, nil)
			conform(t, r, m, docPath, http.StatusMethodNotAllowed)
		}
	}
	r := send(t, ts.URL, "GET", "/api/v1/watch", nil, nil)
	sameAsExample(t, r, "GET", "/api/v1/watch", "method_not_allowed", nil)

	// The checker refuses a wrong Allow and a 404 on a documented path.
	r.header.Set("Allow", "GET")
	if errs := openapi.CheckResponse("GET", "/api/v1/watch", r.status, r.header, r.body); len(errs) == 0 {
		t.Error("a 405 with a wrong Allow was accepted")
	}
	if errs := openapi.CheckResponse("GET", "/health", http.StatusNotFound, r.header, r.body); len(errs) == 0 {
		t.Error("a 404 of a documented operation that documents none was accepted")
	}
}

// bodyRoutes are the operations that read a request body, with a request
// path and the label and code of their body errors.
var bodyRoutes = []struct {
	method, path, label, code string
}{
	{"POST", "/api/v1/notification", "Invalid Notification Request", "INVALID_NOTIFICATION_REQUEST"},
	{"POST", "/api/v1/notifications", "Invalid Notification Request", "INVALID_NOTIFICATION_REQUEST"},
	{"POST", "/api/v1/watch", "Invalid Watch Request", "INVALID_WATCH_REQUEST"},
	{"POST", "/api/v1/replay", "Invalid Replay Request", "INVALID_REPLAY_REQUEST"},
	{"DELETE", "/api/v1/admin/wipe/stream", "Invalid Wipe Request", "INVALID_REQUEST_SHAPE"},
	{"POST", "/api/v1/admin/reload", "Invalid Reload Request", "INVALID_REQUEST_SHAPE"},
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write(b)
	_ = z.Close()
	return buf.Bytes()
}

// TestContentEncodingAnswersMatchDocument checks the answers of the
// decompression middleware on every route that takes a body: 415 for a
// coding herald does not decode or too many codings, the handler's 400
// for a body that does not decode, and 413 for a body over the limit once
// decoded (a small compressed body).
func TestContentEncodingAnswersMatchDocument(t *testing.T) {
	h := handlers.New(handlers.Options{Settings: handlers.Settings{MaxBodyBytes: 64}})
	ts := httptest.NewServer(api.NewRouter(api.Options{Handlers: h}))
	defer ts.Close()
	bomb := gzipped(bytes.Repeat([]byte(" "), 4096))
	if len(bomb) >= 64 {
		t.Fatalf("the compressed body is %d bytes, not under the limit", len(bomb))
	}
	for _, rt := range bodyRoutes {
		r := send(t, ts.URL, rt.method, rt.path, map[string]string{"Content-Encoding": "compress"}, []byte(`{}`))
		conform(t, r, rt.method, rt.path, http.StatusUnsupportedMediaType)
		sameAsExample(t, r, rt.method, rt.path, "unsupported", nil)
		r = send(t, ts.URL, rt.method, rt.path, map[string]string{"Content-Encoding": "gzip, br, zstd"}, []byte(`{}`))
		conform(t, r, rt.method, rt.path, http.StatusUnsupportedMediaType)
		sameAsExample(t, r, rt.method, rt.path, "too_many", nil)

		r = send(t, ts.URL, rt.method, rt.path, map[string]string{"Content-Encoding": "gzip"}, []byte(`{"not":"gzip"}`))
		conform(t, r, rt.method, rt.path, http.StatusBadRequest)
		sameAsExample(t, r, rt.method, rt.path, "bad_coding", nil)

		r = send(t, ts.URL, rt.method, rt.path, map[string]string{"Content-Encoding": "gzip"}, bomb)
		conform(t, r, rt.method, rt.path, http.StatusRequestEntityTooLarge)
		sameAsExample(t, r, rt.method, rt.path, "payload_too_large", func(ex map[string]any) {
			ex["message"] = strings.Replace(ex["message"].(string), "1048576", "64", 1)
			ex["details"] = ex["message"]
		})
	}
}

// TestDuplicateAuthorizationMatchesDocument sends two Authorization
// headers to every route that authenticates, in both modes.
func TestDuplicateAuthorizationMatchesDocument(t *testing.T) {
	routes := append(append([]target{sessionRoute}, streamRoute...), adminRoutes...)
	for _, mode := range []string{auth.ModeTrustedProxy, auth.ModeDirect} {
		h := authRouter(t, mode, "http://127.0.0.1:1", nil)
		for _, tg := range routes {
			req := httptest.NewRequest(tg.method, tg.path, strings.NewReader(`{}`))
			req.Header["Authorization"] = []string{"Bearer " + token(map[string]any{"username": "bob", "exp": exp()}), "Bearer other"}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			check(t, rec, tg.method, tg.docPath, answer{400, "INVALID_AUTHORIZATION_HEADER", auth.MsgDuplicateAuthorization, nil, ""})
			sameAsExample(t, reply{rec.Code, rec.Header(), rec.Body.Bytes()}, tg.method, tg.docPath, "duplicate_authorization", nil)
		}
	}
}

// failingStreams is the in-memory engine with a stream configuration (as
// the JetStream engine has) that always fails: a reload adding an event
// type fails inside the backend.
type failingStreams struct{ engine.Engine }

func (failingStreams) ConfigureStreams(context.Context, jetstream.StreamPolicy, []jetstream.StreamSpec) error {
	return errors.New("jetstream: creating stream FLOOD: secret backend detail")
}

// TestReloadAnswersMatchDocument reloads a running herald with valid,
// invalid and refused files, bad bodies and query parameters, without a
// file and with a failing backend, and checks every answer and example.
func TestReloadAnswersMatchDocument(t *testing.T) {
	const path = "/api/v1/admin/reload"
	l := startLive(t, exampleConfig, nil)
	reload := func(yaml string, header map[string]string, query, body string) reply {
		t.Helper()
		if yaml != "" {
			if err := os.WriteFile(l.path, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return send(t, l.ts.URL, "POST", path+query, header, []byte(body))
	}
	noFingerprints := func(got reply) func(map[string]any) {
		var b map[string]any
		_ = json.Unmarshal(got.body, &b)
		return func(ex map[string]any) {
			ex["fingerprint"], ex["previous_fingerprint"] = b["fingerprint"], b["previous_fingerprint"]
		}
	}

	r := reload(exampleConfig, nil, "", "")
	conform(t, r, "POST", path, 200)
	sameAsExample(t, r, "POST", path, "unchanged", noFingerprints(r))
	r = reload(exampleConfig+alertType, nil, "", `{"force": false}`)
	conform(t, r, "POST", path, 200)
	sameAsExample(t, r, "POST", path, "added", noFingerprints(r))
	for _, c := range []struct{ query, body string }{{"?force=true", ""}, {"?force=0", `{"force":null}`}, {"", `{"force":true}`}, {"", "  \n"}} {
		r = reload("", nil, c.query, c.body)
		conform(t, r, "POST", path, 200)
	}

	r = reload(exampleConfig+"  broken:\n    identifier:\n      x: {type: NopeHandler}\n", nil, "", "")
	conform(t, r, "POST", path, 400)
	sameAsExample(t, r, "POST", path, "config_invalid", func(ex map[string]any) {
		ex["message"] = strings.ReplaceAll(ex["message"].(string), "/etc/herald/config.yaml", l.path)
	})
	refused := strings.Replace(strings.Replace(exampleConfig, "port: 8000", "port: 8001", 1), "kind: in_memory", "kind: jetstream", 1)
	r = reload(refused, nil, "", "")
	conform(t, r, "POST", path, 409)
	sameAsExample(t, r, "POST", path, "refused", nil)

	// A payload schema change: compatible, breaking (refused), forced.
	typedReloads(t)

	r = reload(exampleConfig, nil, "", `{"force":1}`)
	conform(t, r, "POST", path, 400)
	sameAsExample(t, r, "POST", path, "bad_body", nil)
	for _, body := range []string{`{"forse":true}`, `[]`, `{"force":true,"force":false}`, `nope`} {
		conform(t, reload("", nil, "", body), "POST", path, 400)
	}
	r = reload("", nil, "?force=maybe", "")
	conform(t, r, "POST", path, 400)
	sameAsExample(t, r, "POST", path, "bad_query", nil)

	// Without a file, and with a backend that fails: no backend text.
	ts := httptest.NewServer(api.NewRouter(api.Options{Handlers: handlers.New(handlers.Options{})}))
	r = send(t, ts.URL, "POST", path, nil, nil)
	ts.Close()
	conform(t, r, "POST", path, 501)
	sameAsExample(t, r, "POST", path, "no_file", nil)
	failing := startLive(t, exampleConfig, failingStreams{engine.NewMemory(engine.MemoryOptions{})})
	if err := os.WriteFile(failing.path, []byte(exampleConfig+alertType), 0o600); err != nil {
		t.Fatal(err)
	}
	r = send(t, failing.ts.URL, "POST", path, nil, nil)
	conform(t, r, "POST", path, 500)
	sameAsExample(t, r, "POST", path, "failed", nil)
	if bytes.Contains(r.body, []byte("secret")) {
		t.Errorf("the 500 answer carries the backend's error: %s", r.body)
	}
}

// stream is an open SSE response whose events are read one at a time;
// everything read is kept for the final check.
type stream struct {
	resp   *http.Response
	br     *bufio.Reader
	seen   bytes.Buffer
	cancel context.CancelFunc
}

// openStream starts a watch or replay.
func openStream(t *testing.T, base, path string, body []byte) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	req, err := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	s := &stream{resp: resp, cancel: cancel}
	s.br = bufio.NewReader(io.TeeReader(resp.Body, &s.seen))
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return s
}

// next reads one event and returns its data.
func (s *stream) next(t *testing.T) (string, map[string]any) {
	t.Helper()
	var name string
	var data map[string]any
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (read so far %q)", err, s.seen.String())
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data)
		}
	}
}

// finish reads the stream to its end and checks it against the document.
func (s *stream) finish(t *testing.T, path string) []map[string]any {
	t.Helper()
	if _, err := io.Copy(io.Discard, s.br); err != nil {
		t.Fatalf("reading the stream to its end: %v", err)
	}
	errs, events := openapi.CheckStream("POST", path, s.seen.Bytes())
	for _, e := range errs {
		t.Error(e)
	}
	return events
}

// TestStreamAnswersMatchDocument checks watch and replay: the document's
// 400 examples of cursors and WHERE are the answers to their requests,
// the WHERE request examples select what they say, and a reload ends open
// streams with schema_changed (and resume_from_id) or schema_removed as
// documented.
func TestStreamAnswersMatchDocument(t *testing.T) {
	l := startLive(t, exampleConfig+alertType, nil)
	ident := `"identifier":{"region":"europe","severity":{"gte":1},"date":"2025-07-06"}`
	req := func(extra string) []byte { return []byte(`{"event_type":"alert",` + ident + extra + `}`) }
	cases := []struct {
		path, example string
		body          []byte
		edit          func(map[string]any)
	}{
		{"/api/v1/watch", "where_syntax", req(`,"where":"severity >= 3 AND"`), nil},
		{"/api/v1/replay", "where_syntax", req(`,"from_id":"0","where":"severity >= 3 AND"`), nil},
		{"/api/v1/watch", "where_unknown_field", req(`,"where":"severty >= 3"`), nil},
		{"/api/v1/replay", "where_unknown_field", req(`,"from_id":"0","where":"severty >= 3"`), nil},
		{"/api/v1/watch", "where_value", req(`,"where":"region = 'mars'"`), nil},
		{"/api/v1/replay", "where_value", req(`,"from_id":"0","where":"region = 'mars'"`), nil},
		{"/api/v1/watch", "from_id_whitespace", req(`,"from_id":" 5"`), nil},
		{"/api/v1/replay", "from_id_whitespace", req(`,"from_id":" 5"`), nil},
		{"/api/v1/watch", "from_id_event_id", req(`,"from_id":"alert@41"`), nil},
		{"/api/v1/replay", "from_id_event_id", req(`,"from_id":"alert@41"`), nil},
		{"/api/v1/replay", "to_id_before", req(`,"from_id":"42","to_id":"7"`), nil},
		{"/api/v1/watch", "end_cursor", req(`,"to_id":"7"`), nil},
		{"/api/v1/watch", "both_cursors", req(`,"from_id":"1","from_date":"1751760000"`), nil},
		{"/api/v1/replay", "no_cursor", req(``), nil},
		{"/api/v1/watch", "unknown_field", []byte(`{"event_type":"alert","identifier":{},"foo":1}`), nil},
		{"/api/v1/replay", "unknown_field", []byte(`{"event_type":"alert","identifier":{},"foo":1}`), nil},
		{"/api/v1/notification", "unknown_field", []byte(`{"event_type":"alert","identifier":{},"foo":1}`), nil},
		{"/api/v1/watch", "invalid_json", nil, nil},
		{"/api/v1/watch", "invalid_request_shape", []byte(`{"event_type":"alert"}`), nil},
		{"/api/v1/notification", "invalid_value", []byte(`{"event_type":"alert","identifier":{"region":"europe","severity":7,"date":"2025-07-06"},"payload":{}}`), nil},
		{"/api/v1/notification", "point", []byte(`{"event_type":"alert","identifier":{"region":"europe","severity":3,"date":"2025-07-06","point":"1,2"},"payload":{}}`), nil},
		{"/api/v1/watch", "unknown_event_type", []byte(`{"event_type":"wether_alert","identifier":{}}`), nil},
		{"/api/v1/replay", "unknown_event_type", []byte(`{"event_type":"wether_alert","identifier":{},"from_id":"0"}`), nil},
		{"/api/v1/notification", "unknown_event_type", []byte(`{"event_type":"wether_alert","identifier":{}}`), nil},
	}
	for _, c := range cases {
		r := send(t, l.ts.URL, "POST", c.path, nil, c.body)
		conform(t, r, "POST", c.path, 400)
		sameAsExample(t, r, "POST", c.path, c.example, c.edit)
	}
	// where is unknown on notify.
	r := send(t, l.ts.URL, "POST", "/api/v1/notification", nil, req(`,"where":"severity > 1"`))
	conform(t, r, "POST", "/api/v1/notification", 400)
	if !bytes.Contains(r.body, []byte(`"code":"UNKNOWN_FIELD"`)) {
		t.Errorf("where on notify: %s", r.body)
	}

	// The replay example with where selects what its predicate says.
	for i, n := range []string{
		`"step":6,"stream":"oper"`,  // excluded: BETWEEN 0 AND 6
		`"step":12,"stream":"oper"`, // selected
		`"step":12,"stream":"enfo"`, // excluded: the stream is enfo
		`"step":24,"stream":"oper"`, // selected
	} {
		body := `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12",` + n + `}}`
		if r := send(t, l.ts.URL, "POST", "/api/v1/notification", nil, []byte(body)); r.status != 200 {
			t.Fatalf("notify %d: %d %s", i, r.status, r.body)
		}
	}
	ex := openapi.DocRequestExample("POST", "/api/v1/replay", "where")
	if ex == nil {
		t.Fatal("no replay request example \"where\"")
	}
	events := openStream(t, l.ts.URL, "/api/v1/replay", mustJSON(ex)).finish(t, "/api/v1/replay")
	var ids []any
	for _, ev := range events {
		if ev["event"] == "replay" {
			ids = append(ids, ev["data"].(map[string]any)["id"])
		}
	}
	if fmt.Sprint(ids) != "[mars@2 mars@4]" {
		t.Errorf("replay with where delivered %v, want mars@2 and @4", ids)
	}

	// The watch example with where: a live stream that delivers only
	// what the predicate selects; a reload that changes mars ends it with
	// schema_changed and a resume id, one that removes alert ends a watch
	// of it with schema_removed.
	ex = openapi.DocRequestExample("POST", "/api/v1/watch", "where")
	if ex == nil {
		t.Fatal("no watch request example \"where\"")
	}
	forecast := openStream(t, l.ts.URL, "/api/v1/watch", mustJSON(ex))
	if _, data := forecast.next(t); data["type"] != "connection_established" {
		t.Fatalf("watch opened with %v", data)
	}
	alerts := openStream(t, l.ts.URL, "/api/v1/watch", []byte(`{"event_type":"alert","identifier":{"region":"europe"}}`))
	if _, data := alerts.next(t); data["type"] != "connection_established" {
		t.Fatalf("alert watch opened with %v", data)
	}
	for _, n := range []string{`"step":6,"stream":"oper"`, `"step":12,"stream":"enfo"`} {
		body := `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"20250706","time":"12",` + n + `}}`
		if r := send(t, l.ts.URL, "POST", "/api/v1/notification", nil, []byte(body)); r.status != 200 {
			t.Fatalf("notify: %d %s", r.status, r.body)
		}
	}
	for {
		name, data := forecast.next(t)
		if name == "heartbeat" {
			continue
		}
		if data["id"] != "mars@6" {
			t.Fatalf("the watch delivered %s %v, want mars@6 (mars@5 is not selected)", name, data)
		}
		break
	}
	changed := strings.Replace(exampleConfig, "max_length: 8", "max_length: 16", 1)
	if err := os.WriteFile(l.path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	r = send(t, l.ts.URL, "POST", "/api/v1/admin/reload", nil, nil)
	conform(t, r, "POST", "/api/v1/admin/reload", 200)
	var rep map[string]any
	_ = json.Unmarshal(r.body, &rep)
	if fmt.Sprint(rep["changed"], rep["removed"], rep["streams_ended"]) != "[mars] [alert] 2" {
		t.Errorf("reload report %s", r.body)
	}
	last := func(events []map[string]any) map[string]any {
		if len(events) == 0 {
			return nil
		}
		return events[len(events)-1]["data"].(map[string]any)
	}
	if c := last(forecast.finish(t, "/api/v1/watch")); c["reason"] != "end_of_stream" || c["cause"] != "schema_changed" || c["resume_from_id"] != "7" {
		t.Errorf("the changed event type's watch ended with %v, want end_of_stream (schema_changed) resuming from 7", c)
	}
	if c := last(alerts.finish(t, "/api/v1/watch")); c["reason"] != "end_of_stream" || c["cause"] != "schema_removed" || c["resume_from_id"] != nil {
		t.Errorf("the removed event type's watch ended with %v, want end_of_stream (schema_removed) without a resume id", c)
	}
}

// adminEngine is the in-memory engine whose admin operations fail with err
// (nil: they succeed without doing anything).
type adminEngine struct {
	engine.Engine
	err error
}

func (e *adminEngine) Delete(context.Context, string, uint64) error { return e.err }
func (e *adminEngine) WipeStream(context.Context, string) error     { return e.err }
func (e *adminEngine) WipeAll(context.Context) error                { return e.err }

// TestAdminAnswersMatchDocument checks the admin routes' answers: bad ids
// and stream names, success, not found, the backend unavailable (503,
// Retry-After) and failing (500, no backend text).
func TestAdminAnswersMatchDocument(t *testing.T) {
	const (
		del   = "/api/v1/admin/notification/{notification_id}"
		wipe  = "/api/v1/admin/wipe/stream"
		wipeA = "/api/v1/admin/wipe/all"
	)
	eng := &adminEngine{Engine: engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 10})}
	l := startLive(t, exampleConfig+alertType, eng)
	call := func(method, path, body string) reply {
		return send(t, l.ts.URL, method, path, nil, []byte(body))
	}
	for _, c := range []struct {
		id, example string
	}{{"alert", "bad_id"}, {"alert@0", "zero"}, {"a.b@1", "bad_name"}} {
		r := call("DELETE", "/api/v1/admin/notification/"+c.id, "")
		conform(t, r, "DELETE", del, 400)
		sameAsExample(t, r, "DELETE", del, c.example, nil)
	}
	for _, c := range []struct{ body, example string }{{`{"stream_name":"a.b"}`, "bad_name"}, {`{}`, "bad_body"}} {
		r := call("DELETE", wipe, c.body)
		conform(t, r, "DELETE", wipe, 400)
		sameAsExample(t, r, "DELETE", wipe, c.example, nil)
	}
	for _, c := range []struct {
		err              error
		status           int
		del, wipe, wipeA string // examples
	}{
		{nil, 200, "deleted", "wiped", "wiped"},
		{fmt.Errorf("memory: %w", engine.ErrNotFound), 404, "not_found", "unknown", ""},
		{fmt.Errorf("jetstream: connection to nats://secret:4222 is down: %w", engine.ErrUnavailable), 503, "backend", "backend", "backend"},
		{errors.New("jetstream: secret backend detail"), 500, "backend", "backend", "backend"},
	} {
		eng.err = c.err
		for _, op := range []struct {
			method, path, docPath, body, example string
		}{
			{"DELETE", "/api/v1/admin/notification/alert@42", del, "", c.del},
			{"DELETE", wipe, wipe, `{"stream_name":"ALERT"}`, c.wipe},
			{"DELETE", wipeA, wipeA, "", c.wipeA},
		} {
			if op.example == "" {
				continue
			}
			r := call(op.method, op.path, op.body)
			conform(t, r, op.method, op.docPath, c.status)
			edit := func(ex map[string]any) {
				if op.docPath == del {
					ex["notification_id"] = "alert@42"
				}
				if op.docPath == wipe && c.status == 404 {
					// The example lists the shipped config's event
					// types; this server has two of them.
					ex["message"] = strings.Replace(ex["message"].(string), "alert, mars, sensor, sensor_cbor", "alert, mars", 1)
				}
			}
			if c.status == 404 && op.docPath == wipe {
				r = call(op.method, op.path, `{"stream_name":"NOPE"}`)
			}
			sameAsExample(t, r, op.method, op.docPath, op.example, edit)
			if bytes.Contains(r.body, []byte("secret")) {
				t.Errorf("%s %s %d carries the backend's error: %s", op.method, op.docPath, c.status, r.body)
			}
		}
	}
}

// upgrade is the header of a valid WebSocket upgrade request.
func upgrade(kv ...string) map[string]string {
	h := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(h, kv[i])
		} else {
			h[kv[i]] = kv[i+1]
		}
	}
	return h
}

// TestSessionAnswersMatchDocument checks the WebSocket upgrade of
// GET /api/v1/session: a real handshake (101, then the welcome frame) and
// every refusal before it.
func TestSessionAnswersMatchDocument(t *testing.T) {
	const path = "/api/v1/session"
	h := handlers.New(handlers.Options{Version: "test", Settings: handlers.Settings{AllowedOrigins: []string{"https://ok.example"}}})
	ts := httptest.NewServer(api.NewRouter(api.Options{Handlers: h}))
	defer ts.Close()
	defer h.Shutdown()

	r := send(t, ts.URL, "GET", path, nil, nil)
	conform(t, r, "GET", path, 426)
	sameAsTextExample(t, r, "GET", path, "plain_get")
	r = send(t, ts.URL, "GET", path, upgrade("Sec-WebSocket-Protocol", "chat, superchat"), nil)
	conform(t, r, "GET", path, 400)
	sameAsExample(t, r, "GET", path, "subprotocol", nil)
	r = send(t, ts.URL, "GET", path, upgrade("Sec-WebSocket-Version", "8"), nil)
	conform(t, r, "GET", path, 400)
	sameAsTextExample(t, r, "GET", path, "version")
	if r.header.Get("Sec-WebSocket-Version") != "13" {
		t.Errorf("version mismatch without Sec-WebSocket-Version: 13: %v", r.header)
	}
	r = send(t, ts.URL, "GET", path, upgrade("Sec-WebSocket-Key", ""), nil)
	conform(t, r, "GET", path, 400)
	sameAsTextExample(t, r, "GET", path, "no_key")
	r = send(t, ts.URL, "GET", path, upgrade("Origin", "https://evil.example"), nil)
	conform(t, r, "GET", path, 403)
	sameAsExample(t, r, "GET", path, "origin", nil)

	wsURL := "ws" + strings.TrimPrefix(ts.URL, "http") + path
	for _, offer := range [][]string{{"herald.v1"}, nil, {"chat", "herald.v1"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: offer, HTTPHeader: http.Header{"Origin": {"https://ok.example"}}})
		if err != nil {
			cancel()
			t.Fatalf("dial offering %q: %v", offer, err)
		}
		conform(t, reply{resp.StatusCode, resp.Header, nil}, "GET", path, http.StatusSwitchingProtocols)
		if got, want := resp.Header.Get("Sec-WebSocket-Protocol"), map[bool]string{true: "herald.v1", false: ""}[offer != nil]; got != want {
			t.Errorf("offering %q: Sec-WebSocket-Protocol %q, want %q", offer, got, want)
		}
		_, frame, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reading the first frame: %v", err)
		}
		var welcome map[string]any
		_ = json.Unmarshal(frame, &welcome)
		if welcome["type"] != "welcome" || welcome["protocol"] != "herald.v1" || welcome["server"] != "herald test" {
			t.Errorf("first frame %s", frame)
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
		cancel()
	}

	// The per-user session limit, for a user authenticated on the upgrade.
	auth, err := auth.NewAuthenticator(auth.Options{Config: auth.Config{Enabled: true, Mode: auth.ModeTrustedProxy, JWTSecret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	ha := handlers.New(handlers.Options{Settings: handlers.Settings{Auth: auth.Policy(), Authenticate: auth.Authenticate, Session: handlers.SessionSettings{MaxSessionsPerUser: 1}}})
	tsa := httptest.NewServer(api.NewRouter(api.Options{Handlers: ha, Auth: auth}))
	defer tsa.Close()
	defer ha.Shutdown()
	bob := "Bearer " + token(map[string]any{"username": "bob", "exp": exp()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(tsa.URL, "http")+path, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {bob}}})
	if err != nil {
		t.Fatalf("first session: %v", err)
	}
	defer c.CloseNow()
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatalf("first session's welcome: %v", err)
	}
	r = send(t, tsa.URL, "GET", path, upgrade("Authorization", bob), nil)
	conform(t, r, "GET", path, 429)
	var body struct{ Message string }
	_ = json.Unmarshal(r.body, &body)
	if want := "user 'bob' already has 1 open sessions (session.max_sessions_per_user)"; body.Message != want || r.header.Get("Retry-After") != "10" {
		t.Errorf("429: message %q Retry-After %q, want %q and 10", body.Message, r.header.Get("Retry-After"), want)
	}
	// A refused token, on the upgrade.
	r = send(t, tsa.URL, "GET", path, upgrade("Authorization", "Bearer not.a.jwt"), nil)
	conform(t, r, "GET", path, 401)
	sameAsExample(t, r, "GET", path, "invalid_token", nil)
}

// backendEngine is an engine whose backend reports the given states.
type backendEngine struct {
	engine.Engine
	healthy, ready error
}

func (e *backendEngine) Healthy() error              { return e.healthy }
func (e *backendEngine) Ready(context.Context) error { return e.ready }

// TestHealthAnswersMatchDocument checks /health and /ready with a
// backend that is fine, down and recovering, and down for good.
func TestHealthAnswersMatchDocument(t *testing.T) {
	down := fmt.Errorf("jetstream: not connected to nats://127.0.0.1:4222: %w", engine.ErrUnavailable)
	for _, c := range []struct {
		healthy, ready         error
		health, readyStatus    int
		healthEx, readyExample string
	}{
		{nil, nil, 200, 200, "jetstream", "ready"},
		{down, down, 200, 503, "", "down"},
		{errors.New("jetstream: the embedded server stopped: secret detail"), down, 503, 503, "failed", "down"},
	} {
		eng := &backendEngine{Engine: engine.NewMemory(engine.MemoryOptions{}), healthy: c.healthy, ready: c.ready}
		ts := httptest.NewServer(api.NewRouter(api.Options{Handlers: handlers.New(handlers.Options{Engine: eng})}))
		r := send(t, ts.URL, "GET", "/health", nil, nil)
		conform(t, r, "GET", "/health", c.health)
		if c.healthEx != "" {
			sameAsExample(t, r, "GET", "/health", c.healthEx, nil)
		}
		if bytes.Contains(r.body, []byte("secret")) {
			t.Errorf("/health carries the backend's error: %s", r.body)
		}
		r = send(t, ts.URL, "GET", "/ready", nil, nil)
		conform(t, r, "GET", "/ready", c.readyStatus)
		sameAsExample(t, r, "GET", "/ready", c.readyExample, nil)
		ts.Close()
	}
}

// failingStore is the in-memory engine whose publish, subscribe and
// history fail with err.
type failingStore struct {
	engine.Engine
	err error
}

func (e *failingStore) Publish(context.Context, *notification.Notification) (uint64, time.Time, error) {
	return 0, time.Time{}, e.err
}

func (e *failingStore) Subscribe(context.Context, engine.Query, engine.SubscribeOptions) (*engine.Subscription, error) {
	return nil, e.err
}

func (e *failingStore) LastSeq(context.Context, string) (uint64, error) { return 0, e.err }

func (e *failingStore) History(context.Context, engine.Query, engine.Range) (engine.HistoryReader, error) {
	return nil, e.err
}

// TestBackendFailuresMatchDocument checks notify, watch and replay with a
// backend that is unavailable (503, Retry-After) or fails (500): the
// document's examples, and no backend text in the answer.
func TestBackendFailuresMatchDocument(t *testing.T) {
	eng := &failingStore{Engine: engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 10})}
	l := startLive(t, exampleConfig+alertType, eng)
	notify := []byte(`{"event_type":"alert","identifier":{"region":"europe","severity":3,"date":"2025-07-06","polygon":[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]},"payload":{}}`)
	watch := []byte(`{"event_type":"alert","identifier":{"region":"europe","severity":{"gte":3},"date":"2025-07-06"},"from_id":"1"}`)
	for _, c := range []struct {
		err     error
		status  int
		notify  string
		streams string
	}{
		{fmt.Errorf("jetstream: nats://secret:4222 is down: %w", engine.ErrUnavailable), 503, "backend", "backend"},
		{errors.New("jetstream: secret backend detail"), 500, "storage", "setup"},
	} {
		eng.err = c.err
		r := send(t, l.ts.URL, "POST", "/api/v1/notification", nil, notify)
		conform(t, r, "POST", "/api/v1/notification", c.status)
		sameAsExample(t, r, "POST", "/api/v1/notification", c.notify, nil)
		for _, path := range []string{"/api/v1/watch", "/api/v1/replay"} {
			r = send(t, l.ts.URL, "POST", path, nil, watch)
			conform(t, r, "POST", path, c.status)
			sameAsExample(t, r, "POST", path, c.streams, nil)
			if bytes.Contains(r.body, []byte("secret")) {
				t.Errorf("%s %d carries the backend's error: %s", path, c.status, r.body)
			}
		}
	}
}

// evolveDefs are the codec definitions of the payload schema examples:
// v1; v2 adds an OPTIONAL field; v3 turns the F64 temperature into a
// STRING.
var evolveDefs = []string{`
CREATE SCHEMA reading (station STRING, step I32, temperature F64);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading;
`, `
CREATE SCHEMA reading (station STRING, step I32, temperature F64, humidity F32 OPTIONAL);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading;
`, `
CREATE SCHEMA reading (station STRING, step I32, temperature STRING, humidity F32 OPTIONAL);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature string, humidity number OPTIONAL);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading;
`}

// typedReloads checks the payload schema answers of the reload against
// their examples: a compatible change with a format watcher and a WebSocket
// format subscription open, a breaking one refused, then forced.
func typedReloads(t *testing.T) {
	t.Helper()
	defs := filepath.Join(t.TempDir(), "defs.nspl")
	write := func(v int) {
		if err := os.WriteFile(defs, []byte(evolveDefs[v]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	yaml := `
application: {host: 127.0.0.1, port: 8000}
notification_backend: {kind: in_memory}
codecs: {definitions: ` + defs + `}
notification_schema:
  sensor_reading:
    payload: {codec: reading_json}
    topic: {base: sensor_reading, key_order: [station]}
    identifier:
      station: {type: StringHandler, required: false}
`
	l := startLive(t, yaml, nil)
	const path = "/api/v1/admin/reload"
	fingerprints := func(got reply) func(map[string]any) {
		var b map[string]any
		_ = json.Unmarshal(got.body, &b)
		return func(ex map[string]any) {
			ex["fingerprint"], ex["previous_fingerprint"] = b["fingerprint"], b["previous_fingerprint"]
		}
	}
	for range 2 {
		s := openStream(t, l.ts.URL, "/api/v1/watch", []byte(`{"event_type":"sensor_reading","identifier":{},"format":"reading_json"}`))
		if _, ev := s.next(t); ev["type"] != "connection_established" {
			t.Fatalf("watch: %v", ev)
		}
	}
	write(1)
	r := send(t, l.ts.URL, "POST", path, nil, nil)
	conform(t, r, "POST", path, 200)
	sameAsExample(t, r, "POST", path, "payload_compatible", fingerprints(r))
	write(2)
	r = send(t, l.ts.URL, "POST", path, nil, nil)
	conform(t, r, "POST", path, 409)
	sameAsExample(t, r, "POST", path, "payload_breaking", nil)
	s := openStream(t, l.ts.URL, "/api/v1/watch", []byte(`{"event_type":"sensor_reading","identifier":{}}`))
	s.next(t)
	s = openStream(t, l.ts.URL, "/api/v1/watch", []byte(`{"event_type":"sensor_reading","identifier":{},"format":"reading_json"}`))
	s.next(t)
	r = send(t, l.ts.URL, "POST", path+"?force=true", nil, nil)
	conform(t, r, "POST", path, 200)
	sameAsExample(t, r, "POST", path, "payload_forced", fingerprints(r))
	// The schema of a typed event type lists its payload schema versions,
	// the three the reloads made current, the last in force.
	r = send(t, l.ts.URL, "GET", "/api/v1/schema/sensor_reading", nil, nil)
	conform(t, r, "GET", "/api/v1/schema/{event_type}", 200)
	var sb struct {
		Versions []struct{ Current bool } `json:"payload_schema_versions"`
	}
	if err := json.Unmarshal(r.body, &sb); err != nil || len(sb.Versions) != 3 || !sb.Versions[2].Current || sb.Versions[0].Current {
		t.Fatalf("schema versions after the reloads: %s", r.body)
	}
}
