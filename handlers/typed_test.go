package handlers_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/workers"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/notification"
)

const readingLine = `{"station":"s1","step":12,"temperature":21.5,"humidity":0.25,"at":"2026-12-03T10:00:00.123456789Z","secret":"pin"}`

// embed writes a payload of codec cd as the JSON value a notify body or
// a CloudEvent carries: JSON as it is, text as a string, binary as
// base64.
func embed(cd *codec.Codec, payload []byte) string {
	switch cd.Format {
	case types.JSON:
		return string(payload)
	case types.CBOR, types.AVRO, types.PROTOBUF:
		return `"` + base64.StdEncoding.EncodeToString(payload) + `"`
	}
	return string(jsonstr.Append(nil, string(payload)))
}

// TestTypedEveryCodec: every codec family notifies (raw and through the
// JSON body) and is watched in the default row view, in its own format
// and in another one; the SENSITIVE field is masked in every view.
func TestTypedEveryCodec(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	cs := newTestCodecs(t, typedDefs)
	masked := strings.Replace(readingLine, `"pin"`, `"***"`, 1)
	for _, f := range readingFamilies {
		cd := cs.codec(t, f.codec)
		payload := cs.encode(t, f.codec, readingLine)
		r := s.post(t, "/api/v1/events/"+f.eventType, notification.MediaType(cd.Format), payload)
		if r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "["+f.eventType+"@1]" || r.Body["count"] != 1.0 {
			t.Fatalf("%s raw: %d %s", f.codec, r.Status, r.Raw)
		}
		s.notify(t, `{"event_type":"`+f.eventType+`","identifier":{"station":"s1"},"payload":`+embed(cd, payload)+`}`)
		evs := s.replayAll(t, f.eventType, "")
		if len(evs) != 2 {
			t.Fatalf("%s: %d events", f.codec, len(evs))
		}
		for i, ev := range evs {
			if got := payloadText(t, ev.Raw); got != masked {
				t.Fatalf("%s event %d row view\n got %s\nwant %s", f.codec, i, got, masked)
			}
			if id := jsonString(ev.Data["data"].(map[string]any)["identifier"]); id != `{"station":"s1","step":"12"}` || ev.Data["heraldcodec"] != nil {
				t.Fatalf("%s: %s", f.codec, ev.Raw)
			}
		}
		other := "reading_json"
		if f.codec == other {
			other = "reading_avro"
		}
		for _, format := range []string{f.codec, other} {
			vc := cs.codec(t, format)
			want := embed(vc, cs.encode(t, format, masked))
			for _, ev := range s.replayAll(t, f.eventType, format) {
				if got := payloadText(t, ev.Raw); got != want {
					t.Fatalf("%s in %s\n got %s\nwant %s", f.codec, format, got, want)
				}
				if ev.Data["heraldcodec"] != format || ev.Data["heraldformat"] != vc.Format.String() || ev.Data["datacontenttype"] != "application/json" {
					t.Fatalf("%s in %s: %s", f.codec, format, ev.Raw)
				}
			}
		}
		if strings.Contains(s.replayAll(t, f.eventType, "reading_yaml")[0].Raw, "pin") {
			t.Fatalf("%s: the SENSITIVE value reached a watcher", f.codec)
		}
	}

	// SYSLOG: text/plain; the SENSITIVE message is masked.
	frame := "<134>1 2026-12-03T10:00:00.123456Z host-1 app - - - hello secret"
	r := s.post(t, "/api/v1/events/log", "text/plain; charset=utf-8", []byte(frame))
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[log@1]" {
		t.Fatalf("syslog: %d %s", r.Status, r.Raw)
	}
	ev := s.replayAll(t, "log", "")[0]
	if got, want := payloadText(t, ev.Raw), `{"facility":16,"severity":6,"timestamp":"2026-12-03T10:00:00.123456Z","hostname":"host-1","app_name":"app","proc_id":null,"msg_id":null,"structured_data":null,"message":"***"}`; got != want {
		t.Fatalf("syslog row view\n got %s\nwant %s", got, want)
	}
	if got, want := payloadText(t, s.replayAll(t, "log", "syslog_codec")[0].Raw), `"<134>1 2026-12-03T10:00:00.123456Z host-1 app - - - ***"`; got != want {
		t.Fatalf("syslog own\n got %s\nwant %s", got, want)
	}
	if got, want := payloadText(t, s.replayAll(t, "log", "syslog_json")[0].Raw), `{"facility": 16, "severity": 6, "timestamp": "2026-12-03T10:00:00.123456Z", "hostname": "host-1", "app_name": "app", "message": "***"}`; got != want {
		t.Fatalf("syslog as JSON\n got %s\nwant %s", got, want)
	}

	// PROTOBUF: application/x-protobuf.
	note := `{"user_id":7,"payload":"p","action":"go"}`
	proto := cs.encode(t, "note_proto", note)
	if r := s.post(t, "/api/v1/events/note", "application/x-protobuf", proto); r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[note@1]" {
		t.Fatalf("protobuf: %d %s", r.Status, r.Raw)
	}
	if got := payloadText(t, s.replayAll(t, "note", "")[0].Raw); got != note {
		t.Fatalf("protobuf row view %s", got)
	}
	if got := unbase64(t, payloadText(t, s.replayAll(t, "note", "note_proto")[0].Raw)); string(got) != string(proto) {
		t.Fatalf("protobuf own format %x, sent %x", got, proto)
	}
	if got := payloadText(t, s.replayAll(t, "note", "note_json")[0].Raw); got != `{"user_id": 7, "payload": "p", "action": "go"}` {
		t.Fatalf("protobuf as JSON %s", got)
	}
}

