package jetstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzIdentifierJSON: identifierJSON writes exactly what json.Marshal
// writes for any identifier map (the header is on the wire).
func FuzzIdentifierJSON(f *testing.F) {
	f.Add("class", "od", "step", "12", "", "")
	f.Add("date", "20260101", "time", "0000", "expver", "0001")
	f.Add("a<b", "x&y", "q\"", "back\\slash", "ctl\x01", "é")
	f.Add("b", "2", "a", "1", "c", "\u2028")
	f.Add("", "", "k", "\xff", "z", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		m := map[string]string{k1: v1, k2: v2, k3: v3}
		want, werr := json.Marshal(m)
		got, err := identifierJSON(m)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("identifierJSON(%q) = %s, %v; json.Marshal: %s, %v", m, got, err, want, werr)
		}
	})
}

// TestIdentifierJSONEmpty: an empty or nil map is {} (message leaves
// out the header then, but the encoding must still agree).
func TestIdentifierJSONEmpty(t *testing.T) {
	for _, m := range []map[string]string{nil, {}} {
		got, err := identifierJSON(m)
		want, _ := json.Marshal(m)
		if m == nil {
			want = []byte("{}") // json.Marshal writes null for a nil map
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("identifierJSON(%#v) = %s, %v; want %s", m, got, err, want)
		}
	}
}

// BenchmarkIdentifierJSON: identifierJSON against json.Marshal on a
// usual identifier.
func BenchmarkIdentifierJSON(b *testing.B) {
	m := map[string]string{"class": "od", "date": "20260101", "domain": "g", "expver": "0001", "step": "12", "stream": "enfo", "time": "0000"}
	b.Run("identifierJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := identifierJSON(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
