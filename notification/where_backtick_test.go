package notification

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// keywordYAML names routed fields like WHERE's reserved words.
const keywordYAML = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  k:
    topic: {base: k, key_order: [and, "null", from, step]}
    identifier:
      and: {type: StringHandler, required: false}
      "null": {type: IntHandler, required: false}
      from: {type: StringHandler, required: false}
      step: {type: IntHandler, required: false}
`

// TestWhereBacktickNames checks the rule "A schema may name a field with
// any word, keywords included. An expression writes a field named like a
// reserved word between backticks where it stands bare, and as it is
// after a scope": backtick-quoted names (a backtick inside doubled) and
// double-quoted names are field names, never keywords, bare or after a
// scope; a reserved word written bare is refused with a hint in the
// backtick form.
func TestWhereBacktickNames(t *testing.T) {
	s, _ := mustRegistry(t, keywordYAML).Schema("k")
	ident := map[string]json.RawMessage{"and": json.RawMessage(`"x"`), "null": json.RawMessage(`3`), "from": json.RawMessage(`"f"`), "step": json.RawMessage(`12`)}
	n, err := s.Notify(ident, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		where    string
		want     bool
		compiled string
	}{
		{"`and` = 'x'", true, "(identifier.and = 'x')"},
		{`"and" = 'x'`, true, "(identifier.and = 'x')"},
		{"`null` = 3", true, "(identifier.null = 3)"},
		{"`null` IS NULL", false, "(identifier.null IS NULL)"},
		{"`NULL` = 3", false, ""}, // names are case-sensitive: unknown field
		{"`from` = 'f' AND `step` >= 6", true, "((identifier.from = 'f') AND (identifier.step >= 6))"},
		{"identifier.`and` = 'x'", true, "(identifier.and = 'x')"},
		{"identifier.and = 'x' AND identifier.null = 3", true, "((identifier.and = 'x') AND (identifier.null = 3))"},
		{"`and` IN ('x', 'y') AND NOT `null` BETWEEN 4 AND 5", true, "((identifier.and IN ('x', 'y')) AND (NOT (identifier.null BETWEEN 4 AND 5)))"},
	} {
		t.Run(c.where, func(t *testing.T) {
			w, err := s.CompileWhere(c.where)
			if c.compiled == "" {
				var we *WhereError
				if !errors.As(err, &we) || !strings.HasPrefix(err.Error(), "where: column 1: unknown field 'NULL' for event type 'k'") {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Match(n); got != c.want || w.String() != c.compiled {
				t.Fatalf("Match = %v, want %v; compiled %s, want %s", got, c.want, w, c.compiled)
			}
		})
	}
	for _, c := range []struct{ where, want string }{
		{"and = 'x'", "where: column 1: AND is a keyword; write a field of that name as identifier.and or `and`"},
		{"`and = 'x'", "where: column 1: unterminated quoted name: a ` has no closing ` (write `` for a backtick inside a name)"},
		{"`st``ep` = 1", "where: column 1: unknown field 'st`ep' for event type 'k'"},
		{"``= 1", "where: column 1: unknown field '' for event type 'k'"},
		{"step = `and`", "where: column 6: identifier.step (an integer) and identifier.and (text) cannot be compared"},
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
