package openapitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

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

// SessionDoc is a decoded AsyncAPI document and the messages of its
// two operations. It is safe for concurrent use.
type SessionDoc struct {
	doc map[string]any
	ops map[string][]sessionMessage
}

// Discriminator returns the member that tells a frame's message in a
// direction: "op" for Send, "type" for Receive, "" for neither.
func Discriminator(direction string) string {
	switch direction {
	case Send:
		return "op"
	case Receive:
		return "type"
	}
	return ""
}

// ParseSessionDoc decodes an AsyncAPI document and lists the messages of
// its send and receive operations.
func ParseSessionDoc(raw []byte) (*SessionDoc, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("asyncapi.json: %w", err)
	}
	sd := &SessionDoc{doc: doc, ops: map[string][]sessionMessage{}}
	ops, _ := doc["operations"].(map[string]any)
	for _, dir := range []string{Send, Receive} {
		op, ok := ops[dir].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("asyncapi.json: no operation %q", dir)
		}
		refs, _ := op["messages"].([]any)
		for i, r := range refs {
			m, err := Resolve(doc, r)
			if err != nil {
				return nil, fmt.Errorf("asyncapi.json: operation %s message %d: %w", dir, i, err)
			}
			name, _ := m["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("asyncapi.json: operation %s message %d has no name", dir, i)
			}
			keys := Discriminants(doc, m["payload"], Discriminator(dir), 0)
			if len(keys) == 0 {
				return nil, fmt.Errorf("asyncapi.json: message %s: its payload fixes no %q", name, Discriminator(dir))
			}
			sd.ops[dir] = append(sd.ops[dir], sessionMessage{name: name, payload: m["payload"], keys: keys})
		}
	}
	return sd, nil
}

// Resolve follows $ref until it reaches a non-reference object.
func Resolve(doc map[string]any, v any) (map[string]any, error) {
	for range 10 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected an object, got %T", v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		next, err := Pointer(doc, ref)
		if err != nil {
			return nil, err
		}
		v = next
	}
	return nil, errors.New("reference chain too long")
}

// Discriminants returns the values a schema allows for the member key of
// an object: its const or enum, or those of the alternatives of oneOf,
// anyOf and allOf.
func Discriminants(doc map[string]any, schema any, key string, depth int) []any {
	s, err := Resolve(doc, schema)
	if err != nil || depth > 10 {
		return nil
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if p, err := Resolve(doc, props[key]); err == nil {
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
			for _, c := range Discriminants(doc, alt, key, depth+1) {
				if !slices.ContainsFunc(out, func(x any) bool { return reflect.DeepEqual(x, c) }) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// Message returns the name of the AsyncAPI message that a frame of
// the session protocol is, or why it is none. direction is Send for a
// frame the client sends (a request, found by its "op") or Receive for
// one the server sends (found by its "type"; a reply by its "ok" as
// well). The frame must be one JSON object that validates against that
// message's payload schema, and against no other message of the
// direction.
func (sd *SessionDoc) Message(direction string, frame []byte) (string, error) {
	return sd.message(direction, frame)
}

// Check checks one frame of the session protocol against the
// AsyncAPI document: nil when it is exactly one of the messages of
// direction (Send or Receive), else what does not match. See
// Message.
func (sd *SessionDoc) Check(direction string, frame []byte) error {
	_, err := sd.message(direction, frame)
	return err
}

func (sd *SessionDoc) message(direction string, frame []byte) (string, error) {
	key := Discriminator(direction)
	if key == "" {
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
		return "", fmt.Errorf("%s frame is a JSON %s, not an object: %.200s", direction, JSONType(value), frame)
	}
	disc, ok := obj[key]
	if !ok {
		return "", fmt.Errorf("%s frame has no %q: %.200s", direction, key, frame)
	}
	v := NewValidator(sd.doc)
	var matched, tried []string
	var errs []string
	for _, m := range sd.ops[direction] {
		if !slices.ContainsFunc(m.keys, func(k any) bool { return reflect.DeepEqual(k, disc) }) {
			continue
		}
		tried = append(tried, m.name)
		if e := v.Validate(m.payload, value, m.name); len(e) > 0 {
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
