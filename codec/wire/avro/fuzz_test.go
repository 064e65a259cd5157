package avro

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"herald/codec/bind"
	"herald/codec/catalog"
	"herald/codec/rows"
	wjson "herald/codec/wire/json"
)

func plan(t testing.TB, defs string) *bind.Plan {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	p, err := cat.Plan("c")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const fuzzDefs = `CREATE SCHEMA s (x U32, i I64 OPTIONAL, f F32, s STRING OPTIONAL, y BYTES, t DATETIME OPTIONAL, a ARRAY<U8, 2>, v VEC<VEC<F64>>);
CREATE WIRE AVRO SCHEMA w (x LONG, i LONG OPTIONAL, f FLOAT, s STRING OPTIONAL, y BYTES, t STRING OPTIONAL, a ARRAY, v ARRAY, k INT OPTIONAL);
CREATE CODEC c FROM WIRE AVRO SCHEMA w TO SCHEMA s ENCODE t AS RFC3339`

func TestSchema(t *testing.T) {
	p := plan(t, fuzzDefs)
	want := `{"fields":[{"name":"x","type":"long"},{"name":"i","type":["null","long"]},{"name":"f","type":"float"},{"name":"s","type":["null","string"]},{"name":"y","type":"bytes"},{"name":"t","type":["null","string"]},{"name":"a","type":{"items":"long","type":"array"}},{"name":"v","type":{"items":{"items":"double","type":"array"},"type":"array"}},{"name":"k","type":["null","int"]}],"name":"w","type":"record"}`
	if got := Schema(p); got != want {
		t.Fatalf("got %s", got)
	}
}

// FuzzDecode: no panic, whole rows only, and a decoded row re-encodes to a
// payload that decodes to the same row.
func FuzzDecode(f *testing.F) {
	for _, h := range []string{
		"fe ff ff ff 1f 00 00 00 c0 7f 00 00 04 02 04 00 00 00",
		"02 02 ff ff ff ff ff ff ff ff ff 01 0000803f 02 04 c3a9 04 ffef 02 28 323032362d30392d32345430383a31353a30302e3132333435363738395a 04 02 04 00 02 02 000000000000f03f 00 00 00",
		"80 80 80 80 20 00 00000000 00 00 00 04 02 04 00 00 00", "", "02", "02 00 00000000 00 00 00 02 02 00 00 00",
		"02 00 00000000 02 04 c328 00 00 04 02 04 00 00 00",
	} {
		b, _ := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
		f.Add(b)
	}
	p := plan(f, fuzzDefs)
	c, err := New(p)
	if err != nil {
		f.Fatal(err)
	}
	rv := wjson.NewRowViewEncoder(p.Schema, true)
	f.Fuzz(func(t *testing.T, payload []byte) {
		b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
		defer b.Release()
		n, err := c.Decode(payload, b)
		rec, ferr := b.NewRecordBatch()
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer rec.Release()
		if int(rec.NumRows()) != n {
			t.Fatalf("rows %d vs %d", rec.NumRows(), n)
		}
		if err != nil {
			return
		}
		out, err := c.AppendRow(nil, rec, 0)
		if err != nil {
			t.Fatal(err)
		}
		b2 := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
		defer b2.Release()
		if _, err := c.Decode(out, b2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		rec2, _ := b2.NewRecordBatch()
		defer rec2.Release()
		x, _ := rv.AppendRow(nil, rec, 0)
		y, _ := rv.AppendRow(nil, rec2, 0)
		if string(x) != string(y) {
			t.Fatalf("round trip\n%s\n%s", x, y)
		}
	})
}
