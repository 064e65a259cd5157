// Package formats owns the payload formats of JAQ-native codecs: a reader
// per format that turns a payload into the values it holds, in order, in
// the gojq value model (nil, bool, int, float64, *big.Int, json.Number,
// string, []any, map[string]any), and a writer per format that writes one
// value, or a batch container of member values, with object members in
// the order a KeyOrder gives.
//
// The value models follow jaq's (docs/codecs.md) with herald's documented
// decisions: strict JSON; YAML through yaml.Node with jaq's scalar
// resolution; one TOML document; XML elements as {t, a, c} objects with
// entities decoded on read and escaped on write; CBOR data items. Numbers
// read from text enter as json.Number so that a number passed through
// unchanged keeps its value. Duplicate keys are refused in every format.
//
// It must not know internal schemas or run programs, and its errors never
// quote payload values.
package formats

import (
	"encoding/json"
	"math"
	"math/big"
	"sort"
	"strconv"

	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// MaxDepth bounds the nesting of arrays and objects a reader builds or a
// writer writes.
const MaxDepth = 512

// KeyOrder orders the members of an object for writing.
type KeyOrder interface {
	Keys(m map[string]any) []string
}

// Lexical orders keys lexically (what gojq itself does).
type Lexical struct{}

// Keys implements KeyOrder.
func (Lexical) Keys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Format reads and writes one payload format.
type Format interface {
	// Read calls yield with each value the payload holds, in payload
	// order. It stops at the first malformed value (a *values.Error) or
	// the first error yield returns, which it returns as is.
	Read(payload []byte, yield func(v any) error) error
	// Append writes one value (one payload) to dst.
	Append(dst []byte, v any, o KeyOrder) ([]byte, error)
	// AppendContainer writes the format's batch container of members.
	AppendContainer(dst []byte, members []any, o KeyOrder) ([]byte, error)
}

// For returns the format of a JAQ-native codec, or nil for a format that
// has no native reader and writer.
func For(f types.Format) Format {
	switch f {
	case types.JSON:
		return jsonFormat{}
	case types.YAML:
		return yamlFormat{}
	case types.TOML:
		return tomlFormat{}
	case types.XML:
		return xmlFormat{}
	case types.CBOR:
		return cborFormat{}
	}
	return nil
}

func unencodable(path, msg string) *values.Error {
	return values.Errorf(values.CodeUnencodable, path, msg)
}

func nonFinite(path string) *values.Error {
	return values.Errorf(values.CodeNonFinite, path, "a NaN or infinite number is not valid JSON and cannot be written")
}

// number classifies the text of a json.Number: integer or float, valid
// JSON number syntax or not.
func number(s string) (isInt, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false, false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false, false
	}
	isInt = true
	if i < len(s) && s[i] == '.' {
		isInt = false
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isInt = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false, false
		}
	}
	return isInt, i == len(s)
}

// appendNumber writes a number of the gojq model as JSON-compatible text:
// integers exactly, floats as their shortest text with ".0" added when it
// would read as an integer. It refuses non-finite floats and malformed
// number text.
func appendNumber(dst []byte, v any, path string) ([]byte, error, bool) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil, true
	case *big.Int:
		return x.Append(dst, 10), nil, true
	case json.Number:
		if _, ok := number(string(x)); !ok {
			return dst, unencodable(path, "a number whose text is not a JSON number"), true
		}
		return append(dst, x...), nil, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, nonFinite(path), true
		}
		return appendFloat(dst, x), nil, true
	}
	return dst, nil, false
}

// appendFloat writes a finite float64 as a float: shortest text, ".0"
// added when it would read as an integer.
func appendFloat(dst []byte, f float64) []byte {
	start := len(dst)
	dst = values.AppendFloat(dst, f, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

func keyPath(path, k string) string {
	const max = 64
	if len(k) > max {
		k = k[:max] + "…"
	}
	return values.JoinPath(path, types.Quote(k))
}
