package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/types"
	herald "github.com/herald-gateway/herald/server"
)

// evolveDefs are the codec definitions of the evolution tests, in three
// versions: v1; v2 adds an optional field (compatible); v3 turns the F64
// temperature into a STRING (breaking: stored F64 values cannot be read
// as STRING).
var evolveDefs = []string{`
CREATE SCHEMA reading (station STRING, step I32, temperature F64);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number);
CREATE WIRE AVRO SCHEMA reading_wire MODE STRICT (station STRING, step INT, temperature DOUBLE);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading;
CREATE CODEC reading_avro FROM WIRE AVRO SCHEMA reading_wire TO SCHEMA reading;
`, `
CREATE SCHEMA reading (station STRING, step I32, temperature F64, humidity F32 OPTIONAL);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature number, humidity number OPTIONAL);
CREATE WIRE AVRO SCHEMA reading_wire MODE STRICT (station STRING, step INT, temperature DOUBLE, humidity FLOAT OPTIONAL);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading;
CREATE CODEC reading_avro FROM WIRE AVRO SCHEMA reading_wire TO SCHEMA reading;
`, `
CREATE SCHEMA reading (station STRING, step I32, temperature STRING, humidity F32 OPTIONAL);
CREATE WIRE JSON SCHEMA reading_wire MODE STRICT (station string, step integer, temperature string, humidity number OPTIONAL);
CREATE WIRE AVRO SCHEMA reading_wire MODE STRICT (station STRING, step INT, temperature STRING, humidity FLOAT OPTIONAL);
CREATE CODEC reading_json FROM WIRE JSON SCHEMA reading_wire TO SCHEMA reading;
CREATE CODEC reading_avro FROM WIRE AVRO SCHEMA reading_wire TO SCHEMA reading;
`}

// evolveConfig is the config of the evolution tests: event type r typed
// by reading_json, whose definitions are in defs, and an opaque one.
func evolveConfig(defs string) string {
	return `
application: {host: 127.0.0.1, port: 8000, base_url: "http://herald.test"}
notification_backend:
  kind: in_memory
  in_memory: {max_history_per_topic: 1000, max_topics: 100}
watch_endpoint: {replay_batch_size: 100, replay_batch_delay_ms: 0}
codecs:
  definitions: ` + defs + `
notification_schema:
  r:
    payload: {codec: reading_json}
    topic: {base: r, key_order: [station]}
    identifier:
      station: {type: StringHandler, required: false}
  plain:
    topic: {base: plain, key_order: [k]}
    identifier:
      k: {type: StringHandler, required: false}
`
}

// subEnd reads session frames until every subscription of want ended,
// and returns each end's reason and resume id; the events that came
// first are returned by subscription.
func subEnds(t *testing.T, c *wsClient, want ...string) (ends map[string]string, events map[string][]string) {
	t.Helper()
	ends, events = map[string]string{}, map[string][]string{}
	for len(ends) < len(want) {
		f := c.next()
		sub, _ := f["sub"].(string)
		switch f["type"] {
		case "events":
			events[sub] = append(events[sub], eventIDs(f)...)
		case "subscription_ended":
			ends[sub] = f["reason"].(string) + " " + jsonString(f["resume_from_id"])
		}
	}
	return ends, events
}

