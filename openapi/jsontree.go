package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// node is a decoded JSON value that keeps the order of object members, so
// that the docs page lists fields and shows examples as the document
// writes them.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 't' true, 'f' false, 'z' null
	keys  []string
	vals  map[string]*node
	items []*node
	text  string // a string's value, a number's digits
}

// maxDepth bounds the nesting of a document the page renders.
const maxDepth = 200

// parseTree decodes one JSON document.
func parseTree(doc []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	n, err := readNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return n, nil
}

func readNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case json.Delim:
		if v == '{' {
			n := &node{kind: 'o', vals: map[string]*node{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				child, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := n.vals[k]; !dup {
					n.keys = append(n.keys, k)
				}
				n.vals[k] = child
			}
			_, err := dec.Token()
			return n, err
		}
		n := &node{kind: 'a'}
		for dec.More() {
			child, err := readNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, child)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &node{kind: 's', text: v}, nil
	case json.Number:
		return &node{kind: 'n', text: v.String()}, nil
	case bool:
		if v {
			return &node{kind: 't'}, nil
		}
		return &node{kind: 'f'}, nil
	}
	return &node{kind: 'z'}, nil
}

// get returns the member k of an object, or nil.
func (n *node) get(k string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	return n.vals[k]
}

// has reports whether an object has member k.
func (n *node) has(k string) bool { return n.get(k) != nil }

// str returns the string member k, or "".
func (n *node) str(k string) string {
	if v := n.get(k); v != nil && v.kind == 's' {
		return v.text
	}
	return ""
}

// isTrue reports whether n is the JSON value true.
func (n *node) isTrue() bool { return n != nil && n.kind == 't' }

// isFalse reports whether n is the JSON value false.
func (n *node) isFalse() bool { return n != nil && n.kind == 'f' }

// list returns the items of the array member k, or nil.
func (n *node) list(k string) []*node {
	if v := n.get(k); v != nil && v.kind == 'a' {
		return v.items
	}
	return nil
}

// json writes n as JSON text, indented by two spaces per level from
// prefix (members in document order, no HTML escaping).
func (n *node) json(b *strings.Builder, prefix string) {
	switch n.kind {
	case 'o', 'a':
		open, closing, count := "{", "}", len(n.keys)
		if n.kind == 'a' {
			open, closing, count = "[", "]", len(n.items)
		}
		if count == 0 {
			b.WriteString(open + closing)
			return
		}
		b.WriteString(open)
		inner := prefix + "  "
		for i := range count {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + inner)
			if n.kind == 'o' {
				b.WriteString(jsonString(n.keys[i]) + ": ")
				n.vals[n.keys[i]].json(b, inner)
			} else {
				n.items[i].json(b, inner)
			}
		}
		b.WriteString("\n" + prefix + closing)
	case 's':
		b.WriteString(jsonString(n.text))
	case 'n':
		b.WriteString(n.text)
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	default:
		b.WriteString("null")
	}
}

// pretty returns n as indented JSON text.
func (n *node) pretty() string {
	var b strings.Builder
	n.json(&b, "")
	return b.String()
}

// jsonString quotes s as a JSON string without escaping <, > and &.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// resolve follows a local JSON pointer reference ("#/components/…")
// from n, the document's root; nil when it names nothing.
func (n *node) resolve(ref string) *node {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	cur := n
	for _, p := range strings.Split(ref[2:], "/") {
		cur = cur.get(strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~"))
		if cur == nil {
			return nil
		}
	}
	return cur
}