// vectorMax is a fidelity vector within the bounds of WIRE CBOR: the
// integer extremes, -0, the F32 halfway value, bytes, the last DATETIME
// nanosecond, any text, nested ARRAY and VEC, an optional null.
const vectorMax = `{"id":"max","u64":18446744073709551615,"i64":-9223372036854775808,"f32":7.038531e-26,"f64":-0,"b":true,"y":"AP8=","t":"2262-04-11T23:47:16.854775807Z","a":[[1.5,-0],[3.4028235e+38,1e-45]],"v":[[32767,-32768],[0,1]],"vs":["é😀\"\\\u0000",""],"o":null}`

// vectorNaN builds the fidelity vector only WIRE AVRO carries: NaN
// payloads and infinities in required fields and elements, the first
// DATETIME nanosecond, empty bytes and VEC.
func vectorNaN(t *testing.T, cs *testCodecs) []byte {
	cd := cs.codec(t, "vec_avro")
	b := cd.NewBuilder(nil)
	defer b.Release()
	b.BeginRow()
	b.Col(0).Str.Append("nan")
	b.Col(1).U64.Append(math.MaxInt64)
	b.Col(2).I64.Append(math.MaxInt64)
	b.Col(3).F32.Append(math.Float32frombits(0x7fc01234))
	b.Col(4).F64.Append(math.Float64frombits(0xfff8000000000abc))
	b.Col(5).Bool.Append(false)
	b.Col(6).Bin.Append([]byte{})
	b.Col(7).TS.Append(arrow.Timestamp(math.MinInt64))
	a := b.Col(8)
	a.FSL.Append(true)
	for _, row := range [][2]float32{{math.Float32frombits(0xffc00001), float32(math.Inf(1))}, {float32(math.Inf(-1)), float32(math.Copysign(0, -1))}} {
		a.Elem.FSL.Append(true)
		a.Elem.Elem.F32.Append(row[0])
		a.Elem.Elem.F32.Append(row[1])
	}
	b.Col(9).List.Append(true)
	b.Col(10).B.AppendNull()
	b.Col(11).F64.Append(math.Float64frombits(0x7ff800000000beef))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	out, err := cd.Encoder.AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTypedFidelity carries the codec tests' fidelity vectors through
// HTTP and storage: a payload watched in its own format comes back byte
// for byte, float bits included.
func TestTypedFidelity(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	cs := newTestCodecs(t, typedDefs)

	payload := cs.encode(t, "vec_cbor", vectorMax)
	if r := s.post(t, "/api/v1/events/vec", "application/cbor", payload); r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if got := unbase64(t, payloadText(t, s.replayAll(t, "vec", "vec_cbor")[0].Raw)); string(got) != string(payload) {
		t.Fatalf("CBOR through storage\n got %x\nsent %x", got, payload)
	}
	if got, want := payloadText(t, s.replayAll(t, "vec", "")[0].Raw), cs.decode(t, "vec_cbor", payload)[0]; got != want {
		t.Fatalf("row view\n got %s\nwant %s", got, want)
	}
	if got, want := payloadText(t, s.replayAll(t, "vec", "vec_json")[0].Raw), string(cs.encode(t, "vec_json", vectorMax)); got != want {
		t.Fatalf("as WIRE JSON\n got %s\nwant %s", got, want)
	}
	// WIRE AVRO refuses only a U64 element above the long's range: a
	// single U64 travels as the long with its 64 bits, so U64 max shows.
	ev := s.replayAll(t, "vec", "vec_avro")[0]
	if got := unbase64(t, payloadText(t, ev.Raw)); string(got) != string(cs.encode(t, "vec_avro", vectorMax)) || ev.Data["heraldpayloaderror"] != nil {
		t.Fatalf("U64 max as AVRO: %s", ev.Raw)
	}

	avro := vectorNaN(t, cs)
	if r := s.post(t, "/api/v1/events/vecavro", "application/avro", avro); r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if got := unbase64(t, payloadText(t, s.replayAll(t, "vecavro", "vec_avro")[0].Raw)); string(got) != string(avro) {
		t.Fatalf("AVRO NaN payloads through storage\n got %x\nsent %x", got, avro)
	}
	if got, want := payloadText(t, s.replayAll(t, "vecavro", "")[0].Raw), `{"id":"nan","u64":9223372036854775807,"i64":9223372036854775807,"f32":"NaN","f64":"NaN","b":false,"y":"","t":"1677-09-21T00:12:43.145224192Z","a":[["NaN","Infinity"],["-Infinity",-0]],"v":[],"vs":null,"o":"NaN"}`; got != want {
		t.Fatalf("row view\n got %s\nwant %s", got, want)
	}
	// The row view reads back what it writes: through herald codec's
	// encode, the row view of a NaN record makes the same record.
	if back := cs.encode(t, "vec_cbor", payloadText(t, s.replayAll(t, "vecavro", "")[0].Raw)); len(back) == 0 {
		t.Fatal("row view did not encode")
	}
}

// TestTypedUnfolding: one payload unfolds into several notifications,
// stored in order; 65,537 are refused with nothing stored; identifiers
// come from the query and from each record.
func TestTypedUnfolding(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	r := s.post(t, "/api/v1/events/tick?src=a", "application/json", []byte(`{"n":3}`))
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[tick@1 tick@2 tick@3]" || r.Body["count"] != 3.0 || r.Body["status"] != "success" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	evs := s.replayAll(t, "tick", "")
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Data["id"].(string)+" "+jsonString(ev.Data["data"]))
	}
	want := `tick@1 {"identifier":{"i":"0","src":"a"},"payload":{"i":0,"note":null}}|tick@2 {"identifier":{"i":"1","src":"a"},"payload":{"i":1,"note":null}}|tick@3 {"identifier":{"i":"2","src":"a"},"payload":{"i":2,"note":null}}`
	if strings.Join(got, "|") != want {
		t.Fatalf("\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
	r = s.post(t, "/api/v1/events/tick?src=a", "application/json", []byte(`{"n":65537}`))
	if r.Status != http.StatusBadRequest || r.Body["code"] != "INVALID_NOTIFICATION_REQUEST" ||
		r.Body["message"] != "invalid payload for event type 'tick': codec ticks: ON INGESTION, input value 0, output 65536: the payload unfolds into more than 65536 messages [TOO_MANY_MESSAGES]" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if last, err := s.Engine.LastSeq(context.Background(), "tick"); err != nil || last != 3 {
		t.Fatalf("after the refused payload: last %d %v", last, err)
	}
	// A payload of no records stores nothing and says so.
	r = s.post(t, "/api/v1/events/tick?src=a", "application/json", []byte(`{"n":0}`))
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[]" || r.Body["count"] != 0.0 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	for _, c := range []struct{ path, body, message string }{
		{"/api/v1/events/tick?src=a&i=5", `{"n":1}`, "record 0: identifier 'i' disagrees with the record's field 'i': send the same value, or leave it out and let the record fill it"},
		{"/api/v1/events/tick?src=a&src=b", `{"n":1}`, "query parameter 'src' is given 2 times: an identifier takes one value"},
		{"/api/v1/events/tick?src=a&x=1", `{"n":1}`, "Unknown field 'x' provided for notify operation"},
		{"/api/v1/events/tick", `{"n":1}`, "record 0: required field 'src' is missing: notify needs every declared identifier"},
		{"/api/v1/events/tick?src=a&i=1", `{"n":2}`, "record 0: identifier 'i' disagrees with the record's field 'i': send the same value, or leave it out and let the record fill it"},
	} {
		r := s.post(t, c.path, "application/json", []byte(c.body))
		if r.Status != http.StatusBadRequest || r.Body["message"] != c.message {
			t.Fatalf("%s: %d %s", c.path, r.Status, r.Raw)
		}
	}
	if r := s.post(t, "/api/v1/events/tick?src=b&i=0", "application/json", []byte(`{"n":1}`)); r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[tick@4]" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	// The JSON endpoint stores exactly one record.
	r = s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"tick","identifier":{"src":"a"},"payload":{"n":3}}`)
	if r.Status != http.StatusBadRequest || r.Body["message"] != "the payload of event type 'tick' decodes through codec 'ticks' into 3 records; POST /api/v1/notification stores exactly one: send a payload that holds several (or none) to POST /api/v1/events/tick" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	s.notify(t, `{"event_type":"tick","identifier":{"src":"a"},"payload":{"n":1}}`)
	if last, _ := s.Engine.LastSeq(context.Background(), "tick"); last != 5 {
		t.Fatalf("last %d", last)
	}
}

// TestTypedErrors: the raw endpoint's media type, event types without a
// codec, codec diagnostics that quote no value, a program past its
// deadline, and busy extension workers.
func TestTypedErrors(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	for _, c := range []struct {
		path, ct, body string
		status         int
		code, message  string
	}{
		{"/api/v1/events/r_cbor", "application/json", `{}`, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
			`event type 'r_cbor' takes its raw payload in the format of codec 'reading_cbor' (CBOR): send it with Content-Type application/cbor, not Content-Type "application/json"`},
		{"/api/v1/events/r_json", "", `{}`, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
			`event type 'r_json' takes its raw payload in the format of codec 'reading_json' (JSON): send it with Content-Type application/json, not no Content-Type`},
		{"/api/v1/events/plain", "application/json", `{}`, http.StatusBadRequest, "INVALID_NOTIFICATION_REQUEST",
			"event type 'plain' has no payload codec, so it has no raw payload format: send its notifications as JSON to POST /api/v1/notification"},
		{"/api/v1/events/r_json", "application/json; charset=utf-8", `{"station":"s1","step":"SECRETVALUE","temperature":1,"at":"2026-12-03T10:00:00Z"}`, http.StatusBadRequest, "INVALID_NOTIFICATION_REQUEST",
			"invalid payload for event type 'r_json': codec reading_json: field step: expected an integer, found a string (at byte 36) [TYPE_MISMATCH]"},
		{"/api/v1/events/r_json", "application/json", `{"station":"s1","step":1,"temperature":1,"at":"2026-12-03T10:00:00Z","extra":"SECRETVALUE"}`, http.StatusBadRequest, "INVALID_NOTIFICATION_REQUEST",
			"invalid payload for event type 'r_json': codec reading_json: field extra: field is not declared by the STRICT wire schema (at byte 77) [UNEXPECTED_FIELD]"},
		{"/api/v1/events/r_yaml", "application/yaml", "station: [SECRETVALUE", http.StatusBadRequest, "INVALID_NOTIFICATION_REQUEST",
			""},
	} {
		r := s.post(t, c.path, c.ct, []byte(c.body))
		if r.Status != c.status || r.Body["code"] != c.code || (c.message != "" && r.Body["message"] != c.message) || strings.Contains(r.Raw, "SECRETVALUE") {
			t.Fatalf("%s %q: %d %s", c.path, c.ct, r.Status, r.Raw)
		}
	}
	r := s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"r_cbor","identifier":{},"payload":{"station":"s1"}}`)
	if r.Status != http.StatusBadRequest || r.Body["message"] != "payload of event type 'r_cbor' must be a JSON string holding the bytes as padded standard base64: codec 'reading_cbor' reads CBOR, found an object" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	// A program past its deadline is a 400 naming the codec.
	r = s.post(t, "/api/v1/events/slowpoke", "application/json", []byte(`{}`))
	if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.Body["message"].(string), "invalid payload for event type 'slowpoke': codec slow: ON INGESTION, input value 0: ") ||
		!strings.HasSuffix(r.Body["message"].(string), "[PROGRAM_TIMEOUT]") {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	// Busy extension workers: 503 with Retry-After, the payload not judged.
	release := fillWorkers(t, s.Server.Runtime().Workers)
	r = s.post(t, "/api/v1/events/tick?src=a", "application/json", []byte(`{"n":1}`))
	release()
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || r.Body["code"] != "SERVICE_UNAVAILABLE" ||
		r.Body["message"] != "codec ticks: the extension workers are busy, so the payload was not judged; nothing was stored, retry later" {
		t.Fatalf("%d %v %s", r.Status, r.Header, r.Raw)
	}
	if last, _ := s.Engine.LastSeq(context.Background(), "tick"); last != 0 {
		t.Fatalf("a busy payload stored %d", last)
	}
	r = s.post(t, "/api/v1/events/tick?src=a", "application/json", []byte(`{"n":1}`))
	if r.Status != http.StatusOK {
		t.Fatalf("after the workers freed: %d %s", r.Status, r.Raw)
	}
}

