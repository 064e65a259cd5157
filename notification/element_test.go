package notification

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestParseNotifyElement(t *testing.T) {
	for _, c := range []struct {
		in, ident, payload, err string
	}{
		{in: `{"identifier":{"a":1},"payload":{"x":[1,2]}}`, ident: `{"a":1}`, payload: `{"x":[1,2]}`},
		{in: ` { "payload" : "p" } `, ident: `{}`, payload: `"p"`},
		{in: `{"identifier":{},"payload":null}`, ident: `{}`},
		{in: `{"identifier":{"a":1},"nope":2,"event_type":"x"}`, err: "unknown key 'nope': an element has identifier and payload"},
		{in: `{"event_type":"x"}`, err: "unknown key 'event_type': an element has identifier and payload"},
		{in: `{"identifier":[1]}`, err: "Request deserialization failed: invalid type for `identifier`: expected an object, found an array"},
		{in: `{"identifier":{},"identifier":{}}`, err: "Request deserialization failed: duplicate field `identifier`"},
		{in: `{"identifier":{"a":1,"a":2}}`, err: "Request deserialization failed: duplicate field `a` in `identifier`: each identifier key may appear once"},
		{in: `{"identifier":{"a":1e400}}`, err: "JSON parsing failed: number out of range at line 1 column 25: \"1e400\" cannot be represented as a 64-bit float"},
		{in: `[1]`, err: "Request deserialization failed: expected a JSON object with identifier and payload, found an array"},
	} {
		req, err := ParseNotifyElement([]byte(c.in), "ev")
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Fatalf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		ident, _ := json.Marshal(req.Identifier)
		if req.EventType != "ev" || string(ident) != c.ident || string(req.Payload) != c.payload {
			t.Fatalf("%s: got %q %s %s, want ev %s %s", c.in, req.EventType, ident, req.Payload, c.ident, c.payload)
		}
	}
}

// FuzzParseNotifyElement checks the element parser against the notify
// parser on the body a batch element stands for: the same identifier and
// payload when both accept it, and the same kind of refusal otherwise.
func FuzzParseNotifyElement(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"identifier":{"a":1},"payload":{"x":[1,2]}}`, `{"payload":1}`, `{"x":1}`,
		`{"identifier":{"a":"\ud800"}}`, `{"identifier":{"a":1,"a":2}}`, `{"identifier":1e999}`,
		`{"identifier":{"a":{"gte":1}},"payload":"text"}`, `{"payload":null,"payload":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, elem []byte) {
		if !json.Valid(elem) {
			return // a batch element is one valid JSON value already
		}
		req, err := ParseNotifyElement(elem, "ev")
		var ke *ElementKeyError
		var pe *ParseError
		if err != nil && !errors.As(err, &ke) && !errors.As(err, &pe) {
			t.Fatalf("error of wrong type %T: %v", err, err)
		}
		trimmed := bytes.TrimSpace(elem)
		if trimmed[0] != '{' || !bytes.Contains(elem, []byte(`"identifier"`)) || ke != nil {
			return
		}
		body := append([]byte(`{"event_type":"ev",`), trimmed[1:]...)
		want, werr := ParseNotifyRequest(body)
		if (err == nil) != (werr == nil) {
			t.Fatalf("element error %v, notify body error %v", err, werr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(req.Identifier, want.Identifier) || !bytes.Equal(req.Payload, want.Payload) {
			t.Fatalf("element %s %s, notify body %s %s", req.Identifier, req.Payload, want.Identifier, want.Payload)
		}
	})
}
