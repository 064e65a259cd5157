package handlers_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/rows"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

// batchDefs are typedDefs with a protobuf codec that has a batch
// container (BATCH MESSAGE) for the note schema.
const batchDefs = typedDefs + `
CREATE CODEC note_batch FROM PROTOBUF USING RESOURCE proto_bundle VERSION 1
  CONFIG {'file' = 'notification.proto', 'include' = '.'} MESSAGE 'nervix.test.Notification' BATCH MESSAGE 'nervix.test.NotificationBatch'
  TO SCHEMA note WITH JAQ TRANSFORMATIONS ON INGESTION '.user_id //= 0' ON EMITTING '.';
`

// batchCase is one container format of the batch tests: an event type,
// the format asked for, and the rows the view shows for the records
// notified (SENSITIVE values masked).
type batchCase struct {
	eventType, format string
	views             []string
}

// batchCases returns a case per container format, after notifying their
// records: a JSON array (the row view and WIRE JSON), a YAML sequence, a
// CBOR array, an AVRO array, a protobuf repeated field and SYSLOG frames.
func batchCases(t *testing.T, s *server, cs *testCodecs) []batchCase {
	t.Helper()
	var readings []string
	for step := 1; step <= 3; step++ {
		line := strings.Replace(readingLine, `"step":12`, `"step":`+strconv.Itoa(step), 1)
		s.notify(t, `{"event_type":"r_json","identifier":{},"payload":`+line+`}`)
		readings = append(readings, strings.Replace(line, `"pin"`, `"***"`, 1))
	}
	var notes []string
	for i := 1; i <= 3; i++ {
		note := `{"user_id":` + strconv.Itoa(i) + `,"payload":"p","action":"go"}`
		if r := s.post(t, "/api/v1/events/note", "application/x-protobuf", cs.encode(t, "note_proto", note)); r.Status != http.StatusOK {
			t.Fatalf("protobuf notify: %d %s", r.Status, r.Raw)
		}
		notes = append(notes, note)
	}
	var logs []string
	for i := 1; i <= 3; i++ {
		frame := "<134>1 2026-12-03T10:00:0" + strconv.Itoa(i) + "Z host-1 app - - - hello"
		if r := s.post(t, "/api/v1/events/log", "text/plain; charset=utf-8", []byte(frame)); r.Status != http.StatusOK {
			t.Fatalf("syslog notify: %d %s", r.Status, r.Raw)
		}
		logs = append(logs, `{"facility":16,"severity":6,"timestamp":"2026-12-03T10:00:0`+strconv.Itoa(i)+`Z","hostname":"host-1","app_name":"app","proc_id":null,"msg_id":null,"structured_data":null,"message":"***"}`)
	}
	return []batchCase{
		{"r_json", "", readings}, {"r_json", "reading_json", readings}, {"r_json", "reading_yaml", readings},
		{"r_json", "reading_cbor", readings}, {"r_json", "reading_avro", readings},
		{"note", "note_batch", notes}, {"log", "syslog_codec", logs},
	}
}

// wantContainers are the frames a burst of the case's rows comes in with
// max_records 2 (a page of three records: two, then one), each the
// container of the format embedded as a payload of it is; a codec whose
// container needs a shared header may cut a chunk further.
func (c batchCase) wantContainers(t *testing.T, cs *testCodecs) (payloads []string, counts []int) {
	t.Helper()
	for _, chunk := range [][]string{c.views[:2], c.views[2:]} {
		if c.format == "" {
			payloads, counts = append(payloads, "["+strings.Join(chunk, ",")+"]"), append(counts, len(chunk))
			continue
		}
		ps, ns := containers(t, cs, c.format, chunk)
		payloads, counts = append(payloads, ps...), append(counts, ns...)
	}
	return payloads, counts
}

