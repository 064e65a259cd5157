package handlers_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/rows"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
	"github.com/herald-gateway/herald/codec/workers"
)

// typedDefs are the codec definitions of the typed-payload tests: a
// sensor reading in every codec family (WIRE JSON, CBOR and AVRO, the
// JAQ-native JSON, YAML, TOML, XML and CBOR codecs), SYSLOG, protobuf, a
// schema of every type for the fidelity vectors, and an unfolding codec.
const typedDefs = `
CREATE SCHEMA reading (station STRING, step I32, temperature F64, humidity F32 OPTIONAL, at DATETIME, secret STRING OPTIONAL SENSITIVE);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL, at string, secret string OPTIONAL);
CREATE WIRE CBOR SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL, at string, secret string OPTIONAL);
CREATE WIRE AVRO SCHEMA reading_wire MODE STRICT (station STRING, step INT, temperature DOUBLE, humidity FLOAT OPTIONAL, at STRING, secret STRING OPTIONAL);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_cbor FROM WIRE CBOR SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_avro FROM WIRE AVRO SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_jq FROM JSON TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.readings[]' ON EMITTING '{readings: [.]}';
CREATE CODEC reading_yaml FROM YAML TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
CREATE CODEC reading_toml FROM TOML TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.reading' ON EMITTING '{reading: .}';
CREATE CODEC reading_xml FROM XML TO SCHEMA reading WITH JAQ TRANSFORMATIONS
  ON INGESTION $jaq${station: .a.station, step: (.a.step | tonumber), temperature: (.a.temperature | tonumber), at: .a.at, secret: .a.secret} + (if .a.humidity then {humidity: (.a.humidity | tonumber)} else {} end)$jaq$
  ON EMITTING $jaq${t: "reading", a: ({station, step, temperature, at} + (if .humidity then {humidity} else {} end) + (if .secret then {secret} else {} end))}$jaq$;
CREATE CODEC reading_jcbor FROM CBOR TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';

CREATE SCHEMA syslog_event (facility U8, severity U8, timestamp DATETIME OPTIONAL, hostname STRING OPTIONAL, app_name STRING OPTIONAL,
  proc_id STRING OPTIONAL, msg_id STRING OPTIONAL, structured_data STRING OPTIONAL, message STRING SENSITIVE);
CREATE CODEC syslog_codec FROM SYSLOG TO SCHEMA syslog_event;
CREATE CODEC syslog_json FROM JSON TO SCHEMA syslog_event WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';

CREATE SCHEMA note (user_id U32, payload STRING OPTIONAL, action STRING OPTIONAL);
CREATE CODEC note_proto FROM PROTOBUF USING RESOURCE proto_bundle VERSION 1
  CONFIG {'file' = 'notification.proto', 'include' = '.'} MESSAGE 'nervix.test.Notification'
  TO SCHEMA note WITH JAQ TRANSFORMATIONS ON INGESTION '.user_id //= 0' ON EMITTING '.';
CREATE CODEC note_json FROM JSON TO SCHEMA note WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';

CREATE SCHEMA vec (id STRING, u64 U64, i64 I64, f32 F32, f64 F64, b BOOL, y BYTES, t DATETIME, a ARRAY<F32, 2, 2>,
  v VEC<ARRAY<I16, 2>>, vs VEC<STRING> OPTIONAL, o F64 OPTIONAL);
CREATE WIRE JSON SCHEMA vec_wire MODE STRICT (id string, u64 integer, i64 integer, f32 number, f64 number, b boolean, y bytes,
  t string, a array, v array, vs array OPTIONAL, o number OPTIONAL);
CREATE WIRE CBOR SCHEMA vec_wire MODE STRICT (id string, u64 integer, i64 integer, f32 number, f64 number, b boolean, y bytes,
  t string, a array, v array, vs array OPTIONAL, o number OPTIONAL);
CREATE WIRE AVRO SCHEMA vec_wire MODE STRICT (id STRING, u64 LONG, i64 LONG, f32 FLOAT, f64 DOUBLE, b BOOLEAN, y BYTES,
  t STRING, a ARRAY, v ARRAY, vs ARRAY OPTIONAL, o DOUBLE OPTIONAL);
CREATE CODEC vec_json FROM WIRE JSON SCHEMA vec_wire TO SCHEMA vec ENCODE t AS RFC3339;
CREATE CODEC vec_cbor FROM WIRE CBOR SCHEMA vec_wire TO SCHEMA vec ENCODE t AS RFC3339;
CREATE CODEC vec_avro FROM WIRE AVRO SCHEMA vec_wire TO SCHEMA vec ENCODE t AS RFC3339;

CREATE SCHEMA tick (i I64, note STRING OPTIONAL);
CREATE CODEC ticks FROM JSON TO SCHEMA tick WITH JAQ TRANSFORMATIONS ON INGESTION 'range(.n) | {i: .}' ON EMITTING '.';
CREATE CODEC tick_items FROM JSON TO SCHEMA tick WITH JAQ TRANSFORMATIONS ON INGESTION '.[]' ON EMITTING '.';
CREATE CODEC slow FROM JSON TO SCHEMA tick WITH JAQ TRANSFORMATIONS ON INGESTION 'def f: f; f' ON EMITTING '.';
`

