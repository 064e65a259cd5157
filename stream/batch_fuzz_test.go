package stream

import (
	"encoding/json"
	"testing"
)

// FuzzParseBatch checks the batch option's parser on any input: it never
// panics, and what it accepts is within the documented bounds.
func FuzzParseBatch(f *testing.F) {
	for _, s := range []string{`{}`, `{"max_records":2}`, `{"max_records":10000,"max_frame_bytes":1024}`,
		`{"max_records":0}`, `{"max_frame_bytes":1e3}`, `{"size":1}`, `{"max_records":"2"}`, `[1]`, `null`, `{"max_records":-1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		b, err := parseBatchMembers(json.RawMessage(s))
		if err != nil {
			return
		}
		if b.MaxRecords < 1 || b.MaxRecords > MaxBatchRecords || (b.MaxFrameBytes != 0 && b.MaxFrameBytes < MinBatchFrameBytes) {
			t.Fatalf("%s: accepted out of bounds: %+v", s, b)
		}
	})
}
