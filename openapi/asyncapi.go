package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// The AsyncAPI 3.0 document of the WebSocket session protocol herald.v1
// (asyncapi.json, embedded), and the check of a frame against it.

//go:embed asyncapi.json
var asyncSpec []byte

// AsyncAPIPath is where herald serves the AsyncAPI document.
const AsyncAPIPath = "/api-docs/asyncapi.json"

// AsyncAPISpec returns the raw AsyncAPI document (a copy: callers may
// modify it).
func AsyncAPISpec() []byte { return bytes.Clone(asyncSpec) }

// AsyncAPIDocument serves GET /api-docs/asyncapi.json: the AsyncAPI
// document of the session protocol as application/json.
func AsyncAPIDocument(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(asyncSpec)
}

// The directions of a session frame, named as the document's operations
// (written from the client's side).
const (
	// Send is a frame from the client to the server: a request.
	Send = "send"
	// Receive is a frame from the server to the client.
	Receive = "receive"
)

// sessionMessage is one message of an operation of the AsyncAPI document.
type sessionMessage struct {
	name    string
	payload any
	// keys are the values of the discriminating member (op or type)
	// its payload schema allows.
	keys []any
}

// sessionDoc is the decoded AsyncAPI document and the messages of its
// two operations.
type sessionDoc struct {
	doc map[string]any
	ops map[string][]sessionMessage
}

// discriminator is the member that tells a frame's message, by direction.
var discriminator = map[string]string{Send: "op", Receive: "type"}

var loadSessionDoc = sync.OnceValues(func() (*sessionDoc, error) { return parseSessionDoc(asyncSpec) })

// parseSessionDoc decodes an AsyncAPI document and lists the messages of
// its send and receive operations.
func parseSessionDoc(raw []byte) (*sessionDoc, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("asyncapi.json: %w", err)
	}
	sd := &sessionDoc{doc: doc, ops: map[string][]sessionMessage{}}
	ops, _ := doc["operations"].(map[string]any)
	for _, dir := range []string{Send, Receive} {
		op, ok := ops[dir].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("asyncapi.json: no operation %q", dir)
		}
		refs, _ := op["messages"].([]any)
		for i, r := range refs {
			m, err := resolve(doc, r)
			if err != nil {
				return nil, fmt.Errorf("asyncapi.json: operation %s message %d: %w", dir, i, err)
			}
			name, _ := m["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("asyncapi.json: operation %s message %d has no name", dir, i)
			}
			keys := discriminants(doc, m["payload"], discriminator[dir], 0)
			if len(keys) == 0 {
				return nil, fmt.Errorf("asyncapi.json: message %s: its payload fixes no %q", name, discriminator[dir])
			}
			sd.ops[dir] = append(sd.ops[dir], sessionMessage{name: name, payload: m["payload"], keys: keys})
		}
	}
	return sd, nil
}

// resolve follows $ref until it reaches a non-reference object.
func resolve(doc map[string]any, v any) (map[string]any, error) {
	for range 10 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected an object, got %T", v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		next, err := pointer(doc, ref)
		if err != nil {
			return nil, err
		}
		v = next
	}
	return nil, errors.New("reference chain too long")
}

// discriminants returns the values a schema allows for the member key of
// an object: its const or enum, or those of the alternatives of oneOf,
// anyOf and allOf.
func discriminants(doc map[string]any, schema any, key string, depth int) []any {
	s, err := resolve(doc, schema)
	if err != nil || depth > 10 {
		return nil
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if p, err := resolve(doc, props[key]); err == nil {
			if c, ok := p["const"]; ok {
				return []any{c}
			}
			if e, ok := p["enum"].([]any); ok {
				return e
			}
		}
	}
	var out []any
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := s[k].([]any)
		for _, alt := range alts {
			for _, c := range discriminants(doc, alt, key, depth+1) {
				if !slices.ContainsFunc(out, func(x any) bool { return reflect.DeepEqual(x, c) }) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// SessionMessage returns the name of the AsyncAPI message that a frame of
// the session protocol is, or why it is none. direction is Send for a
// frame the client sends (a request, found by its "op") or Receive for
// one the server sends (found by its "type"; a reply by its "ok" as
// well). The frame must be one JSON object that validates against that
// message's payload schema, and against no other message of the
// direction.
func SessionMessage(direction string, frame []byte) (string, error) {
	sd, err := loadSessionDoc()
	if err != nil {
		return "", err
	}
	return sd.message(direction, frame)
}

// CheckSessionFrame checks one frame of the session protocol against the
// AsyncAPI document: nil when it is exactly one of the messages of
// direction (Send or Receive), else what does not match. See
// SessionMessage.
func CheckSessionFrame(direction string, frame []byte) error {
	_, err := SessionMessage(direction, frame)
	return err
}

func (sd *sessionDoc) message(direction string, frame []byte) (string, error) {
	key, ok := discriminator[direction]
	if !ok {
		return "", fmt.Errorf("direction %q: want %q or %q", direction, Send, Receive)
	}
	var value any
	dec := json.NewDecoder(bytes.NewReader(frame))
	if err := dec.Decode(&value); err != nil {
		return "", fmt.Errorf("%s frame is not JSON: %v: %.200s", direction, err, frame)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("%s frame has data after its JSON object: %.200s", direction, frame)
	}
	obj, ok := value.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%s frame is a JSON %s, not an object: %.200s", direction, jsonType(value), frame)
	}
	disc, ok := obj[key]
	if !ok {
		return "", fmt.Errorf("%s frame has no %q: %.200s", direction, key, frame)
	}
	v := &validator{doc: sd.doc}
	var matched, tried []string
	var errs []string
	for _, m := range sd.ops[direction] {
		if !slices.ContainsFunc(m.keys, func(k any) bool { return reflect.DeepEqual(k, disc) }) {
			continue
		}
		tried = append(tried, m.name)
		if e := v.validate(m.payload, value, m.name); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		matched = append(matched, m.name)
	}
	switch {
	case len(tried) == 0:
		return "", fmt.Errorf("%s frame: no message of the document has %s %v: %.200s", direction, key, disc, frame)
	case len(matched) == 1:
		return matched[0], nil
	case len(matched) > 1:
		return "", fmt.Errorf("%s frame matches %d messages (%s), want exactly one: %.200s", direction, len(matched), strings.Join(matched, ", "), frame)
	}
	return "", fmt.Errorf("%s frame matches no %s message: %s; frame %.500s", direction, strings.Join(tried, " or "), strings.Join(errs, "; "), frame)
}
