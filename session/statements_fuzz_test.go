package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/query"
)

// statementFuzzConfig has an event type with a required field, as the
// shipped config's mars.
const statementFuzzConfig = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, step, temp]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, range: [0, 360], required: false}
      temp: {type: FloatHandler, required: false}
`

// FuzzParseStatement feeds arbitrary text to the statement parser and,
// for a CREATE SUBSCRIPTION that parses, to the identifier it derives
// from WHERE. Neither panics; every error is a *query.StatementError whose
// line and column lie within the text; a statement that parses has a
// kind, and its WHERE and end offsets lie within the text; a derived
// identifier is one the watch endpoint accepts.
func FuzzParseStatement(f *testing.F) {
	for _, seed := range []string{
		"CREATE SUBSCRIPTION s1 TO mars DROPPING BATCH SAMPLE RATE 0.1 WHERE class = 'od' AND step >= 6;",
		"create subscription s TO mars where 12 = step and (identifier.class = 'RD')",
		"CREATE SUBSCRIPTION s TO mars WHERE class = 'od' OR step >= 6",
		"CREATE SUBSCRIPTION s TO mars WHERE class IN ('od', 'rd') AND step BETWEEN 6 AND 12 AND temp = -0",
		"CREATE SUBSCRIPTION s TO mars\nWHERE\n  step >= 6;",
		"CREATE SUBSCRIPTION s TO mars BLOCKING;",
		"CREATE SUBSCRIPTION \"a b\" TO mars WHERE",
		"DELETE SUBSCRIPTION s1",
		"DESCRIBE EVENT TYPE mars WHERE step IN (1, 2)",
		"SELECT 1",
		"",
		";",
		"CREATE SUBSCRIPTION s TO mars BATCH SAMPLE RATE 2",
	} {
		f.Add(seed)
	}
	cfg, err := configs.Parse([]byte(statementFuzzConfig), nil)
	if err != nil {
		f.Fatal(err)
	}
	reg, err := notification.NewRegistry(cfg)
	if err != nil {
		f.Fatal(err)
	}
	sc, err := reg.Lookup("mars")
	if err != nil {
		f.Fatal(err)
	}
	inText := func(t *testing.T, src string, err error) {
		var se *query.StatementError
		if !errors.As(err, &se) {
			t.Fatalf("%q: error %T %v, want a *query.StatementError", src, err, err)
		}
		if se.Line < 1 || se.Column < 1 || se.Line > strings.Count(src, "\n")+1 || se.Msg == "" {
			t.Fatalf("%q: error at line %d column %d: %q", src, se.Line, se.Column, se.Msg)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		st, err := query.ParseStatement(src)
		if err != nil {
			inText(t, src, err)
			return
		}
		if st.Kind == 0 || st.WherePos > len(src) || st.EndPos < 0 || st.EndPos > len(src) {
			t.Fatalf("%q: parsed %+v", src, st)
		}
		if st.Kind != query.CreateSubscription {
			return
		}
		ident, unpinned, err := statementIdentifier(src, st, sc)
		if err != nil {
			inText(t, src, err)
			return
		}
		if unpinned != nil {
			inText(t, src, unpinned)
			if _, ok := ident["class"]; ok {
				t.Fatalf("%q: class pinned %s, yet refused as unpinned", src, ident["class"])
			}
			return
		}
		if _, err := sc.Filter(ident, notification.OpWatch); err != nil {
			t.Fatalf("%q: the derived identifier %v is refused: %v", src, ident, err)
		}
	})
}
