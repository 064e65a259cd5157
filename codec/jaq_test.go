package codec

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/jaq"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
	"github.com/herald-gateway/herald/codec/workers"
)

// jaqCodec compiles codec c of defs on a pool of its own.
func jaqCodec(t testing.TB, defs string, res *resource.Set, pool *workers.Pool) *Codec {
	t.Helper()
	cat := catalog.NewWithResources(res)
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	if pool == nil {
		pool = workers.New(workers.Config{Workers: 2})
	}
	c, err := Compile(cat, "c", Options{Workers: pool})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// decodeRows decodes one payload and returns its rows' views, one per
// line, or the error text.
func decodeRows(t testing.TB, c *Codec, payload []byte) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	b := c.NewBuilder(mem)
	n, err := c.NewDecoder().Decode(payload, b)
	rec, ferr := b.NewRecordBatch()
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer func() {
		rec.Release()
		b.Release()
		mem.AssertSize(t, 0)
	}()
	if err != nil {
		if rec.NumRows() != 0 || n != 0 {
			t.Fatalf("a rejected payload left %d rows", rec.NumRows())
		}
		return "error[" + string(values.CodeOf(err)) + "] " + err.Error()
	}
	if int(rec.NumRows()) != n {
		t.Fatalf("Decode said %d rows, batch holds %d", n, rec.NumRows())
	}
	enc := wjson.NewRowViewEncoder(c.Schema, true)
	var out []string
	for i := 0; i < n; i++ {
		line, err := enc.AppendRow(nil, rec, i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(line))
	}
	return strings.Join(out, "\n")
}

