package formats

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/herald-gateway/herald/codec/values"
)

// xmlFormat is JAQ-native XML in jaq's lossless mapping: an element is
// {"t": name, "a": {attributes}, "c": [children]} with a present only when
// there are attributes and c absent for a self-closing element; text is a
// string child, a comment {"comment": text}, a processing instruction
// {"pi": {"target": …, "content": …}}. A payload holds its root element
// only (declaration, DOCTYPE, comments and PIs around it are skipped, a
// second root is an error; a payload without an element holds no value).
//
// herald's decisions (docs/codecs.md): entity and character references
// are decoded on read and text and attribute values are escaped on write,
// so a STRING field cannot inject markup (jaq keeps both verbatim); CDATA
// reads as text, merged with adjacent text; only UTF-8 is accepted.
type xmlFormat struct{}

func xmlErr(err error, d *xml.Decoder) *values.Error {
	off := int(d.InputOffset())
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		msg := "malformed XML at line " + itoa(se.Line)
		if strings.Contains(se.Msg, "UTF-8") {
			return &values.Error{Code: values.CodeInvalidUTF8, Msg: "XML text is not valid UTF-8 at line " + itoa(se.Line), Offset: off}
		}
		if strings.Contains(se.Msg, "entity") {
			msg = "unknown or malformed entity reference at line " + itoa(se.Line) + " (only the predefined XML entities and character references are decoded)"
		}
		return &values.Error{Code: values.CodeSyntax, Msg: msg, Offset: off}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &values.Error{Code: values.CodeSyntax, Msg: "malformed XML: unexpected end of payload", Offset: off}
	}
	if strings.Contains(err.Error(), "charset") || strings.Contains(err.Error(), "encoding") {
		return &values.Error{Code: values.CodeSyntax, Msg: "only UTF-8 XML is accepted", Offset: off}
	}
	return &values.Error{Code: values.CodeSyntax, Msg: "malformed XML", Offset: off}
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

type xmlElem struct {
	name  string
	m     map[string]any
	kids  []any
	text  []byte // pending text run
	open  int64  // input offset after the start tag
	empty bool   // no child token seen yet
}

func (e *xmlElem) flush() {
	if e.text != nil {
		e.kids = append(e.kids, string(e.text))
		e.text = nil
	}
}

func (xmlFormat) Read(payload []byte, yield func(any) error) error {
	if !utf8.Valid(payload) {
		return &values.Error{Code: values.CodeInvalidUTF8, Msg: "XML text is not valid UTF-8", Offset: -1}
	}
	d := xml.NewDecoder(bytes.NewReader(payload))
	d.Strict = true
	var stack []*xmlElem
	var root map[string]any
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			if len(stack) > 0 {
				return &values.Error{Code: values.CodeSyntax, Msg: "malformed XML: element " + "is not closed", Offset: int(d.InputOffset())}
			}
			break
		}
		if err != nil {
			return xmlErr(err, d)
		}
		var top *xmlElem
		if len(stack) > 0 {
			top = stack[len(stack)-1]
			if _, end := tok.(xml.EndElement); !end {
				top.empty = false
			}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if top == nil && root != nil {
				return &values.Error{Code: values.CodeSyntax, Msg: "a second root element: an XML payload holds one element", Offset: int(d.InputOffset())}
			}
			if len(stack) >= MaxDepth {
				return &values.Error{Code: values.CodeTooDeep, Msg: "nesting too deep", Offset: int(d.InputOffset())}
			}
			e := &xmlElem{name: qname(t.Name), m: map[string]any{"t": qname(t.Name)}, open: d.InputOffset(), empty: true}
			if len(t.Attr) > 0 {
				a := make(map[string]any, len(t.Attr))
				for _, at := range t.Attr {
					n := qname(at.Name)
					if _, dup := a[n]; dup {
						return &values.Error{Code: values.CodeDuplicateField, Msg: "an element holds the same attribute twice", Offset: int(d.InputOffset())}
					}
					a[n] = at.Value
				}
				e.m["a"] = a
			}
			if top != nil {
				top.flush()
			}
			stack = append(stack, e)
		case xml.EndElement:
			if top == nil || qname(t.Name) != top.name {
				return &values.Error{Code: values.CodeSyntax, Msg: "malformed XML: an end tag does not match its start tag", Offset: int(d.InputOffset())}
			}
			top.flush()
			// a self-closing element's end is synthesized without input
			if !(top.empty && d.InputOffset() == top.open) {
				kids := top.kids
				if kids == nil {
					kids = []any{}
				}
				top.m["c"] = kids
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				root = top.m
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, top.m)
			}
		case xml.CharData:
			if top == nil {
				if !blank(t) {
					return &values.Error{Code: values.CodeSyntax, Msg: "text outside the root element", Offset: int(d.InputOffset())}
				}
				continue
			}
			if len(t) > 0 {
				top.text = append(top.text, t...)
			}
		case xml.Comment:
			if top != nil {
				top.flush()
				top.kids = append(top.kids, map[string]any{"comment": string(t)})
			}
		case xml.ProcInst:
			if top != nil {
				top.flush()
				pi := map[string]any{"target": t.Target}
				if len(t.Inst) > 0 {
					pi["content"] = string(t.Inst)
				}
				top.kids = append(top.kids, map[string]any{"pi": pi})
			}
		case xml.Directive:
			if top != nil {
				return &values.Error{Code: values.CodeSyntax, Msg: "a markup declaration inside an element", Offset: int(d.InputOffset())}
			}
		}
	}
	if root == nil {
		return nil
	}
	return yield(root)
}

func (xmlFormat) Append(dst []byte, v any, o KeyOrder) ([]byte, error) {
	return xmlElement(dst, v, o, "", 0)
}

