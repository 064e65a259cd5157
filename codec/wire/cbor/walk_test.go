package cbor

import (
	"encoding/hex"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"herald/codec/rows"
	"herald/codec/values"
)

// TestForgedCounts: a declared length far beyond the bytes that follow is
// refused as malformed without allocating for the declared length, by the
// direct walk and the generic path alike.
func TestForgedCounts(t *testing.T) {
	p := plan(t, strictDefs)
	d, err := NewDecoder(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ hex, code string }{
		{"a2 6175 01 6171 9a7fffffff 80", "SYNTAX"},                 // VEC of 2^31-1 arrays
		{"a2 6175 01 6176 9a00020000 6161", "SYNTAX"},               // VEC<STRING> of 131072
		{"a2 6175 01 6176 9a00020000 6161 6161", "SYNTAX"},          // within the element bound, 2 bytes follow
		{"a3 6175 01 6166 01 6173 7b7fffffffffffffff 61", "SYNTAX"}, // text of 2^63-1 bytes
		{"a3 6175 01 6166 01 6179 5b00000000ffffffff 61", "SYNTAX"}, // byte string of 2^32-1 bytes
		{"bb7fffffffffffffff 6175 01", "SYNTAX"},                    // map of 2^63-1 pairs
		{"ba00020000 6175 01", "SYNTAX"},                            // map of 131072 pairs, one given
		{"a2 6175 01 616d 9a7fffffff fa3f800000", "SYNTAX"},         // ARRAY axis forged
		{"a3 6175 01 6166 01 6165 9a00010000 fa3f800000", "SYNTAX"}, // an array where a float goes, forged
	} {
		payload, err := hex.DecodeString(stripSpaces(c.hex))
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 10 {
			b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
			_, err = d.Decode(payload, b)
			b.Release()
		}
		runtime.ReadMemStats(&after)
		if got := values.CodeOf(err); string(got) != c.code {
			t.Errorf("%s: %v, want %s", c.hex, err, c.code)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 10*256<<10 {
			t.Errorf("%s: %d bytes allocated over 10 decodes", c.hex, n)
		}
	}
}

// TestWalkAllocatesNothing: an accepted row costs no allocation past the
// builders' own growth (no value tree, no key or string copies), the
// guard against the generic path coming back on the accepted path.
func TestWalkAllocatesNothing(t *testing.T) {
	p := plan(t, strictDefs)
	d, err := NewDecoder(p)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := hex.DecodeString(stripSpaces("a6 6175 18ff 6166 fa3fc00000 616d 82 83 fa3f800000 01 f93c00 83 fb3ff0000000000000 20 3a7fffffff" +
		" 6176 82 6161 6162 6174 74 323032362d30392d32345430383a31353a30305a 6171 82 82 01 20 80"))
	if err != nil {
		t.Fatal(err)
	}
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	if !d.fast(payload, b) {
		t.Fatal("the walk leaves the payload to the generic path")
	}
	if n := testing.AllocsPerRun(2000, func() {
		if _, err := d.Decode(payload, b); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per accepted row", n)
	}
}
