package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// TestNotifyBatchTyped: a batch element of an event type with a typed
// payload goes through the codec as a notify of it does: it is stored as
// the same record (the same row view when replayed), refused with the
// same message, and when the codec's extension workers are busy the
// whole batch is a 503 with Retry-After and nothing is stored.
func TestNotifyBatchTyped(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), nil)
	cs := newTestCodecs(t, typedDefs)
	const path = "/api/v1/notifications"
	jsonBody := `{"event_type":"r_json","identifier":{"station":"s1"},"payload":` + embed(cs.codec(t, "reading_json"), cs.encode(t, "reading_json", readingLine)) + `}`
	cborBody := `{"event_type":"r_cbor","identifier":{"station":"s1"},"payload":` + embed(cs.codec(t, "reading_cbor"), cs.encode(t, "reading_cbor", readingLine)) + `}`
	plainBody := `{"event_type":"plain","identifier":{"k":"a"}}`
	s.notify(t, jsonBody)
	s.notify(t, cborBody)
	r := s.do(t, http.MethodPost, path, batchBody(jsonBody, plainBody, cborBody))
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[r_json@2 plain@1 r_cbor@2]" {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	for _, et := range []string{"r_json", "r_cbor"} {
		evs := s.replayAll(t, et, "")
		if len(evs) != 2 || payloadText(t, evs[0].Raw) != payloadText(t, evs[1].Raw) || evs[1].Data["id"] != et+"@2" {
			t.Fatalf("%s: the batch's record differs from notify's: %v", et, evs)
		}
	}

	// A payload the codec refuses: notify's code and message, by index.
	bad := `{"event_type":"r_json","identifier":{},"payload":{"station":"s1","step":"x","temperature":1,"at":"2026-12-03T10:00:00Z"}}`
	single := s.do(t, http.MethodPost, "/api/v1/notification", bad)
	r = s.do(t, http.MethodPost, path, batchBody(plainBody, bad))
	errs, _ := r.Body["errors"].([]any)
	want := map[string]any{"index": 1.0, "code": single.Body["code"], "message": single.Body["message"]}
	if single.Status != http.StatusBadRequest || r.Status != http.StatusBadRequest || len(errs) != 1 || fmt.Sprint(errs[0]) != fmt.Sprint(want) {
		t.Fatalf("notify %d %s\nbatch %d %s", single.Status, single.Raw, r.Status, r.Raw)
	}

	// The workers all busy: the batch is refused with 503 as a whole.
	release := fillWorkers(t, s.Server.Runtime().Workers)
	tick := `{"event_type":"tick","identifier":{"src":"a"},"payload":{"n":1}}`
	r = s.do(t, http.MethodPost, path, batchBody(plainBody, tick))
	release()
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || r.Body["code"] != "SERVICE_UNAVAILABLE" ||
		r.Body["message"] != "codec ticks: the extension workers are busy, so the payload was not judged; nothing was stored, retry later" {
		t.Fatalf("%d %v %s", r.Status, r.Header, r.Raw)
	}
	for stream, want := range map[string]uint64{"plain": 1, "tick": 0} {
		if last, err := s.Engine.LastSeq(context.Background(), stream); err != nil || last != want {
			t.Fatalf("after the busy batch, %s holds up to %d (%v), want %d", stream, last, err, want)
		}
	}
	r = s.do(t, http.MethodPost, path, batchBody(plainBody, tick))
	if r.Status != http.StatusOK || fmt.Sprint(r.Body["ids"]) != "[plain@2 tick@1]" {
		t.Fatalf("after the workers freed: %d %s", r.Status, r.Raw)
	}
}

// TestNotifyCodecErrorMetrics: a payload a codec refuses counts once in
// herald_codec_decode_errors_total, through notify and per element
// through batch notify.
func TestNotifyCodecErrorMetrics(t *testing.T) {
	s := startServer(t, typedConfig(t, typedDefs, ""), withMetrics(t, nil))
	bad := `{"event_type":"r_json","identifier":{},"payload":{"station":"s1","step":"x","temperature":1,"at":"2026-12-03T10:00:00Z"}}`
	if r := s.do(t, http.MethodPost, "/api/v1/notification", bad); r.Status != http.StatusBadRequest {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if got := metric(t, s, "herald_codec_decode_errors_total", "codec=reading_json"); got != 1 {
		t.Fatalf("after one refused notify: %v", got)
	}
	if r := s.do(t, http.MethodPost, "/api/v1/notifications", batchBody(bad, `{"event_type":"plain","identifier":{}}`, bad)); r.Status != http.StatusBadRequest {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if got := metric(t, s, "herald_codec_decode_errors_total", "codec=reading_json"); got != 3 {
		t.Fatalf("after a batch with two refused payloads: %v", got)
	}
}