// TestTypedSchema: the schema endpoint shows the payload codec, its
// format, the internal schema and its fingerprint.
func TestTypedSchema(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	r := s.do(t, http.MethodGet, "/api/v1/schema/r_cbor", "")
	p, _ := r.Body["schema"].(map[string]any)["payload"].(map[string]any)
	create := "CREATE SCHEMA reading (\n  station STRING,\n  step I32,\n  temperature F64,\n  humidity F32 OPTIONAL,\n  at DATETIME,\n  secret STRING OPTIONAL SENSITIVE\n);"
	if r.Status != http.StatusOK || p["codec"] != "reading_cbor" || p["format"] != "CBOR" || p["media_type"] != "application/cbor" || p["required"] != true ||
		p["schema"] != create || p["fingerprint"] != types.FingerprintOf(create).ID64 ||
		fmt.Sprint(p["formats"]) != "[json reading_avro reading_cbor reading_jcbor reading_jq reading_json reading_toml reading_xml reading_yaml]" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if r := s.do(t, http.MethodGet, "/api/v1/schema/plain", ""); jsonString(r.Body["schema"].(map[string]any)["payload"]) != "null" {
		t.Fatalf("an opaque payload: %s", r.Raw)
	}
	for _, c := range []struct{ body, message string }{
		{`{"event_type":"r_cbor","identifier":{},"format":"note_json"}`, "format 'note_json' is not available for event type 'r_cbor' (payload codec 'reading_cbor'): its formats are json, reading_avro, reading_cbor, reading_jcbor, reading_jq, reading_json, reading_toml, reading_xml, reading_yaml"},
		{`{"event_type":"plain","identifier":{},"format":"reading_cbor"}`, "format 'reading_cbor' is not available: event type 'plain' has an opaque JSON payload (typed payload views need a payload codec), so its only format is json"},
	} {
		if r := s.do(t, http.MethodPost, "/api/v1/watch", c.body); r.Status != http.StatusBadRequest || r.Body["code"] != "INVALID_WATCH_REQUEST" || r.Body["message"] != c.message {
			t.Fatalf("%s: %d %s", c.body, r.Status, r.Raw)
		}
	}
}

