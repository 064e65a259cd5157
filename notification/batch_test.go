package notification

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseNotifyBatch(t *testing.T) {
	a := `{"event_type":"ev","identifier":{"k":"a"}}`
	for _, c := range []struct {
		name, body string
		elems      []string
		kind       ParseKind
		detail     string
	}{
		{"one", `{"notifications":[` + a + `]}`, []string{a}, 0, ""},
		{"spaces kept inside, trimmed around", "\n{ \"notifications\" : [ " + a + " ,\n[1] , \"x\", {\"a\": [ ] } ] }\n", []string{a, "[1]", `"x"`, `{"a": [ ] }`}, 0, ""},
		{"four, the limit", `{"notifications":[1,2,3,4]}`, []string{"1", "2", "3", "4"}, 0, ""},
		{"empty body", " \n", nil, InvalidJSON, "EOF while parsing a value: the body is empty"},
		{"incomplete", `{"notifications":[` + a, nil, InvalidJSON, "EOF while parsing a value: the JSON text is incomplete"},
		{"bad element", `{"notifications":[{"a":}]}`, nil, InvalidJSON, "invalid character '}' at start of value at line 1 column 24"},
		{"bad UTF-8", "{\"notifications\":[\"\xff\"]}", nil, InvalidJSON, "invalid UTF-8 at line 1 column 20"},
		{"trailing", `{"notifications":[1]}x`, nil, InvalidJSON, "invalid character 'x' at start of value at line 1 column 22"},
		{"trailing value", `{"notifications":[1]} {}`, nil, InvalidJSON, "trailing characters after the JSON value at byte 21"},
		{"syntax before shape", `[1,]`, nil, InvalidJSON, "invalid character ',' at start of value at line 1 column 3"},
		{"syntax in an unknown key", `{"x":[1,],"notifications":[1]}`, nil, InvalidJSON, "invalid character ',' at start of value at line 1 column 8"},
		{"array", `[1]`, nil, InvalidShape, "expected a JSON object with notifications, found an array"},
		{"string", `"x"`, nil, InvalidShape, "expected a JSON object with notifications, found a string"},
		{"unknown keys sorted, before the shape", `{"notifications":1,"z":1,"b":2}`, nil, UnknownField, "'b', 'z' (allowed: notifications)"},
		{"missing", `{}`, nil, InvalidShape, "missing field `notifications`"},
		{"twice", `{"notifications":[1],"notifications":[2]}`, nil, InvalidShape, "duplicate field `notifications`"},
		{"number", `{"notifications":1}`, nil, InvalidShape, "invalid type for `notifications`: expected an array, found a number"},
		{"boolean", `{"notifications":true}`, nil, InvalidShape, "invalid type for `notifications`: expected an array, found a boolean"},
		{"empty", `{"notifications":[ ]}`, nil, InvalidShape, "`notifications` is empty: a batch carries at least one notification"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseNotifyBatch([]byte(c.body), 4)
			if c.detail != "" {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Kind != c.kind || pe.Detail != c.detail {
					t.Fatalf("error %#v, want kind %d detail %q", err, c.kind, c.detail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.elems) {
				t.Fatalf("elements %q, want %q", got, c.elems)
			}
		})
	}
	_, err := ParseNotifyBatch([]byte(`{"notifications":[1,2,3,4,5,6]}`), 4)
	var le *BatchLimitError
	if !errors.As(err, &le) || le.Count != 6 || le.Max != 4 ||
		err.Error() != "the batch has 6 notifications; at most 4 are allowed (application.max_batch_notifications)" {
		t.Fatalf("over the limit: %v", err)
	}
	// A syntax error after the limit is still a syntax error.
	if _, err := ParseNotifyBatch([]byte(`{"notifications":[1,2,3,4,5,]}`), 4); !errors.As(err, new(*ParseError)) {
		t.Fatalf("syntax after the limit: %v", err)
	}
}

// FuzzParseNotifyBatch checks ParseNotifyBatch against encoding/json: a
// body it accepts is a JSON object whose only key is notifications, a
// non-empty array of at most the limit, and the elements are exactly
// that array's elements; a body it refuses for its shape or its limit is
// valid JSON; an element aliases the body.
func FuzzParseNotifyBatch(f *testing.F) {
	for _, s := range []string{
		`{"notifications":[{"event_type":"ev","identifier":{"k":"a"}},1,"x"]}`,
		`{"notifications":[]}`, `{"notifications":[1,2,3,4,5]}`, `{"notifications":{}}`,
		`{"notifications":[1],"notifications":[2]}`, `{"a":1}`, `[]`, ``, `{"notifications":[1]} `,
		"{\"notifications\":[\"\xff\"]}", `{"notifications":["\ud800"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		const max = 4
		elems, err := ParseNotifyBatch(body, max)
		var top map[string]json.RawMessage
		valid := json.Valid(body) && !bytes.Contains(body, []byte(`\ud`)) && !bytes.Contains(body, []byte(`\uD`))
		var le *BatchLimitError
		var pe *ParseError
		switch {
		case err == nil:
			if !json.Valid(body) || json.Unmarshal(body, &top) != nil || len(top) != 1 {
				t.Fatalf("%q accepted: not an object with one key", body)
			}
			var arr []json.RawMessage
			if json.Unmarshal(top["notifications"], &arr) != nil || len(arr) == 0 || len(arr) > max || len(arr) != len(elems) {
				t.Fatalf("%q accepted with %d elements", body, len(elems))
			}
			for i, e := range elems {
				if !bytes.Equal(bytes.TrimSpace(arr[i]), e) {
					t.Fatalf("%q: element %d is %q, want %q", body, i, e, arr[i])
				}
				if len(e) > 0 && !bytes.Contains(body, e) {
					t.Fatalf("%q: element %d is not a span of the body", body, i)
				}
			}
		case errors.As(err, &le):
			if !json.Valid(body) || le.Count <= max || le.Max != max {
				t.Fatalf("%q: %v", body, err)
			}
		case errors.As(err, &pe):
			if pe.Kind != InvalidJSON && !json.Valid(body) {
				t.Fatalf("%q: invalid JSON refused as %v", body, err)
			}
			if pe.Kind == InvalidJSON && valid && !strings.Contains(pe.Detail, "UTF-8") {
				t.Fatalf("%q: valid JSON refused as %v", body, err)
			}
		default:
			t.Fatalf("%q: error %T %v", body, err, err)
		}
	})
}
