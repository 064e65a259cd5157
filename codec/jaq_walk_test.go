package codec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/codec/jaq"
)

// The JAQ JSON codecs with ON INGESTION '.' or '.[]' decode payloads
// straight into rows (package passthrough). These tests hold them to the
// general path: the same programs written so that gojq runs them on the
// built value must give the same rows, or the same error, for every
// payload.

const walkSchema = `CREATE SCHEMA s (u U8, i I64 OPTIONAL, q U64 OPTIONAL, f F32, d F64 OPTIONAL, b BOOL OPTIONAL,
  s STRING, y BYTES OPTIONAL, t DATETIME OPTIONAL, a ARRAY<F32, 2> OPTIONAL, m ARRAY<I16, 2, 2> OPTIONAL,
  v VEC<STRING> OPTIONAL, w VEC<VEC<U8>> OPTIONAL);
`

var walkFields = []string{"u", "i", "q", "f", "d", "b", "s", "y", "t", "a", "m", "v", "w"}

// walkPair returns the walking codec for prog and its oracle, the same
// program run through gojq.
func walkPair(t testing.TB, prog, oracle string) (walk, slow *Codec) {
	t.Helper()
	walk = jaqCodec(t, jaqDefs("JSON", walkSchema, "ON INGESTION '"+prog+"'"), nil, nil)
	slow = jaqCodec(t, jaqDefs("JSON", walkSchema, "ON INGESTION '"+oracle+"'"), nil, nil)
	if !walk.NewDecoder().(*jaq.Codec).Walks() || slow.NewDecoder().(*jaq.Codec).Walks() {
		t.Fatalf("%q should walk and %q should not", prog, oracle)
	}
	return walk, slow
}

type walkCodecs [][2]*Codec

func newWalkCodecs(t testing.TB) walkCodecs {
	var w walkCodecs
	for _, prog := range []string{".", ".[]", ".x[]", ".x.y", `.x."y"[]`} {
		walk, slow := walkPair(t, prog, "if true then "+prog+" else empty end")
		w = append(w, [2]*Codec{walk, slow})
	}
	return w
}

func (w walkCodecs) check(t testing.TB, payload []byte) {
	t.Helper()
	for _, p := range w {
		got, want := decodeRows(t, p[0], payload), decodeRows(t, p[1], payload)
		if got != want {
			t.Fatalf("payload %q:\nwalked  %s\ngeneral %s", payload, got, want)
		}
	}
}

