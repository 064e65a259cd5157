package query

import (
	"errors"
	"strings"
	"testing"
)

func TestParseStatement(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Statement
	}{
		{"CREATE SUBSCRIPTION s1 TO mars DROPPING BATCH SAMPLE RATE 0.25 WHERE step >= 6;",
			Statement{Kind: CreateSubscription, Name: "s1", EventType: "mars", Dropping: true, SampleRate: 0.25, HasRate: true, Where: " step >= 6", WherePos: 68}},
		{"create subscription \"a b\" to mars blocking",
			Statement{Kind: CreateSubscription, Name: "a b", EventType: "mars", WherePos: -1, EndPos: 42}},
		{"DELETE SUBSCRIPTION s1;", Statement{Kind: DeleteSubscription, Name: "s1", WherePos: -1}},
		{"DESCRIBE EVENT TYPE mars WHERE class = 'od'",
			Statement{Kind: DescribeEventType, EventType: "mars", Where: " class = 'od'", WherePos: 30}},
	} {
		st, err := ParseStatement(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if *st != tc.want {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.src, *st, tc.want)
		}
	}
}

func TestParseStatementErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SELECT 1", "line 1 column 1: expected CREATE SUBSCRIPTION, DELETE SUBSCRIPTION or DESCRIBE EVENT TYPE, found 'SELECT'"},
		{"CREATE SUBSCRIPTION s TO mars BATCH SAMPLE RATE 2", "line 1 column 49: BATCH SAMPLE RATE must be a number between 0 and 1, found '2'"},
		{"CREATE SUBSCRIPTION s\nFROM mars", "line 2 column 1: expected TO, found 'FROM'"},
		{"DELETE SUBSCRIPTION s1; DELETE SUBSCRIPTION s2", `line 1 column 25: unexpected "DELETE SUBSCRIPTION " after the end of the statement (one statement per request)`},
		{"CREATE SUBSCRIPTION s TO mars WHERE ;", "line 1 column 31: WHERE needs a predicate"},
	} {
		_, err := ParseStatement(tc.src)
		var se *StatementError
		if !errors.As(err, &se) || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestStatementKindString(t *testing.T) {
	for k, want := range map[StatementKind]string{
		CreateSubscription: "CREATE SUBSCRIPTION",
		DeleteSubscription: "DELETE SUBSCRIPTION",
		DescribeEventType:  "DESCRIBE EVENT TYPE",
		0:                  "StatementKind(0)",
	} {
		if got := k.String(); got != want {
			t.Errorf("%d: %q, want %q", k, got, want)
		}
	}
}

// FuzzParseStatementText feeds arbitrary text to the statement parser:
// it never panics, every error is a *StatementError whose position lies
// within the text, and a statement that parses has a kind and offsets
// within the text.
func FuzzParseStatementText(f *testing.F) {
	for _, seed := range []string{
		"CREATE SUBSCRIPTION s1 TO mars DROPPING BATCH SAMPLE RATE 0.1 WHERE class = 'od';",
		"DELETE SUBSCRIPTION \"x",
		"DESCRIBE EVENT TYPE mars WHERE",
		"create\nsubscription s to m batch sample rate -1",
		"",
		";",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		st, err := ParseStatement(src)
		if err != nil {
			var se *StatementError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 || se.Line > strings.Count(src, "\n")+1 || se.Msg == "" {
				t.Fatalf("%q: error %#v", src, err)
			}
			return
		}
		if st.Kind < CreateSubscription || st.Kind > DescribeEventType || st.WherePos > len(src) || st.EndPos < 0 || st.EndPos > len(src) {
			t.Fatalf("%q: parsed %+v", src, st)
		}
	})
}