// TestTypedWatchLive: live watchers in three views of one stream get
// their own rendering of each notification, and a plain watch of an
// untyped event type is unchanged.
func TestTypedWatchLive(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	cs := newTestCodecs(t, typedDefs)
	formats := []string{"", "reading_cbor", "reading_avro", "reading_yaml"}
	var sts []*eventStream
	for _, f := range formats {
		body := `{"event_type":"r_json","identifier":{"station":"s1"}`
		if f != "" {
			body += `,"format":"` + f + `"`
		}
		st := s.open(t, "/api/v1/watch", body+"}")
		if ev := st.next(wait); ev.Data["type"] != "connection_established" {
			t.Fatal(ev.Raw)
		}
		sts = append(sts, st)
	}
	for step := 1; step <= 3; step++ {
		s.notify(t, `{"event_type":"r_json","identifier":{},"payload":`+strings.Replace(readingLine, `"step":12`, `"step":`+strconv.Itoa(step), 1)+`}`)
	}
	for i, st := range sts {
		for step := 1; step <= 3; step++ {
			ev := st.skipBeats(wait)
			line := strings.Replace(strings.Replace(readingLine, `"step":12`, `"step":`+strconv.Itoa(step), 1), `"pin"`, `"***"`, 1)
			want := line
			if formats[i] != "" {
				want = embed(cs.codec(t, formats[i]), cs.encode(t, formats[i], line))
			}
			if ev.Data["id"] != "r_json@"+strconv.Itoa(step) || payloadText(t, ev.Raw) != want {
				t.Fatalf("%q step %d: %s\nwant payload %s", formats[i], step, ev.Raw, want)
			}
		}
	}
}

