package formats

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// dump renders a value of the gojq model canonically: integers exactly,
// number text and floats as the shortest text of the nearest float64,
// objects with sorted keys.
func dump(v any) string {
	var b strings.Builder
	var w func(v any)
	w = func(v any) {
		switch x := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case int:
			b.WriteString(strconv.Itoa(x))
		case *big.Int:
			b.WriteString(x.String())
		case json.Number:
			if isInt, _ := number(string(x)); isInt {
				n, _ := new(big.Int).SetString(string(x), 10)
				b.WriteString(n.String())
			} else {
				f, _ := strconv.ParseFloat(string(x), 64)
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		case float64:
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		case string:
			b.WriteString(strconv.Quote(x))
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				w(e)
			}
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Quote(k))
				b.WriteByte(':')
				w(x[k])
			}
			b.WriteByte('}')
		default:
			b.WriteString("?")
		}
	}
	w(v)
	return b.String()
}

func readAll(f Format, payload []byte) ([]any, error) {
	var out []any
	err := f.Read(payload, func(v any) error {
		out = append(out, v)
		return nil
	})
	return out, err
}

func dumpAll(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = dump(v)
	}
	return strings.Join(parts, " ")
}

// TestReaders pins each format's value model.
func TestReaders(t *testing.T) {
	tests := []struct {
		format types.Format
		in     string // CBOR in hex
		want   string // dumped values, or error code
	}{
		{types.JSON, `{"a":1.10,"b":-0,"c":18446744073709551616,"d":"é\u0001"} [] 3 "x"` + "\n" + `null`, `{"a":1.1,"b":0,"c":18446744073709551616,"d":"é\x01"} [] 3 "x" null`},
		{types.JSON, "", ""},
		{types.JSON, `{"a":1}}`, "SYNTAX"},
		{types.JSON, `"\ud800"`, "SYNTAX"},
		{types.JSON, `[` + strings.Repeat("[", 600) + strings.Repeat("]", 601), "TOO_DEEP"},
		{types.YAML, "a: 1\nb: [x, 'y', \"z\"]\n---\n- 0x1F\n- 1_000\n- -.5e3\n- !!binary |\n  AQID\n", `{"a":1,"b":["x","y","z"]} [31,"1_000",-500,"AQID"]`},
		{types.YAML, "", ""},
		{types.YAML, "a: &x [1, *x]\n", "SYNTAX"},
		{types.YAML, "a: !!binary AB\n", "INVALID_BASE64"},
		{types.YAML, "a: !foo x\n", "TYPE_MISMATCH"},
		{types.YAML, "? [1, 2]\n: x\n", "TYPE_MISMATCH"},
		{types.TOML, "a = 1\nb = 1.5\nc = [1, 'x']\n[[t]]\nx = true\n[[t]]\ny = nan\n", `{"a":1,"b":1.5,"c":[1,"x"],"t":[{"x":true},{"y":NaN}]}`},
		{types.TOML, "a = ", "SYNTAX"},
		{types.TOML, "a = \"\xff\"", "INVALID_UTF8"},
		{types.XML, `<a x="&lt;"><b>1</b><b/></a>`, `{"a":{"x":"<"},"c":[{"c":["1"],"t":"b"},{"t":"b"}],"t":"a"}`},
		{types.XML, `<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, "SYNTAX"},
		{types.XML, `<a b="1" b="2"/>`, "DUPLICATE_FIELD"},
		{types.XML, `<a>`, "SYNTAX"},
		{types.XML, `x<a/>`, "SYNTAX"},
		{types.CBOR, "f97e00" + "fa3dcccccd" + "3bffffffffffffffff" + "c34a010000000000000000ff" + "9f01ff" + "a0", `NaN 0.10000000149011612 -18446744073709551616 -4722366482869645213952 [1] {}`},
		{types.CBOR, "f7", "SYNTAX"},
		{types.CBOR, "a10101", "TYPE_MISMATCH"},
		{types.CBOR, "62c328", "INVALID_UTF8"},
	}
	for _, tt := range tests {
		in := []byte(tt.in)
		if tt.format == types.CBOR {
			in, _ = hex.DecodeString(tt.in)
		}
		vs, err := readAll(For(tt.format), in)
		got := dumpAll(vs)
		if err != nil {
			got = string(values.CodeOf(err))
			if got == "" {
				got = "untyped: " + err.Error()
			}
		}
		if got != tt.want {
			t.Errorf("%s %q:\n got %s\nwant %s", tt.format, tt.in, got, tt.want)
		}
	}
}

// roundTrip is the property the fuzz targets check: whatever a reader
// accepts, its writer writes (unless a value has no JSON number), and
// reading that back gives the same values.
func roundTrip(t *testing.T, f Format, payload []byte) {
	vs, err := readAll(f, payload)
	if err != nil {
		if _, ok := err.(*values.Error); !ok {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		return
	}
	for _, v := range vs {
		out, err := f.Append(nil, v, Lexical{})
		if err != nil {
			if _, ok := err.(*values.Error); !ok {
				t.Fatalf("untyped write error %T: %v", err, err)
			}
			continue
		}
		back, err := readAll(f, out)
		if err != nil || len(back) != 1 || dump(back[0]) != dump(v) {
			t.Fatalf("round trip of %s\nwrote %q\nread %s (%v)", dump(v), out, dumpAll(back), err)
		}
	}
}

func fuzzFormat(f *testing.F, ft types.Format, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	format := For(ft)
	f.Fuzz(func(t *testing.T, payload []byte) { roundTrip(t, format, payload) })
}

func FuzzJSON(f *testing.F) {
	var big strings.Builder // vector 47: an array past the unfolding limit
	big.WriteByte('[')
	for i := 0; i < 65537; i++ {
		if i > 0 {
			big.WriteByte(',')
		}
		big.WriteByte('1')
	}
	big.WriteByte(']')
	fuzzFormat(f, types.JSON, `{"lines":[{"sku":"a","quantity":2}]} {"x":[1.5e300,-0.0,7.038531e-26]}`, "", `"\u0000é"`, `{"a":{"b":[null,true,false]}}`, big.String())
}

func FuzzYAML(f *testing.F) {
	fuzzFormat(f, types.YAML, "a: 1\n---\n- x\n- 0x10\n", "{a: [1, 2.5, .inf, ~]}", "x: !!binary AAEC\n", "- &a 1\n- *a\n", "'\\u0085': \"\\t\"")
}

func FuzzTOML(f *testing.F) {
	// vector 48: a u64 above the signed range is refused on read
	fuzzFormat(f, types.TOML, "a = 18446744073709551615\n", "a = 9223372036854775807\n[t]\nb = 'x'\n[[u]]\nc = 1.5\n", "", "d = 2026-09-24T10:15:00Z\n", "\"k y\" = [[1], {a = 2}]\n")
}

func FuzzXML(f *testing.F) {
	fuzzFormat(f, types.XML, `<notification><user_id>42</user_id></notification>`, "<?xml version=\"1.0\"?>\n<a x=\"1\">t&amp;<b/><c></c><!--c--><?p q?><![CDATA[<z>]]></a>", "", `<a:b xmlns:a="u" a:c="&#x9;"/>`)
}

func FuzzCBOR(f *testing.F) {
	for _, h := range []string{"a1617501", "fb8000000000000000", "c249010000000000000000", "9f01ff", "4301020a", "a2617801617802", "f97c00"} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	format := For(types.CBOR)
	f.Fuzz(func(t *testing.T, payload []byte) { roundTrip(t, format, payload) })
}

func TestTomlTables(t *testing.T) {
	v := map[string]any{"t": map[string]any{"a": 1, "u": []any{map[string]any{"b": 2}}}, "arr": []any{map[string]any{"c": 3}, 4}}
	out, err := For(types.TOML).Append(nil, v, Lexical{})
	want := "arr = [{c = 3}, 4]\n\n[t]\na = 1\n\n[[t.u]]\nb = 2\n"
	if err != nil || string(out) != want {
		t.Errorf("got %q, %v", out, err)
	}
	out, _ = For(types.TOML).Append(nil, map[string]any{"t": map[string]any{}}, Lexical{})
	if string(out) != "[t]\n" {
		t.Errorf("leading table: %q", out)
	}
}

// TestWriters pins writer details that the codec tests do not reach.
func TestWriters(t *testing.T) {
	m := map[string]any{"b": 1, "a": []any{json.Number("1.50"), 2.0, math.Copysign(0, -1), new(big.Int).Lsh(big.NewInt(1), 70)}, "c d": "x\"\n\x7f"}
	tests := []struct {
		format types.Format
		want   string
	}{
		{types.JSON, `{"a": [1.50, 2.0, -0.0, 1180591620717411303424], "b": 1, "c d": "x\"\n` + "\x7f" + `"}`},
		{types.YAML, `{"a": [1.50, 2.0, -0.0, 1180591620717411303424], "b": 1, "c d": "x\"\n\u007f"}`},
		{types.TOML, "a = [1.50, 2.0, -0.0, 1180591620717411303424]\nb = 1\n\"c d\" = \"x\\\"\\n\\u007f\"\n"},
		{types.CBOR, "a36161" + "84" + "fb3ff8000000000000" + "fb4000000000000000" + "fb8000000000000000" + "c249400000000000000000" + "616201" + "63632064" + "6478220a7f"},
	}
	for _, tt := range tests {
		out, err := For(tt.format).Append(nil, m, Lexical{})
		got := string(out)
		if tt.format == types.CBOR {
			got = hex.EncodeToString(out)
		}
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.format, got, tt.want)
		}
	}
}
