package query

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

// rec is a Record of routed tokens and a schema-less identifier.
type rec struct {
	tokens []string
	ident  map[string]string
}

func (r rec) Token(pos int) (string, bool) {
	if pos >= len(r.tokens) {
		return "", false
	}
	return r.tokens[pos], true
}
func (r rec) IdentifierValue(name string) (string, bool) { v, ok := r.ident[name]; return v, ok }
func (r rec) StoredPayload() ([]byte, string)            { return nil, "application/json" }

// schema has a text field, an int field with its constraints and a
// polygon, described as a caller would.
func schema() *Schema {
	ints := func(op string, operand json.RawMessage) ([]int64, []float64, []string, error) {
		var vs []int64
		if err := json.Unmarshal(operand, &vs); err != nil {
			var v int64
			if err := json.Unmarshal(operand, &v); err != nil {
				return nil, nil, nil, err
			}
			vs = []int64{v}
		}
		return vs, nil, nil, nil
	}
	return &Schema{
		EventType:  "ev",
		NumberText: func(n string) (string, error) { return n, nil },
		Fields: []Field{
			{Name: "name", Pos: 1, Type: "StringHandler", Kind: Text, Canonical: func(s string) (string, error) { return s, nil }},
			{Name: "step", Pos: 2, Type: "IntHandler", Kind: Int, Constraint: ints,
				Canonical: func(s string) (string, error) {
					v, err := strconv.Atoi(s)
					if err != nil {
						return "", errors.New("not an integer")
					}
					return strconv.Itoa(v), nil
				}},
			{Name: "polygon", Type: "PolygonHandler", Spatial: true},
		},
	}
}

// TestCompileAndMatch: a predicate over a caller's schema, evaluated on
// its records, with SQL's three-valued logic (a missing token is NULL).
func TestCompileAndMatch(t *testing.T) {
	s := schema()
	for _, tc := range []struct {
		src    string
		tokens []string
		want   bool
	}{
		{"step >= 6 AND name = 'a'", []string{"ev", "a", "12"}, true},
		{"step >= 6 AND name = 'a'", []string{"ev", "b", "12"}, false},
		{"step IN (1, 12)", []string{"ev", "a", "12"}, true},
		{"NOT step BETWEEN 1 AND 6", []string{"ev", "a", "12"}, true},
		{"step IS NULL", []string{"ev", "a"}, true},
		{"step > 1 OR name = 'a'", []string{"ev", "a"}, true},
		{"step > 1", []string{"ev", "a"}, false},
		{"`name` <> 'x'", []string{"ev", "y", "1"}, true},
	} {
		w, err := Compile(tc.src, s)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if got := w.Match(rec{tokens: tc.tokens}); got != tc.want {
			t.Errorf("%q on %v = %v, want %v", tc.src, tc.tokens, got, tc.want)
		}
	}
	for src, want := range map[string]string{
		"nope = 1":      "where: column 1: unknown field 'nope' for event type 'ev'; its fields are 'name', 'step', 'polygon'",
		"step = 'x'":    "where: column 8: value for 'step' (IntHandler): not an integer",
		"polygon = 'x'": "where: column 1: field 'polygon' is a geometry; filter it with the identifier's polygon or point, not in WHERE",
		"payload.a = 1": "where: column 1: payload.a: event type 'ev' has no typed payload (a payload codec), so its payload has no fields to test",
		"step >":        "where: column 7: expected a field name or a value, found end of the predicate",
	} {
		var we *WhereError
		if _, err := Compile(src, s); !errors.As(err, &we) || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", src, err, want)
		}
	}
}

// TestPins: the identifier a predicate's top-level AND conditions pin.
func TestPins(t *testing.T) {
	w, err := Compile("name = 'a' AND step IN (3, 4) AND (step = 9 OR name = 'b')", schema())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(w.Pins())
	if string(got) != `{"name":"a","step":{"in":[3,4]}}` {
		t.Fatalf("Pins() = %s", got)
	}
}

// TestGenericSchema: a schema-less event type reads any name as text
// from the identifier values.
func TestGenericSchema(t *testing.T) {
	w, err := Compile("region = 'eu' AND anything IS NULL", &Schema{EventType: "g", Generic: true})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Match(rec{ident: map[string]string{"region": "eu"}}) || w.Match(rec{ident: map[string]string{"region": "us"}}) {
		t.Fatal("generic match")
	}
}

// FuzzCompile: compiling never panics, and a predicate that compiles
// evaluates on any record and renders a compiled form that compiles to
// itself.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"step >= 6 AND name = 'a'", "step IN (1, 2)", "NOT (name = 'x' OR step IS NULL)", "`name` = '`'", "\"and\" = 1", "step BETWEEN 1 AND", "'unterminated"} {
		f.Add(s)
	}
	s := schema()
	f.Fuzz(func(t *testing.T, src string) {
		w, err := Compile(src, s)
		if err != nil {
			return
		}
		w.Match(rec{tokens: []string{"ev", "a", "1"}})
		again, err := Compile(w.String(), s)
		if err != nil || again.String() != w.String() {
			t.Fatalf("%q compiles to %q, which gives %v, %v", src, w.String(), again, err)
		}
	})
}