// TestTypedConfigOnReload: a payload block that breaks a rule is refused
// on reload with the startup message naming the event type, the codec
// and the rule, and nothing changes.
func TestTypedConfigOnReload(t *testing.T) {
	cfg := typedConfig(t, typedDefs, "")
	s := startServer(t, cfg, nil)
	before := s.Server.Runtime().Fingerprint
	for _, c := range []struct{ from, to, want string }{
		{"payload: {codec: reading_cbor}", "payload: {codec: reading_nope}",
			"notification_schema.r_cbor.payload.codec: codec reading_nope is not defined in the codecs definitions (defined codecs: note_json, note_proto, reading_avro, reading_cbor, reading_jcbor, reading_jq, reading_json, reading_toml, reading_xml, reading_yaml, slow, syslog_codec, syslog_json, tick_items, ticks, vec_avro, vec_cbor, vec_json)"},
		{"key_order: [app_name]}\n    identifier:\n      app_name:", "key_order: [message]}\n    identifier:\n      message:",
			"notification_schema.log.payload.codec: codec syslog_codec: field message of schema syslog_event is SENSITIVE, and it would fill the identifier of the same name, which every watcher sees (in CloudEvents and subjects): rename the identifier or the field, or drop SENSITIVE"},
	} {
		if !strings.Contains(cfg, c.from) {
			t.Fatal(c.from)
		}
		r := s.reload(t, strings.Replace(cfg, c.from, c.to, 1))
		if r.Status != http.StatusBadRequest || r.Body["code"] != "CONFIG_INVALID" || !strings.Contains(r.Body["message"].(string), c.want) || s.Server.Runtime().Fingerprint != before {
			t.Fatalf("%s: %d %s", c.to, r.Status, r.Raw)
		}
	}
}

