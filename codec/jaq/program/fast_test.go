package program

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// result is what a run gave: its outputs, in order, and whether it failed.
type result struct {
	out    []any
	failed bool
	detail string
}

func runWith(p *Program, v any, fast bool) result {
	var r result
	q := *p
	if !fast {
		q.fast = nil
	}
	err := q.Run(context.Background(), v, func(o any) error {
		r.out = append(r.out, o)
		return nil
	})
	if err != nil {
		var re *RunError
		if !errors.As(err, &re) {
			panic(fmt.Sprintf("run error %T %v is not a *RunError", err, err))
		}
		r.failed, r.detail = true, re.Detail()
	}
	return r
}

// same compares the fast path with gojq on one input.
func same(t testing.TB, p *Program, v any) {
	t.Helper()
	got, want := runWith(p, v, true), runWith(p, v, false)
	if got.failed != want.failed || !reflect.DeepEqual(got.out, want.out) {
		t.Fatalf("program %q on %s:\nfast  %#v failed=%v (%s)\ngojq  %#v failed=%v (%s)",
			p.Text(), show(v), got.out, got.failed, got.detail, want.out, want.failed, want.detail)
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func TestFastPathRecognised(t *testing.T) {
	fast := []string{
		".", ".[]", ".a", ".a.b", ".a.b[]", `."a"`, `.["a"]`, `.a["b"]`, ".[][]", ".a[].b",
		"{a: .x, b: .y.z}", `{"a": .x}`, "{a}", "{a: {b: .c}}", "{}",
		`select(.kind == "x")`, `select("x" == .kind)`, `select(.kind != "x")`, "select(.a)",
		"select(.a == null)", "select(.a == true)", "select(.a == 1)", "select(.a == 1.5)", "select(.a == 1e400)",
		"select(.a.b == 100000000000000000000000)",
		".[] | select(.k == 1) | {k, v: .v}", ".a | .b", "(.a)", "{a: (.b | .c)}", "select(.a == -1)", "select(-1.5 != .a)", ".items[] | .id",
	}
	for _, src := range fast {
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if !p.Fast() {
			t.Errorf("%q does not take the fast path", src)
		}
	}
	slow := []string{
		".a?", ".[]?", ".[0]", ".[1:]", ".a + 1", "{(.a): 1}", ". as $x | {$x}", "(.a | .b)[]", "select(.a == -.b)", `{"\(.a)": 1}`, `."\(.a)"`,
		"def f: .; f", ". as $x | $x", "select(.a > 1)", "select(.a[] == 1)", "{a: .b[]}", "select(.a == .b)",
		"select(.a == [1])", `select(.a == "\(.b)")`, ".. ", "1", `"x"`, "null", "[.a]", ".a, .b", "empty",
		"map(.a)", "{a: .b, a: .c}", "select(.a | .b[])", "{a: .b | .c[]}",
	}
	for _, src := range slow {
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if p.Fast() {
			t.Errorf("%q takes the fast path", src)
		}
	}
}

func TestFastPathCases(t *testing.T) {
	cases := []struct {
		prog string
		in   string
	}{
		{".a", `null`}, {".a", `1`}, {".a", `"s"`}, {".a", `[1]`}, {".a", `{"b": 1}`},
		{".[]", `null`}, {".[]", `{"b": 2, "a": 1, "c": 3}`}, {".[]", `[3, 1, 2]`}, {".[]", `"s"`}, {".[]", `{}`},
		{".a.b[]", `{"a": {"b": [1, {"x": 2}]}}`}, {".a.b[]", `{"a": null}`}, {".a.b[]", `{"a": 1}`},
		{".[] | .a", `[{"a": 1}, 5, {"a": 2}]`},
		{`select(.kind == "x")`, `{"kind": "x"}`}, {`select(.kind == "x")`, `{"kind": "y"}`}, {`select(.kind == "x")`, `3`},
		{"select(.a == 1)", `{"a": 1.0}`}, {"select(.a == 1)", `{"a": 1}`}, {"select(.a != 1)", `{"a": "1"}`},
		{"select(.a == null)", `{}`}, {"select(.a)", `{"a": false}`}, {"select(.a)", `{"a": 0}`}, {"select(.a)", `{"a": ""}`},
		{"{a: .x, b: .y.z}", `{"x": 1, "y": {"z": [2]}}`}, {"{a: .x, b: .y.z}", `{"x": 1, "y": 2}`}, {"{a: .x}", `[]`},
		{".[] | select(.k == 1) | {k, v: .v}", `[{"k": 1, "v": 2}, {"k": 2}, {"k": 1.0}, 7]`},
	}
	for _, c := range cases {
		p, err := Compile(c.prog)
		if err != nil || !p.Fast() {
			t.Fatalf("%q: %v fast=%v", c.prog, err, p != nil && p.Fast())
		}
		same(t, p, decodeJSON(t, c.in))
	}
	// exact outputs of a few, beyond agreeing with gojq
	p, _ := Compile(".[]")
	if r := runWith(p, decodeJSON(t, `{"b": 2, "a": 1}`), true); !reflect.DeepEqual(r.out, []any{json.Number("1"), json.Number("2")}) || r.failed {
		t.Errorf(".[] on an object: %#v", r)
	}
	p, _ = Compile(".a")
	if r := runWith(p, []any{}, true); !r.failed || r.out != nil {
		t.Errorf(".a on an array: %#v", r)
	}
}

func decodeJSON(t testing.TB, s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// gen generates inputs and fast-path programs over a small alphabet of
// member names so that programs hit the members inputs have.
type gen struct{ r *rand.Rand }

var genKeys = []string{"a", "b", "kind", "x"}

func (g gen) key() string { return genKeys[g.r.IntN(len(genKeys))] }

func (g gen) scalar() any {
	switch g.r.IntN(10) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		return g.r.IntN(3) - 1
	case 3:
		return float64(g.r.IntN(3)) - 0.5*float64(g.r.IntN(2))
	case 4:
		return json.Number([]string{"1", "1.0", "0", "-1", "1e0", "1.5", "100000000000000000000000"}[g.r.IntN(7)])
	case 5:
		return new(big.Int).Lsh(big.NewInt(1), 70)
	case 6, 7:
		return []string{"x", "y", "", "1"}[g.r.IntN(4)]
	}
	return g.key()
}

func (g gen) value(depth int) any {
	if depth > 3 || g.r.IntN(3) == 0 {
		return g.scalar()
	}
	n := g.r.IntN(4)
	if g.r.IntN(2) == 0 {
		xs := make([]any, n)
		for i := range xs {
			xs[i] = g.value(depth + 1)
		}
		return xs
	}
	m := map[string]any{}
	for range n {
		m[g.key()] = g.value(depth + 1)
	}
	return m
}

func (g gen) path(iter bool) string {
	var b strings.Builder
	n := g.r.IntN(4)
	if n == 0 {
		return "."
	}
	for range n {
		switch k := g.r.IntN(6); {
		case iter && k == 0:
			b.WriteString(".[]")
		case k == 1:
			fmt.Fprintf(&b, ".%q", g.key())
		case k == 2:
			fmt.Fprintf(&b, ".[%q]", g.key())
		default:
			b.WriteString("." + g.key())
		}
	}
	return b.String()
}

func (g gen) literal() string {
	return []string{`"x"`, `"y"`, "1", "1.0", "0", "-1", "null", "true", "false", "1e400", "100000000000000000000000", `"a"`}[g.r.IntN(12)]
}

func (g gen) object(depth int) string {
	var parts []string
	seen := map[string]bool{}
	for range g.r.IntN(4) {
		k := g.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		switch g.r.IntN(4) {
		case 0:
			parts = append(parts, k)
		case 1:
			if depth < 2 {
				parts = append(parts, k+": "+g.object(depth+1))
				continue
			}
			fallthrough
		case 2:
			parts = append(parts, fmt.Sprintf("%q: %s", k, g.path(false)))
		default:
			parts = append(parts, k+": "+g.path(false))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g gen) stage() string {
	switch g.r.IntN(5) {
	case 0:
		return g.object(0)
	case 1:
		switch g.r.IntN(4) {
		case 0:
			return "select(" + g.path(false) + ")"
		case 1:
			return "select(" + g.literal() + " == " + g.path(false) + ")"
		case 2:
			return "select(" + g.path(false) + " != " + g.literal() + ")"
		}
		return "select(" + g.path(false) + " == " + g.literal() + ")"
	}
	return g.path(true)
}

func (g gen) program() string {
	parts := []string{g.stage()}
	for g.r.IntN(2) == 0 && len(parts) < 4 {
		parts = append(parts, g.stage())
	}
	return strings.Join(parts, " | ")
}

// TestFastPathAgainstGojq is the property: on generated inputs every
// generated fast-path program gives gojq's outputs, in gojq's order, and
// fails exactly when gojq does.
func TestFastPathAgainstGojq(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(16, 4))}
	programs, runs := 0, 0
	for range 3000 {
		src := g.program()
		p, err := Compile(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if !p.Fast() {
			t.Fatalf("generated program %q does not take the fast path", src)
		}
		programs++
		for range 20 {
			same(t, p, g.value(0))
			runs++
		}
	}
	t.Logf("%d programs, %d runs", programs, runs)
}

// FuzzFastPath compares the fast path with gojq for any program that
// takes it, on any JSON input.
func FuzzFastPath(f *testing.F) {
	for _, s := range [][2]string{
		{".", `{"a": 1}`}, {".[]", `[1, {"a": 2}]`}, {".[]", `{"b": 1, "a": 2}`}, {".a.b[]", `{"a": {"b": [1, 2]}}`},
		{"{a: .x, b: .y.z}", `{"x": 1, "y": {"z": 2}}`}, {`select(.kind == "x")`, `{"kind": "x"}`},
		{`.[] | select(.k != 1.0) | {k}`, `[{"k": 1}, {"k": 2}, 3]`}, {".a", `[1]`}, {"select(.a)", `{"a": null}`},
		{`.["a"]."b"`, `{"a": {"b": true}}`}, {"select(1 == .a)", `{"a": 1e0}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, src, in string) {
		p, err := Compile(src)
		if err != nil || !p.Fast() {
			return
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(in)))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		same(t, p, v)
	})
}
