package handlers

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"
)

// notifiedCases are notify responses with plain strings and with every
// kind of byte encoding/json escapes.
var notifiedCases = []struct {
	requestID, eventType string
	seq                  uint64
}{
	{"0b1c7d6e-5f4a-4b3c-9d2e-1f0a9b8c7d6e", "mars", 1},
	{"", "diss", 18446744073709551615},
	{"id with spaces/and:colons", "test_polygon", 42},
	{`quote"`, "mars", 2},
	{`back\slash`, "mars", 3},
	{"<script>", "mars", 4},
	{"a&b", "mars", 5},
	{"tab\there", "mars", 6},
	{"é", "mars", 7},
	{"del\x7f", "mars", 8},
	{"bad\xffutf8", "mars", 9},
	{"line\u2028sep", "mars", 10},
	{"plain", "type<1>", 11},
}

// wantNotified is the body httperr.WriteJSON writes for a NotifyResponse.
func wantNotified(t testing.TB, requestID string, at time.Time, eventType string, seq uint64) string {
	t.Helper()
	rec := httptest.NewRecorder()
	writeNotifiedReflect(rec, requestID, at, eventType, seq)
	return rec.Body.String()
}

// writeNotifiedReflect writes the response through encoding/json only.
func writeNotifiedReflect(w *httptest.ResponseRecorder, requestID string, at time.Time, eventType string, seq uint64) {
	b, err := json.Marshal(NotifyResponse{Status: "success", RequestID: requestID,
		ProcessedAt: at.UTC().Format(processedAtLayout), NotificationID: eventType + "@" + uintString(seq)})
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	_, _ = w.Write(append(b, '\n'))
}

// uintString is seq in decimal.
func uintString(seq uint64) string {
	b, _ := json.Marshal(seq)
	return string(b)
}

// TestWriteNotified: the notify response written without reflection is
// the one encoding/json writes, byte for byte, header included, for
// plain strings and for strings that need escaping (which take
// encoding/json's path).
func TestWriteNotified(t *testing.T) {
	at := time.Date(2026, 12, 7, 21, 4, 5, 999, time.FixedZone("CET", 3600))
	plain := 0
	for _, c := range notifiedCases {
		rec := httptest.NewRecorder()
		writeNotified(rec, c.requestID, at, c.eventType, c.seq)
		if got, want := rec.Body.String(), wantNotified(t, c.requestID, at, c.eventType, c.seq); got != want {
			t.Errorf("%q %q: wrote\n%s want\n%s", c.requestID, c.eventType, got, want)
		}
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%q: status %d, content type %q", c.requestID, rec.Code, rec.Header().Get("Content-Type"))
		}
		if _, ok := appendNotified(nil, c.requestID, at, c.eventType, c.seq); ok {
			plain++
		}
	}
	if plain != 3 {
		t.Errorf("%d cases built without reflection, want 3", plain)
	}
}

// FuzzWriteNotified: for any request id, event type, time and sequence
// the response is encoding/json's.
func FuzzWriteNotified(f *testing.F) {
	for _, c := range notifiedCases {
		f.Add(c.requestID, c.eventType, int64(1796677445), c.seq)
	}
	f.Fuzz(func(t *testing.T, requestID, eventType string, unix int64, seq uint64) {
		at := time.Unix(unix%(1<<35), 0)
		rec := httptest.NewRecorder()
		writeNotified(rec, requestID, at, eventType, seq)
		if got, want := rec.Body.String(), wantNotified(t, requestID, at, eventType, seq); got != want {
			t.Fatalf("wrote\n%s want\n%s", got, want)
		}
	})
}