func (xmlFormat) AppendContainer(dst []byte, members []any, o KeyOrder) ([]byte, error) {
	dst = append(dst, "<batch>"...)
	for i, m := range members {
		var err error
		if dst, err = xmlElement(dst, m, o, values.IndexPath("batch", i), 1); err != nil {
			return dst, err
		}
	}
	return append(dst, "</batch>"...), nil
}

func validXMLName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == ':' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r >= 0xC0 && r != 0xD7 && r != 0xF7 && r < 0x2000:
		case i > 0 && (r == '-' || r == '.' || (r >= '0' && r <= '9') || r == 0xB7):
		default:
			return false
		}
	}
	return true
}

// xmlElement writes an element object. Its keys are t (the name), a (an
// object of attributes, scalars written as their text) and c (an array of
// children: strings, numbers and booleans as text, elements, comments and
// processing instructions); c absent writes a self-closing element.
func xmlElement(dst []byte, v any, o KeyOrder, path string, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return dst, unencodable(path, "an XML value is an element: an object {t, a, c}")
	}
	name, ok := m["t"].(string)
	if !ok || !validXMLName(name) {
		return dst, unencodable(path, "an element object needs t, a valid XML name")
	}
	for k := range m {
		if k != "t" && k != "a" && k != "c" {
			return dst, unencodable(keyPath(path, k), "an element object has only the keys t, a and c")
		}
	}
	dst = append(dst, '<')
	dst = append(dst, name...)
	if av, has := m["a"]; has && av != nil {
		attrs, ok := av.(map[string]any)
		if !ok {
			return dst, unencodable(keyPath(path, "a"), "attributes are an object of names and values")
		}
		for _, k := range o.Keys(attrs) {
			ap := keyPath(values.JoinPath(path, "a"), k)
			if !validXMLName(k) {
				return dst, unencodable(ap, "not a valid XML attribute name")
			}
			text, err := xmlScalar(attrs[k], ap)
			if err != nil {
				return dst, err
			}
			dst = append(dst, ' ')
			dst = append(dst, k...)
			dst = append(dst, '=', '"')
			if dst, err = xmlEscape(dst, text, true, ap); err != nil {
				return dst, err
			}
			dst = append(dst, '"')
		}
	}
	cv, has := m["c"]
	if !has || cv == nil {
		return append(dst, "/>"...), nil
	}
	kids, ok := cv.([]any)
	if !ok {
		return dst, unencodable(values.JoinPath(path, "c"), "children are an array")
	}
	dst = append(dst, '>')
	for i, k := range kids {
		kp := values.IndexPath(values.JoinPath(path, "c"), i)
		var err error
		switch x := k.(type) {
		case map[string]any:
			switch {
			case x["comment"] != nil && len(x) == 1:
				s, ok := x["comment"].(string)
				if !ok || strings.Contains(s, "--") || strings.HasSuffix(s, "-") || !utf8.ValidString(s) {
					return dst, unencodable(kp, "a comment is text without -- and not ending in -")
				}
				dst = append(dst, "<!--"...)
				dst = append(dst, s...)
				dst = append(dst, "-->"...)
			case x["pi"] != nil && len(x) == 1:
				if dst, err = xmlPI(dst, x["pi"], kp); err != nil {
					return dst, err
				}
			default:
				if dst, err = xmlElement(dst, x, o, kp, depth+1); err != nil {
					return dst, err
				}
			}
		default:
			text, err := xmlScalar(k, kp)
			if err != nil {
				return dst, err
			}
			if dst, err = xmlEscape(dst, text, false, kp); err != nil {
				return dst, err
			}
		}
	}
	dst = append(dst, "</"...)
	dst = append(dst, name...)
	return append(dst, '>'), nil
}

func xmlPI(dst []byte, v any, path string) ([]byte, error) {
	pi, ok := v.(map[string]any)
	target, _ := pi["target"].(string)
	if !ok || !validXMLName(target) || strings.EqualFold(target, "xml") {
		return dst, unencodable(path, "a processing instruction needs a target name other than xml")
	}
	dst = append(dst, "<?"...)
	dst = append(dst, target...)
	if c, has := pi["content"]; has && c != nil {
		s, ok := c.(string)
		if !ok || strings.Contains(s, "?>") || !utf8.ValidString(s) {
			return dst, unencodable(path, "processing instruction content is text without ?>")
		}
		dst = append(dst, ' ')
		dst = append(dst, s...)
	}
	return append(dst, "?>"...), nil
}

// xmlScalar returns the text of a string, number or boolean.
func xmlScalar(v any, path string) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int, float64, json.Number, *big.Int:
		b, err, _ := appendNumber(nil, x, path)
		return string(b), err
	}
	return "", unencodable(path, "XML text is a string, a number or a boolean, found "+kindName(v))
}

func kindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "another value"
}

// xmlEscape writes text with & < > (and in attributes " and the
// whitespace characters attribute normalisation would change) as
// references; characters XML cannot carry are refused.
func xmlEscape(dst []byte, s string, attr bool, path string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
	}
	for _, r := range s {
		switch {
		case r == '&':
			dst = append(dst, "&amp;"...)
		case r == '<':
			dst = append(dst, "&lt;"...)
		case r == '>':
			dst = append(dst, "&gt;"...)
		case r == '"' && attr:
			dst = append(dst, "&quot;"...)
		case r == '\r':
			dst = append(dst, "&#xD;"...)
		case (r == '\n' || r == '\t') && attr:
			if r == '\n' {
				dst = append(dst, "&#xA;"...)
			} else {
				dst = append(dst, "&#x9;"...)
			}
		case r == '\n' || r == '\t':
			dst = append(dst, byte(r))
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF:
			return dst, unencodable(path, "text holds a character XML cannot carry")
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst, nil
}