// TestTypedEvolutionOnReload: a payload schema changed by a reload is
// judged with the evolution verdict. A compatible change (an added
// OPTIONAL field) applies: every stream of the event type ends with
// schema_changed, and the records stored
// under the old schema replay in the row view and in a format with the
// new field null. A breaking change (F64 to STRING) is refused with a
// 409 naming the event type, the codec and the reason, nothing applied,
// and on SIGHUP too; forced, it applies and ends every stream of the
// event type. The rule of the registry of past schemas: every schema
// that wrote records is kept, so an old record is decoded with the
// schema that wrote it and projected onto the current one by field name
// rather than lost to a null payload; WHERE still reads a field of
// another kind as NULL. Removing the payload codec is breaking too.
func TestTypedEvolutionOnReload(t *testing.T) {
	dir := t.TempDir()
	defs := filepath.Join(dir, "defs.nspl")
	writeDefs := func(v int) {
		if err := os.WriteFile(defs, []byte(evolveDefs[v]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeDefs(0)
	cfg := evolveConfig(defs)
	s := startServer(t, cfg, nil)
	fingerprint := func() string {
		sc, _ := s.Handlers.Registry().Schema("r")
		return sc.Payload.Fingerprint().ID64
	}
	fp1 := fingerprint()

	watch := func(body string) *eventStream {
		st := s.open(t, "/api/v1/watch", body)
		if ev := st.next(wait); ev.Data["type"] != "connection_established" {
			t.Fatalf("opening %s: %s", body, ev.Raw)
		}
		return st
	}
	rows := watch(`{"event_type":"r","identifier":{}}`)
	avro := watch(`{"event_type":"r","identifier":{},"format":"reading_avro"}`)
	plain := watch(`{"event_type":"plain","identifier":{}}`)
	c := s.dial(t, nil)
	c.welcome()
	c.ok("subscribe", `"name":"rows","event_type":"r"`)
	c.ok("subscribe", `"name":"avro","event_type":"r","format":"reading_avro"`)

	s.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":1,"temperature":21.5}}`)
	for _, st := range []*eventStream{rows, avro} {
		if ev := st.skipBeats(wait); ev.Data["id"] != "r@1" {
			t.Fatalf("before the reload: %s", ev.Raw)
		}
	}
	got := map[string][]string{}
	for len(got["rows"])+len(got["avro"]) < 2 {
		f := c.next()
		if f["type"] != "events" {
			t.Fatalf("session before the reload: %v", f)
		}
		got[f["sub"].(string)] = append(got[f["sub"].(string)], eventIDs(f)...)
	}
	if jsonString(got) != `{"avro":["r@1"],"rows":["r@1"]}` {
		t.Fatalf("session before the reload: %v", got)
	}

	// Compatible: an OPTIONAL field added.
	writeDefs(1)
	r := s.do(t, http.MethodPost, "/api/v1/admin/reload", "")
	fp2 := fingerprint()
	if r.Status != http.StatusOK || fp2 == fp1 ||
		jsonString(r.Body["payload_schemas"]) != `[{"breaks":[],"codec":"reading_json","compatible":true,"event_type":"r","fingerprint":"`+fp2+`","forced":false,"previous_codec":"reading_json","previous_fingerprint":"`+fp1+`"}]` ||
		jsonString(r.Body["changed"]) != `[]` || r.Body["streams_ended"] != float64(4) ||
		r.Body["fingerprint"] == r.Body["previous_fingerprint"] || jsonString(r.Body["settings_changed"]) != `[]` {
		t.Fatalf("compatible reload: %d %s", r.Status, r.Raw)
	}
	// The rule checked here: a compatible payload schema change ends every
	// stream of the event type, the row view's as well as those that
	// asked for a format, since a stream keeps the schema it opened with
	// and only a new one shows the new schema. On SSE the end is the
	// connection-closing event with reason end_of_stream (the aviso
	// client accepts it and reconnects) and herald's precise cause; a
	// WebSocket subscription ends with schema_changed.
	for _, st := range []*eventStream{avro, rows} {
		if ev := st.skipBeats(wait); ev.Name != "connection-closing" || ev.Data["reason"] != "end_of_stream" || ev.Data["cause"] != "schema_changed" || ev.Data["resume_from_id"] != "2" {
			t.Fatalf("watcher after a compatible change: %s %s", ev.Name, ev.Raw)
		}
		st.expectEnd(wait)
	}
	if ends, evs := subEnds(t, c, "avro", "rows"); ends["avro"] != `schema_changed "r@2"` || ends["rows"] != `schema_changed "r@2"` || len(evs) != 0 {
		t.Fatalf("subscriptions after a compatible change: %v %v", ends, evs)
	}

	// Streams opened again show the new schema.
	rows = watch(`{"event_type":"r","identifier":{}}`)
	c.ok("subscribe", `"name":"rows","event_type":"r"`)
	s.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":2,"temperature":22,"humidity":0.25}}`)
	if ev := rows.skipBeats(wait); ev.Data["id"] != "r@2" || payloadText(t, ev.Raw) != `{"station":"s1","step":2,"temperature":22,"humidity":0.25}` {
		t.Fatalf("row watcher after a compatible change: %s", ev.Raw)
	}
	if ids, _ := c.collect("rows", 1); ids[0] != "r@2" {
		t.Fatalf("row subscription after a compatible change: %v", ids)
	}
	// History under the old fingerprint reads in the row view and in
	// every format, the new field null.
	cs := newTestCodecs(t, evolveDefs[1])
	lines := []string{`{"station":"s1","step":1,"temperature":21.5,"humidity":null}`, `{"station":"s1","step":2,"temperature":22,"humidity":0.25}`}
	checkReplay := func(format string, want []string) {
		t.Helper()
		evs := s.replayAll(t, "r", format)
		if len(evs) != len(want) {
			t.Fatalf("replay %q: %d events, want %d", format, len(evs), len(want))
		}
		for i, ev := range evs {
			if got := payloadText(t, ev.Raw); got != want[i] {
				t.Fatalf("replay %q event %d: %s\nwant payload %s", format, i+1, ev.Raw, want[i])
			}
		}
	}
	checkReplay("", lines)
	for _, f := range []string{"reading_avro", "reading_json"} {
		checkReplay(f, []string{embed(cs.codec(t, f), cs.encode(t, f, lines[0])), embed(cs.codec(t, f), cs.encode(t, f, lines[1]))})
	}

	// Breaking: refused by name, nothing applied, the streams go on.
	writeDefs(2)
	before := s.Server.Runtime()
	reason := `field temperature: old values of F64 cannot be read as STRING`
	fp3 := types.FingerprintOf(types.CreateSchema(newTestCodecs(t, evolveDefs[2]).codec(t, "reading_json").Schema)).ID64
	wantMsg := `the payload schema of event type 'r' (codec 'reading_json', fingerprint ` + fp2 + ` → ` + fp3 + `) changes incompatibly: records stored under the current schema could not be read under the new one: ` + reason +
		`; nothing was applied (a forced reload applies it: POST /api/v1/admin/reload?force=true; the records stored before are then read with the schema that wrote them, projected onto the new one by field name, a field it cannot read as null; a view that cannot show a record delivers a null payload and the reason in heraldpayloaderror)`
	for _, body := range []string{"", `{"force":false}`} {
		r = s.do(t, http.MethodPost, "/api/v1/admin/reload", body)
		if r.Status != http.StatusConflict || r.Body["code"] != "RELOAD_REFUSED" ||
			jsonString(r.Body["refused"]) != `["notification_schema.r.payload (codec reading_json): `+reason+`"]` ||
			r.Body["message"] != wantMsg ||
			s.Server.Runtime() != before || fingerprint() != fp2 {
			t.Fatalf("breaking reload %q: %d %s", body, r.Status, r.Raw)
		}
	}
	// SIGHUP never forces.
	_, err := s.Server.Reload(context.Background(), herald.ReloadOptions{Trigger: "SIGHUP"})
	var re *herald.ReloadError
	if !errors.As(err, &re) || re.Code != herald.ReloadRefused || s.Server.Runtime() != before {
		t.Fatalf("SIGHUP over a breaking change: %v", err)
	}
	s.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":3,"temperature":23.5}}`)
	if ev := rows.skipBeats(wait); ev.Data["id"] != "r@3" {
		t.Fatalf("row watcher after a refused reload: %s", ev.Raw)
	}
	if ids, _ := c.collect("rows", 1); ids[0] != "r@3" {
		t.Fatalf("row subscription after a refused reload: %v", ids)
	}

	// Forced: applied; every stream of r ends, the others go on.
	r = s.do(t, http.MethodPost, "/api/v1/admin/reload?force=true", "")
	if r.Status != http.StatusOK || fingerprint() != fp3 || s.Server.Runtime() == before ||
		jsonString(r.Body["payload_schemas"]) != `[{"breaks":["`+reason+`"],"codec":"reading_json","compatible":false,"event_type":"r","fingerprint":"`+fp3+`","forced":true,"previous_codec":"reading_json","previous_fingerprint":"`+fp2+`"}]` ||
		r.Body["streams_ended"] != float64(2) {
		t.Fatalf("forced reload: %d %s", r.Status, r.Raw)
	}
	if ev := rows.skipBeats(wait); ev.Name != "connection-closing" || ev.Data["reason"] != "end_of_stream" || ev.Data["cause"] != "schema_changed" || ev.Data["resume_from_id"] != "4" {
		t.Fatalf("row watcher after a forced breaking change: %s %s", ev.Name, ev.Raw)
	}
	rows.expectEnd(wait)
	if ends, evs := subEnds(t, c, "rows"); ends["rows"] != `schema_changed "r@4"` || len(evs) != 0 {
		t.Fatalf("row subscription after a forced change: %v %v", ends, evs)
	}
	s.notify(t, `{"event_type":"plain","identifier":{"k":"a"}}`)
	if ev := plain.skipBeats(wait); ev.Data["id"] != "plain@1" {
		t.Fatalf("the other event type's watcher: %s", ev.Raw)
	}

	// The old records are decoded with the schema that wrote them (kept in
	// the registry of past schemas) and projected onto the new one by
	// field name: in the row view every field keeps the value its writer
	// stored; in a codec's view a field whose stored type the new schema
	// cannot read is null, which a required field of the codec's output
	// cannot be: that view shows the record's payload as null with the
	// reason. The new record reads in every view.
	s.notify(t, `{"event_type":"r","identifier":{},"payload":{"station":"s1","step":4,"temperature":"warm"}}`)
	cs = newTestCodecs(t, evolveDefs[2])
	newLine := `{"station":"s1","step":4,"temperature":"warm","humidity":null}`
	oldRows := []string{
		`{"station":"s1","step":1,"temperature":21.5,"humidity":null}`,
		`{"station":"s1","step":2,"temperature":22,"humidity":0.25}`,
		`{"station":"s1","step":3,"temperature":23.5,"humidity":null}`,
	}
	for _, format := range []string{"", "reading_json", "reading_avro"} {
		evs := s.replayAll(t, "r", format)
		if len(evs) != 4 {
			t.Fatalf("replay %q after the forced change: %d events", format, len(evs))
		}
		for i, ev := range evs[:3] {
			if format == "" {
				if payloadText(t, ev.Raw) != oldRows[i] || ev.Data["heraldpayloaderror"] != nil {
					t.Fatalf("replay of old record %d after the forced change: %s\nwant payload %s", i+1, ev.Raw, oldRows[i])
				}
				continue
			}
			if payloadText(t, ev.Raw) != "null" || ev.Data["heraldpayloaderror"] != "the stored record cannot be shown in format '"+format+"': field temperature: null in a required field" {
				t.Fatalf("replay %q of old record %d after the forced change: %s", format, i+1, ev.Raw)
			}
		}
		want := newLine
		if format != "" {
			want = embed(cs.codec(t, format), cs.encode(t, format, newLine))
		}
		if got := payloadText(t, evs[3].Raw); got != want || evs[3].Data["heraldpayloaderror"] != nil {
			t.Fatalf("replay %q of the new record: %s", format, evs[3].Raw)
		}
	}
	// The schema endpoint lists every version that wrote records, with
	// the sequences written under each, in the order they became current.
	r = s.do(t, http.MethodGet, "/api/v1/schema/r", "")
	var vers []string
	for _, v := range r.Body["payload_schema_versions"].([]any) {
		m := v.(map[string]any)
		vers = append(vers, jsonString([]any{m["fingerprint"], m["codec"], m["first_seq"], m["last_seq"], m["current"]}))
		if !strings.HasPrefix(m["schema"].(string), "CREATE SCHEMA reading (") {
			t.Fatalf("schema version text: %s", r.Raw)
		}
	}
	if want := `["` + fp1 + `","reading_json",1,1,false] ["` + fp2 + `","reading_json",2,3,false] ["` + fp3 + `","reading_json",4,4,true]`; r.Status != http.StatusOK || strings.Join(vers, " ") != want {
		t.Fatalf("schema versions: %d %s\nwant %s", r.Status, r.Raw, want)
	}
	// WHERE reads an old record's field of another kind as NULL.
	for where, want := range map[string]string{
		`payload.temperature = 'warm'`:                  "r@4",
		`payload.temperature IS NULL`:                   "r@1 r@2 r@3",
		`payload.temperature > '' AND payload.step > 0`: "r@4",
	} {
		evs := cloudEvents(s.open(t, "/api/v1/replay", `{"event_type":"r","identifier":{},"from_id":"1","where":"`+where+`"}`).all(wait))
		var ids []string
		for _, ev := range evs {
			ids = append(ids, ev.Data["id"].(string))
		}
		if strings.Join(ids, " ") != want {
			t.Fatalf("replay where %s after the forced change: %v, want %s", where, ids, want)
		}
	}

	// Removing the payload codec breaks every stored typed record: refused,
	// then forced.
	opaque := strings.Replace(cfg, "    payload: {codec: reading_json}\n", "", 1)
	removed := "the payload codec is removed: the records stored typed under codec 'reading_json' could no longer be shown (their payload would read as null)"
	r = s.reload(t, opaque)
	if r.Status != http.StatusConflict || jsonString(r.Body["refused"]) != `["notification_schema.r.payload (codec reading_json): `+removed+`"]` ||
		r.Body["message"] != `the payload schema of event type 'r' (codec 'reading_json', fingerprint `+fp3+`) changes incompatibly: records stored under the current schema could not be read under the new one: `+removed+
			`; nothing was applied (a forced reload applies it: POST /api/v1/admin/reload?force=true; the records stored before are then read with the schema that wrote them, projected onto the new one by field name, a field it cannot read as null; a view that cannot show a record delivers a null payload and the reason in heraldpayloaderror)` ||
		fingerprint() != fp3 {
		t.Fatalf("removing the codec: %d %s", r.Status, r.Raw)
	}
	r = s.do(t, http.MethodPost, "/api/v1/admin/reload", `{"force":true}`)
	if r.Status != http.StatusOK || jsonString(r.Body["payload_schemas"]) != `[{"breaks":["`+removed+`"],"codec":"","compatible":false,"event_type":"r","fingerprint":"","forced":true,"previous_codec":"reading_json","previous_fingerprint":"`+fp3+`"}]` ||
		jsonString(r.Body["changed"]) != `["r"]` {
		t.Fatalf("removing the codec by force: %d %s", r.Status, r.Raw)
	}
	evs := s.replayAll(t, "r", "")
	if len(evs) != 4 || payloadText(t, evs[3].Raw) != "null" || evs[3].Data["heraldpayloaderror"] != "the record holds a typed payload, but event type 'r' has no payload codec now" {
		t.Fatalf("replay after removing the codec: %d %v", len(evs), evs)
	}
}
