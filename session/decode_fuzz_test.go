package session

import (
	"slices"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDecodeRequest feeds arbitrary frames to the session's frame
// decoder. It must never panic; a frame that is one valid JSON object is
// never a protocol violation (at worst an INVALID_REQUEST); a decoded
// request has a usable id, a known op and every other member exactly as
// sent.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"op":"ping"}`,
		`{"id":"a","op":"subscribe","name":"s","event_type":"mars","identifier":{"class":"od"},"where":"step >= 6"}`,
		`{"id":2,"op":"publish","producer":"p","batch":[{"identifier":{"k":"x"},"payload":{"a":[1,2,{"b":null}]}}]}`,
		`{"id":3,"op":"ping","id":4}`,
		`{"op":"ping"}`,
		`{"id":1.5,"op":"ping"}`,
		`{"id":1e3,"op":"ping"}`,
		`{"id":99999999999999999999,"op":"ping"}`,
		`{"id":-7,"op":"nope"}`,
		`{"id":true,"op":"ping"}`,
		`{"id":1,"op":5}`,
		`{"id":1,"op":"ping"} {"id":2}`,
		`{"id":1,"op":"ping"`,
		`[{"id":1,"op":"ping"}]`,
		`"ping"`,
		``,
		` {"id" : 1 , "op" : "ping" } `,
		"{\"id\":1,\"op\":\"p\xffing\"}",
		`{"id":"\u0000","op":"ping","x":"\ud800"}`,
		`{"a":{"a":{"a":{"a":[[[[[]]]]]}}},"id":0,"op":"schema"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, derr := decodeRequest(data)
		isObject := jsontext.Value(data).IsValid() && jsontext.Value(data).Kind() == '{'
		if (req == nil) == (derr == nil) {
			t.Fatalf("%q: request %v and error %v", data, req, derr)
		}
		if derr != nil {
			if derr.msg == "" {
				t.Fatalf("%q: an error without a message", data)
			}
			if derr.fatal && isObject {
				t.Fatalf("%q is one JSON object but was treated as a protocol violation: %s", data, derr.msg)
			}
			if derr.id != nil && !usableID(derr.id) {
				t.Fatalf("%q: error echoes unusable id %s", data, derr.id)
			}
			return
		}
		if !isObject {
			t.Fatalf("%q is not one JSON object but was decoded", data)
		}
		if !usableID(req.id) || !slices.Contains(opNames, req.op) {
			t.Fatalf("%q: id %s op %q", data, req.id, req.op)
		}
		if _, ok := req.members["id"]; ok {
			t.Fatalf("%q: id left among the members", data)
		}
		if _, ok := req.members["op"]; ok {
			t.Fatalf("%q: op left among the members", data)
		}
		// Every other member is what the frame holds under its name.
		var whole map[string]jsontext.Value
		if err := jsonv2.Unmarshal(data, &whole); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		if len(whole) != len(req.members)+2 {
			t.Fatalf("%q: %d members decoded, the frame has %d", data, len(req.members)+2, len(whole))
		}
		for k, v := range req.members {
			if string(whole[k]) != string(v) {
				t.Fatalf("%q: member %q is %s, the frame has %s", data, k, v, whole[k])
			}
		}
	})
}