// readingFamilies are the event types of the reading schema, one per
// codec family, with the codec each is typed by.
var readingFamilies = []struct{ eventType, codec string }{
	{"r_json", "reading_json"}, {"r_cbor", "reading_cbor"}, {"r_avro", "reading_avro"}, {"r_jq", "reading_jq"},
	{"r_yaml", "reading_yaml"}, {"r_toml", "reading_toml"}, {"r_xml", "reading_xml"}, {"r_jcbor", "reading_jcbor"},
}

// protoDir is the protobuf resource of the tests.
func protoDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("../configs/codecs/proto")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// typedConfig writes defs to a file and returns the config of the typed
// tests (extra is appended under notification_schema).
func typedConfig(t testing.TB, defs, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "defs.nspl")
	if err := os.WriteFile(path, []byte(defs), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`
application: {host: 127.0.0.1, port: 8000, base_url: "http://herald.test", max_body_bytes: 33554432}
notification_backend:
  kind: in_memory
  in_memory: {max_history_per_topic: 100000, max_topics: 100000}
watch_endpoint: {replay_batch_size: 100, replay_batch_delay_ms: 0, max_historical_notifications: 100000}
codecs:
  definitions: ` + path + `
  resources: [{name: proto_bundle, dir: ` + protoDir(t) + `}]
notification_schema:
`)
	for _, f := range readingFamilies {
		b.WriteString(`  ` + f.eventType + `:
    payload: {codec: ` + f.codec + `}
    topic: {base: ` + f.eventType + `, key_order: [station, step]}
    identifier:
      station: {type: StringHandler, required: false}
      step: {type: IntHandler, range: [0, 360], required: false}
`)
	}
	b.WriteString(`  log:
    payload: {codec: syslog_codec}
    topic: {base: log, key_order: [app_name]}
    identifier:
      app_name: {type: StringHandler, required: false}
  note:
    payload: {codec: note_proto}
    topic: {base: note, key_order: [action]}
    identifier:
      action: {type: StringHandler, required: false}
  vec:
    payload: {codec: vec_cbor}
    topic: {base: vec, key_order: [id]}
    identifier:
      id: {type: StringHandler, required: false}
  vecavro:
    payload: {codec: vec_avro}
    topic: {base: vecavro, key_order: [id]}
    identifier:
      id: {type: StringHandler, required: false}
  tick:
    payload: {codec: ticks}
    topic: {base: tick, key_order: [src, i]}
    identifier:
      src: {type: StringHandler, required: false}
      i: {type: IntHandler, required: false}
  slowpoke:
    payload: {codec: slow}
    topic: {base: slowpoke, key_order: [i]}
    identifier:
      i: {type: IntHandler, required: false}
  plain:
    topic: {base: plain, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`)
	b.WriteString(extra)
	return b.String()
}