// containers returns the containers of codec format holding the rows of
// lines, embedded, and the rows each holds: one, unless the codec's
// container needs a shared header the rows do not share.
func containers(t *testing.T, cs *testCodecs, format string, lines []string) (payloads []string, counts []int) {
	t.Helper()
	cd := cs.codec(t, format)
	b := rows.NewBuilder(nil, cd.Schema)
	defer b.Release()
	for _, line := range lines {
		if _, err := wjson.NewRowViewDecoder(cd.Schema).Decode([]byte(line), b); err != nil {
			t.Fatalf("%s: row view %s: %v", format, line, err)
		}
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	for len(idx) > 0 {
		out, n, err := cd.Batch.AppendBatch(nil, rec, idx)
		if err != nil {
			t.Fatalf("%s: container: %v", format, err)
		}
		payloads, counts = append(payloads, embed(cd, out)), append(counts, n)
		idx = idx[n:]
	}
	return payloads, counts
}

// TestBatchContainersSSE checks the batch option of a watch or replay:
// a stream that asks for its records in containers gets one frame per
// burst (here a replay page), at most max_records records each, holding
// the records' payloads in the batch container of the format it asked
// for, with the records' ids in order; every container format arrives so.
func TestBatchContainersSSE(t *testing.T) {
	s := startServer(t, typedConfig(t, batchDefs, ""), nil)
	cs := newTestCodecs(t, batchDefs)
	for _, c := range batchCases(t, s, cs) {
		body := `{"event_type":"` + c.eventType + `","identifier":{},"from_id":"1","batch":{"max_records":2}`
		if c.format != "" {
			body += `,"format":"` + c.format + `"`
		}
		evs := s.open(t, "/api/v1/replay", body+"}").all(wait)
		var got []event
		for _, ev := range evs {
			if ev.Name == "batch" {
				got = append(got, ev)
			} else if ev.Name == "replay" {
				t.Fatalf("%s: a record came on its own: %s", c.format, ev.Raw)
			}
		}
		payloads, counts := c.wantContainers(t, cs)
		if len(got) != len(payloads) {
			t.Fatalf("%s: %d batch events, want %d: %v", c.format, len(got), len(payloads), evs)
		}
		seq := 1
		for i, ev := range got {
			var ids []string
			for j := 0; j < counts[i]; j++ {
				ids = append(ids, c.eventType+"@"+strconv.Itoa(seq))
				seq++
			}
			name := c.format
			if name == "" {
				name = "json"
			}
			if payloadOf(t, ev.Raw) != payloads[i] || jsonString(ev.Data["ids"]) != jsonString(ids) || ev.Data["count"] != float64(counts[i]) ||
				ev.Data["phase"] != "history" || ev.Data["format"] != name {
				t.Fatalf("%s batch %d: %s\nwant payload %s ids %v", c.format, i, ev.Raw, payloads[i], ids)
			}
		}
	}
}

// TestBatchContainersSession checks the batch option of a session
// subscription: history comes in batch frames, one per burst, in every
// container format, then history_completed; records notified afterwards
// come live in batch frames too.
func TestBatchContainersSession(t *testing.T) {
	s := startServer(t, typedConfig(t, batchDefs, ""), nil)
	cs := newTestCodecs(t, batchDefs)
	c := s.dial(t, nil)
	c.welcome()
	for i, bc := range batchCases(t, s, cs) {
		name := "b" + strconv.Itoa(i)
		fields := `"name":"` + name + `","event_type":"` + bc.eventType + `","from_id":"1","batch":{"max_records":2}`
		if bc.format != "" {
			fields += `,"format":"` + bc.format + `"`
		}
		c.ok("subscribe", fields)
		payloads, counts := bc.wantContainers(t, cs)
		for j := range payloads {
			f, raw := c.nextRaw()
			if f["type"] != "batch" || f["sub"] != name || f["phase"] != "history" || f["count"] != float64(counts[j]) || payloadOf(t, raw) != payloads[j] {
				t.Fatalf("%s frame %d: %s\nwant payload %s", bc.format, j, raw, payloads[j])
			}
		}
		if f := c.next(); f["type"] != "history_completed" || f["sub"] != name {
			t.Fatalf("%s: %v", bc.format, f)
		}
		c.ok("unsubscribe", `"name":"`+name+`"`)
	}
	// Live: one record, one frame.
	c.ok("subscribe", `"name":"live","event_type":"r_json","format":"reading_cbor","batch":{"max_records":10}`)
	line := strings.Replace(readingLine, `"step":12`, `"step":9`, 1)
	s.notify(t, `{"event_type":"r_json","identifier":{},"payload":`+line+`}`)
	f, raw := c.nextRaw()
	want, _ := containers(t, cs, "reading_cbor", []string{strings.Replace(line, `"pin"`, `"***"`, 1)})
	if f["type"] != "batch" || f["phase"] != "live" || jsonString(f["ids"]) != `["r_json@4"]` || f["heraldformat"] != "CBOR" || payloadOf(t, raw) != want[0] {
		t.Fatalf("live batch frame: %s\nwant payload %s", raw, want[0])
	}
}

// TestBatchRefused: a batch option is refused with a 400 naming what is
// wrong: on an event type without a typed payload, and with a member out
// of range or unknown.
func TestBatchRefused(t *testing.T) {
	s := startServer(t, typedConfig(t, batchDefs, ""), nil)
	for body, want := range map[string]string{
		`{"event_type":"plain","identifier":{},"batch":{}}`:                      "batch is not available: event type 'plain' has an opaque JSON payload",
		`{"event_type":"r_json","identifier":{},"batch":{"max_records":0}}`:      "batch.max_records must be an integer from 1 to 10000, got 0",
		`{"event_type":"r_json","identifier":{},"batch":{"max_frame_bytes":10}}`: "batch.max_frame_bytes must be an integer from 1024",
		`{"event_type":"r_json","identifier":{},"batch":{"size":1}}`:             "batch has an unknown member 'size'",
		`{"event_type":"r_json","identifier":{},"batch":[1]}`:                    "invalid type for `batch`: expected an object",
	} {
		r := s.do(t, http.MethodPost, "/api/v1/watch", body)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Raw, want) {
			t.Fatalf("%s: %d %s\nwant %s", body, r.Status, r.Raw, want)
		}
	}
}

// payloadOf returns the raw JSON text of a frame's payload member.
func payloadOf(t testing.TB, raw string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("frame %s: %v", raw, err)
	}
	return string(m["payload"])
}
