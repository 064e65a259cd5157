package formats

import (
	"encoding/json"
	"errors"
	"math"

	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/values"
)

// tomlFormat is JAQ-native TOML: a payload is exactly one document, always
// a table (an empty payload is the empty table); integers are signed 64
// bits, and a larger one is refused on read while a program may write it
// as it stands. An offset date-time reads as its RFC 3339 text in UTC
// (herald's extension: jaq refuses date-times); a local date, time or
// date-time has no instant and is refused. A value is written by herald's
// own writer in member order; the batch container is one document whose
// single key batch holds the members as [[batch]] tables.
type tomlFormat struct{}

func (tomlFormat) Read(payload []byte, yield func(any) error) error {
	if !utf8.Valid(payload) {
		return &values.Error{Code: values.CodeInvalidUTF8, Msg: "TOML text is not valid UTF-8", Offset: -1}
	}
	var m map[string]any
	if _, err := toml.Decode(string(payload), &m); err != nil {
		return tomlErr(err)
	}
	v, err := tomlValue(m, "", 0)
	if err != nil {
		return err
	}
	if v == nil {
		v = map[string]any{}
	}
	return yield(v)
}

func tomlErr(err error) *values.Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		where := " at line " + strconv.Itoa(pe.Position.Line) + ", column " + strconv.Itoa(pe.Position.Col)
		switch {
		case strings.Contains(pe.Message, "out of range"):
			return &values.Error{Code: values.CodeOutOfRange, Msg: "integer is outside the signed 64-bit range TOML holds" + where, Offset: pe.Position.Start}
		case strings.Contains(pe.Message, "already been defined"):
			return &values.Error{Code: values.CodeDuplicateField, Msg: "a key is defined twice" + where, Offset: pe.Position.Start}
		}
		return &values.Error{Code: values.CodeSyntax, Msg: "malformed TOML" + where, Offset: pe.Position.Start}
	}
	return &values.Error{Code: values.CodeSyntax, Msg: "malformed TOML", Offset: -1}
}

func tomlValue(v any, path string, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ev, err := tomlValue(e, keyPath(path, k), depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = ev
		}
		return m, nil
	case []map[string]any:
		xs := make([]any, len(x))
		for i, e := range x {
			ev, err := tomlValue(e, values.IndexPath(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			xs[i] = ev
		}
		return xs, nil
	case []any:
		xs := make([]any, len(x))
		for i, e := range x {
			ev, err := tomlValue(e, values.IndexPath(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			xs[i] = ev
		}
		return xs, nil
	case int64:
		return int(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return x, nil
		}
		// the shortest text keeps the value and, for the shortest text
		// of an F32, reads back at 32 bits to the same F32
		return json.Number(appendFloat(nil, x)), nil
	case bool, string:
		return x, nil
	case time.Time:
		switch x.Location().String() {
		case "datetime-local", "date-local", "time-local":
			return nil, values.Errorf(values.CodeTypeMismatch, path, "a TOML local date or time has no instant: write it as a string, or as an offset date-time")
		}
		return x.UTC().Format(time.RFC3339Nano), nil
	}
	return nil, values.Errorf(values.CodeTypeMismatch, path, "a TOML value outside the JSON model")
}

func (tomlFormat) Append(dst []byte, v any, o KeyOrder) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return dst, unencodable("", "a TOML document is a table: the value to write must be an object")
	}
	w := tomlWriter{o: o}
	start := len(dst)
	out, err := w.table(dst, nil, m, "", 0)
	if err == nil && len(out) > start && out[start] == '\n' { // a document that starts with a table header
		out = append(out[:start], out[start+1:]...)
	}
	return out, err
}

func (tomlFormat) AppendContainer(dst []byte, members []any, o KeyOrder) ([]byte, error) {
	w := tomlWriter{o: o}
	for i, mv := range members {
		m, ok := mv.(map[string]any)
		path := values.IndexPath("batch", i)
		if !ok {
			return dst, unencodable(path, "a TOML batch member is a [[batch]] table: it must be an object")
		}
		if i > 0 {
			dst = append(dst, '\n')
		}
		dst = append(dst, "[[batch]]\n"...)
		var err error
		if dst, err = w.table(dst, []string{"batch"}, m, path, 1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

type tomlWriter struct{ o KeyOrder }

// isTableArray reports whether v is a non-empty array of objects, written
// as [[key]] tables.
func isTableArray(v any) bool {
	xs, ok := v.([]any)
	if !ok || len(xs) == 0 {
		return false
	}
	for _, x := range xs {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// table writes the members of table m (whose header, if any, is already
// written): plain key/value pairs first, then sub-tables and arrays of
// tables, each group in member order.
func (w tomlWriter) table(dst []byte, key []string, m map[string]any, path string, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	keys := w.o.Keys(m)
	var err error
	for _, k := range keys {
		v := m[k]
		if _, sub := v.(map[string]any); sub || isTableArray(v) {
			continue
		}
		dst = appendTomlKey(dst, k)
		dst = append(dst, " = "...)
		if dst, err = w.inline(dst, v, keyPath(path, k), depth+1); err != nil {
			return dst, err
		}
		dst = append(dst, '\n')
	}
	for _, k := range keys {
		v := m[k]
		sub := append(append([]string(nil), key...), k)
		switch x := v.(type) {
		case map[string]any:
			dst = append(dst, "\n["...)
			dst = appendTomlPath(dst, sub)
			dst = append(dst, "]\n"...)
			if dst, err = w.table(dst, sub, x, keyPath(path, k), depth+1); err != nil {
				return dst, err
			}
		case []any:
			if !isTableArray(x) {
				continue
			}
			for i, e := range x {
				dst = append(dst, "\n[["...)
				dst = appendTomlPath(dst, sub)
				dst = append(dst, "]]\n"...)
				if dst, err = w.table(dst, sub, e.(map[string]any), values.IndexPath(keyPath(path, k), i), depth+1); err != nil {
					return dst, err
				}
			}
		}
	}
	return dst, nil
}

func (w tomlWriter) inline(dst []byte, v any, path string, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	if out, err, ok := appendNumber(dst, v, path); ok {
		return out, err
	}
	switch x := v.(type) {
	case nil:
		return dst, unencodable(path, "TOML has no null: leave the key out instead")
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		if !utf8.ValidString(x) {
			return dst, values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
		}
		return appendTomlString(dst, x), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			var err error
			if dst, err = w.inline(dst, e, values.IndexPath(path, i), depth+1); err != nil {
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
			dst = appendTomlKey(dst, k)
			dst = append(dst, " = "...)
			var err error
			if dst, err = w.inline(dst, x[k], keyPath(path, k), depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return dst, unencodable(path, "a value outside the JSON model")
}

func bareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

func appendTomlKey(dst []byte, k string) []byte {
	if bareKey(k) {
		return append(dst, k...)
	}
	return appendTomlString(dst, k)
}

func appendTomlPath(dst []byte, keys []string) []byte {
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = appendTomlKey(dst, k)
	}
	return dst
}

// appendTomlString writes a TOML basic string: JSON's escapes (package
// jsonstr: \" \\ \b \t \n \f \r, \u00XX for the other control characters)
// and DEL as \u007f.
func appendTomlString(dst []byte, s string) []byte {
	return jsonstr.AppendEscaping(dst, s, func(r rune) bool { return r == 0x7f })
}