// encodeRows builds a batch from row views and encodes each row (or the
// batch container), returning the payloads or the error text.
func encodeRows(t testing.TB, c *Codec, batch bool, lines ...string) string {
	t.Helper()
	b := c.NewBuilder(nil)
	defer b.Release()
	dec := wjson.NewRowViewDecoder(c.Schema)
	for _, l := range lines {
		if _, err := dec.Decode([]byte(l), b); err != nil {
			t.Fatalf("row %s: %v", l, err)
		}
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if c.EncodeErr != nil {
		return "error " + c.EncodeErr.Error()
	}
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	var out []byte
	if batch {
		out, _, err = c.Batch.AppendBatch(nil, rec, idx)
	} else {
		var parts []string
		for _, i := range idx {
			var p []byte
			if p, err = c.Encoder.AppendRow(nil, rec, i); err != nil {
				break
			}
			parts = append(parts, string(p))
		}
		out = []byte(strings.Join(parts, "\n"))
	}
	if err != nil {
		return "error[" + string(values.CodeOf(err)) + "] " + err.Error()
	}
	return string(out)
}

const lineSchema = "CREATE SCHEMA s (sku STRING, quantity U32, price F64 OPTIONAL);\n"

func jaqDefs(format, schema, progs string) string {
	return schema + "CREATE CODEC c FROM " + format + " TO SCHEMA s WITH JAQ TRANSFORMATIONS " + progs
}

// TestJaqIngestion pins each format's value model as ON INGESTION sees
// it, unfolding order, and every diagnostic.
func TestJaqIngestion(t *testing.T) {
	tests := []struct {
		name, format, progs, payload, want string
	}{
		{"json stream", "JSON", "ON INGESTION '.lines[] | select(.quantity > 0)'",
			`{"lines":[{"sku":"a","quantity":2,"price":1.5},{"sku":"b","quantity":0}]}` + "\n" + `{"lines":[{"sku":"c","quantity":1,"extra":true}]}{"lines":[]} {"lines":[{"sku":"d","quantity":3,"price":null}]}`,
			`{"sku":"a","quantity":2,"price":1.5}` + "\n" + `{"sku":"c","quantity":1,"price":null}` + "\n" + `{"sku":"d","quantity":3,"price":null}`},
		{"json comma and empty", "JSON", `ON INGESTION '{sku: .a, quantity: 1}, empty, {sku: .b, quantity: 2}'`, `{"a":"x","b":"y"}`,
			`{"sku":"x","quantity":1,"price":null}` + "\n" + `{"sku":"y","quantity":2,"price":null}`},
		{"json position", "JSON", `ON INGESTION 'range(length) as $i | .[$i] + {quantity: $i}'`, `[{"sku":"a"},{"sku":"b"}]`,
			`{"sku":"a","quantity":0,"price":null}` + "\n" + `{"sku":"b","quantity":1,"price":null}`},
		{"json empty payload", "JSON", "ON INGESTION '.'", "  \n", ""},
		{"json malformed second value", "JSON", "ON INGESTION '.'", `{"sku":"a","quantity":1} {"sku":`,
			`error[SYNTAX] codec c: ON INGESTION, input value 1: malformed JSON: unexpected end of payload (at byte 32)`},
		{"json duplicate key", "JSON", "ON INGESTION '.'", `{"sku":"a","sku":"b","quantity":1}`,
			`error[DUPLICATE_FIELD] codec c: ON INGESTION, input value 0: an object holds the same member name twice (at byte 11)`},
		{"json invalid utf8", "JSON", "ON INGESTION '.'", "{\"sku\":\"\xff\",\"quantity\":1}",
			`error[INVALID_UTF8] codec c: ON INGESTION, input value 0: text is not valid UTF-8 (at byte 8)`},
		{"not an object", "JSON", "ON INGESTION '.[]'", `[{"sku":"a","quantity":1},"secret-value"]`,
			`error[EXPECTED_OBJECT] codec c: ON INGESTION, input value 0, output 1: output is a string, expected an object`},
		{"type mismatch names the kind", "JSON", "ON INGESTION '.'", `{"sku":"a","quantity":"secret-value"}`,
			`error[TYPE_MISMATCH] codec c: ON INGESTION, input value 0, output 0: field quantity: expected an integer, found a string`},
		{"missing required", "JSON", "ON INGESTION '.'", `{"quantity":1}`,
			`error[MISSING_FIELD] codec c: ON INGESTION, input value 0, output 0: field sku: required field is missing`},
		{"null required", "JSON", "ON INGESTION '.'", `{"sku":null,"quantity":1}`,
			`error[NULL_VALUE] codec c: ON INGESTION, input value 0, output 0: field sku: null in a required field`},
		{"range", "JSON", "ON INGESTION '.'", `{"sku":"a","quantity":4294967296}`,
			`error[OUT_OF_RANGE] codec c: ON INGESTION, input value 0, output 0: field quantity: integer is outside the range of U32`},
		{"not an integer literal", "JSON", "ON INGESTION '.'", `{"sku":"a","quantity":1.0}`,
			`error[NOT_INTEGER] codec c: ON INGESTION, input value 0, output 0: field quantity: expected an integer, found a number with a fraction or exponent`},
		{"integral float from a computation", "JSON", "ON INGESTION '.quantity |= floor'", `{"sku":"a","quantity":2.5}`,
			`{"sku":"a","quantity":2,"price":null}`},
		{"non-finite output", "JSON", "ON INGESTION '.price = infinite'", `{"sku":"a","quantity":1}`,
			`error[NON_FINITE] codec c: ON INGESTION, input value 0, output 0: field price: a NaN or infinite number is not valid JSON`},
		{"program error never quotes", "JSON", "ON INGESTION '.sku | error'", `{"sku":"secret-value","quantity":1}`,
			`error[PROGRAM_ERROR] codec c: ON INGESTION, input value 0: program evaluation failed (the evaluator's message is logged at trace level)`},
		{"rejected as a whole", "JSON", "ON INGESTION '.[]'", `[{"sku":"a","quantity":1},{"sku":"b","quantity":-1}]`,
			`error[OUT_OF_RANGE] codec c: ON INGESTION, input value 0, output 1: field quantity: integer is outside the range of U32`},
		{"halt ends outputs", "JSON", "ON INGESTION '.[] | if .quantity == 0 then halt else . end'", `[{"sku":"a","quantity":1},{"sku":"b","quantity":0},{"sku":"c","quantity":2}]`,
			`{"sku":"a","quantity":1,"price":null}`},

		{"yaml documents", "YAML", "ON INGESTION '.'", "sku: a\nquantity: 1\nprice: 1.\n---\nsku: 'b'\nquantity: 0x10\n---\n{sku: c, quantity: +7, price: .5}\n",
			`{"sku":"a","quantity":1,"price":1}` + "\n" + `{"sku":"b","quantity":16,"price":null}` + "\n" + `{"sku":"c","quantity":7,"price":0.5}`},
		{"yaml scalar resolution", "YAML", `ON INGESTION '{sku: ([.[] | type] | join(",")), quantity: 1}'`, "[~, null, true, False, 12, 1e3, .inf, .nan, 2001-12-14, '12', 0o17, !!str 5, !!float 1, yes]\n",
			`{"sku":"null,null,boolean,boolean,number,number,number,number,string,string,number,string,number,string","quantity":1,"price":null}`},
		{"yaml empty stream and empty document", "YAML", `ON INGESTION '{sku: (. | type), quantity: 1}'`, "---\n",
			`{"sku":"null","quantity":1,"price":null}`},
		{"yaml anchors", "YAML", "ON INGESTION '.[]'", "- &x {sku: a, quantity: 1}\n- *x\n",
			`{"sku":"a","quantity":1,"price":null}` + "\n" + `{"sku":"a","quantity":1,"price":null}`},
		{"yaml tag contradicts", "YAML", "ON INGESTION '.'", "sku: a\nquantity: !!int secret\n",
			`error[TYPE_MISMATCH] codec c: ON INGESTION, input value 0: a scalar tagged !!int does not hold one (at line 2, column 11)`},
		{"yaml duplicate key", "YAML", "ON INGESTION '.'", "sku: a\nsku: b\n",
			`error[DUPLICATE_FIELD] codec c: ON INGESTION, input value 0: a mapping holds the same key twice (at line 2, column 1)`},
		{"yaml non-string key", "YAML", "ON INGESTION '.'", "1: a\n",
			`error[TYPE_MISMATCH] codec c: ON INGESTION, input value 0: a mapping key is not a string (at line 1, column 1)`},
		{"yaml malformed", "YAML", "ON INGESTION '.'", "a: [1\n",
			`error[SYNTAX] codec c: ON INGESTION, input value 0: malformed YAML at line 1`},

		{"toml one document", "TOML", "ON INGESTION '.line'", "[line]\nsku = \"a\"\nquantity = 3\nprice = 2.0\n",
			`{"sku":"a","quantity":3,"price":2}`},
		{"toml empty payload is one empty table", "TOML", `ON INGESTION '{sku: (keys | length | tostring), quantity: 1}'`, "",
			`{"sku":"0","quantity":1,"price":null}`},
		{"toml datetime extension", "TOML", `ON INGESTION '{sku: .at, quantity: 1}'`, "at = 2026-09-24T10:15:00.5+02:00\n",
			`{"sku":"2026-09-24T08:15:00.5Z","quantity":1,"price":null}`},
		{"toml local date refused", "TOML", "ON INGESTION '.'", "at = 2026-09-24\n",
			`error[TYPE_MISMATCH] codec c: ON INGESTION, input value 0: field at: a TOML local date or time has no instant: write it as a string, or as an offset date-time`},
		{"toml u64 refused on read", "TOML", "ON INGESTION '.'", "quantity = 18446744073709551615\n",
			`error[OUT_OF_RANGE] codec c: ON INGESTION, input value 0: integer is outside the signed 64-bit range TOML holds at line 1, column 12 (at byte 11)`},
		{"toml duplicate key", "TOML", "ON INGESTION '.'", "a = 1\na = 2\n",
			`error[DUPLICATE_FIELD] codec c: ON INGESTION, input value 0: a key is defined twice at line 2, column 7 (at byte 6)`},

		{"xml root element", "XML", `ON INGESTION '{sku: (.c[] | objects | select(.t == "sku").c[0]), quantity: (.a.q | tonumber)}'`,
			"<?xml version=\"1.0\"?>\n<!-- c --><line q=\"4\">\n  <sku>a &amp; b&#33;<![CDATA[<x>]]></sku>\n</line>\n<!-- after -->\n",
			`{"sku":"a & b!<x>","quantity":4,"price":null}`},
		{"xml model", "XML", `ON INGESTION '{sku: tojson, quantity: 1}'`, `<r a="1" x:b="2"><e/><f></f>t<!--c--><?pi do?></r>`,
			`{"sku":"{\"a\":{\"a\":\"1\",\"x:b\":\"2\"},\"c\":[{\"t\":\"e\"},{\"c\":[],\"t\":\"f\"},\"t\",{\"comment\":\"c\"},{\"pi\":{\"content\":\"do\",\"target\":\"pi\"}}],\"t\":\"r\"}","quantity":1,"price":null}`},
		{"xml second root", "XML", "ON INGESTION '.'", "<a/><b/>",
			`error[SYNTAX] codec c: ON INGESTION, input value 0: a second root element: an XML payload holds one element (at byte 8)`},
		{"xml unknown entity", "XML", "ON INGESTION '.'", "<a>&nbsp;</a>",
			`error[SYNTAX] codec c: ON INGESTION, input value 0: unknown or malformed entity reference at line 1 (only the predefined XML entities and character references are decoded) (at byte 9)`},
		{"xml mismatched tag", "XML", "ON INGESTION '.'", "<a><b></a></b>",
			`error[SYNTAX] codec c: ON INGESTION, input value 0: malformed XML: an end tag does not match its start tag (at byte 10)`},
		{"xml empty", "XML", "ON INGESTION '.'", "<?xml version=\"1.0\"?>\n", ""},
		{"xml pretty-printed with the chapter's select throws", "XML", `ON INGESTION '{sku: "x", quantity: (.c[] | select(.t == "q").c[0] | tonumber)}'`, "<n>\n  <q>1</q>\n</n>",
			`error[PROGRAM_ERROR] codec c: ON INGESTION, input value 0: program evaluation failed (the evaluator's message is logged at trace level)`},

		{"cbor items", "CBOR", "ON INGESTION '.'", "a263736b756161687175616e7469747901" + "a263736b756162687175616e746974791affffffff",
			`{"sku":"a","quantity":1,"price":null}` + "\n" + `{"sku":"b","quantity":4294967295,"price":null}`},
		{"cbor bytes as base64 and bignum", "CBOR", `ON INGESTION '{sku: .b, quantity: (.n | tostring | length)}'`, "a261624301020361" + "6ec249010000000000000000",
			`{"sku":"AQID","quantity":20,"price":null}`},
		{"cbor tag refused", "CBOR", "ON INGESTION '.'", "c074323032362d30392d32345430383a31353a30305a",
			`error[TYPE_MISMATCH] codec c: ON INGESTION, input value 0: a CBOR tag other than a bignum, or a value outside the JSON model (at byte 0)`},
		{"cbor duplicate key", "CBOR", "ON INGESTION '.'", "a2617801617802",
			`error[DUPLICATE_FIELD] codec c: ON INGESTION, input value 0: a map holds the same key twice (at byte 0)`},
		{"cbor truncated second item", "CBOR", "ON INGESTION '.'", "a263736b756161687175616e7469747901" + "a263",
			`error[SYNTAX] codec c: ON INGESTION, input value 1: malformed CBOR: unexpected end of payload (at byte 17)`},
		{"cbor empty", "CBOR", "ON INGESTION '.'", "", ""},
	}
	pool := workers.New(workers.Config{Workers: 2})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := jaqCodec(t, jaqDefs(tt.format, lineSchema, tt.progs), nil, pool)
			payload := []byte(tt.payload)
			if tt.format == "CBOR" {
				var err error
				if payload, err = hex.DecodeString(tt.payload); err != nil {
					t.Fatal(err)
				}
			}
			if got := decodeRows(t, c, payload); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if strings.Contains(decodeRows(t, c, payload), "secret-value") {
				t.Error("a diagnostic quotes a payload value")
			}
		})
	}
}

