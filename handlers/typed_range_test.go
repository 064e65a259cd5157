package handlers_test

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/notification"
)

// TestTypedFloatBeyondRange: a number beyond its float type's range is
// refused as out of range by every codec that reads numbers (WIRE JSON
// and CBOR, the JAQ-native JSON, YAML, TOML, XML and CBOR codecs), on the
// raw endpoint, notify and the session's notify, rather than stored as an
// infinity the JSON and CBOR wire formats cannot write back: 1e39 for the
// F32 humidity, as 1e400 for the F64 temperature. (WIRE AVRO carries an
// F32 as 4 bytes: no number beyond its range can be written in it.)
func TestTypedFloatBeyondRange(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	cs := newTestCodecs(t, typedDefs)
	const f32 = "number is outside the range of F32 (largest magnitude 3.4028235e+38)"
	// humidity 0.25 in the payload of each family, as its format writes it.
	quarter := map[string][]string{"text": {"0.25"}, "cbor": {"f93400", "fa3e800000", "fb3fd0000000000000"}}
	for _, f := range readingFamilies {
		if f.codec == "reading_avro" {
			continue
		}
		cd := cs.codec(t, f.codec)
		payload := cs.encode(t, f.codec, readingLine)
		binary := f.codec == "reading_cbor" || f.codec == "reading_jcbor"
		replaced := false
		if binary {
			big, _ := hex.DecodeString("fb48078287f49c4a1d") // the double 1e39
			for _, q := range quarter["cbor"] {
				b, _ := hex.DecodeString(q)
				if bytes.Contains(payload, b) {
					payload, replaced = bytes.Replace(payload, b, big, 1), true
					break
				}
			}
		} else if bytes.Contains(payload, []byte("0.25")) {
			payload, replaced = bytes.Replace(payload, []byte("0.25"), []byte("1e39"), 1), true
		}
		if !replaced {
			t.Fatalf("%s: no humidity 0.25 in %q", f.codec, payload)
		}
		r := s.post(t, "/api/v1/events/"+f.eventType, notification.MediaType(cd.Format), payload)
		msg, _ := r.Body["message"].(string)
		if r.Status != http.StatusBadRequest || !strings.Contains(msg, f32) || !strings.HasSuffix(msg, "[OUT_OF_RANGE]") {
			t.Fatalf("%s raw: %d %s", f.codec, r.Status, r.Raw)
		}
		r = s.do(t, http.MethodPost, "/api/v1/notification", `{"event_type":"`+f.eventType+`","identifier":{},"payload":`+embed(cd, payload)+`}`)
		if msg, _ := r.Body["message"].(string); r.Status != http.StatusBadRequest || !strings.Contains(msg, f32) {
			t.Fatalf("%s notify: %d %s", f.codec, r.Status, r.Raw)
		}
	}
	// F64: the raw endpoint (no request body number check runs before the
	// codec there) refuses 1e400 as notify does.
	r := s.post(t, "/api/v1/events/r_json", "application/json", []byte(`{"station":"s1","step":1,"temperature":1e400,"at":"2026-12-03T10:00:00Z"}`))
	if r.Status != http.StatusBadRequest || r.Body["message"] != "invalid payload for event type 'r_json': codec reading_json: field temperature: number is outside the range of F64 (largest magnitude 1.7976931348623157e+308) (at byte 44) [OUT_OF_RANGE]" {
		t.Fatalf("F64 raw: %d %s", r.Status, r.Raw)
	}
	c := s.dial(t, nil)
	c.welcome()
	rep := c.reply("notify", `"event_type":"r_json","identifier":{},"payload":{"station":"s1","step":1,"temperature":1,"humidity":-1e39,"at":"2026-12-03T10:00:00Z"}`)
	if e, _ := rep["error"].(map[string]any); rep["ok"] != false || e["code"] != "INVALID_NOTIFICATION_REQUEST" || !strings.Contains(e["message"].(string), f32) {
		t.Fatalf("session notify: %v", rep)
	}
	for _, f := range readingFamilies {
		if evs := s.replayAll(t, f.eventType, ""); len(evs) != 0 {
			t.Fatalf("%s: %d events stored", f.eventType, len(evs))
		}
	}
}
