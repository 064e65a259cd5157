package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shippedDefs is the shipped example definitions file, absolute: the
// test config is written in a temporary directory, and a relative path
// would be relative to that directory.
var shippedDefs = func() string {
	p, err := filepath.Abs("../../configs/codecs/examples.nspl")
	if err != nil {
		panic(err)
	}
	return p
}()

// typedConfig adds an event type whose payload is typed by the shipped
// example codec reading_cbor (configs/codecs/examples.nspl).
var typedConfig = testConfig + `  reading:
    payload: {codec: reading_cbor}
    topic: {base: reading, key_order: [sensor]}
    identifier:
      sensor: {type: StringHandler, required: false}
codecs:
  definitions: ` + shippedDefs + `
`

const readingCBOR = "../../configs/codecs/payloads/reading.cbor"

// TestRawNotify: --raw sends a typed payload in its wire format to POST
// /api/v1/events/{event_type} and prints the stored ids; identifiers go
// as query parameters; the server's refusals are exit 1 with its
// message. The typed payload reads back in the row view and, with
// --format, in another codec's output. On both engines.
func TestRawNotify(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, typedConfig)
		u := "--url=" + h.url
		if r := runCLI(t, nil, nil, "notify", "reading", "--raw", readingCBOR, "--content-type", "application/cbor", u); r.code != 0 || r.stdout != "reading@1\n" || r.stderr != "" {
			t.Fatalf("raw: %+v", r)
		}
		payload, err := os.ReadFile(readingCBOR)
		if err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, nil, bytesReader(payload), "notify", "reading", "sensor=t-01", "--raw", "-", "--content-type", "application/cbor", u); r.code != 0 || r.stdout != "reading@2\n" {
			t.Fatalf("raw from stdin with the identifier: %+v", r)
		}
		cases := []struct {
			args   []string
			stderr string
		}{
			{[]string{"sensor=t-02", "--raw", readingCBOR, "--content-type", "application/cbor"},
				"herald notify: the server refused: 400 Bad Request INVALID_NOTIFICATION_REQUEST: record 0: identifier 'sensor' disagrees with the record's field 'sensor': send the same value, or leave it out and let the record fill it\n"},
			{[]string{"--raw", readingCBOR, "--content-type", "application/json"},
				"herald notify: the server refused: 415 Unsupported Media Type UNSUPPORTED_MEDIA_TYPE: event type 'reading' takes its raw payload in the format of codec 'reading_cbor' (CBOR): send it with Content-Type application/cbor, not Content-Type \"application/json\"\n"},
			{[]string{"--raw", "/nonexistent.cbor", "--content-type", "application/cbor"},
				"herald notify: --raw: /nonexistent.cbor: no such file or directory\nRun 'herald notify --help' for usage.\n"},
		}
		for _, c := range cases {
			r := runCLI(t, nil, nil, append([]string{"notify", "reading", u}, c.args...)...)
			if r.code == 0 || r.stdout != "" || r.stderr != c.stderr {
				t.Errorf("%q: exit %d stdout %q stderr\n%s\nwant\n%s", c.args, r.code, r.stdout, r.stderr, c.stderr)
			}
		}
		// (JetStream keeps one notification per subject by default: both
		// have sensor t-01, so it replays the second only.)
		want := replayHTTP(t, h.url, `{"event_type":"reading","identifier":{},"from_id":"0","format":"reading_json"}`)
		if r := runCLI(t, nil, nil, "replay", "reading", "--from", "0", "--format", "reading_json", "--output", "json", u); r.code != 0 || len(want) == 0 ||
			r.stdout != strings.Join(want, "\n")+"\n" || !strings.Contains(r.stdout, `"heraldcodec":"reading_json"`) {
			t.Fatalf("replay --format: %+v\nwant %q", r, want)
		}
		rows := replayHTTP(t, h.url, `{"event_type":"reading","identifier":{"sensor":"t-01"},"from_id":"2"}`)
		line := "reading@2  " + timeOf(t, rows[0]) + `  sensor=t-01  {"sensor":"t-01","at":"2026-09-24T08:15:00.123456789Z","value":21.5,"sa…` + "\n"
		if r := runCLI(t, nil, nil, "replay", "reading", "sensor=t-01", "--from", "2", u); r.code != 0 || r.stdout != line {
			t.Fatalf("replay, row view: %q\nwant %q", r.stdout, line)
		}
		// The schema shows the codec, its SHOW CREATE text indented.
		schema := `reading
  payload: required
    codec: reading_cbor
    fingerprint: FP
    format: CBOR
    formats: json, reading_avro, reading_cbor, reading_json
    media_type: application/cbor
    schema:
      CREATE SCHEMA reading (
        sensor STRING,
        at DATETIME,
        value F64,
        samples VEC<F32>,
        tags ARRAY<STRING, 2> OPTIONAL,
        raw BYTES OPTIONAL,
        secret STRING OPTIONAL SENSITIVE
      );
  sensor  StringHandler  optional
`
		r := runCLI(t, nil, nil, "schema", "reading", u)
		if got := regexp.MustCompile(`fingerprint: [0-9a-f]{16}\n`).ReplaceAllString(r.stdout, "fingerprint: FP\n"); r.code != 0 || got != schema {
			t.Fatalf("schema reading:\n%s\nwant\n%s", r.stdout, schema)
		}
	})
}
