package notification

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/codec"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/workers"
	"github.com/herald-gateway/herald/configs"
)

// typedDefs types a sensor reading in several formats on one schema.
const typedDefs = `
CREATE SCHEMA reading (station STRING, step I32, temperature F64, humidity F32 OPTIONAL, at DATETIME, secret STRING OPTIONAL SENSITIVE);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL, at string, secret string OPTIONAL);
CREATE WIRE CBOR SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL, at string, secret string OPTIONAL);
CREATE WIRE AVRO SCHEMA reading_wire MODE STRICT (station STRING, step INT, temperature DOUBLE, humidity FLOAT OPTIONAL, at STRING, secret STRING OPTIONAL);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_cbor FROM WIRE CBOR SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_avro FROM WIRE AVRO SCHEMA reading_wire TO SCHEMA reading ENCODE at AS RFC3339;
CREATE CODEC reading_lines FROM JSON TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.readings[]' ON EMITTING '.';
CREATE CODEC reading_yaml FROM YAML TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
CREATE CODEC ingest_only FROM JSON TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.';
CREATE SCHEMA brief (station STRING, temperature F64, humidity F64 OPTIONAL);
CREATE CODEC brief_yaml FROM YAML TO SCHEMA brief WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
CREATE SCHEMA other (station I64);
CREATE CODEC other_yaml FROM YAML TO SCHEMA other WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
CREATE SCHEMA hidden (station STRING SENSITIVE, step I32);
CREATE CODEC hidden_yaml FROM YAML TO SCHEMA hidden WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
CREATE SCHEMA blob (station BYTES, step I32);
CREATE CODEC blob_yaml FROM YAML TO SCHEMA blob WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
CREATE SCHEMA area (polygon STRING, step I32);
CREATE CODEC area_yaml FROM YAML TO SCHEMA area WITH JAQ TRANSFORMATIONS ON INGESTION '.' ON EMITTING '.';
`

func typedYAML(codecName string) string {
	return `
application: {host: 127.0.0.1, port: 0, base_url: "https://h.example"}
notification_backend: {kind: in_memory}
codecs: {definitions: defs.nspl}
notification_schema:
  reading:
    payload: {codec: ` + codecName + `}
    topic: {base: reading, key_order: [station, step]}
    identifier:
      station: {type: StringHandler, required: true}
      step: {type: IntHandler, range: [0, 360], required: true}
`
}

func typedCatalog(t testing.TB, defs string) *catalog.Catalog {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	return cat
}