func TestJaqWalkCases(t *testing.T) {
	w := newWalkCodecs(t)
	row := `{"u": 1, "f": 1.5, "s": "x"}`
	cases := []string{
		row, row + row, row + "\n" + row, "[" + row + ", " + row + "]", "", " ", "[]", "{}", "null", "1", `"s"`,
		`{"u": 1, "f": 1.5, "s": "x", "extra": {"deep": [1, 2, {"x": null}]}}`,
		`{"s": "x", "f": 0.1, "u": 255, "i": -9223372036854775808, "q": 18446744073709551615, "d": 1e308, "b": true,
		  "y": "AAE=", "t": "2024-01-02T03:04:05.123456789+01:00", "a": [1, 2.5], "m": [[1, 2], [3, -4]], "v": ["a", "\u00e9"], "w": [[1], [], [2, 3]]}`,
		`{"u": 256, "f": 1, "s": "x"}`, `{"u": 1.5, "f": 1, "s": "x"}`, `{"u": 1e2, "f": 1, "s": "x"}`, `{"u": -1, "f": 1, "s": "x"}`,
		`{"u": "1", "f": 1, "s": "x"}`, `{"u": 1, "f": "1", "s": 2}`, `{"f": 1, "s": "x"}`, `{"u": null, "f": 1, "s": "x"}`,
		`{"u": 1, "f": 1, "s": "x", "i": null, "a": null}`, `{"u": 1, "f": 1e39, "s": "x"}`, `{"u": 1, "f": 1, "s": "x", "y": "AAE"}`,
		`{"u": 1, "f": 1, "s": "x", "t": "2024-01-02"}`, `{"u": 1, "f": 1, "s": "x", "a": [1]}`, `{"u": 1, "f": 1, "s": "x", "a": [1, 2, 3]}`,
		`{"u": 1, "f": 1, "s": "x", "a": [1, null]}`, `{"u": 1, "f": 1, "s": "x", "a": [1, "2", 3]}`, `{"u": 1, "f": 1, "s": "x", "m": [[1, 2], [3]]}`,
		`{"u": 1, "f": 1, "s": "x", "m": [[1, 2], [3, 40000]]}`, `{"u": 1, "f": 1, "s": "x", "w": [[1], [null]]}`, `{"u": 1, "f": 1, "s": "x", "w": 5}`,
		`{"u": 1, "f": 1, "s": "x", "v": [{}]}`, `{"u": 1, "f": 1, "s": "x", "u": 2}`, `{"u": 1, "f": 1, "s": "x", "\u0075": 2}`,
		`{"\u0073": "y", "u": 1, "f": 1}`, `{"u": 1, "f": 1, "s": "a\"b\\c\u0041"}`, `{"u": 300, "f": "x", "s": 1}`, `{"s": 1, "u": 300}`,
		`{"u": 1, "f": 1, "s": "x"`, `{"u": 1, "f": 1, "s": "x"}}`, `{"u": 1, "f": 1, "s": "x"} x`, `{"u": 1, "f": 01, "s": "x"}`,
		`{"u": 2, "f": 1, "s": "x", "extra": [1, 2}`, `{"u": 1.5, "f": 1, "s": "x", "extra": [1, 2}`, row + `{"u": 1.5}`, `{"u": 1.5}` + row + "{",
		`[` + row + `, 1, ` + row + `]`, `[` + row + `, {"u": 1.5}]`, `[` + row + `, {"u": 1.5}, {"u": }]`, `[1, 2`, `[` + row + `]` + `{"a": ` + row + `}`,
		`[[` + row + `]]`, `[null]`, "{\"u\": 1, \"f\": 1, \"s\": \"\xff\"}", `{"u": 1, "f": 1, "s": "\ud800"}`,
		`{"u": 1, "f": 1, "s": "x", "m": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`{"u": 1, "f": 1, "s": "x", "w": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`{"u": 1, "f": 1, "s": "x", "w": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
		`{"u": 1.5, "f": 1, "s": "x", "w": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
		strings.Repeat("[", 600) + strings.Repeat("]", 600), `[` + strings.Repeat(`{"x": `, 520) + "1" + strings.Repeat("}", 520) + `]`,
		`{"x": [` + row + `]}`, `{"x": {"y": ` + row + `}}`, `{"x": {"y": [` + row + `, ` + row + `]}}`, `{"x": null}`, `{}`, `{"x": 1}`,
		`{"x": {"a": ` + row + `, "b": 1}}`, `{"x": {"y": {"b": ` + row + `, "a": 2}}}`, `{"a": [1, 2}, "x": [` + row + `]}`,
		`{"x": [{"u": 1.5}], "z": [1, 2}`, `{"x": [{"u": 1.5}], "z": 1}`, `{"z": 1, "x": {"y": [` + row + `, 3]}, "q": {"r": [}`,
		`{"x": {"y": ` + row + `}, "x": 1}`, `{"\u0078": [` + row + `]}`, `{"x": {"y": null}}`, `{"x": {"y": "s"}}`, `{"x": [` + row + `]} {"x": 2}`,
		strings.Repeat(`{"x": `, 600) + "1" + strings.Repeat("}", 600),
	}
	for _, c := range cases {
		w.check(t, []byte(c))
	}
}

// walkGen writes payloads that exercise every rule of the walk: right and
// wrong types, missing, null and surplus fields, escapes, lengths, depth,
// several values, and broken syntax.
type walkGen struct {
	r *rand.Rand
	b strings.Builder
}

func (g *walkGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *walkGen) scalar() {
	g.b.WriteString(g.pick("0", "1", "255", "256", "-1", "1.5", "1e2", "1e39", "18446744073709551615", "-9223372036854775809",
		"0.1", `"x"`, `"AAE="`, `"2024-01-02T03:04:05Z"`, `"\u0041"`, "true", "false", "null", `""`, `"1"`))
}

func (g *walkGen) value(depth int) {
	switch k := g.r.IntN(10); {
	case depth > 4 || k < 5:
		g.scalar()
	case k < 8:
		g.b.WriteByte('[')
		for i := range g.r.IntN(5) {
			if i > 0 {
				g.b.WriteString(", ")
			}
			g.value(depth + 1)
		}
		g.b.WriteByte(']')
	default:
		g.object(depth+1, false)
	}
}

func (g *walkGen) object(depth int, row bool) {
	g.b.WriteByte('{')
	n := g.r.IntN(8)
	if row {
		n += 3
	}
	used := map[string]bool{}
	for i := range n {
		name := walkFields[g.r.IntN(len(walkFields))]
		if g.r.IntN(8) == 0 {
			name = g.pick("extra", "x", "U")
		}
		if used[name] && g.r.IntN(20) != 0 {
			continue
		}
		used[name] = true
		if i > 0 && g.b.String()[g.b.Len()-1] != '{' {
			g.b.WriteString(", ")
		}
		if g.r.IntN(10) == 0 {
			fmt.Fprintf(&g.b, `"\u%04x%s": `, name[0], name[1:])
		} else {
			fmt.Fprintf(&g.b, "%q: ", name)
		}
		g.value(depth + 1)
	}
	g.b.WriteByte('}')
}

func (g *walkGen) payload() []byte {
	g.b.Reset()
	for i := range 1 + g.r.IntN(3) {
		if i > 0 {
			g.b.WriteString(g.pick("", " ", "\n"))
		}
		// wrapped in the members the paths .x and .x.y name, or not
		closing := ""
		for range g.r.IntN(3) {
			switch g.r.IntN(4) {
			case 0:
				g.b.WriteString(`{"x": `)
			case 1:
				g.b.WriteString(`{"y": `)
			case 2:
				g.b.WriteString(`{"a": 1, "x": `)
			default:
				g.b.WriteString(`{"\u0078": `)
			}
			if g.r.IntN(3) == 0 {
				closing = `, "z": [1, {"x": 2}]}` + closing
			} else {
				closing = "}" + closing
			}
		}
		switch g.r.IntN(6) {
		case 0:
			g.value(0)
		case 1, 2:
			g.b.WriteByte('[')
			for j := range g.r.IntN(4) {
				if j > 0 {
					g.b.WriteString(", ")
				}
				if g.r.IntN(6) == 0 {
					g.value(1)
				} else {
					g.object(1, true)
				}
			}
			g.b.WriteByte(']')
		default:
			g.object(0, true)
		}
		g.b.WriteString(closing)
	}
	p := []byte(g.b.String())
	if g.r.IntN(6) == 0 && len(p) > 0 { // break the syntax somewhere
		i := g.r.IntN(len(p))
		switch g.r.IntN(3) {
		case 0:
			p = p[:i]
		case 1:
			p[i] = g.pick("}", "]", ",", ":", "x", "\"")[0]
		default:
			p = append(p[:i:i], append([]byte(g.pick("{", "[", ",", " ", `"a":`)), p[i:]...)...)
		}
	}
	return p
}

// TestJaqWalkAgainstGeneral is the property: on generated payloads the
// walked decode gives the general path's rows, or its error, exactly.
func TestJaqWalkAgainstGeneral(t *testing.T) {
	w := newWalkCodecs(t)
	g := &walkGen{r: rand.New(rand.NewPCG(16, 44))}
	for range 3000 {
		w.check(t, g.payload())
	}
}

// FuzzJaqWalk compares the walked decode with the general path on any
// payload.
func FuzzJaqWalk(f *testing.F) {
	g := &walkGen{r: rand.New(rand.NewPCG(4, 16))}
	for range 20 {
		f.Add(g.payload())
	}
	f.Add([]byte(`[{"u": 1, "f": 1.5, "s": "x"}, {"u": 1.5}]`))
	w := newWalkCodecs(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		w.check(t, payload)
	})
}
