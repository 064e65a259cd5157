package json

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// compile builds a plan for codec c of the definitions.
func compile(t testing.TB, defs string) *bind.Plan {
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

// one returns definitions of a one-field schema x and its JSON codec.
func one(internal, wire string) string {
	opt := ""
	if strings.HasSuffix(internal, "OPTIONAL") {
		opt = " OPTIONAL"
	}
	enc := ""
	if strings.HasPrefix(internal, "DATETIME") && strings.HasPrefix(wire, "string") {
		enc = " ENCODE x AS RFC3339"
	}
	return "CREATE SCHEMA s (x " + internal + "); CREATE WIRE JSON SCHEMA w (x " + wire + opt + "); CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s" + enc
}

type result struct {
	row  string // row view of the decoded row
	wire string // re-encoded wire payload
	err  string // "CODE: message" of a decode error
}

func run(t testing.TB, p *bind.Plan, payload string) result {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b := rows.NewBuilder(mem, p.Schema)
	defer b.Release()
	d := NewDecoder(p)
	_, err := d.Decode([]byte(payload), b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer rec.Release()
	if err != nil {
		if rec.NumRows() != 0 {
			t.Fatalf("failed decode left %d rows", rec.NumRows())
		}
		e := err.(*values.Error)
		return result{err: string(e.Code) + ": " + e.Error()}
	}
	rv, err := NewRowViewEncoder(p.Schema, true).AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewEncoder(p).AppendRow(nil, rec, 0)
	if err != nil {
		return result{row: string(rv), err: string(values.CodeOf(err)) + ": " + err.Error()}
	}
	return result{row: string(rv), wire: string(w)}
}

func TestVectors(t *testing.T) {
	tests := []struct {
		internal, wire, payload string
		want                    result
	}{
		// Golden rows 1–10: integers
		{"U8", "integer", `{"x":255}`, result{row: `{"x":255}`, wire: `{"x":255}`}},
		{"U8", "U8", `{"x":256}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of U8 (at byte 8)"}},
		{"U8", "integer", `{"x":-1}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of U8 (at byte 7)"}},
		{"U8", "integer", `{"x":1.0}`, result{err: "NOT_INTEGER: field x: expected an integer literal, found a number with a fraction or exponent (at byte 8)"}},
		{"U8", "integer", `{"x":1e2}`, result{err: "NOT_INTEGER: field x: expected an integer literal, found a number with a fraction or exponent (at byte 8)"}},
		{"I8", "integer", `{"x":-128}`, result{row: `{"x":-128}`, wire: `{"x":-128}`}},
		{"I8", "integer", `{"x":-129}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of I8 (at byte 9)"}},
		{"U16", "integer", `{"x":65535}`, result{row: `{"x":65535}`, wire: `{"x":65535}`}},
		{"I16", "integer", `{"x":-32768}`, result{row: `{"x":-32768}`, wire: `{"x":-32768}`}},
		{"I16", "integer", `{"x":32768}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of I16 (at byte 10)"}},
		{"U32", "integer", `{"x":4294967295}`, result{row: `{"x":4294967295}`, wire: `{"x":4294967295}`}},
		{"U32", "integer", `{"x":4294967296}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of U32 (at byte 15)"}},
		{"I32", "integer", `{"x":-2147483648}`, result{row: `{"x":-2147483648}`, wire: `{"x":-2147483648}`}},
		{"I32", "integer", `{"x":2147483648}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of I32 (at byte 15)"}},
		{"U64", "U64", `{"x":18446744073709551615}`, result{row: `{"x":18446744073709551615}`, wire: `{"x":18446744073709551615}`}},
		{"U64", "integer", `{"x":18446744073709551616}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of U64 (at byte 25)"}},
		{"I64", "integer", `{"x":-9223372036854775808}`, result{row: `{"x":-9223372036854775808}`, wire: `{"x":-9223372036854775808}`}},
		{"I64", "integer", `{"x":9223372036854775808}`, result{err: "OUT_OF_RANGE: field x: integer is outside the range of I64 (at byte 24)"}},
		{"I64", "integer", `{"x":-0}`, result{row: `{"x":0}`, wire: `{"x":0}`}},
		{"U8", "integer", `{"x":-0}`, result{row: `{"x":0}`, wire: `{"x":0}`}},
		// rows 16–24: floats
		{"F32", "number", `{"x":0.1}`, result{row: `{"x":0.1}`, wire: `{"x":0.1}`}},
		{"F32", "F32", `{"x":7.038531e-26}`, result{row: `{"x":7.038531e-26}`, wire: `{"x":7.038531e-26}`}},
		{"F32", "number", `{"x":3.4028235e38}`, result{row: `{"x":3.4028235e+38}`, wire: `{"x":3.4028235e+38}`}},
		// herald: a number beyond the range is refused, as an integer's
		// is, rather than read as an infinity it cannot write back.
		{"F32", "number", `{"x":3.4028236e38}`, result{err: "OUT_OF_RANGE: field x: number is outside the range of F32 (largest magnitude 3.4028235e+38) (at byte 17)"}},
		{"F32", "number", `{"x":1e39}`, result{err: "OUT_OF_RANGE: field x: number is outside the range of F32 (largest magnitude 3.4028235e+38) (at byte 9)"}},
		{"F32", "number", `{"x":-1e39}`, result{err: "OUT_OF_RANGE: field x: number is outside the range of F32 (largest magnitude 3.4028235e+38) (at byte 10)"}},
		{"F32", "number", `{"x":340282356779733661637539395458142568448}`, result{err: "OUT_OF_RANGE: field x: number is outside the range of F32 (largest magnitude 3.4028235e+38) (at byte 44)"}},
		{"F32", "number", `{"x":340282356779733661637539395458142568447}`, result{row: `{"x":3.4028235e+38}`, wire: `{"x":3.4028235e+38}`}},
		{"F32", "number", `{"x":1e-46}`, result{row: `{"x":0}`, wire: `{"x":0}`}},
		{"F32", "number", `{"x":1.4e-45}`, result{row: `{"x":1e-45}`, wire: `{"x":1e-45}`}},
		{"F32", "number", `{"x":16777217}`, result{row: `{"x":16777216}`, wire: `{"x":16777216}`}},
		{"F32", "number", `{"x":-0.0}`, result{row: `{"x":-0}`, wire: `{"x":-0}`}},
		{"F32", "number", `{"x":-0}`, result{row: `{"x":-0}`, wire: `{"x":-0}`}},
		{"F64", "number", `{"x":5e-324}`, result{row: `{"x":5e-324}`, wire: `{"x":5e-324}`}},
		{"F64", "F64", `{"x":1.7976931348623157e308}`, result{row: `{"x":1.7976931348623157e+308}`, wire: `{"x":1.7976931348623157e+308}`}},
		{"F64", "number", `{"x":9007199254740993}`, result{row: `{"x":9007199254740992}`, wire: `{"x":9007199254740992}`}},
		{"F64", "number", `{"x":1e400}`, result{err: "OUT_OF_RANGE: field x: number is outside the range of F64 (largest magnitude 1.7976931348623157e+308) (at byte 10)"}},
		{"F64", "number", `{"x":"1"}`, result{err: "TYPE_MISMATCH: field x: expected a number, found a string (at byte 8)"}},
		// rows 29–33: datetimes
		{"DATETIME", "string", `{"x":"2026-09-24T10:15:00.123456789+02:00"}`, result{row: `{"x":"2026-09-24T08:15:00.123456789Z"}`, wire: `{"x":"2026-09-24T08:15:00.123456789Z"}`}},
		{"DATETIME", "DATETIME", `{"x":"2026-09-24T08:15:00Z"}`, result{row: `{"x":"2026-09-24T08:15:00Z"}`, wire: `{"x":"2026-09-24T08:15:00Z"}`}},
		{"DATETIME", "DATETIME", `{"x":"1677-09-21T00:12:43.145224192Z"}`, result{row: `{"x":"1677-09-21T00:12:43.145224192Z"}`, wire: `{"x":"1677-09-21T00:12:43.145224192Z"}`}},
		{"DATETIME", "DATETIME", `{"x":"1677-09-21T00:12:43.145224191Z"}`, result{err: "OUT_OF_RANGE: field x: datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z (at byte 37)"}},
		{"DATETIME", "DATETIME", `{"x":"2262-04-11T23:47:16.854775808Z"}`, result{err: "OUT_OF_RANGE: field x: datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z (at byte 37)"}},
		{"DATETIME", "DATETIME", `{"x":"2026-09-24T10:15:00,5Z"}`, result{err: "INVALID_DATETIME: field x: expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM) (at byte 29)"}},
		{"DATETIME", "DATETIME", `{"x":"2026-09-24T10:15:00+24:00"}`, result{err: "INVALID_DATETIME: field x: expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM) (at byte 32)"}},
		{"DATETIME", "DATETIME", `{"x":"2026-09-24T24:00:00Z"}`, result{err: "INVALID_DATETIME: field x: expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM) (at byte 27)"}},
		{"DATETIME", "DATETIME", `{"x":"2026-02-30T00:00:00Z"}`, result{err: "INVALID_DATETIME: field x: expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM) (at byte 27)"}},
		{"DATETIME", "DATETIME", `{"x":"2026-09-24T10:15:00.1234567891Z"}`, result{err: "INVALID_DATETIME: field x: expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM) (at byte 38)"}},
		// rows 35–36: bytes
		{"BYTES", "bytes", `{"x":""}`, result{row: `{"x":""}`, wire: `{"x":""}`}},
		{"BYTES", "bytes", `{"x":"AA=="}`, result{row: `{"x":"AA=="}`, wire: `{"x":"AA=="}`}},
		{"BYTES", "bytes", `{"x":"AAA="}`, result{row: `{"x":"AAA="}`, wire: `{"x":"AAA="}`}},
		{"BYTES", "bytes", `{"x":"/+8="}`, result{row: `{"x":"/+8="}`, wire: `{"x":"/+8="}`}},
		{"BYTES", "bytes", `{"x":"AA"}`, result{err: "INVALID_BASE64: field x: expected canonical padded standard base64 (at byte 9)"}},
		{"BYTES", "bytes", `{"x":"AB=="}`, result{err: "INVALID_BASE64: field x: expected canonical padded standard base64 (at byte 11)"}},
		{"BYTES", "bytes", `{"x":"QUJ\nD"}`, result{err: "INVALID_BASE64: field x: expected canonical padded standard base64 (at byte 13)"}},
		{"BYTES", "bytes", `{"x":"_-8="}`, result{err: "INVALID_BASE64: field x: expected canonical padded standard base64 (at byte 11)"}},
		// rows 37–40: shapes
		{"ARRAY<F32, 2, 3>", "array", `{"x":[[1,2,3],[4,5,6]]}`, result{row: `{"x":[[1,2,3],[4,5,6]]}`, wire: `{"x":[[1,2,3],[4,5,6]]}`}},
		{"ARRAY<F32, 2, 3>", "array", `{"x":[[1,2,3]]}`, result{err: "SHAPE: field x: fixed axis of length 2 has 1 elements (at byte 14)"}},
		{"ARRAY<F32, 2, 3>", "array", `{"x":[[1,2],[3,4],[5,6]]}`, result{err: "SHAPE: field x[0]: fixed axis of length 3 has 2 elements (at byte 11)"}},
		{"ARRAY<F32, 2, 3>", "array", `{"x":[1,2,3,4,5,6]}`, result{err: "TYPE_MISMATCH: field x[0]: expected an array, found a number (at byte 7)"}},
		{"ARRAY<F32, 2, 3>", "array", `{"x":[[1,2,3],[4,5,1e39]]}`, result{err: "OUT_OF_RANGE: field x[1][2]: number is outside the range of F32 (largest magnitude 3.4028235e+38) (at byte 23)"}},
		{"VEC<F64>", "array", `{"x":[1,-1e309]}`, result{err: "OUT_OF_RANGE: field x[1]: number is outside the range of F64 (largest magnitude 1.7976931348623157e+308) (at byte 14)"}},
		{"ARRAY<F32, 2, 3>", "array", `{"x":[[1,2,null],[4,5,6]]}`, result{err: "NULL_VALUE: field x[0][2]: null where a value is required (collection elements are never null) (at byte 15)"}},
		{"VEC<ARRAY<F32, 6>>", "array", `{"x":[]}`, result{row: `{"x":[]}`, wire: `{"x":[]}`}},
		{"VEC<ARRAY<F32, 6>>", "array", `{"x":[[1,2,3,4,5,6]]}`, result{row: `{"x":[[1,2,3,4,5,6]]}`, wire: `{"x":[[1,2,3,4,5,6]]}`}},
		{"VEC<ARRAY<F32, 6>>", "array", `{"x":[[1,2,3,4,5,6],[1]]}`, result{err: "SHAPE: field x[1]: fixed axis of length 6 has 1 elements (at byte 23)"}},
		{"ARRAY<VEC<STRING>, 4>", "array", `{"x":[[],["a"],[],["b","c"]]}`, result{row: `{"x":[[],["a"],[],["b","c"]]}`, wire: `{"x":[[],["a"],[],["b","c"]]}`}},
		{"ARRAY<BYTES, 2>", "array", `{"x":["AA==",""]}`, result{row: `{"x":["AA==",""]}`, wire: `{"x":["AA==",""]}`}},
		{"VEC<DATETIME>", "array", `{"x":["2026-09-24T08:15:00+01:00"]}`, result{row: `{"x":["2026-09-24T07:15:00Z"]}`, wire: `{"x":["2026-09-24T07:15:00Z"]}`}},
		// row 41: optional
		{"U8 OPTIONAL", "integer", `{}`, result{row: `{"x":null}`, wire: `{}`}},
		{"U8 OPTIONAL", "integer", `{"x":null}`, result{row: `{"x":null}`, wire: `{}`}},
		{"U8", "integer", `{"x":null}`, result{err: "NULL_VALUE: field x: null in a required field (at byte 9)"}},
		{"U8", "integer", `{}`, result{err: "MISSING_FIELD: field x: required field is missing"}},
		// rows 42–44: text
		{"STRING", "string", `{"x":"\u00e9\ud83d\ude00"}`, result{row: `{"x":"é😀"}`, wire: `{"x":"é😀"}`}},
		{"STRING", "string", `{"x":"\ud800"}`, result{err: `INVALID_ESCAPE: field x: lone high surrogate in a \u escape (at byte 6)`}},
		{"STRING", "string", `{"x":"\udc00"}`, result{err: `INVALID_ESCAPE: field x: lone low surrogate in a \u escape (at byte 6)`}},
		{"STRING", "string", "{\"x\":\"\xff\"}", result{err: "INVALID_UTF8: field x: string is not valid UTF-8 (at byte 6)"}},
		{"STRING", "string", "{\"x\":\"\x01\"}", result{err: "CONTROL_CHARACTER: field x: raw control character in a string: escape it (at byte 6)"}},
		{"STRING", "string", `{"x":"\x"}`, result{err: `INVALID_ESCAPE: field x: malformed escape: expected one of \" \\ \/ \b \f \n \r \t \uXXXX (at byte 6)`}},
		{"STRING", "string", `{"x":"\u12"}`, result{err: `INVALID_ESCAPE: field x: malformed \u escape: expected four hex digits (at byte 6)`}},
		{"STRING", "string", `{"x":"a\"b\\c\u0001"}`, result{row: `{"x":"a\"b\\c\u0001"}`, wire: `{"x":"a\"b\\c\u0001"}`}},
		{"STRING", "string", `{"x":"\b\f\n\r\t\/"}`, result{row: `{"x":"\b\f\n\r\t/"}`, wire: `{"x":"\b\f\n\r\t/"}`}},
		// row 46: structure
		{"U8", "integer", `{"x":1,"x":2}`, result{err: "DUPLICATE_FIELD: field x: field occurs twice in the object (at byte 11)"}},
		{"U8", "integer", `{"x":1} x`, result{err: "TRAILING_DATA: data after the JSON object: a payload holds exactly one object (at byte 8)"}},
		{"U8", "integer", `{"x":1}{"x":2}`, result{err: "TRAILING_DATA: data after the JSON object: a payload holds exactly one object (at byte 7)"}},
		{"U8", "integer", `[1]`, result{err: "EXPECTED_OBJECT: payload is not a JSON object (at byte 0)"}},
		{"U8", "integer", ``, result{err: "EMPTY_PAYLOAD: empty payload: expected one JSON object"}},
		{"U8", "integer", ` `, result{err: "EMPTY_PAYLOAD: empty payload: expected one JSON object"}},
		{"U8", "integer", `{"x":1`, result{err: "SYNTAX: malformed JSON: unexpected end of payload, expected ',' or '}' (at byte 6)"}},
		{"U8", "integer", `{"x" 1}`, result{err: "SYNTAX: malformed JSON: expected ':' after a member name (at byte 5)"}},
		{"U8", "integer", `{"x":01}`, result{err: "SYNTAX: malformed JSON: expected ',' or '}' (at byte 6)"}},
		{"BOOL", "boolean", ` {"x" : true } `, result{row: `{"x":true}`, wire: `{"x":true}`}},
		{"BOOL", "boolean", `{"x":tru}`, result{err: "SYNTAX: malformed JSON: expected a JSON value (at byte 5)"}},
		{"BOOL", "boolean", `{"x":1}`, result{err: "TYPE_MISMATCH: field x: expected a boolean, found a number (at byte 6)"}},
		{"STRING", "string", `{"x":{"a":1}}`, result{err: "TYPE_MISMATCH: field x: expected a string, found an object (at byte 12)"}},
	}
	for _, tt := range tests {
		p := compile(t, one(tt.internal, tt.wire))
		got := run(t, p, tt.payload)
		if got != tt.want {
			t.Errorf("%s ← %s\n got: %+v\nwant: %+v", tt.internal, tt.payload, got, tt.want)
		}
	}
}

func TestStrictLoose(t *testing.T) {
	defs := "CREATE SCHEMA s (x U8, note STRING OPTIONAL); CREATE WIRE JSON SCHEMA w MODE %s (x integer, extra integer OPTIONAL); CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s"
	tests := []struct {
		mode, payload string
		want          result
	}{
		{"STRICT", `{"x":1,"y":2}`, result{err: "UNEXPECTED_FIELD: field y: field is not declared by the STRICT wire schema (at byte 11)"}},
		{"LOOSE", `{"x":1,"y":{"deep":[1,2,{"a":null}]}}`, result{row: `{"x":1,"note":null}`, wire: `{"x":1}`}},
		{"LOOSE", `{"x":1,"y":[1,}`, result{err: "SYNTAX: malformed JSON: expected a JSON value (at byte 14)"}},
		{"STRICT", `{"x":1,"extra":5}`, result{row: `{"x":1,"note":null}`, wire: `{"x":1}`}},
		{"STRICT", `{"x":1,"extra":5.5}`, result{err: "NOT_INTEGER: field extra: expected an integer literal, found a number with a fraction or exponent (at byte 18)"}},
	}
	for _, tt := range tests {
		p := compile(t, strings.Replace(defs, "%s", tt.mode, 1))
		if got := run(t, p, tt.payload); got != tt.want {
			t.Errorf("%s %s\n got: %+v\nwant: %+v", tt.mode, tt.payload, got, tt.want)
		}
	}
}

// TestAbandonedRowsLeaveWholeBatch decodes a group of payloads, some
// failing part-way inside nested values, into one batch: the batch holds
// exactly the rows of the good payloads.
func TestAbandonedRowsLeaveWholeBatch(t *testing.T) {
	p := compile(t, "CREATE SCHEMA s (a U8, v VEC<ARRAY<F32, 3>> OPTIONAL, g ARRAY<ARRAY<VEC<STRING>, 2>, 2>, z STRING); CREATE WIRE JSON SCHEMA w (a integer, v array OPTIONAL, g array, z string); CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s")
	payloads := []string{
		`{"a":1,"v":[[1,2,3]],"g":[[["a"],[]],[[],["b"]]],"z":"one"}`,
		`{"a":2,"v":[[1,2,3],[4,5]],"g":[[[],[]],[[],[]]],"z":"bad"}`,
		`{"g":[[["a"],["b","c"]],[["d"],[1]]],"a":3,"z":"bad"}`,
		`{"a":4,"g":[[[],[]],[[],[]]],"z":"two"}`,
		`{"z":"x","a":5,"g":[[["q"]`,
		`{"a":6,"v":null,"g":[[["x"],["y"]],[["z"],[]]],"z":"three"}`,
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := rows.NewBuilder(mem, p.Schema)
	defer b.Release()
	d := NewDecoder(p)
	for _, pl := range payloads {
		_, _ = d.Decode([]byte(pl), b)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var out []string
	enc := NewRowViewEncoder(p.Schema, false)
	for i := 0; i < int(rec.NumRows()); i++ {
		line, err := enc.AppendRow(nil, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(line))
	}
	want := []string{
		`{"a":1,"v":[[1,2,3]],"g":[[["a"],[]],[[],["b"]]],"z":"one"}`,
		`{"a":4,"v":null,"g":[[[],[]],[[],[]]],"z":"two"}`,
		`{"a":6,"v":null,"g":[[["x"],["y"]],[["z"],[]]],"z":"three"}`,
	}
	if strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s", strings.Join(out, "\n"))
	}
	for i := 0; i < int(rec.NumCols()); i++ {
		if v, ok := rec.Column(i).(interface{ ValidateFull() error }); ok {
			if err := v.ValidateFull(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestEncode(t *testing.T) {
	p := compile(t, "CREATE SCHEMA s (a F64 OPTIONAL, b VEC<F32>, c STRING SENSITIVE, d U8 OPTIONAL); CREATE WIRE JSON SCHEMA w (a number OPTIONAL, b array, c string, d integer OPTIONAL); CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s")
	mem := memory.NewGoAllocator()
	rb := array.NewRecordBuilder(mem, p.Schema.ArrowSchema())
	defer rb.Release()
	rb.Field(0).(*array.Float64Builder).AppendValues([]float64{math.NaN(), math.Inf(-1), 1.5}, nil)
	lb := rb.Field(1).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	lb.Append(true)
	vb.AppendValues([]float32{1, float32(math.NaN())}, nil)
	lb.Append(true)
	lb.Append(true)
	rb.Field(2).(*array.StringBuilder).AppendValues([]string{"a\u2028<b>&", "\x7f", "q"}, nil)
	rb.Field(3).(*array.Uint8Builder).AppendValues([]uint8{1, 0, 3}, []bool{true, false, true})
	rec := rb.NewRecordBatch()
	defer rec.Release()
	e := NewEncoder(p)
	got, _, err := e.AppendBatch(nil, rec, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"a":null,"b":[1,null],"c":"a` + "\u2028" + `<b>&","d":1},{"a":null,"b":[],"c":"` + "\x7f" + `"},{"a":1.5,"b":[],"c":"q","d":3}]`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	rv, _ := NewRowViewEncoder(p.Schema, false).AppendRow(nil, rec, 1)
	if string(rv) != `{"a":"-Infinity","b":[],"c":"***","d":null}` {
		t.Fatalf("row view %s", rv)
	}
	e.MaxSize = 20
	if _, err := e.AppendRow([]byte("keep"), rec, 0); values.CodeOf(err) != values.CodeTooLarge {
		t.Fatalf("size bound: %v", err)
	}
	// required null
	rb.Field(0).(*array.Float64Builder).Append(1)
	lb.AppendNull()
	rb.Field(2).(*array.StringBuilder).Append("")
	rb.Field(3).(*array.Uint8Builder).AppendNull()
	rec2 := rb.NewRecordBatch()
	defer rec2.Release()
	if _, err := NewEncoder(p).AppendRow(nil, rec2, 0); err == nil || err.Error() != "field b: null in a required field" {
		t.Fatalf("got %v", err)
	}
	_ = arrow.Null
}

// TestRowViewReadsWhatItWrites: the row view reads back every value it
// writes, the non-finite elements of fixed float axes included ("NaN",
// "Infinity", "-Infinity" inside ARRAY<F64, …> and ARRAY<F32, …>, as in
// a scalar or a VEC).
func TestRowViewReadsWhatItWrites(t *testing.T) {
	s := &types.Schema{Name: "s", Fields: []types.Field{
		{Name: "a", Type: types.ArrayOf(types.Scalar(types.F64), 4)},
		{Name: "b", Type: types.ArrayOf(types.Scalar(types.F32), 2, 2)},
		{Name: "c", Type: types.VecOf(types.Scalar(types.F64))},
		{Name: "d", Type: types.Scalar(types.F64)},
	}}
	line := `{"a":[1.5,"-Infinity","NaN","Infinity"],"b":[["NaN",-0],[3.4028235e+38,"-Infinity"]],"c":["-Infinity",2],"d":"NaN"}`
	b := rows.NewBuilder(nil, s)
	defer b.Release()
	if _, err := NewRowViewDecoder(s).Decode([]byte(line), b); err != nil {
		t.Fatal(err)
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	out, err := NewRowViewEncoder(s, true).AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != line {
		t.Fatalf("\n got %s\nwant %s", out, line)
	}
	for _, bad := range []string{`{"a":[1,"-inf",0,0],"b":[[0,0],[0,0]],"c":[],"d":0}`, `{"a":[1,2,3,"NaN","NaN"],"b":[[0,0],[0,0]],"c":[],"d":0}`} {
		if _, err := NewRowViewDecoder(s).Decode([]byte(bad), b); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// TestFloat32Lists: an F32 list is written as its elements one by one
// (values.AppendFloat at 32 bits, non-finite ones as null, or as strings
// in the row view), commas and all, whatever the runs of finite values.
func TestFloat32Lists(t *testing.T) {
	p := compile(t, "CREATE SCHEMA s (b VEC<F32>); CREATE WIRE JSON SCHEMA w (b array); CREATE CODEC c FROM WIRE JSON SCHEMA w TO SCHEMA s")
	mem := memory.NewGoAllocator()
	rb := array.NewRecordBuilder(mem, p.Schema.ArrowSchema())
	defer rb.Release()
	lb := rb.Field(0).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	lists := [][]float32{{}, {nan}, {inf, nan}, {1, nan, 2}, {nan, 0.1, -inf}, {0.5, 1e-7, 3e38, float32(math.Copysign(0, -1)), 16777217, 1.1754944e-38, nan}}
	for i := range 200 { // pseudo-random runs
		var l []float32
		for j := range i % 17 {
			v := float32(i*31+j*7) / 13
			if (i+j)%5 == 0 {
				v = nan
			}
			l = append(l, v)
		}
		lists = append(lists, l)
	}
	for _, l := range lists {
		lb.Append(true)
		vb.AppendValues(l, nil)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	for _, rowView := range []bool{false, true} {
		e := NewEncoder(p)
		if rowView {
			e = NewRowViewEncoder(p.Schema, true)
		}
		for i, l := range lists {
			want := []byte(`{"b":[`)
			for j, v := range l {
				if j > 0 {
					want = append(want, ',')
				}
				switch f := float64(v); {
				case !math.IsNaN(f) && !math.IsInf(f, 0):
					want = values.AppendFloat(want, f, 32)
				case !rowView:
					want = append(want, "null"...)
				case math.IsNaN(f):
					want = append(want, `"NaN"`...)
				case f > 0:
					want = append(want, `"Infinity"`...)
				default:
					want = append(want, `"-Infinity"`...)
				}
			}
			want = append(want, "]}"...)
			got, err := e.AppendRow(nil, rec, i)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("row view %v, %v:\ngot  %s\nwant %s", rowView, l, got, want)
			}
		}
	}
}
