package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/server"
)

// typedBenchDefs is a sensor reading typed by WIRE JSON (the codec of the
// typed event type of the notify benchmark).
const typedBenchDefs = `
CREATE SCHEMA reading (station STRING, step I32, temperature F64, humidity F32 OPTIONAL, at DATETIME);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL, at string);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
`

// typedBenchSchema is the pair of event types the benchmark compares:
// typed (its payload decoded by reading_json and stored as the canonical
// row) and opaque (the same identifiers, no codec: the payload is stored
// as the JSON it is).
const typedBenchSchema = `
codecs: {definitions: %DEFS%}
notification_schema:
  typed:
    payload: {codec: reading_json}
    topic: {base: typed, key_order: [station, step]}
    identifier:
      station: {type: StringHandler, required: true}
      step: {type: IntHandler, required: false}
  opaque:
    topic: {base: opaque, key_order: [station, step]}
    identifier:
      station: {type: StringHandler, required: true}
      step: {type: IntHandler, required: false}
`

// typedBenchPayload is the payload of both notifications, byte for byte.
const typedBenchPayload = `{"station":"ecmwf","step":6,"temperature":21.5,"humidity":0.25,"at":"2026-12-03T12:00:00Z"}`

// typedBenchBody is the notify body of eventType.
func typedBenchBody(eventType string) string {
	return `{"event_type":"` + eventType + `","identifier":{"station":"ecmwf","step":6},"payload":` + typedBenchPayload + `}`
}

// newTypedBenchServer starts herald with the typed and opaque event types
// on backend: "memory" (the in-memory engine) or "jetstream" (an
// embedded nats-server storing in a temporary directory, as herald's
// default backend does).
func newTypedBenchServer(tb testing.TB, backend string) *server.Server {
	tb.Helper()
	dir := tb.TempDir()
	defs := filepath.Join(dir, "defs.nspl")
	if err := os.WriteFile(defs, []byte(typedBenchDefs), 0o600); err != nil {
		tb.Fatal(err)
	}
	var be string
	switch backend {
	case "memory":
		be = "notification_backend: {kind: in_memory}\n"
	case "jetstream":
		be = "notification_backend:\n  kind: jetstream\n  jetstream: {data_dir: " + filepath.Join(dir, "js") + "}\n"
	default:
		tb.Fatalf("backend %q", backend)
	}
	yaml := "application: {host: 127.0.0.1, port: 8000}\nlogging: {level: warn}\nmetrics: {enabled: false}\n" + be +
		strings.Replace(typedBenchSchema, "%DEFS%", defs, 1)
	cfg, err := configs.Parse([]byte(yaml), nil)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv
}

