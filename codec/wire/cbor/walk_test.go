package cbor

import (
	"encoding/hex"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/values"
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

// TestFloatBeyondRange: a finite CBOR double beyond F32's range, in an F32
// field or an F32 element, is refused as out of range by the direct walk
// and the generic path alike (not rounded to an infinity); F32's largest
// value and a double just under the rounding boundary are read, and an
// infinity CBOR carries as such keeps its rule (null for an optional
// field).
func TestFloatBeyondRange(t *testing.T) {
	p := plan(t, strictDefs)
	d, err := NewDecoder(p)
	if err != nil {
		t.Fatal(err)
	}
	const msg = "number is outside the range of F32 (largest magnitude 3.4028235e+38)"
	for _, c := range []struct{ hex, err string }{
		{"a2 6175 01 6166 fb48078287f49c4a1d", "OUT_OF_RANGE: field f: " + msg}, // 1e39
		{"a2 6175 01 6166 fbc8078287f49c4a1d", "OUT_OF_RANGE: field f: " + msg}, // -1e39
		{"a2 6175 01 6166 fb47effffff0000000", "OUT_OF_RANGE: field f: " + msg}, // rounds to 2^128
		{"a3 6175 01 6166 01 616d 82 83 01 02 03 83 01 02 fb48078287f49c4a1d", "OUT_OF_RANGE: field m[1][2]: " + msg},
		{"a2 6175 01 6166 fb47efffffe0000000", ""},         // F32's largest value
		{"a2 6175 01 6166 fb47efffffefffffff", ""},         // just under the boundary: rounds down to it
		{"a3 6175 01 6166 01 6165 fb7ff0000000000000", ""}, // +Inf in an optional field: null
	} {
		payload, err := hex.DecodeString(stripSpaces(c.hex))
		if err != nil {
			t.Fatal(err)
		}
		for name, fn := range map[string]func([]byte, *rows.Builder) (int, error){"walk": d.Decode, "generic": d.DecodeGeneric} {
			b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
			_, err := fn(payload, b)
			b.Release()
			got := ""
			if err != nil {
				e := err.(*values.Error)
				got = string(e.Code) + ": field " + e.Path + ": " + e.Msg
			}
			if got != c.err {
				t.Errorf("%s, %s: %q, want %q", c.hex, name, got, c.err)
			}
		}
	}
}
