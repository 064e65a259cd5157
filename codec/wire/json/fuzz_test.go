package json

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/codec/rows"
)

const fuzzDefs = `CREATE SCHEMA s (u U64 OPTIONAL, i I8 OPTIONAL, f F32 OPTIONAL, d F64 OPTIONAL, b BOOL OPTIONAL,
  s STRING OPTIONAL, y BYTES OPTIONAL, t DATETIME OPTIONAL, a ARRAY<F32, 2, 3> OPTIONAL,
  v VEC<ARRAY<I16, 2>> OPTIONAL, w ARRAY<VEC<STRING>, 2> OPTIONAL, x VEC<BYTES> OPTIONAL);
CREATE WIRE JSON SCHEMA w MODE LOOSE (u integer OPTIONAL, i I8 OPTIONAL, f F32 OPTIONAL, d number OPTIONAL,
  b boolean OPTIONAL, s string OPTIONAL, y bytes OPTIONAL, t string OPTIONAL, a array OPTIONAL, v array OPTIONAL,
  w array OPTIONAL, x array OPTIONAL, k integer OPTIONAL);
CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s ENCODE t AS RFC3339`

// FuzzDecode checks the decoder against jsontext (strict RFC 8259 +
// duplicate names): whatever jsontext rejects, the decoder rejects; and a
// decoded row re-encodes to a payload that decodes to the same row.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"u":18446744073709551615,"i":-128,"f":7.038531e-26,"d":5e-324,"b":true,"s":"\u00e9\ud83d\ude00","y":"/+8=","t":"2026-09-24T10:15:00.123456789+02:00"}`,
		`{"a":[[1,2,3],[4,5,6]],"v":[[1,2],[-3,4]],"w":[[],["a","b"]],"x":["","AA==","AAA="]}`,
		`{"a":[[1,2,3]]}`, `{"a":[1,2,3,4,5,6]}`, `{"v":[[1]]}`, `{"i":-129}`, `{"u":-1}`, `{"u":1.0}`,
		`{"f":3.4028236e38}`, `{"f":-0.0}`, `{"d":1e400}`, `{"y":"AA"}`, `{"y":"AB=="}`, `{"y":"QUJ\nD"}`,
		`{"t":"2026-09-24T10:15:00,5Z"}`, `{"t":"1677-09-21T00:12:43.145224191Z"}`, `{"s":"\ud800"}`,
		"{\"s\":\"\xff\"}", "{\"s\":\"\x01\"}", `{"s":"\x"}`, `{"s":"\u12"}`, `{"u":1,"u":2}`, `{"u":1} x`,
		`{"u":1}{"u":2}`, `[1]`, ``, `{"zz":{"q":[1,{"r":null}]},"k":5}`, `{"k":1.5}`, `{"u":01}`, `{"s":null}`,
	} {
		f.Add([]byte(s))
	}
	p := compile(f, fuzzDefs)
	f.Fuzz(func(t *testing.T, payload []byte) {
		mem := memory.NewGoAllocator()
		b := rows.NewBuilder(mem, p.Schema)
		defer b.Release()
		d := NewDecoder(p)
		n, err := d.Decode(payload, b)
		valid := jsontext.Value(payload).IsValid()
		if !valid && err == nil {
			t.Fatalf("accepted what jsontext rejects: %q", payload)
		}
		rec, ferr := b.NewRecordBatch()
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer rec.Release()
		if int(rec.NumRows()) != n {
			t.Fatalf("rows %d, decode said %d", rec.NumRows(), n)
		}
		if err != nil {
			return
		}
		rv := NewRowViewEncoder(p.Schema, true)
		first, err := rv.AppendRow(nil, rec, 0)
		if err != nil {
			t.Fatal(err)
		}
		wire, err := NewEncoder(p).AppendRow(nil, rec, 0)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b2 := rows.NewBuilder(mem, p.Schema)
		defer b2.Release()
		if _, err := NewDecoder(p).Decode(wire, b2); err != nil {
			t.Fatalf("re-decode of %s: %v", wire, err)
		}
		rec2, _ := b2.NewRecordBatch()
		defer rec2.Release()
		second, _ := rv.AppendRow(nil, rec2, 0)
		if string(first) != string(second) {
			// non-finite floats travel as null
			if !strings.Contains(string(first), "Infinity") && !strings.Contains(string(first), "NaN") {
				t.Fatalf("round trip changed\n%s\n%s", first, second)
			}
		}
	})
}
