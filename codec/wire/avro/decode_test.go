package avro

import (
	"encoding/hex"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/rows"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

const testDefs = `CREATE SCHEMA s (n I16, v VEC<ARRAY<U8, 2>>, t DATETIME OPTIONAL, s STRING OPTIONAL);
CREATE WIRE AVRO SCHEMA w (n INT, v ARRAY, t STRING OPTIONAL, s STRING OPTIONAL, k STRING OPTIONAL);
CREATE CODEC c FROM WIRE AVRO SCHEMA w TO SCHEMA s ENCODE t AS RFC3339`

func unhex(t testing.TB, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecode pins the decoded rows and the exact error of each rule, in
// the order the rules rank them, and that one builder fed good and bad
// payloads holds exactly the good rows.
func TestDecode(t *testing.T) {
	p := plan(t, testDefs)
	c, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	const (
		rfc      = "2026-09-24T08:15:00.123456789Z"
		rfcHex   = "3c 323032362d30392d32345430383a31353a30302e3132333435363738395a"
		late     = "2300-01-01T00:00:00Z" // beyond the ns range
		lateHex  = "28 323330302d30312d30315430303a30303a30305a"
		malf     = "malformed Avro datum for the wire schema"
		shape3   = "field v[0]: fixed axis of length 2 has 3 elements"
		tailNull = "00 00 00"
	)
	tests := []struct{ name, hex, want string }{
		{"row", "02 04 04 02 04 00 04 06 08 00 00 02 " + rfcHex + " 02 04 c3a9 02 02 61", `{"n":1,"v":[[1,2],[3,4]],"t":"` + rfc + `","s":"é"}`},
		{"nulls", "02 00 " + tailNull, `{"n":1,"v":[],"t":null,"s":null}`},
		{"negative block count with its size, several blocks", "01 01 08 04 02 04 00 02 04 06 08 00 00 " + tailNull, `{"n":-1,"v":[[1,2],[3,4]],"t":null,"s":null}`},
		{"one axis over blocks", "00 02 02 02 02 04 00 00 " + tailNull, `{"n":0,"v":[[1,2]],"t":null,"s":null}`},
		{"non-minimal varints", "82 00 80 00 " + tailNull, `{"n":1,"v":[],"t":null,"s":null}`},
		{"empty", "", "empty payload: expected one Avro datum"},
		{"INT range of I16", "80 f1 04 00 " + tailNull, "field n: integer is outside the range of I16"},
		{"INT beyond 32 bits", "80 80 80 80 10 00 " + tailNull, malf},
		{"long beyond 64 bits", "00 ff ff ff ff ff ff ff ff ff 02 " + tailNull, malf},
		{"varint of 11 bytes", "00 ff ff ff ff ff ff ff ff ff 81 00 " + tailNull, malf},
		{"forged block count", "00 feffffffffffffff7f 04 02 04 00 00 " + tailNull, malf},
		{"block count of the most negative long", "00 ffffffffffffffffff01 00 00 " + tailNull, malf},
		{"forged block size", "00 01 feffffff0f 04 02 04 00 00 " + tailNull, malf},
		{"negative block size", "00 01 01 04 02 04 00 00 " + tailNull, malf},
		{"forged string length", "00 00 02 feffffff0f", malf},
		{"negative string length", "00 00 02 01 00 00", malf},
		{"union index 2", "00 00 04 00 00", malf},
		{"negative union index", "00 00 01 00 00", malf},
		{"truncated", "00 02 04 02", malf},
		{"trailing byte", "02 00 " + tailNull + " 00", "data after the Avro datum: a payload holds exactly one datum (at byte 5)"},
		{"axis too long", "00 02 06 02 04 06 00 00 " + tailNull, shape3},
		{"axis too long over blocks", "00 02 02 02 02 04 02 06 00 00 " + tailNull, shape3},
		{"axis too short", "00 02 02 02 00 00 " + tailNull, "field v[0]: fixed axis of length 2 has 1 elements"},
		{"axis length before its elements", "00 02 06 d804 04 06 00 00 " + tailNull, shape3},
		{"element range", "00 04 04 02 04 00 04 02 d804 00 00 " + tailNull, "field v[1][1]: integer is outside the range of U8"},
		{"first field first", "80 f1 04 02 06 02 04 06 00 00 " + tailNull, "field n: integer is outside the range of I16"},
		{"structure before values", "80 f1 04 00 00 00 02 01", malf},
		{"trailing before values", "80 f1 04 00 " + tailNull + " 00", "data after the Avro datum: a payload holds exactly one datum (at byte 7)"},
		{"datetime text", "00 00 02 02 61 00 00", "field t: expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)"},
		{"datetime range", "00 00 02 " + lateHex + " 00 00", "field t: datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z"},
		{"datetime UTF-8", "00 00 02 02 ff 00 00", "field t: string is not valid UTF-8"},
		{"string UTF-8", "00 00 00 02 04 c328 00", "field s: string is not valid UTF-8"},
		{"wire-only string UTF-8", "00 00 00 00 02 02 ff", "field k: string is not valid UTF-8"},
	}
	rv := wjson.NewRowViewEncoder(p.Schema, true)
	all := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer all.Release()
	var good []string
	for _, tt := range tests {
		payload := unhex(t, tt.hex)
		b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
		n, err := c.Decode(payload, b)
		rec, ferr := b.NewRecordBatch()
		if ferr != nil {
			t.Fatal(ferr)
		}
		var got string
		if err != nil {
			got = err.Error()
		} else {
			view, _ := rv.AppendRow(nil, rec, 0)
			got = string(view)
			good = append(good, got)
		}
		if got != tt.want || int(rec.NumRows()) != n {
			t.Errorf("%s: %s (%d rows, n %d)\nwant %s", tt.name, got, rec.NumRows(), n, tt.want)
		}
		rec.Release()
		b.Release()
		_, _ = c.Decode(payload, all)
	}
	rec, err := all.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if int(rec.NumRows()) != len(good) {
		t.Fatalf("shared builder holds %d rows, want %d", rec.NumRows(), len(good))
	}
	for i, want := range good {
		if view, _ := rv.AppendRow(nil, rec, i); string(view) != want {
			t.Errorf("shared builder row %d: %s, want %s", i, view, want)
		}
	}
}

// TestForgedCountsDoNotAllocate: a block count, block size or length
// forged to the top of its range with a few bytes behind it is refused
// without allocating for it.
func TestForgedCountsDoNotAllocate(t *testing.T) {
	p := plan(t, fuzzDefs)
	c, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	payloads := [][]byte{
		unhex(t, "02 00 00000000 00 00 00 feffffffffffffff7f 0000803f"),          // ARRAY count 2^62-1
		unhex(t, "02 00 00000000 00 00 00 04 02 04 00 ffffffffffffffff7f 02 00"), // VEC count -2^62 and its size
		unhex(t, "02 00 00000000 00 feffffff0f 00"),                              // BYTES length 2^31-1
		unhex(t, "02 00 00000000 00 00 00 04 02 04 00 02 feffffff0f 00"),         // inner VEC count 2^31-1
	}
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	for _, pl := range payloads { // warm the builder up
		if _, err := c.Decode(pl, b); err == nil || err.Error() != "malformed Avro datum for the wire schema" {
			t.Fatalf("%x: %v", pl, err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		for _, pl := range payloads {
			_, _ = c.Decode(pl, b)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("400 forged payloads allocated %d bytes", d)
	}
}

// TestDecodeDoesNotAllocate: an accepted row builds no value tree; past
// the builders' own amortised growth it allocates nothing.
func TestDecodeDoesNotAllocate(t *testing.T) {
	p := plan(t, fuzzDefs)
	c, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	row := unhex(t, "02 02 ff ff ff ff ff ff ff ff ff 01 0000803f 02 04 c3a9 04 ffef 02 3c 323032362d30392d32345430383a31353a30302e3132333435363738395a 04 02 04 00 04 02 000000000000f03f 00 00 00 02 01")
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	for range 1000 {
		if _, err := c.Decode(row, b); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = c.Decode(row, b) }); n != 0 {
		t.Fatalf("%v allocations per row", n)
	}
}