// typedBenchLoopback posts one notify of eventType to the herald at url
// over loopback HTTP (a keep-alive connection of c) and returns how long
// it took, the answer read.
func typedBenchLoopback(tb testing.TB, c *http.Client, url, eventType string) time.Duration {
	start := time.Now()
	resp, err := c.Post(url+"/api/v1/notification", "application/json", strings.NewReader(typedBenchBody(eventType)))
	if err != nil {
		tb.Fatalf("notify %s: %v", eventType, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("notify %s: %d %s %v", eventType, resp.StatusCode, body, err)
	}
	return d
}

// typedBenchNotify serves one notify of eventType through the whole
// router and returns how long it took.
func typedBenchNotify(tb testing.TB, srv *server.Server, eventType string) time.Duration {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/notification", strings.NewReader(typedBenchBody(eventType)))
	w := httptest.NewRecorder()
	start := time.Now()
	srv.ServeHTTP(w, req)
	d := time.Since(start)
	if w.Code != http.StatusOK {
		tb.Fatalf("notify %s: %d %s", eventType, w.Code, w.Body)
	}
	return d
}

// BenchmarkNotifyTyped measures what a typed payload costs a notify:
// POST /api/v1/notification through the whole router in process with a
// WIRE JSON typed payload (decoded by the codec, identifiers merged with
// the record's fields, stored as the canonical row) against the same
// notification, the same payload bytes, to an event type without a
// codec (stored as the JSON it is), on the in-memory engine and on
// embedded JetStream; jetstream-loopback is the JetStream variant over
// loopback HTTP (herald's HTTP server, one keep-alive client connection),
// the deployment's case. Each iteration serves one notify of each,
// alternately (which goes first alternates too), so that the machine's
// load weighs on both alike; it reports the median time of each
// (opaque-ns/op, typed-ns/op) and the throughput ratio opaque/typed
// (typed notifies per second against opaque ones; the goal is ≥ 0.8).
func BenchmarkNotifyTyped(b *testing.B) {
	for _, variant := range []string{"memory", "jetstream", "jetstream-loopback"} {
		b.Run(variant, func(b *testing.B) {
			backend, loopback := strings.CutSuffix(variant, "-loopback")
			srv := newTypedBenchServer(b, backend)
			serve := func(eventType string) time.Duration { return typedBenchNotify(b, srv, eventType) }
			if loopback {
				url, c := benchListen(b, srv, 1, variant)
				serve = func(eventType string) time.Duration { return typedBenchLoopback(b, c, url, eventType) }
			}
			types := [2]string{"opaque", "typed"}
			var spent [2][]time.Duration
			n := 0
			for b.Loop() {
				first := n % 2
				spent[first] = append(spent[first], serve(types[first]))
				spent[1-first] = append(spent[1-first], serve(types[1-first]))
				n++
			}
			opaque, typed := median(spent[0]), median(spent[1])
			b.ReportMetric(opaque, "opaque-ns/op")
			b.ReportMetric(typed, "typed-ns/op")
			b.ReportMetric(opaque/typed, "typed:opaque")
		})
	}
}

// benchListen serves srv on a loopback port with its own HTTP server
// and returns its URL and a client keeping up to conns connections
// alive (newBenchHTTPClient); both end with tb. The server's goroutines
// carry the profiler label herald=label, so that a CPU profile of a
// benchmark with several heralds tells them apart (go tool pprof
// -tagfocus herald=label).
func benchListen(tb testing.TB, srv *server.Server, conns int, label string) (string, *http.Client) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	hs := srv.HTTPServer()
	go pprof.Do(context.Background(), pprof.Labels("herald", label), func(context.Context) { _ = hs.Serve(ln) })
	c := newBenchHTTPClient(conns)
	tb.Cleanup(func() {
		c.CloseIdleConnections()
		_ = hs.Close()
	})
	return "http://" + ln.Addr().String(), c
}

// TestNotifyTypedBench is the smoke test of BenchmarkNotifyTyped: on
// both engines, one notify of each event type is accepted (the opaque
// one in process, the typed one over loopback HTTP), and what is
// stored differs as it should (the typed record as the canonical row
// with its fingerprint in the content type, the opaque one as the
// payload bytes), so the benchmark compares the two paths it names.
func TestNotifyTypedBench(t *testing.T) {
	for _, backend := range []string{"memory", "jetstream"} {
		t.Run(backend, func(t *testing.T) {
			srv := newTypedBenchServer(t, backend)
			typedBenchNotify(t, srv, "opaque")
			url, c := benchListen(t, srv, 1, backend)
			typedBenchLoopback(t, c, url, "typed")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			opaque := readOne(ctx, t, srv.Engine(), "opaque")
			typed := readOne(ctx, t, srv.Engine(), "typed")
			if got := string(opaque.Payload); got != typedBenchPayload {
				t.Errorf("opaque payload stored as %q, want the bytes posted", got)
			}
			if string(typed.Payload) == typedBenchPayload || typed.ContentType == opaque.ContentType {
				t.Errorf("typed payload stored as the opaque one (content type %q): the codec did not run", typed.ContentType)
			}
			if !strings.HasPrefix(typed.ContentType, "application/vnd.herald.row+cbor; fingerprint=") {
				t.Errorf("typed content type %q, want the canonical row with its fingerprint", typed.ContentType)
			}
		})
	}
}

// readOne reads the only record of stream.
func readOne(ctx context.Context, t *testing.T, eng engine.Engine, stream string) *engine.Record {
	t.Helper()
	rd, err := eng.History(ctx, engine.Query{Stream: stream}, engine.Range{ToSeq: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	recs, _, err := rd.Next(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%s holds %d records, want 1", stream, len(recs))
	}
	return recs[0]
}
