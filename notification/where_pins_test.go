package notification

import (
	"encoding/json"
	"testing"
)

// TestWherePins: what each condition pins, and that the identifier it
// pins selects exactly what the condition selects (for the conditions
// that pin) and never less than the whole predicate, over a grid of
// notifications.
func TestWherePins(t *testing.T) {
	s, _ := mustRegistry(t, whereYAML).Schema("w")
	var grid []*Notification
	for _, class := range []string{"od", "rd"} {
		for _, step := range []any{0, 5, 6, 7, 12, 24} {
			for _, temp := range []any{0, "-0", -5, 21.5, 21.6, 1e21} {
				grid = append(grid, whereNote(t, s, map[string]any{"class": class, "step": step, "temp": temp, "name": "it's", "date": "20250706"}))
			}
		}
	}
	for _, c := range []struct {
		where string
		want  string // the pins as JSON
		exact bool   // the pins select exactly what the predicate does
	}{
		{"class = 'od'", `{"class":"od"}`, true},
		{"'OD' = identifier.class", `{"class":"OD"}`, true},
		{"class = 'od' AND step >= 6", `{"class":"od","step":{"gte":6}}`, true},
		{"step > 6", `{"step":{"gt":6}}`, true},
		{"6 < step", `{"step":{"gt":6}}`, true},
		{"step < 6", `{"step":{"lt":6}}`, true},
		{"12 >= step", `{"step":{"lte":12}}`, true},
		{"step = 6", `{"step":"6"}`, true},
		{"step = '006'", `{"step":"006"}`, true},
		{"step IN (6, 24)", `{"step":{"in":[6,24]}}`, true},
		{"class IN ('od', 'RD')", `{"class":{"in":["od","RD"]}}`, true},
		{"step BETWEEN 5 AND 7", `{"step":{"between":[5,7]}}`, true},
		{"step BETWEEN 7 AND 5", `{}`, false},   // selects nothing; the constraint refuses it
		{"temp = 0", `{"temp":{"eq":0}}`, true}, // -0 = 0, which a subject literal would miss
		{"temp = 21.5", `{"temp":{"eq":21.5}}`, true},
		{"temp >= -5 AND temp < 1e21", `{"temp":{"gte":-5}}`, false},
		{"temp BETWEEN -5 AND 21.5", `{"temp":{"between":[-5,21.5]}}`, true},
		{"name = 'it''s'", `{"name":"it's"}`, true},
		{"date = '2025-07-06'", `{"date":"2025-07-06"}`, true},
		{"step >= 6 AND step = 12", `{"step":"12"}`, false},
		{"step = 12 AND step = 6", `{"step":"12"}`, false},
		{"(class = 'od' AND step >= 6) AND (temp = 0 OR name = 'x')", `{"class":"od","step":{"gte":6}}`, false},
		// Nothing pinned: OR, NOT, negated forms, !=, field against field,
		// NULL, handlers without constraint objects.
		{"class = 'od' OR step >= 6", `{}`, false},
		{"NOT class = 'rd'", `{}`, false},
		{"class != 'rd'", `{}`, false},
		{"step NOT IN (1, 2)", `{}`, false},
		{"step NOT BETWEEN 1 AND 2", `{}`, false},
		{"step IN (6, NULL)", `{}`, false},
		{"step = NULL", `{}`, false},
		{"step = step", `{}`, false},
		{"step < temp", `{}`, false},
		{"class > 'od'", `{}`, false},
		{"name IN ('a', 'b')", `{}`, false},
		{"date >= '2025-01-01'", `{}`, false},
		{"name IS NOT NULL", `{}`, false},
		{"TRUE", `{}`, false},
	} {
		t.Run(c.where, func(t *testing.T) {
			w, err := s.CompileWhere(c.where)
			if err != nil {
				t.Fatal(err)
			}
			pins := w.Pins()
			if got, _ := json.Marshal(pins); string(got) != c.want {
				t.Fatalf("pins %s, want %s", got, c.want)
			}
			f, err := s.Filter(pins, OpWatch)
			if err != nil {
				t.Fatalf("the pins are not a watch identifier: %v", err)
			}
			for _, n := range grid {
				sel, pass := w.Match(n), f.Match(n.Tokens, nil)
				if sel && !pass {
					t.Fatalf("%v: selected by the predicate, refused by the pins", n.Tokens)
				}
				if c.exact && sel != pass {
					t.Fatalf("%v: predicate %v, pins %v", n.Tokens, sel, pass)
				}
			}
		})
	}
	// A schema-less event type pins nothing (its identifier spells the
	// whole subject).
	r := mustRegistry(t, "application: {host: 127.0.0.1, port: 0}\nnotification_backend: {kind: in_memory}\nnotification_schema_strict: false\n")
	g, err := r.Lookup("free")
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.CompileWhere("a = '1'")
	if err != nil {
		t.Fatal(err)
	}
	if pins := w.Pins(); len(pins) != 0 {
		t.Fatalf("generic pins %v", pins)
	}
}
