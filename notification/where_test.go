package notification

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// whereYAML has one routed field of each handler kind, a field outside
// the key order, and a polygon.
const whereYAML = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  w:
    topic: {base: w, key_order: [class, expver, date, time, step, temp, name]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: false}
      expver: {type: ExpverHandler, required: false}
      date: {type: DateHandler, required: false}
      time: {type: TimeHandler, required: false}
      step: {type: IntHandler, required: false}
      temp: {type: FloatHandler, required: false}
      name: {type: StringHandler, required: false}
      polygon: {type: PolygonHandler, required: false}
`

// whereNote notifies w with the given identifier (missing fields are
// wildcard tokens, which read as NULL where they do not parse).
func whereNote(t *testing.T, s *Schema, fields map[string]any) *Notification {
	t.Helper()
	ident := map[string]json.RawMessage{"polygon": json.RawMessage(`[[0,0],[0,1],[1,1],[0,0]]`)}
	for _, f := range s.Fields {
		if f.Name == "polygon" {
			continue
		}
		v, ok := fields[f.Name]
		if !ok {
			v = "x"
			switch f.Name {
			case "class":
				v = "od"
			case "date":
				v = "2025-01-01"
			case "time":
				v = "0"
			case "step", "temp":
				v = 0
			case "expver":
				v = "1"
			}
		}
		b, _ := json.Marshal(v)
		ident[f.Name] = b
	}
	n, err := s.Notify(ident, nil)
	if err != nil {
		t.Fatalf("notify %v: %v", fields, err)
	}
	return n
}

func TestWhereMatch(t *testing.T) {
	s, _ := mustRegistry(t, whereYAML).Schema("w")
	n := whereNote(t, s, map[string]any{"class": "od", "expver": "0001", "date": "20250706", "time": "12:30", "step": 12, "temp": 21.5, "name": "it's"})
	for _, c := range []struct {
		where string
		want  bool
	}{
		{"class = 'od'", true},
		{"class = 'OD'", true}, // canonicalised by the enum handler
		{"identifier.class <> 'od'", false},
		{"expver = '1'", true}, // 1 → 0001
		{"expver = 1", true},
		{"date = '2025-07-06'", true},
		{"date >= '2025-07-01' AND date < 20250801", true},
		{"date BETWEEN '2025-01-01' AND '2025-06-30'", false},
		{"time = '12:30'", true},
		{"time > 1200", true},
		{"step >= 6", true},
		{"step > 12", false},
		{"step IN (1, 12, 24)", true},
		{"step NOT IN (1, 2)", true},
		{"step BETWEEN 10 AND 12", true},
		{"step NOT BETWEEN 10 AND 12", false},
		{"temp > 21.4 AND temp < 21.6", true},
		{"temp = 21.5", true},
		{"temp >= -5", true},
		{"name = 'it''s'", true},
		{"name IS NULL", false},
		{"name IS NOT NULL", true},
		{"name IS DISTINCT FROM 'x'", true},
		{"name IS NOT DISTINCT FROM 'it''s'", true},
		{"NOT (class = 'rd')", true},
		{"class = 'rd' OR step = 12", true},
		{"class = 'rd' AND step = 12", false},
		{"(class = 'od' OR class = 'rd') AND NOT step < 6", true},
		{"step = NULL", false},           // NULL: not selected
		{"NOT (step = NULL)", false},     // still NULL
		{"step = NULL OR TRUE", true},    // NULL OR TRUE = TRUE
		{"step = NULL AND FALSE", false}, // FALSE
		{"step IN (NULL, 1)", false},     // NULL
		{"step NOT IN (NULL, 1)", false}, // NULL
		{"step IN (NULL, 12)", true},
		{"TRUE", true},
		{"false", false},
		{"1 = 1", true},
		{"step = step", true},
		{"step < temp", true},
		{"\"step\" = 12", true},
		{"StEp >= 6 aNd ClAsS = 'od'", false}, // names are case-sensitive, keywords are not: StEp is unknown
	} {
		t.Run(c.where, func(t *testing.T) {
			w, err := s.CompileWhere(c.where)
			if c.where == "StEp >= 6 aNd ClAsS = 'od'" {
				var we *WhereError
				if !errors.As(err, &we) || we.Column != 1 {
					t.Fatalf("want an unknown-field error at column 1, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Match(n); got != c.want {
				t.Fatalf("Match = %v, want %v (compiled %s)", got, c.want, w)
			}
		})
	}
}

func TestWhereNullFields(t *testing.T) {
	// A generic (schema-less) notification: absent keys are NULL.
	r := mustRegistry(t, "application: {host: 127.0.0.1, port: 0}\nnotification_backend: {kind: in_memory}\nnotification_schema_strict: false\n")
	s, err := r.Lookup("free")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Notify(map[string]json.RawMessage{"a": json.RawMessage(`"1"`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for where, want := range map[string]bool{
		"a = '1'": true, "a = 1": true, "b IS NULL": true, "b = 'x'": false, "NOT b = 'x'": false, "b IS DISTINCT FROM 'x'": true,
	} {
		w, err := s.CompileWhere(where)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if got := w.Match(n); got != want {
			t.Fatalf("%s: %v, want %v", where, got, want)
		}
	}
}

func TestWhereErrors(t *testing.T) {
	s, _ := mustRegistry(t, whereYAML).Schema("w")
	for _, c := range []struct{ where, want string }{
		{"", "where: column 1: the predicate is empty"},
		{"   ", "where: column 1: the predicate is empty"},
		{"step = 12.0", `where: column 8: value for 'step' (IntHandler): value "12.0" is not a valid integer`},
		{"step >", "where: column 7: expected a field name or a value, found end of the predicate"},
		{"step = 'abc'", `where: column 8: value for 'step' (IntHandler): value "abc" is not a valid integer`},
		{"class = 'xx'", "where: column 9: value for 'class' (EnumHandler): "},
		{"date = 'tomorrow'", `where: column 8: value for 'date' (DateHandler): invalid date "tomorrow": accepted forms are YYYY-MM-DD, YYYYMMDD or YYYY-DDD (day of year)`},
		{"nope = 1", "where: column 1: unknown field 'nope' for event type 'w'; its fields are 'class', 'expver', 'date', 'time', 'step', 'temp', 'name', 'polygon'"},
		{"polygon IS NULL", "where: column 1: field 'polygon' is a geometry; filter it with the identifier's polygon or point, not in WHERE"},
		{"payload.t > 30", "where: column 1: payload.t: event type 'w' has no typed payload (a payload codec), so its payload has no fields to test"},
		{"input.t > 30", "where: column 1: unknown scope 'input': names are bare identifier fields, identifier.<name> or payload.<name>"},
		{"step", "where: column 1: step is not a condition: compare it, for example step = …"},
		{"step 6", "where: column 6: expected an operator (=, !=, <>, <, <=, >, >=, IN, BETWEEN, IS) after step, found number 6"},
		{"step = 1 step = 2", "where: column 10: unexpected 'step' after the end of the predicate"},
		{"(step = 1", "where: column 10: expected ')' to close the '(' at column 1, found end of the predicate"},
		{"name = 'open", "where: column 8: unterminated string: a ' has no closing ' (write '' for a quote inside a string)"},
		{"step = TRUE", "where: column 8: TRUE is a boolean; identifier.step holds an integer"},
		{"step = name", "where: column 6: identifier.step (an integer) and identifier.name (text) cannot be compared"},
		{"step IN 1", "where: column 9: expected '(' after IN, found number 1"},
		{"step BETWEEN 1 OR 2", "where: column 16: expected AND in BETWEEN … AND …, found 'OR'"},
		{"step IS 3", "where: column 9: expected NULL or DISTINCT FROM after IS, found number 3"},
		{"step = 1 AND\n  ~x", "where: line 2 column 3: unexpected character '~'"},
		{"and = 1", "where: column 1: AND is a keyword; write a field of that name as identifier.and or `and`"},
		{"step = 1e400", "where: column 8: 1e400: "},
		{"12abc = 1", `where: column 1: "12a" is not a number`},
	} {
		t.Run(c.where, func(t *testing.T) {
			_, err := s.CompileWhere(c.where)
			var we *WhereError
			if !errors.As(err, &we) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v\nwant prefix %s", err, c.want)
			}
		})
	}
}

func TestWhereString(t *testing.T) {
	s, _ := mustRegistry(t, whereYAML).Schema("w")
	w, err := s.CompileWhere("class = 'OD' and not step in (1, 2) or expver is not null")
	if err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != "(((identifier.class = 'od') AND (NOT (identifier.step IN (1, 2)))) OR (identifier.expver IS NOT NULL))" {
		t.Fatalf("compiled %s", got)
	}
}

func FuzzWhere(f *testing.F) {
	for _, s := range []string{"class = 'od'", "step BETWEEN 1 AND 2 OR NOT (time > '12:00')", "name IS NOT DISTINCT FROM 'a''b'",
		"step IN (1, -2, 3.5e2)", "((((", "'", "\"x", "`step` = 1", "`st``ep", "`and` = 1 OR \"or\" = 2", "date = '2025-07-06' AND temp <> -0.0", "TRUE AND NULL", "step = 99999999999999999999",
		"class = 'od' AND step >= 6", "temp = -0 AND step IN (12, 24)", "12 >= step AND class IN ('OD')", "temp BETWEEN 21 AND 22"} {
		f.Add(s)
	}
	s, _ := mustRegistry(f, whereYAML).Schema("w")
	n := &Notification{EventType: "w", Tokens: []string{"w", "od", "0001", "20250706", "1230", "12", "21.5", "x"}}
	f.Fuzz(func(t *testing.T, src string) {
		w, err := s.CompileWhere(src)
		if err != nil {
			var we *WhereError
			if !errors.As(err, &we) || we.Pos < 0 || we.Pos > len(src) || we.Column < 1 {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		// The identifier the predicate pins never refuses what the
		// predicate selects (CREATE SUBSCRIPTION uses both).
		if pf, err := s.Filter(w.Pins(), OpWatch); err == nil && w.Match(n) && !pf.Match(n.Tokens, nil) {
			t.Fatalf("%q selects %v, its pins %v refuse it", src, n.Tokens, w.Pins())
		}
		// The compiled form compiles again to itself.
		again, err := s.CompileWhere(w.String())
		if err != nil {
			t.Fatalf("compiled form %q does not compile: %v", w.String(), err)
		}
		if again.String() != w.String() || again.Match(n) != w.Match(n) {
			t.Fatalf("%q → %q → %q", src, w.String(), again.String())
		}
		_ = fmt.Sprint(w)
	})
}