func typedRegistry(t testing.TB, codecName string) *Registry {
	t.Helper()
	cfg, err := configs.Parse([]byte(typedYAML(codecName)), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistryWith(cfg, RegistryOptions{Codecs: typedCatalog(t, typedDefs)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTypedPayloadConfig: every rule tying an event type to its codec
// fails the registry with the event type, the codec and the rule.
func TestTypedPayloadConfig(t *testing.T) {
	const where = "notification_schema.reading.payload.codec: "
	tests := []struct{ codec, yaml, want string }{
		{"nope", "", where + "codec nope is not defined in the codecs definitions (defined codecs: area_yaml, blob_yaml, brief_yaml, hidden_yaml, ingest_only, other_yaml, reading_avro, reading_cbor, reading_json, reading_lines, reading_yaml)"},
		{"hidden_yaml", "", where + "codec hidden_yaml: field station of schema hidden is SENSITIVE, and it would fill the identifier of the same name, which every watcher sees (in CloudEvents and subjects): rename the identifier or the field, or drop SENSITIVE"},
		{"blob_yaml", "", where + "codec blob_yaml: field station of schema blob is BYTES, and it would fill the StringHandler identifier of the same name, which needs a scalar (an integer, float, boolean, string or datetime)"},
		{"area_yaml", `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
codecs: {definitions: defs.nspl}
notification_schema:
  reading:
    payload: {codec: area_yaml}
    topic: {base: reading, key_order: [step]}
    identifier:
      step: {type: IntHandler, required: true}
      polygon: {type: PolygonHandler, required: false}
`, where + "codec area_yaml: field polygon of schema area is STRING, and it would fill the PolygonHandler identifier of the same name, which needs a collection of numbers ([[lat, lon], ...])"},
	}
	for _, tt := range tests {
		y := tt.yaml
		if y == "" {
			y = typedYAML(tt.codec)
		}
		cfg, err := configs.Parse([]byte(y), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewRegistryWith(cfg, RegistryOptions{Codecs: typedCatalog(t, typedDefs)})
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.codec, err, tt.want)
		}
	}
	cfg, _ := configs.Parse([]byte(typedYAML("reading_json")), nil)
	if _, err := NewRegistry(cfg); err == nil || err.Error() != where+"names codec reading_json, but no codecs are defined (add a codecs block)" {
		t.Error(err)
	}
	// An ingest-only codec types a payload; one that cannot decode does not.
	cat := typedCatalog(t, typedDefs+`CREATE CODEC emit_only FROM JSON TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON EMITTING '.';`)
	cfg, _ = configs.Parse([]byte(typedYAML("emit_only")), nil)
	if _, err := NewRegistryWith(cfg, RegistryOptions{Codecs: cat}); err == nil || err.Error() != where+"codec emit_only cannot decode (it declares no ON INGESTION transformation), so notify could not read payloads through it" {
		t.Error(err)
	}
	// configs: a codec without a codecs block, named by line.
	_, err := configs.Parse([]byte(strings.Replace(typedYAML("reading_json"), "codecs: {definitions: defs.nspl}\n", "", 1)), nil)
	if err == nil || !strings.Contains(err.Error(), `notification_schema.reading (line 5): payload.codec: names codec "reading_json", but there is no codecs block: define the codec in the definitions file of a codecs block`) {
		t.Error(err)
	}
}

const readingJSON = `{"station":"s1","step":12,"temperature":21.5,"humidity":0.25,"at":"2026-12-03T10:00:00.123456789Z","secret":"pin"}`

func TestTypedNotifyJSON(t *testing.T) {
	r := typedRegistry(t, "reading_json")
	s, _ := r.Schema("reading")
	if got := s.Payload.Formats(); strings.Join(got, ",") != "json,brief_yaml,hidden_yaml,reading_avro,reading_cbor,reading_json,reading_lines,reading_yaml" {
		t.Fatalf("formats %v", got)
	}
	n, err := s.Notify(map[string]json.RawMessage{}, json.RawMessage(readingJSON))
	if err != nil {
		t.Fatal(err)
	}
	if n.Subject != "reading.s1.12" || n.ContentType != s.Payload.ContentType() || !strings.HasPrefix(n.ContentType, "application/vnd.herald.row+cbor; fingerprint=") {
		t.Fatalf("%s %s", n.Subject, n.ContentType)
	}
	ce, err := s.CloudEvent(n, 7, time.Date(2026, 12, 3, 10, 0, 1, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"identifier":{"station":"s1","step":"12"},"payload":{"station":"s1","step":12,"temperature":21.5,"humidity":0.25,"at":"2026-12-03T10:00:00.123456789Z","secret":"***"}},"datacontenttype":"application/json","dataschema":"https://h.example/schema/reading","id":"reading@7","source":"https://h.example","specversion":"1.0","time":"2026-12-03T10:00:01Z","type":"int.ecmwf.aviso.reading"}`
	if string(ce) != want {
		t.Fatalf("\n got %s\nwant %s", ce, want)
	}
	// identifiers given with the request must agree with the record
	if _, err := s.Notify(ident(t, `{"station":"s1","step":"12"}`), json.RawMessage(readingJSON)); err != nil {
		t.Fatal(err)
	}
	_, err = s.Notify(ident(t, `{"step":13}`), json.RawMessage(readingJSON))
	if err == nil || err.Error() != "identifier 'step' disagrees with the record's field 'step': send the same value, or leave it out and let the record fill it" {
		t.Fatal(err)
	}
	_, err = s.Notify(ident(t, `{"class":"od"}`), json.RawMessage(readingJSON))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Message != "Unknown field 'class' provided for notify operation" ||
		ve.Detail != "unknown identifier field 'class' for event type 'reading'; declared fields: 'station', 'step'" {
		t.Fatal(err)
	}
	// a codec diagnostic names the codec, the cause and the position, and
	// quotes no value
	_, err = s.Notify(nil, json.RawMessage(`{"station":"s1","step":"twelve","temperature":1,"at":"2026-12-03T10:00:00Z"}`))
	if err == nil || err.Error() != "invalid payload for event type 'reading': codec reading_json: field step: expected an integer, found a string (at byte 31) [TYPE_MISMATCH]" {
		t.Fatal(err)
	}
	var pe *PayloadError
	if !errors.As(err, &pe) || pe.Codec != "reading_json" {
		t.Fatal("no PayloadError behind", err)
	}
	_, err = s.Notify(nil, json.RawMessage(`{"station":"s1","step":400,"temperature":1,"at":"2026-12-03T10:00:00Z"}`))
	if err == nil || err.Error() != "invalid value for identifier 'step': value 400 is outside the allowed range [0, 360]" {
		t.Fatal(err)
	}
	if _, err = s.Notify(nil, nil); err == nil || err.Error() != "payload is required for event type 'reading': it is typed by codec 'reading_json'" {
		t.Fatal(err)
	}
}

func TestTypedNotifyEnvelopes(t *testing.T) {
	// CBOR through the JSON body: a base64 string.
	rj := typedRegistry(t, "reading_json")
	sj, _ := rj.Schema("reading")
	// (without the SENSITIVE field, which every view masks)
	n, err := sj.Notify(nil, json.RawMessage(strings.Replace(readingJSON, `,"secret":"pin"`, ``, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cborView, _ := sj.View("reading_cbor")
	ce, err := sj.CloudEventView(n, 1, time.Unix(0, 0), cborView)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Data struct {
			Payload string `json:"payload"`
		} `json:"data"`
		Codec  string `json:"heraldcodec"`
		Format string `json:"heraldformat"`
	}
	if err := json.Unmarshal(ce, &ev); err != nil {
		t.Fatal(err, string(ce))
	}
	if ev.Codec != "reading_cbor" || ev.Format != "CBOR" {
		t.Fatal(string(ce))
	}
	rc := typedRegistry(t, "reading_cbor")
	sc, _ := rc.Schema("reading")
	n2, err := sc.Notify(nil, json.RawMessage(`"`+ev.Data.Payload+`"`))
	if err != nil {
		t.Fatal(err)
	}
	if string(n2.Payload) != string(n.Payload) || n2.Subject != n.Subject {
		t.Fatal("the CBOR view did not notify the same record")
	}
	if _, err := sc.Notify(nil, json.RawMessage(readingJSON)); err == nil || err.Error() != "payload of event type 'reading' must be a JSON string holding the bytes as padded standard base64: codec 'reading_cbor' reads CBOR, found an object" {
		t.Fatal(err)
	}
	if _, err := sc.Notify(nil, json.RawMessage(`"AAE"`)); err == nil || err.Error() != "payload of event type 'reading' must be padded standard base64 (RFC 4648) of the CBOR bytes codec 'reading_cbor' reads: the string is not" {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(ev.Data.Payload)
	ns, err := sc.NotifyRaw(context.Background(), nil, raw)
	if err != nil || len(ns) != 1 || string(ns[0].Payload) != string(n.Payload) {
		t.Fatal(ns, err)
	}
	// YAML through the JSON body: a string.
	ry := typedRegistry(t, "reading_yaml")
	sy, _ := ry.Schema("reading")
	n3, err := sy.Notify(nil, json.RawMessage(`"station: s1\nstep: 12\ntemperature: 21.5\nhumidity: 0.25\nat: '2026-12-03T10:00:00.123456789Z'\nsecret: pin\n"`))
	if err != nil {
		t.Fatal(err)
	}
	if n4, _ := sj.Notify(nil, json.RawMessage(readingJSON)); string(n3.Payload) != string(n4.Payload) {
		t.Fatal("YAML and JSON readings differ")
	}
	// a payload that unfolds into several records is refused on the JSON
	// endpoint and accepted raw
	rl := typedRegistry(t, "reading_lines")
	sl, _ := rl.Schema("reading")
	three := `{"readings":[` + readingJSON + `,` + strings.Replace(readingJSON, `"step":12`, `"step":13`, 1) + `,` + strings.Replace(readingJSON, `"s1"`, `"s2"`, 1) + `]}`
	_, err = sl.Notify(nil, json.RawMessage(three))
	if err == nil || err.Error() != "the payload of event type 'reading' decodes through codec 'reading_lines' into 3 records; POST /api/v1/notification stores exactly one: send a payload that holds several (or none) to POST /api/v1/events/reading" {
		t.Fatal(err)
	}
	ns, err = sl.NotifyRaw(context.Background(), nil, []byte(three))
	if err != nil || len(ns) != 3 || ns[0].Subject != "reading.s1.12" || ns[1].Subject != "reading.s1.13" || ns[2].Subject != "reading.s2.12" {
		t.Fatal(ns, err)
	}
	_, err = sl.NotifyRaw(context.Background(), ident(t, `{"station":"s1"}`), []byte(three))
	if err == nil || err.Error() != "record 2: identifier 'station' disagrees with the record's field 'station': send the same value, or leave it out and let the record fill it" {
		t.Fatal(err)
	}
	_, err = sl.NotifyRaw(context.Background(), nil, []byte(`{"readings":[`+readingJSON+`,{"station":"s3"}]}`))
	if err == nil || err.Error() != "invalid payload for event type 'reading': codec reading_lines: ON INGESTION, input value 0, output 1: field step: required field is missing [MISSING_FIELD]" {
		t.Fatal(err)
	}
}

func TestTypedViews(t *testing.T) {
	r := typedRegistry(t, "reading_json")
	s, _ := r.Schema("reading")
	n, err := s.Notify(nil, json.RawMessage(readingJSON))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 10, 0, 1, 0, time.UTC)
	tests := []struct{ format, payload, ext string }{
		{"json", `{"station":"s1","step":12,"temperature":21.5,"humidity":0.25,"at":"2026-12-03T10:00:00.123456789Z","secret":"***"}`, ``},
		{"reading_json", `{"station":"s1","step":12,"temperature":21.5,"humidity":0.25,"at":"2026-12-03T10:00:00.123456789Z","secret":"***"}`, `,"heraldcodec":"reading_json","heraldformat":"JSON"`},
		{"reading_yaml", `"{\"station\": \"s1\", \"step\": 12, \"temperature\": 21.5, \"humidity\": 0.25, \"at\": \"2026-12-03T10:00:00.123456789Z\", \"secret\": \"***\"}"`, `,"heraldcodec":"reading_yaml","heraldformat":"YAML"`},
		{"brief_yaml", `"{\"station\": \"s1\", \"temperature\": 21.5, \"humidity\": 0.25}"`, `,"heraldcodec":"brief_yaml","heraldformat":"YAML"`},
	}
	for _, tt := range tests {
		v, err := s.View(tt.format)
		if err != nil {
			t.Fatal(err)
		}
		ce, err := s.CloudEventView(n, 3, at, v)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"data":{"identifier":{"station":"s1","step":"12"},"payload":` + tt.payload + `},"datacontenttype":"application/json","dataschema":"https://h.example/schema/reading"` + tt.ext + `,"id":"reading@3","source":"https://h.example","specversion":"1.0","time":"2026-12-03T10:00:01Z","type":"int.ecmwf.aviso.reading"}`
		if string(ce) != want {
			t.Errorf("%s\n got %s\nwant %s", tt.format, ce, want)
		}
	}
	if _, err := s.View("other_yaml"); err == nil || err.Error() != "format 'other_yaml' is not available for event type 'reading' (payload codec 'reading_json'): its formats are json, brief_yaml, hidden_yaml, reading_avro, reading_cbor, reading_json, reading_lines, reading_yaml" {
		t.Fatal(err)
	}
	// an opaque record (stored before the codec) in a format view
	opaque := &Notification{EventType: "reading", Tokens: []string{"reading", "s1", "12"}, Subject: "reading.s1.12", Payload: []byte(`{"a":1}`), ContentType: ContentTypeJSON}
	v, _ := s.View("reading_cbor")
	ce, _ := s.CloudEventView(opaque, 1, at, v)
	if !strings.Contains(string(ce), `"payload":null},`) || !strings.Contains(string(ce), `"heraldpayloaderror":"the record was stored before event type 'reading' had its payload codec: it holds opaque JSON, which format 'reading_cbor' cannot show"`) {
		t.Fatal(string(ce))
	}
	ce, _ = s.CloudEventView(opaque, 1, at, nil)
	if !strings.Contains(string(ce), `"payload":{"a":1}},`) {
		t.Fatal(string(ce))
	}
	// a typed record of an event type that is opaque now
	plain := mustRegistry(t, `
application: {host: 127.0.0.1, port: 0, base_url: "https://h.example"}
notification_backend: {kind: in_memory}
notification_schema:
  reading:
    topic: {base: reading, key_order: [station, step]}
    identifier:
      station: {type: StringHandler, required: true}
      step: {type: IntHandler, required: true}
`)
	ce, _ = plain.CloudEvent(n, 1, at)
	if !strings.Contains(string(ce), `"payload":null},`) || !strings.Contains(string(ce), `"heraldpayloaderror":"the record holds a typed payload, but event type 'reading' has no payload codec now"`) {
		t.Fatal(string(ce))
	}
	if !store.IsStored(n.ContentType) {
		t.Fatal(n.ContentType)
	}
	ps, _ := plain.Schema("reading")
	if _, err := ps.View("reading_cbor"); err == nil || err.Error() != "format 'reading_cbor' is not available: event type 'reading' has an opaque JSON payload (typed payload views need a payload codec), so its only format is json" {
		t.Fatal(err)
	}
}

// TestTypedBusy: busy extension workers are a BusyError (a 503), never a
// validation error. The codec runs its program through gojq on the
// workers (a path such as '.readings[]' on JSON is walked on the caller's
// goroutine and never waits for them).
func TestTypedBusy(t *testing.T) {
	cfg, _ := configs.Parse([]byte(typedYAML("reading_steps")), nil)
	pool := newBusyPool()
	defs := typedDefs + "CREATE CODEC reading_steps FROM JSON TO SCHEMA reading WITH JAQ TRANSFORMATIONS ON INGESTION '.readings[] | select(.step >= 0)' ON EMITTING '.';\n"
	r, err := NewRegistryWith(cfg, RegistryOptions{Codecs: typedCatalog(t, defs), Workers: pool.Pool})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.release()
	s, _ := r.Schema("reading")
	_, err = s.Notify(nil, json.RawMessage(`{"readings":[`+readingJSON+`]}`))
	var be *BusyError
	if !errors.As(err, &be) || !errors.Is(err, codec.ErrBusy) {
		t.Fatalf("%T %v", err, err)
	}
}

// busyPool is a pool of one worker held by a job until release.
type busyPool struct {
	*workers.Pool
	stop, done chan struct{}
}

func newBusyPool() *busyPool {
	b := &busyPool{Pool: workers.New(workers.Config{Workers: 1, Queue: -1, Timeout: time.Minute}), stop: make(chan struct{}), done: make(chan struct{})}
	started := make(chan struct{})
	go func() {
		defer close(b.done)
		_ = b.Do(context.Background(), func(context.Context) error { close(started); <-b.stop; return nil })
	}()
	<-started
	return b
}

func (b *busyPool) release() { close(b.stop); <-b.done }

// TestWherePayload: WHERE over payload fields, typed by the internal
// schema, three-valued, SENSITIVE fields refused.
func TestWherePayload(t *testing.T) {
	r := typedRegistry(t, "reading_json")
	s, _ := r.Schema("reading")
	mk := func(payload string) *Notification {
		n, err := s.Notify(nil, json.RawMessage(payload))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	warm := mk(readingJSON)
	cold := mk(strings.NewReplacer(`"temperature":21.5`, `"temperature":-3`, `,"humidity":0.25`, ``, `"station":"s1"`, `"station":"s2"`, `10:00:00.123456789Z`, `09:00:00Z`).Replace(readingJSON))
	opaque := &Notification{Tokens: []string{"reading", "s1", "12"}, Payload: []byte(`{"temperature":40}`), ContentType: ContentTypeJSON}
	tests := []struct {
		where, compiled string
		warm, cold      bool
	}{
		{"payload.temperature > 20", "(payload.temperature > 20)", true, false},
		{"payload.temperature BETWEEN -5 AND 0", "(payload.temperature BETWEEN -5 AND 0)", false, true},
		{"payload.humidity IS NULL", "(payload.humidity IS NULL)", false, true},
		{"payload.humidity < 0.5", "(payload.humidity < 0.5)", true, false},
		{"NOT payload.humidity < 0.5", "(NOT (payload.humidity < 0.5))", false, false},
		{"payload.station IN ('s2', 's3')", "(payload.station IN ('s2', 's3'))", false, true},
		{"payload.at >= '2026-12-03T11:00:00+01:00'", "(payload.at >= '2026-12-03T10:00:00Z')", true, false},
		{"payload.step = step AND station = 's1'", "((payload.step = identifier.step) AND (identifier.station = 's1'))", true, false},
		{"payload.step > 11.5", "(payload.step > 11.5)", true, true},
	}
	for _, tt := range tests {
		w, err := s.CompileWhere(tt.where)
		if err != nil {
			t.Fatalf("%s: %v", tt.where, err)
		}
		if w.String() != tt.compiled || w.Match(warm) != tt.warm || w.Match(cold) != tt.cold || w.Match(opaque) != strings.Contains(tt.where, "IS NULL") {
			t.Errorf("%s: %s warm %v cold %v opaque %v", tt.where, w, w.Match(warm), w.Match(cold), w.Match(opaque))
		}
	}
	for _, c := range []struct{ where, want string }{
		{"payload.secret = 'pin'", "where: column 1: payload.secret is SENSITIVE: WHERE cannot test it (a predicate would reveal its value)"},
		{"payload.nope = 1", "where: column 1: unknown payload field 'nope' for event type 'reading'; the fields of schema reading are 'station', 'step', 'temperature', 'humidity', 'at', 'secret'"},
		{"payload.station = 3", "where: column 19: payload.station holds text (STRING): compare it with a string, not number 3"},
		{"payload.step = 'x'", "where: column 16: payload.step holds an integer (I32): compare it with a number, not string 'x'"},
		{"payload.at < 'yesterday'", "where: column 14: payload.at is a DATETIME: 'yesterday' is not RFC 3339 text within the DATETIME range"},
		{"payload.at = station", "where: column 12: payload.at (a datetime) and identifier.station (text) cannot be compared"},
	} {
		if _, err := s.CompileWhere(c.where); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.where, err, c.want)
		}
	}
}