// reading returns the reading line of one step and temperature.
func reading(step int, temperature string, humidity bool) string {
	line := strings.Replace(strings.Replace(readingLine, `"step":12`, `"step":`+strconv.Itoa(step), 1), `"temperature":21.5`, `"temperature":`+temperature, 1)
	if !humidity {
		line = strings.Replace(line, `,"humidity":0.25`, ``, 1)
	}
	return line
}

// TestTypedWhereAndSessions: WHERE over payload fields on SSE replay and
// watch and on a WebSocket subscription with a format; the session's
// notify and a producer's publish decode typed payloads.
func TestTypedWhereAndSessions(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	cs := newTestCodecs(t, typedDefs)
	temps := []string{"-3", "12.5", "31", "30", "40.25", "29.9"}
	for i, temp := range temps {
		s.notify(t, `{"event_type":"r_json","identifier":{},"payload":`+reading(i+1, temp, i != 4)+`}`)
	}
	const where = `payload.temperature > 30 OR payload.humidity IS NULL`
	st := s.open(t, "/api/v1/replay", `{"event_type":"r_json","identifier":{},"from_id":"1","where":"`+where+`"}`)
	if got := strings.Join(names(st.all(wait)), " "); got != "replay-control:replay_started replay:r_json@3 replay:r_json@5 replay-control:replay_completed connection-closing:end_of_stream" {
		t.Fatalf("replay: %s", got)
	}
	live := s.open(t, "/api/v1/watch", `{"event_type":"r_json","identifier":{},"where":"payload.step >= 8 AND payload.at > '2026-01-01T00:00:00Z'"}`)
	live.next(wait)

	c := s.dial(t, nil)
	c.welcome()
	c.fails("subscribe", `"name":"x","event_type":"r_json","where":"payload.secret = 'pin'"`, "INVALID_WATCH_REQUEST",
		"where: column 1: payload.secret is SENSITIVE: WHERE cannot test it (a predicate would reveal its value)")
	c.fails("subscribe", `"name":"x","event_type":"r_json","format":"note_json"`, "INVALID_WATCH_REQUEST",
		"format 'note_json' is not available for event type 'r_json'")

	// The session's notify and a producer's publish: typed like the HTTP
	// notify.
	r := c.ok("notify", `"event_type":"r_json","identifier":{},"payload":`+reading(7, "35", true))
	if r["notification_id"] != "r_json@7" {
		t.Fatalf("session notify %v", r)
	}
	c.fails("notify", `"event_type":"r_json","identifier":{},"payload":{"station":"s1"}`, "INVALID_NOTIFICATION_REQUEST",
		"invalid payload for event type 'r_json': codec reading_json: field step: required field is missing [MISSING_FIELD]")
	c.ok("open_producer", `"producer":"p","event_type":"r_json"`)
	r = c.reply("publish", `"producer":"p","batch":[{"identifier":{},"payload":`+reading(8, "50", true)+`},{"identifier":{"step":9},"payload":`+reading(9, "1", true)+`}]`)
	if r["ok"] != true || fmt.Sprint(r["ids"]) != "[r_json@8 r_json@9]" {
		t.Fatalf("publish %v", r)
	}
	r = c.reply("publish", `"producer":"p","batch":[{"identifier":{},"payload":`+reading(10, "1", true)+`},{"identifier":{"step":5},"payload":`+reading(11, "1", true)+`}]`)
	if r["ok"] != false || r["outcome"] != "not_admitted" || jsonString(r["errors"]) != `[{"code":"INVALID_NOTIFICATION_REQUEST","index":1,"message":"identifier 'step' disagrees with the record's field 'step': send the same value, or leave it out and let the record fill it"}]` {
		t.Fatalf("publish %v", r)
	}

	c.ok("subscribe", `"name":"hot","event_type":"r_json","from_id":"1","format":"reading_cbor","where":"`+where+`"`)
	ids, _ := c.collect("hot", 4)
	if strings.Join(ids, " ") != "r_json@3 r_json@5 r_json@7 r_json@8" {
		t.Fatalf("subscription: %v", ids)
	}
	for _, id := range []string{"r_json@8", "r_json@9"} {
		if ev := live.skipBeats(wait); ev.Data["id"] != id {
			t.Fatalf("live watch: %s, want %s", ev.Raw, id)
		}
	}
	// One more subscription frame check: its events are CBOR.
	if r, _ := c.replyAmid("replay", `"name":"one","event_type":"r_json","from_id":"8","to_id":"8","format":"reading_cbor"`); r["ok"] != true {
		t.Fatalf("replay %v", r)
	}
	for {
		f := c.next()
		if f["type"] != "events" || f["sub"] != "one" {
			continue
		}
		ev := f["events"].([]any)[0].(map[string]any)
		p := ev["data"].(map[string]any)["payload"].(string)
		want := base64.StdEncoding.EncodeToString(cs.encode(t, "reading_cbor", strings.Replace(reading(8, "50", true), `"pin"`, `"***"`, 1)))
		if ev["heraldcodec"] != "reading_cbor" || p != want {
			t.Fatalf("replay frame %v", ev)
		}
		break
	}
}

// fillWorkers takes every slot of the extension worker pool until the
// returned release is called (the test's cleanup calls it too), so that
// a payload then sent finds the workers busy. The holders keep their
// slot until release (Do waits for its job to return, whatever the job's
// deadline), so once the pool is full it stays full; a holder refused
// while another took a slot tries again. The probe runs under a context
// already ended: admitted, it returns at once instead of queueing behind
// the holders, and it is refused only when every slot is held.
func fillWorkers(t *testing.T, pool *workers.Pool) (release func()) {
	t.Helper()
	done := make(chan struct{})
	var once sync.Once
	var held sync.WaitGroup
	release = func() {
		once.Do(func() { close(done) })
		held.Wait()
	}
	t.Cleanup(release)
	for range 8 {
		held.Add(1)
		go func() {
			defer held.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				err := pool.Do(context.Background(), func(context.Context) error {
					<-done
					return nil
				})
				if err == codec.ErrBusy {
					time.Sleep(time.Millisecond) // the pool is full: try again as a slot frees
				}
			}
		}()
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	testkit.WaitFor(t, wait, "the workers to fill", func() bool {
		return pool.Do(ended, func(context.Context) error { return nil }) == codec.ErrBusy
	})
	return release
}