// TestUnfoldingLimit is vector 47: 65,536 messages decode, 65,537 reject
// the whole payload.
func TestUnfoldingLimit(t *testing.T) {
	c := jaqCodec(t, jaqDefs("JSON", "CREATE SCHEMA s (n U32);", `ON INGESTION '.[] | {n: .}'`), nil, nil)
	for _, n := range []int{65536, 65537} {
		var b strings.Builder
		b.WriteByte('[')
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('1')
		}
		b.WriteByte(']')
		bld := c.NewBuilder(nil)
		got, err := c.NewDecoder().Decode([]byte(b.String()), bld)
		rec, _ := bld.NewRecordBatch()
		rows := rec.NumRows()
		rec.Release()
		bld.Release()
		switch n {
		case 65536:
			if err != nil || got != n || rows != int64(n) {
				t.Errorf("%d elements: %d rows, %v", n, got, err)
			}
		default:
			want := "codec c: ON INGESTION, input value 0, output 65536: the payload unfolds into more than 65536 messages"
			if err == nil || err.Error() != want || values.CodeOf(err) != values.CodeTooManyMessages || rows != 0 {
				t.Errorf("%d elements: %d rows, %v", n, rows, err)
			}
		}
	}
}

// TestJaqEmission pins ON EMITTING's output per format: member order
// (declaration order of the program's literals, then schema order), the
// exactly-one rule and the values JSON cannot carry.
func TestJaqEmission(t *testing.T) {
	schema := "CREATE SCHEMA s (user_id U32, action STRING OPTIONAL, score F64 OPTIONAL, ratio F32 OPTIONAL, at DATETIME OPTIONAL, raw BYTES OPTIONAL, big U64 OPTIONAL, tags VEC<STRING> OPTIONAL);\n"
	row := `{"user_id":7,"action":"a<&>\"","score":1,"ratio":0.1,"at":"2026-09-24T08:15:00.5Z","raw":"AAE=","big":18446744073709551615,"tags":["x"]}`
	tests := []struct {
		name, format, progs string
		rows                []string
		batch               bool
		want                string
	}{
		{"identity keeps schema order", "JSON", "ON EMITTING '.'", []string{row}, false,
			`{"user_id": 7, "action": "a<&>\"", "score": 1.0, "ratio": 0.1, "at": "2026-09-24T08:15:00.5Z", "raw": "AAE=", "big": 18446744073709551615, "tags": ["x"]}`},
		{"literal order at every level", "JSON", `ON EMITTING '{z: .user_id, a: {y: 1, b: 2}, m: .action}'`, []string{row}, false,
			`{"z": 7, "a": {"y": 1, "b": 2}, "m": "a<&>\""}`},
		{"added keys after schema fields", "JSON", `ON EMITTING '{user_id} + {zz: 1, aa: 2}'`, []string{row}, false,
			`{"user_id": 7, "zz": 1, "aa": 2}`},
		{"optional nulls are absent", "JSON", "ON EMITTING '.'", []string{`{"user_id":1}`}, false, `{"user_id": 1}`},
		{"no output", "JSON", "ON EMITTING 'empty'", []string{row}, false,
			`error[NO_OUTPUT] codec c: ON EMITTING, row 0: ON EMITTING yielded no value: it must yield exactly one`},
		{"several outputs", "JSON", "ON EMITTING '., .'", []string{row}, false,
			`error[SEVERAL_OUTPUTS] codec c: ON EMITTING, row 0: ON EMITTING yielded more than one value: it must yield exactly one`},
		{"non-finite refused", "JSON", "ON EMITTING '{x: nan}'", []string{row}, false,
			`error[NON_FINITE] codec c: ON EMITTING, row 0: field x: a NaN or infinite number is not valid JSON and cannot be written`},
		{"invalid text refused", "JSON", `ON EMITTING '{x: ("/w==" | @base64d)}'`, []string{row}, false,
			`error[INVALID_UTF8] codec c: ON EMITTING, row 0: field x: text is not valid UTF-8`},
		{"json container", "JSON", `ON EMITTING '{id: .user_id}'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true, `[{"id": 1}, {"id": 2}]`},
		{"batch program", "JSON", `ON EMITTING '{id: .user_id, action: .action}' ON EMITTING BATCH '{schema_version: 2, count: length, records: .}'`,
			[]string{`{"user_id":1,"action":"x"}`, `{"user_id":2}`}, true, `{"schema_version": 2, "count": 2, "records": [{"id": 1, "action": "x"}, {"id": 2, "action": null}]}`},
		{"batch program map", "JSON", `ON EMITTING '.' ON EMITTING BATCH 'map({id: .user_id})'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true, `[{"id": 1}, {"id": 2}]`},
		{"batch program one value", "JSON", `ON EMITTING '.' ON EMITTING BATCH '.[]'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true,
			`error[SEVERAL_OUTPUTS] codec c: ON EMITTING BATCH: ON EMITTING BATCH yielded more than one value: it must yield exactly one`},
		{"yaml", "YAML", "ON EMITTING '.'", []string{`{"user_id":1,"action":"\u0085x"}`}, false, `{"user_id": 1, "action": "\u0085x"}`},
		{"yaml container", "YAML", `ON EMITTING '{id: .user_id}'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true, `[{"id": 1}, {"id": 2}]`},
		{"toml", "TOML", `ON EMITTING '{user_id, score, meta: {at: .at, tags: .tags}, list: [{a: 1}, {a: 2}]}'`, []string{row}, false,
			"user_id = 7\nscore = 1.0\n\n[meta]\nat = \"2026-09-24T08:15:00.5Z\"\ntags = [\"x\"]\n\n[[list]]\na = 1\n\n[[list]]\na = 2\n"},
		{"toml u64 written as it stands", "TOML", `ON EMITTING '{a: .big}'`, []string{row}, false, "a = 18446744073709551615\n"},
		{"toml null refused", "TOML", `ON EMITTING '{a: null}'`, []string{row}, false,
			`error[UNENCODABLE] codec c: ON EMITTING, row 0: field a: TOML has no null: leave the key out instead`},
		{"toml root must be a table", "TOML", `ON EMITTING '[1]'`, []string{row}, false,
			`error[UNENCODABLE] codec c: ON EMITTING, row 0: a TOML document is a table: the value to write must be an object`},
		{"toml container", "TOML", `ON EMITTING '{"user id": .user_id}'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true, "[[batch]]\n\"user id\" = 1\n\n[[batch]]\n\"user id\" = 2\n"},
		{"xml escapes", "XML", `ON EMITTING '{t: "n", a: {id: .user_id, q: .action}, c: [.action, {t: "e"}, {t: "f", c: []}, 1.5]}'`, []string{row}, false,
			`<n id="7" q="a&lt;&amp;&gt;&quot;">a&lt;&amp;&gt;"<e/><f></f>1.5</n>`},
		{"xml needs an element", "XML", `ON EMITTING '{x: 1}'`, []string{row}, false,
			`error[UNENCODABLE] codec c: ON EMITTING, row 0: an element object needs t, a valid XML name`},
		{"xml container", "XML", `ON EMITTING '{t: "n", a: {id: .user_id}}'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true, `<batch><n id="1"/><n id="2"/></batch>`},
		{"cbor", "CBOR", `ON EMITTING '{u: .user_id, r: .ratio, s: .score, b: .big, n: -1}'`, []string{row}, false,
			"a56175076172fa3dcccccd6173fb3ff0000000000000" + "61621bffffffffffffffff616e20"},
		{"cbor container", "CBOR", `ON EMITTING '{u: .user_id}'`, []string{`{"user_id":1}`, `{"user_id":2}`}, true, "82a1617501a1617502"},
	}
	pool := workers.New(workers.Config{Workers: 2})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := jaqCodec(t, jaqDefs(tt.format, schema, tt.progs), nil, pool)
			got := encodeRows(t, c, tt.batch, tt.rows...)
			if tt.format == "CBOR" && !strings.HasPrefix(got, "error") {
				got = hex.EncodeToString([]byte(got))
			}
			if got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestJaqRoundTrip is the fidelity promise of JAQ-native codecs with '.'
// programs: 64-bit integers exactly and finite floats to their bits
// (the F32 halfway case included) through every format.
func TestJaqRoundTrip(t *testing.T) {
	schema := "CREATE SCHEMA s (u U64, i I64, f F32, d F64, nz F64, t STRING, at DATETIME, b BYTES, v VEC<ARRAY<F32, 2>>, o U8 OPTIONAL);\n"
	rows := []string{
		`{"u":18446744073709551615,"i":-9223372036854775808,"f":7.038531e-26,"d":5e-324,"nz":-0,"t":"é😀\u0001\"<&>","at":"1677-09-21T00:12:43.145224192Z","b":"/+8=","v":[[3.4028235e+38,-1e-45]],"o":null}`,
		`{"u":0,"i":9223372036854775807,"f":16777216,"d":1.7976931348623157e+308,"nz":0.1,"t":"","at":"2262-04-11T23:47:16.854775807Z","b":"","v":[],"o":255}`,
	}
	progs := map[string]string{
		"JSON": "ON INGESTION '.[]' ON EMITTING '.'",
		"YAML": "ON INGESTION '.[]' ON EMITTING '.'",
		"TOML": "ON INGESTION '.batch[]' ON EMITTING '.'",
		"CBOR": "ON INGESTION '.[]' ON EMITTING '.'",
	}
	pool := workers.New(workers.Config{Workers: 2})
	for _, f := range []string{"JSON", "YAML", "TOML", "CBOR"} {
		c := jaqCodec(t, jaqDefs(f, schema, progs[f]), nil, pool)
		rows := rows
		if f == "TOML" { // TOML holds signed 64-bit integers (vector 48)
			rows = []string{strings.Replace(rows[0], "18446744073709551615", "9223372036854775807", 1), rows[1]}
		}
		batch := encodeRows(t, c, true, rows...)
		if strings.HasPrefix(batch, "error") {
			t.Fatalf("%s: %s", f, batch)
		}
		if got, want := decodeRows(t, c, []byte(batch)), strings.Join(rows, "\n"); got != want {
			t.Errorf("%s round trip:\n%s\nwant:\n%s\npayload:\n%s", f, got, want, batch)
		}
	}
}

// TestJaqFloatBits sends random finite F32 and F64 bit patterns through
// every JAQ-native format with '.' programs: each reads back to its bits.
func TestJaqFloatBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var lines []string
	for len(lines) < 300 {
		f := math.Float32frombits(r.Uint32())
		d := math.Float64frombits(r.Uint64())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) || math.IsNaN(d) || math.IsInf(d, 0) {
			continue
		}
		lines = append(lines, `{"f":`+string(values.AppendFloat(nil, float64(f), 32))+`,"d":`+string(values.AppendFloat(nil, d, 64))+`}`)
	}
	pool := workers.New(workers.Config{Workers: 2})
	for f, unfold := range map[string]string{"JSON": ".[]", "YAML": ".[]", "TOML": ".batch[]", "CBOR": ".[]"} {
		c := jaqCodec(t, jaqDefs(f, "CREATE SCHEMA s (f F32, d F64);", "ON INGESTION '"+unfold+"' ON EMITTING '.'"), nil, pool)
		batch := encodeRows(t, c, true, lines...)
		if got := decodeRows(t, c, []byte(batch)); got != strings.Join(lines, "\n") {
			t.Errorf("%s: float bits changed", f)
		}
	}
}

// TestTomlUnsignedBound is vector 48.
func TestTomlUnsignedBound(t *testing.T) {
	c := jaqCodec(t, jaqDefs("TOML", "CREATE SCHEMA s (a U64);", "ON INGESTION '.' ON EMITTING '.'"), nil, nil)
	out := encodeRows(t, c, false, `{"a":18446744073709551615}`)
	if out != "a = 18446744073709551615\n" {
		t.Fatalf("written: %q", out)
	}
	if got := decodeRows(t, c, []byte(out)); !strings.HasPrefix(got, "error[OUT_OF_RANGE]") {
		t.Errorf("read back: %s", got)
	}
	if got := decodeRows(t, c, []byte("a = 9223372036854775807\n")); got != `{"a":9223372036854775807}` {
		t.Errorf("i64 max: %s", got)
	}
}

// TestExtensionWorkers: a full pool refuses a payload without judging it
// (Busy), and a program that does not terminate is cancelled at its
// deadline.
func TestExtensionWorkers(t *testing.T) {
	pool := workers.New(workers.Config{Workers: 1, Queue: -1, Timeout: 50 * time.Millisecond})
	c := jaqCodec(t, jaqDefs("JSON", lineSchema, "ON INGESTION 'def f: f; f'"), nil, pool)
	if got := decodeRows(t, c, []byte(`{}`)); got != "error[PROGRAM_TIMEOUT] codec c: ON INGESTION, input value 0: program did not finish before its deadline and was cancelled" {
		t.Errorf("timeout: %s", got)
	}
	started, release, held := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		held <- pool.Do(context.Background(), func(ctx context.Context) error {
			close(started)
			<-release
			return nil
		})
	}()
	select {
	case <-started:
	case err := <-held:
		t.Fatalf("the job that holds the worker did not run: %v", err)
	}
	b := c.NewBuilder(nil)
	_, err := c.NewDecoder().Decode([]byte(`{"sku":"a","quantity":1}`), b)
	b.Release()
	close(release)
	if err := <-held; err != nil {
		t.Errorf("the job that held the worker: %v", err)
	}
	if !errors.Is(err, ErrBusy) || values.CodeOf(err) != values.CodeBusy {
		t.Fatalf("busy: %v", err)
	}
	if err.Error() != "codec c: ON INGESTION: extension workers are busy: the payload was not judged, retry later" {
		t.Errorf("busy text: %s", err)
	}
}

// FuzzJaqDecode runs payloads of every JAQ-native format through a codec
// that unfolds arrays into a typed schema: a payload either decodes into
// whole rows or is rejected with a typed error and no row.
func FuzzJaqDecode(f *testing.F) {
	seeds := []struct {
		format byte
		s      string
	}{
		{0, `[{"n":1,"f":0.1,"s":"x","v":[1,2]}] {"n":18446744073709551615}`},
		{0, "[" + strings.Repeat("{\"n\":1},", 65536) + "{\"n\":1}]"}, // vector 47
		{1, "- {n: 1, f: .5, s: x, v: [1, 2]}\n"},
		{2, "[[batch]]\nn = 18446744073709551615\n"}, // vector 48
		{2, "batch = [{n = 1, f = -0.0}]\n"},
		{3, `<b><n v="1"/></b>`},
		{4, "\x81\xa1\x61n\x01"},
	}
	for _, s := range seeds {
		f.Add(s.format, []byte(s.s))
	}
	schema := "CREATE SCHEMA s (n U64, f F32 OPTIONAL, s STRING OPTIONAL, v VEC<I8> OPTIONAL);\n"
	pool := workers.New(workers.Config{Workers: 1})
	var codecs []*Codec
	for _, d := range []struct{ f, p string }{{"JSON", ".[]"}, {"YAML", ".[]"}, {"TOML", ".batch[]"}, {"XML", ".c[] | {n: (.a.v | tonumber)}"}, {"CBOR", ".[]"}} {
		codecs = append(codecs, jaqCodec(f, jaqDefs(d.f, schema, "ON INGESTION '"+d.p+"'"), nil, pool))
	}
	f.Fuzz(func(t *testing.T, format byte, payload []byte) {
		c := codecs[int(format)%len(codecs)]
		b := c.NewBuilder(nil)
		defer b.Release()
		n, err := c.NewDecoder().Decode(payload, b)
		rec, ferr := b.NewRecordBatch()
		if ferr != nil {
			t.Fatal(ferr)
		}
		defer rec.Release()
		if err != nil {
			if values.CodeOf(err) == "" || n != 0 || rec.NumRows() != 0 {
				t.Fatalf("error %v with %d rows", err, rec.NumRows())
			}
			return
		}
		if int64(n) != rec.NumRows() || n > 65536 {
			t.Fatalf("%d rows, batch %d", n, rec.NumRows())
		}
	})
}

// TestTraceLog: the evaluator's message, which may quote payload values,
// goes to the logger at trace level and never into the error.
func TestTraceLog(t *testing.T) {
	var buf strings.Builder
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: jaq.LevelTrace}))
	cat := catalog.New()
	if _, err := cat.Exec(jaqDefs("JSON", lineSchema, `ON INGESTION '.sku | error'`)); err != nil {
		t.Fatal(err)
	}
	c, err := Compile(cat, "c", Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	b := c.NewBuilder(nil)
	defer b.Release()
	_, err = c.NewDecoder().Decode([]byte(`{"sku":"secret-value"}`), b)
	if err == nil || strings.Contains(err.Error(), "secret-value") {
		t.Fatalf("error: %v", err)
	}
	if !strings.Contains(buf.String(), "level=DEBUG-4") || !strings.Contains(buf.String(), "secret-value") || !strings.Contains(buf.String(), "codec=c") {
		t.Errorf("trace log: %s", buf.String())
	}
}
