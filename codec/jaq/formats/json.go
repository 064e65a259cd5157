package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/values"
)

// jsonFormat is JAQ-native JSON: a payload holds whitespace-separated
// strict JSON values (one document, NDJSON or concatenated values); a
// value is written in jaq's spaced style ({"a": 1, "b": [1, 2]}) and the
// batch container is an array in the same style.
type jsonFormat struct{}

func (jsonFormat) Read(payload []byte, yield func(any) error) error {
	return readJSON(payload, yield)
}

// IsJSON reports whether f is the JAQ-native JSON format.
func IsJSON(f Format) bool {
	_, ok := f.(jsonFormat)
	return ok
}

// NewJSONDecoder returns the token decoder the JSON reader reads a
// payload with, for decoders that walk its values instead of building
// them (with JSONValue, JSONError and JSONTooDeep they read exactly as
// Read does).
func NewJSONDecoder(payload []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(payload))
}

// ResetJSONDecoder readies a decoder from NewJSONDecoder to read another
// payload, reusing its state; buf is the decoder's source, kept by the
// caller with the decoder (so that a reset allocates nothing).
func ResetJSONDecoder(dec *jsontext.Decoder, buf *bytes.Buffer, payload []byte) {
	*buf = *bytes.NewBuffer(payload)
	dec.Reset(buf)
}

// JSONValue reads the next value of dec at nesting depth (0 for a
// payload's own values) as Read builds it.
func JSONValue(dec *jsontext.Decoder, depth int) (any, error) { return jsonValue(dec, depth) }

// JSONError is the reader's error for an error of dec.
func JSONError(err error, dec *jsontext.Decoder) *values.Error { return jsonErr(err, dec) }

// JSONTooDeep is the reader's error for a value at nesting depth, read
// next from dec, when that depth is beyond MaxDepth; nil otherwise.
func JSONTooDeep(dec *jsontext.Decoder, depth int) *values.Error {
	if depth > MaxDepth {
		return &values.Error{Code: values.CodeTooDeep, Msg: "nesting too deep", Offset: int(dec.InputOffset())}
	}
	return nil
}

func readJSON(payload []byte, yield func(any) error) error {
	dec := NewJSONDecoder(payload)
	for {
		if dec.PeekKind() == 0 {
			if _, err := dec.ReadToken(); err == io.EOF {
				return nil
			} else if err != nil {
				return jsonErr(err, dec)
			}
		}
		v, err := jsonValue(dec, 0)
		if err != nil {
			return err
		}
		if err := yield(v); err != nil {
			return err
		}
	}
}

func jsonErr(err error, dec *jsontext.Decoder) *values.Error {
	off := int(dec.InputOffset())
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off = int(se.ByteOffset)
	}
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return &values.Error{Code: values.CodeDuplicateField, Msg: "an object holds the same member name twice", Offset: off}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &values.Error{Code: values.CodeSyntax, Msg: "malformed JSON: unexpected end of payload", Offset: off}
	case strings.Contains(err.Error(), "invalid UTF-8"):
		return &values.Error{Code: values.CodeInvalidUTF8, Msg: "text is not valid UTF-8", Offset: off}
	case strings.Contains(err.Error(), "escape"):
		return &values.Error{Code: values.CodeInvalidEscape, Msg: "malformed JSON string escape", Offset: off}
	}
	return &values.Error{Code: values.CodeSyntax, Msg: "malformed JSON", Offset: off}
}

func jsonValue(dec *jsontext.Decoder, depth int) (any, error) {
	if e := JSONTooDeep(dec, depth); e != nil {
		return nil, e
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, jsonErr(err, dec)
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			kt, err := dec.ReadToken()
			if err != nil {
				return nil, jsonErr(err, dec)
			}
			k := kt.String()
			v, err := jsonValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, jsonErr(err, dec)
		}
		return m, nil
	case '[':
		xs := []any{}
		for dec.PeekKind() != ']' {
			v, err := jsonValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			xs = append(xs, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, jsonErr(err, dec)
		}
		return xs, nil
	}
	return nil, &values.Error{Code: values.CodeSyntax, Msg: "malformed JSON", Offset: int(dec.InputOffset())}
}

func (jsonFormat) Append(dst []byte, v any, o KeyOrder) ([]byte, error) {
	w := textWriter{o: o}
	return w.value(dst, v, "", 0)
}

func (jsonFormat) AppendContainer(dst []byte, members []any, o KeyOrder) ([]byte, error) {
	w := textWriter{o: o}
	return w.value(dst, members, "", 0)
}

// textWriter writes the gojq value model as spaced JSON text; with yaml
// set it also escapes what YAML does not allow raw in a double-quoted
// scalar.
type textWriter struct {
	o    KeyOrder
	yaml bool
}

func (w textWriter) value(dst []byte, v any, path string, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	if out, err, ok := appendNumber(dst, v, path); ok {
		return out, err
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		if !utf8.ValidString(x) {
			return dst, values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
		}
		return appendQuoted(dst, x, w.yaml), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			var err error
			if dst, err = w.value(dst, e, values.IndexPath(path, i), depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range w.o.Keys(x) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if !utf8.ValidString(k) {
				return dst, values.Errorf(values.CodeInvalidUTF8, path, "a member name is not valid UTF-8")
			}
			dst = appendQuoted(dst, k, w.yaml)
			dst = append(dst, ": "...)
			var err error
			if dst, err = w.value(dst, x[k], keyPath(path, k), depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return dst, unencodable(path, "a value outside the JSON model")
}

// appendQuoted writes s as a JSON string (package jsonstr); for YAML also
// DEL, the C1 controls and U+FEFF, U+FFFE, U+FFFF as \uXXXX, which a YAML
// document must not hold raw.
func appendQuoted(dst []byte, s string, yaml bool) []byte {
	if yaml {
		return jsonstr.AppendEscaping(dst, s, yamlEscape)
	}
	return jsonstr.Append(dst, s)
}

// yamlEscape reports the runes a YAML double-quoted string escapes beyond
// JSON's.
func yamlEscape(r rune) bool {
	return r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff
}