// testCodecs compiles typedDefs the way the server does, to build wire
// payloads and read views in the tests.
type testCodecs struct {
	cat *catalog.Catalog
	m   map[string]*codec.Codec
}

func newTestCodecs(t testing.TB, defs string) *testCodecs {
	t.Helper()
	set := resource.NewSet()
	files, err := resource.LoadDir(protoDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Add("proto_bundle", 1, files); err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewWithResources(set)
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	return &testCodecs{cat: cat, m: map[string]*codec.Codec{}}
}

func (c *testCodecs) codec(t testing.TB, name string) *codec.Codec {
	t.Helper()
	if cd, ok := c.m[name]; ok {
		return cd
	}
	cd, err := codec.Compile(c.cat, name, codec.Options{Workers: workers.New(workers.Config{Workers: 1, Timeout: 10 * time.Second})})
	if err != nil {
		t.Fatal(err)
	}
	c.m[name] = cd
	return cd
}

// encode builds the payload of one row-view line with a codec, as
// `herald codec encode` does.
func (c *testCodecs) encode(t testing.TB, name, line string) []byte {
	t.Helper()
	cd := c.codec(t, name)
	b := cd.NewBuilder(nil)
	defer b.Release()
	if _, err := wjson.NewRowViewDecoder(cd.Schema).Decode([]byte(line), b); err != nil {
		t.Fatalf("row view %s: %v", line, err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	out, err := cd.Encoder.AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatalf("%s: encode %s: %v", name, line, err)
	}
	return out
}

// decode reads a payload with a codec and returns its row views
// (SENSITIVE revealed), one per record.
func (c *testCodecs) decode(t testing.TB, name string, payload []byte) []string {
	t.Helper()
	cd := c.codec(t, name)
	b := rows.NewBuilder(nil, cd.Schema)
	defer b.Release()
	if _, err := cd.NewDecoder().Decode(payload, b); err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var out []string
	enc := wjson.NewRowViewEncoder(cd.Schema, true)
	for i := 0; i < int(rec.NumRows()); i++ {
		line, err := enc.AppendRow(nil, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(line))
	}
	return out
}

// post sends a raw body with a content type and decodes the answer.
func (s *server) post(t testing.TB, path, contentType string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
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
			t.Fatalf("POST %s: response is not JSON: %v: %s", path, err, raw)
		}
	}
	return r
}

// payloadText returns the JSON text of data.payload in a CloudEvent as
// rendered (identifier first, then payload, then the end of data).
func payloadText(t testing.TB, raw string) string {
	t.Helper()
	i := strings.Index(raw, `,"payload":`)
	j := strings.Index(raw, `},"datacontenttype"`)
	if i < 0 || j < i {
		t.Fatalf("no payload in %s", raw)
	}
	return raw[i+len(`,"payload":`) : j]
}

// cloudEvents returns the CloudEvents among evs.
func cloudEvents(evs []event) []event {
	var out []event
	for _, ev := range evs {
		if ev.Data["specversion"] != nil {
			out = append(out, ev)
		}
	}
	return out
}

// replayAll replays an event type from the start in a format and returns
// its CloudEvents.
func (s *server) replayAll(t *testing.T, eventType, format string) []event {
	t.Helper()
	body := `{"event_type":"` + eventType + `","identifier":{},"from_id":"1"`
	if format != "" {
		body += `,"format":"` + format + `"`
	}
	return cloudEvents(s.open(t, "/api/v1/replay", body+"}").all(wait))
}

// unbase64 decodes a base64 payload text ("...").
func unbase64(t testing.TB, text string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(strings.Trim(text, `"`))
	if err != nil {
		t.Fatalf("payload %s is not base64: %v", text, err)
	}
	return b
}
