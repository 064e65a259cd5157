package handlers_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tooLargeDefs are typed payloads that grow when decoded: a short JSON
// number becomes an 8-byte F64 in the stored record, an Avro float a
// 4-byte F32 with its CBOR head.
const tooLargeDefs = `
CREATE SCHEMA series (id STRING, samples VEC<F64>);
CREATE WIRE JSON SCHEMA series_wire MODE STRICT (id string, samples array);
CREATE CODEC series_json FROM WIRE JSON SCHEMA series_wire TO SCHEMA series;
CREATE SCHEMA fseries (id STRING, samples VEC<F32>);
CREATE WIRE AVRO SCHEMA fseries_wire MODE STRICT (id STRING, samples ARRAY);
CREATE CODEC fseries_avro FROM WIRE AVRO SCHEMA fseries_wire TO SCHEMA fseries;
`

// tooLargeConfig is a server with the series event types.
func tooLargeConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "defs.nspl")
	if err := os.WriteFile(path, []byte(tooLargeDefs), 0o600); err != nil {
		t.Fatal(err)
	}
	return `
application: {host: 127.0.0.1, port: 8000, base_url: "http://herald.test", max_body_bytes: 4194304}
notification_backend:
  kind: in_memory
  in_memory: {max_history_per_topic: 100, max_topics: 100}
codecs:
  definitions: ` + path + `
notification_schema:
  series:
    payload: {codec: series_json}
    topic: {base: series, key_order: [id]}
    identifier:
      id: {type: StringHandler, required: false}
  fseries:
    payload: {codec: fseries_avro}
    topic: {base: fseries, key_order: [id]}
    identifier:
      id: {type: StringHandler, required: false}
`
}

// samples is a JSON array of n one-digit numbers.
func samples(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]"
}

// tooLargeMessage matches the message of a record over the backend's
// limit, which names both sizes.
var tooLargeMessage = regexp.MustCompile(`the stored notification would be (\d+) bytes, above the backend's limit of 1048576 bytes \(([^)]+)\): send a smaller payload`)

// checkTooLarge checks a too-large message: the record's size above the
// limit (and below what the samples alone take), and the limit.
func checkTooLarge(t *testing.T, what, msg string, minSize int) {
	t.Helper()
	m := tooLargeMessage.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("%s: message %q", what, msg)
	}
	if size, _ := strconv.Atoi(m[1]); size < minSize || size <= 1<<20 {
		t.Fatalf("%s: size %d, want at least %d: %q", what, size, minSize, msg)
	}
}

// TestPayloadTooLarge: a typed payload whose decoded record would exceed
// the backend's limit on one record (NATS's max_payload, 1 MiB by
// default; the in-memory engine applies the same) is refused with 413
// PAYLOAD_TOO_LARGE and a message giving both sizes, on every path that
// stores: notify, batch (by index, storing nothing), raw events, session
// notify and producers. A record just under the limit is stored.
func TestPayloadTooLarge(t *testing.T) {
	s := startServer(t, tooLargeConfig(t), nil)
	const n = 260_000 // 520 kB of JSON, 2.3 MB of F64s
	big := `{"event_type":"series","identifier":{"id":"a"},"payload":{"id":"a","samples":` + samples(n) + `}}`
	small := `{"event_type":"series","identifier":{"id":"a"},"payload":{"id":"a","samples":[1,2]}}`

	r := s.do(t, http.MethodPost, "/api/v1/notification", big)
	if r.Status != http.StatusRequestEntityTooLarge || r.Body["code"] != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("notify: %d %s", r.Status, r.Raw)
	}
	checkTooLarge(t, "notify", r.Body["message"].(string), 8*n)

	r = s.do(t, http.MethodPost, "/api/v1/notifications", `{"notifications":[`+small+`,`+big+`]}`)
	if r.Status != http.StatusRequestEntityTooLarge || r.Body["code"] != "PAYLOAD_TOO_LARGE" ||
		r.Body["message"] != "1 of the batch's 2 notifications are too large to store; nothing was stored" {
		t.Fatalf("batch: %d %s", r.Status, r.Raw)
	}
	errs := r.Body["errors"].([]any)
	if e := errs[0].(map[string]any); len(errs) != 1 || e["index"] != float64(1) || e["code"] != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("batch errors: %v", errs)
	}
	checkTooLarge(t, "batch", errs[0].(map[string]any)["message"].(string), 8*n)
	// With an invalid element too, the batch is a 400 listing both.
	r = s.do(t, http.MethodPost, "/api/v1/notifications", `{"notifications":[`+big+`,{"event_type":"series","identifier":{"nope":"x"}}]}`)
	if r.Status != http.StatusBadRequest || r.Body["code"] != "INVALID_NOTIFICATION_REQUEST" || len(r.Body["errors"].([]any)) != 2 {
		t.Fatalf("mixed batch: %d %s", r.Status, r.Raw)
	}

	// Raw events: an Avro payload of 250k floats (1 MB) stores 1.25 MB.
	codecs := newTestCodecs(t, tooLargeDefs)
	const fn = 250_000
	avro := codecs.encode(t, "fseries_avro", `{"id":"b","samples":`+samples(fn)+`}`)
	r = s.post(t, "/api/v1/events/fseries?id=b", "application/avro", avro)
	if r.Status != http.StatusRequestEntityTooLarge || r.Body["code"] != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("events: %d %s", r.Status, r.Raw)
	}
	checkTooLarge(t, "events", r.Body["message"].(string), 5*fn)

	// Sessions: notify and a producer's batch.
	c := s.dial(t, nil)
	c.welcome()
	body := strings.TrimPrefix(strings.TrimSuffix(big, "}"), "{")
	rep := c.reply("notify", body)
	e, _ := rep["error"].(map[string]any)
	if rep["ok"] != false || e["code"] != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("session notify: %v", rep)
	}
	checkTooLarge(t, "session notify", e["message"].(string), 8*n)
	c.ok("open_producer", `"producer":"p","event_type":"series"`)
	rep = c.reply("publish", `"producer":"p","batch":[{"identifier":{"id":"a"},"payload":{"id":"a","samples":[1]}},{"identifier":{"id":"a"},"payload":{"id":"a","samples":`+samples(n)+`}}]`)
	e, _ = rep["error"].(map[string]any)
	perrs, _ := rep["errors"].([]any)
	if rep["outcome"] != "not_admitted" || e["code"] != "PAYLOAD_TOO_LARGE" || len(perrs) != 1 {
		t.Fatalf("producer: %v", rep)
	}
	if pe := perrs[0].(map[string]any); pe["index"] != float64(1) || pe["code"] != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("producer errors: %v", perrs)
	}
	checkTooLarge(t, "producer", perrs[0].(map[string]any)["message"].(string), 8*n)

	// Nothing was stored by any of them.
	for _, et := range []string{"series", "fseries"} {
		if r := s.do(t, http.MethodPost, "/api/v1/replay", `{"event_type":"`+et+`","identifier":{},"from_id":"1"}`); strings.Contains(r.Raw, et+"@") {
			t.Fatalf("%s: a refused notification was stored: %s", et, r.Raw)
		}
	}
	// Under the limit: stored (100k F64s are 900 kB).
	if r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"series","identifier":{"id":"a"},"payload":{"id":"a","samples":`+samples(100_000)+`}}`); r.Status != http.StatusOK {
		t.Fatalf("under the limit: %d %s", r.Status, r.Raw)
	}
}
