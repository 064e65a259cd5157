package store_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

func schema(t testing.TB, def string) *types.Schema {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(def); err != nil {
		t.Fatal(err)
	}
	k := cat.Keys()[0]
	s, _ := cat.Schema(k.Name)
	return s
}

// row builds one stored row from a row-view line.
func row(t testing.TB, s *types.Schema, line string) []byte {
	t.Helper()
	b := rows.NewBuilder(nil, s)
	defer b.Release()
	if _, err := wjson.NewRowViewDecoder(s).Decode([]byte(line), b); err != nil {
		t.Fatalf("row view %s: %v", line, err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	out, err := store.NewEncoder(s).AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// view decodes a stored row into s and returns its row view (SENSITIVE
// revealed), or "CODE: message".
func view(t testing.TB, s *types.Schema, data []byte, masked func(types.Field) bool) string {
	t.Helper()
	b := rows.NewBuilder(nil, s)
	defer b.Release()
	err := store.NewDecoder(s, masked).Decode(data, b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer rec.Release()
	if err != nil {
		if rec.NumRows() != 0 {
			t.Fatal("a failed decode left a row")
		}
		return string(values.CodeOf(err)) + ": " + err.Error()
	}
	return rowView(t, s, rec)
}

func rowView(t testing.TB, s *types.Schema, rec arrow.RecordBatch) string {
	out, err := wjson.NewRowViewEncoder(s, true).AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestEncoding pins the bytes of one row: a map in schema order, the
// shortest heads, floats at their width, RFC 9581 time.
func TestEncoding(t *testing.T) {
	s := schema(t, `CREATE SCHEMA r (a U8, b I64, c F32, d F64 OPTIONAL, e DATETIME, f BYTES, g VEC<BOOL>, h ARRAY<I8, 2>)`)
	got := hex.EncodeToString(row(t, s, `{"a":24,"b":-25,"c":1.5,"d":null,"e":"1970-01-01T00:00:01.5Z","f":"AAE=","g":[true,false],"h":[-1,0]}`))
	want := "a8" +
		"6161" + "1818" + // a: 24
		"6162" + "3818" + // b: -25
		"6163" + "fa3fc00000" + // c: F32 1.5
		"6164" + "f6" + // d: null
		"6165" + "d903e9a2" + "0101" + "281a1dcd6500" + // e: 1001({1: 1, -9: 500000000})
		"6166" + "420001" + // f: h'0001'
		"6167" + "82f5f4" + // g: [true, false]
		"6168" + "822000" // h: [-1, 0]
	if got != want {
		t.Fatalf("stored bytes\n got %s\nwant %s", got, want)
	}
}

func TestContentType(t *testing.T) {
	ct := store.ContentType("0123456789abcdef")
	if ct != "application/vnd.herald.row+cbor; fingerprint=0123456789abcdef" {
		t.Fatal(ct)
	}
	if fp, ok := store.Fingerprint(ct); !ok || fp != "0123456789abcdef" {
		t.Fatal(fp, ok)
	}
	for _, other := range []string{"application/json", "application/vnd.herald.row+cborx", ""} {
		if _, ok := store.Fingerprint(other); ok {
			t.Errorf("%q read as stored", other)
		}
	}
}

// TestEvolution: a row written under one schema reads under another by
// name, within the compatible changes.
func TestEvolution(t *testing.T) {
	old := schema(t, `CREATE SCHEMA r (id I32, t F32, at DATETIME, name STRING, gone STRING OPTIONAL, tags VEC<I16>)`)
	data := row(t, old, `{"id":-7,"t":0.1,"at":"2026-12-03T10:00:00.000000001Z","name":"x","gone":"y","tags":[1,-2]}`)
	tests := []struct{ def, want string }{
		{`CREATE SCHEMA r (id I64, t F64, at STRING, name BYTES, tags VEC<I64>, extra U8 OPTIONAL)`,
			`{"id":-7,"t":0.10000000149011612,"at":"2026-12-03T10:00:00.000000001Z","name":"eA==","tags":[1,-2],"extra":null}`},
		{`CREATE SCHEMA r (tags VEC<F32>, id F64)`, `{"tags":[1,-2],"id":-7}`},
		{`CREATE SCHEMA r (id U32)`, `OUT_OF_RANGE: field id: integer is outside the range of U32 (at byte 5)`},
		{`CREATE SCHEMA r (t F32, x STRING)`, `MISSING_FIELD: field x: required field is missing from the stored row (the schema changed incompatibly)`},
		{`CREATE SCHEMA r (name I32)`, `TYPE_MISMATCH: field name: stored text cannot be read as I32 (the schema changed incompatibly) (at byte 34)`},
		{`CREATE SCHEMA r (at DATETIME, id F32)`, `{"at":"2026-12-03T10:00:00.000000001Z","id":-7}`},
	}
	for _, tt := range tests {
		if got := view(t, schema(t, tt.def), data, nil); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.def, got, tt.want)
		}
	}
	f64 := row(t, schema(t, `CREATE SCHEMA r (v F64)`), `{"v":0.5}`)
	if got := view(t, schema(t, `CREATE SCHEMA r (v F32)`), f64, nil); !strings.HasPrefix(got, "TYPE_MISMATCH: field v: stored F64 cannot be read as F32") {
		t.Error(got)
	}
}

// TestReorderKeepsValues: the schema-evolution rule "never insert,
// reorder or delete" holds where values sit at positions; a stored row
// does not depend on the internal schema's order, because it is a map
// keyed by field name. A row written under (a, b) of one type reads
// under (b, a) with each value in its own field, which is why reload
// judges stored records by name (evolve.SchemaByName) and a reorder is
// compatible for them.
func TestReorderKeepsValues(t *testing.T) {
	data := row(t, schema(t, `CREATE SCHEMA r (a U32, b U32, c STRING OPTIONAL)`), `{"a":1,"b":2,"c":"x"}`)
	if got, want := view(t, schema(t, `CREATE SCHEMA r (b U32, c STRING OPTIONAL, a U32)`), data, nil), `{"b":2,"c":"x","a":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestMask: masked fields read as *** (text, bytes) or null/zero.
func TestMask(t *testing.T) {
	s := schema(t, `CREATE SCHEMA r (a STRING SENSITIVE, b BYTES SENSITIVE, c I32 SENSITIVE, d F64 OPTIONAL SENSITIVE, e ARRAY<U8, 2> SENSITIVE, f VEC<STRING> SENSITIVE, g DATETIME SENSITIVE, h STRING OPTIONAL SENSITIVE, k STRING)`)
	data := row(t, s, `{"a":"secret","b":"AQ==","c":42,"d":1.5,"e":[1,2],"f":["x"],"g":"2026-01-01T00:00:00Z","h":null,"k":"open"}`)
	got := view(t, s, data, func(f types.Field) bool { return f.Sensitive })
	want := `{"a":"***","b":"Kioq","c":0,"d":null,"e":[0,0],"f":[],"g":"1970-01-01T00:00:00Z","h":null,"k":"open"}`
	if got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

// TestRefused: what the encoder never writes is refused, and no row is
// left behind.
func TestRefused(t *testing.T) {
	s := schema(t, `CREATE SCHEMA r (a U32, v VEC<U8> OPTIONAL)`)
	tests := []struct{ hex, want string }{
		{"", "SYNTAX: stored row ends early (at byte 0)"},
		{"a16161", "SYNTAX: field a: stored row ends early (at byte 3)"},
		{"a161611801", "SYNTAX: field a: stored row holds a head longer than needed (at byte 5)"},
		{"bf616101ff", "SYNTAX: stored row holds an indefinite length or a reserved head (at byte 1)"},
		{"a2616101616101", "DUPLICATE_FIELD: field a: field occurs twice in the stored row (at byte 6)"},
		{"a1616101ff", "TRAILING_DATA: data after the stored row (at byte 4)"},
		{"a16161f6", "NULL_VALUE: field a: null in a required field (at byte 4)"},
		{"a1616120", "OUT_OF_RANGE: field a: integer is outside the range of U32 (at byte 4)"},
		{"a161761a", "SYNTAX: field v: stored row ends early (at byte 4)"},
		{"a26161016176811b0000000000000001", "SYNTAX: field v[0]: stored row holds a head longer than needed (at byte 16)"},
		{"a2616101617681f6", "NULL_VALUE: field v[0]: null where a value is required (collection elements are never null) (at byte 8)"},
		{"a2616101617699ffff", "SYNTAX: field v: stored row ends early (at byte 9)"},
		{"a1616163616263", "TYPE_MISMATCH: field a: stored text cannot be read as U32 (the schema changed incompatibly) (at byte 7)"},
		{"a1616163ff0000", "INVALID_UTF8: field a: stored text is not valid UTF-8 (at byte 7)"},
		{"a16161f90000", "SYNTAX: field a: stored row holds a simple value or float form herald never writes (at byte 6)"},
		{"a16161c101", "SYNTAX: field a: stored row holds a tag herald never writes (at byte 4)"},
		{"a16161d903e9a10101", "TYPE_MISMATCH: field a: stored datetime cannot be read as U32 (the schema changed incompatibly) (at byte 9)"},
		{"a16161d903e9a201012800", "SYNTAX: field a: stored datetime has a nanosecond part outside 1…999999999 (at byte 11)"},
		{"81", "EXPECTED_OBJECT: stored row is not a map (at byte 1)"},
	}
	for _, tt := range tests {
		data, err := hex.DecodeString(tt.hex)
		if err != nil {
			t.Fatal(err)
		}
		if got := view(t, s, data, nil); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.hex, got, tt.want)
		}
	}
}

func TestLookup(t *testing.T) {
	s := schema(t, `CREATE SCHEMA r (a U64, b I8, c F32, d STRING, e BOOL, f DATETIME, g VEC<ARRAY<F64, 2>>, h BYTES, n I8 OPTIONAL)`)
	data := row(t, s, `{"a":18446744073709551615,"b":-128,"c":"NaN","d":"x\"y","e":true,"f":"2000-01-01T00:00:00Z","g":[[1.5,-2],[0,1e300]],"h":"AQI=","n":null}`)
	v, found, err := store.Lookup(data, "b")
	if err != nil || !found || v.Kind != store.Int || !v.Neg || v.Mag != 128 {
		t.Fatal(v, found, err)
	}
	v, _, _ = store.Lookup(data, "a")
	if v.Kind != store.Int || v.Neg || v.Mag != 18446744073709551615 {
		t.Fatal(v)
	}
	v, _, _ = store.Lookup(data, "f")
	if v.Kind != store.Time || v.Time != 946684800e9 {
		t.Fatal(v)
	}
	if v, found, _ = store.Lookup(data, "zz"); found || v.Kind != store.Null {
		t.Fatal(v, found)
	}
	if v, found, _ = store.Lookup(data, "n"); !found || v.Kind != store.Null {
		t.Fatal(v, found)
	}
	var out []byte
	for _, name := range []string{"a", "b", "d", "e", "f", "g", "h", "n"} {
		var ok bool
		if out, ok, err = store.AppendJSON(append(out, ' '), data, name); err != nil || !ok {
			t.Fatal(name, ok, err)
		}
	}
	if got, want := string(out), ` 18446744073709551615 -128 "x\"y" true "2000-01-01T00:00:00Z" [[1.5,-2],[0,1e+300]] "AQI=" null`; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	if _, _, err := store.AppendJSON(nil, data, "c"); values.CodeOf(err) != values.CodeNonFinite {
		t.Fatal(err)
	}
}
