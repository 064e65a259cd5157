// Package rowview owns the JSON view of internal rows that JAQ-backed codecs
// run their programs on: the conversion of one row of an Arrow record
// batch into a value of the gojq value model (Row), and the exact decode
// of a program's output object into one row (Target). Integers are exact
// (int, or *big.Int above the int range), F32 values are json.Number
// holding their shortest 32-bit text so that a value passed through
// unchanged keeps its bits, F64 values are float64, BYTES padded base64
// text and DATETIME RFC 3339 text in UTC.
//
// It must not know any payload format and must not apply value rules of
// its own: ranges, float parsing at width, datetimes and base64 come from
// package values. Its errors never quote values: a mismatch is described
// by the JSON kind found.
package rowview

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// AppendFloat appends the text of a finite float as JAQ writes it: the
// shortest text that reads back to the same bits at width bits, with ".0"
// added when that text would read as an integer, so a float stays a float
// in every format (TOML and YAML tell integers from floats by their text).
func AppendFloat(dst []byte, f float64, bits int) []byte {
	start := len(dst)
	dst = values.AppendFloat(dst, f, bits)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

// Preferred returns the rank of each field of s by position, the key order
// a writer prefers for objects built from a row.
func Preferred(s *types.Schema) map[string]int {
	m := make(map[string]int, len(s.Fields))
	for i, f := range s.Fields {
		m[f.Name] = i
	}
	return m
}

// Row returns the JSON view of row i of rec, whose columns follow schema
// s: an object with every field that holds a value. An optional null is
// left out (as WIRE JSON writes it, and so that '.' writes a valid TOML
// document), and so is an optional non-finite float, which JSON has no
// number for; a required one is null.
func Row(rec arrow.RecordBatch, i int, s *types.Schema) (map[string]any, error) {
	m := make(map[string]any, len(s.Fields))
	for k, f := range s.Fields {
		col := rec.Column(k)
		if col.IsNull(i) {
			if !f.Optional {
				return nil, values.Errorf(values.CodeRequiredNull, types.Quote(f.Name), "null in a required field")
			}
			continue
		}
		v, err := rows.Value(col, i, types.Quote(f.Name), gojq{})
		if err != nil {
			return nil, err
		}
		if v == nil && f.Optional {
			continue
		}
		m[f.Name] = v
	}
	return m, nil
}

// gojq converts scalars into the gojq value model for rows.Value.
type gojq struct{}

func (gojq) Int(v int64) any { return int(v) }

func (gojq) Uint64(v uint64) (any, *values.Error) {
	if v <= math.MaxInt64 {
		return int(v), nil
	}
	return new(big.Int).SetUint64(v), nil
}

// Float32 and Float64 give nil for a non-finite float, which JSON has no
// number for.
func (gojq) Float32(f float32) any {
	if x := float64(f); !math.IsNaN(x) && !math.IsInf(x, 0) {
		return json.Number(AppendFloat(nil, x, 32))
	}
	return nil
}

func (gojq) Float64(f float64) any {
	if !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return nil
}

func (gojq) String(s string) any { return s }

func (gojq) Bytes(b []byte) any { return string(values.AppendBase64(nil, b)) }

func (gojq) Datetime(ns int64) any { return string(values.AppendRFC3339(nil, ns, 9)) }

// Elem refuses a non-finite float element: an array cannot leave it out.
func (gojq) Elem(v any) *values.Error {
	if v == nil {
		return values.Errorf(values.CodeNonFinite, "", "a NaN or infinite element has no JSON number")
	}
	return nil
}

// KindOf names the JSON kind of a value of the gojq value model, for
// messages that must not quote the value.
func KindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int, *big.Int:
		return "an integer"
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "a non-finite number"
		}
		return "a number"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value outside the JSON model"
}

// MaxDepth bounds the nesting of ARRAY and VEC values a Target decodes.
const MaxDepth = 64

// Target decodes output objects into rows of an internal schema: surplus
// keys are dropped, an absent or null value is accepted only for an
// OPTIONAL field, and every value must match its field's type exactly. A
// Target is safe for concurrent use.
type Target struct {
	s *types.Schema
}

// NewTarget returns a target for schema s.
func NewTarget(s *types.Schema) *Target { return &Target{s: s} }

// Append decodes v into one new row of b. On error the row is abandoned
// and the error names the field and the rule, never a value.
func (t *Target) Append(b *rows.Builder, v any) *values.Error {
	m, ok := v.(map[string]any)
	if !ok {
		return values.Errorf(values.CodeExpectedObject, "", "output is "+KindOf(v)+", expected an object")
	}
	b.BeginRow()
	for i, f := range t.s.Fields {
		path := types.Quote(f.Name)
		fv, present := m[f.Name]
		if !present || fv == nil {
			if !f.Optional {
				b.Abandon()
				if !present {
					return values.Errorf(values.CodeMissingField, path, "required field is missing")
				}
				return values.Errorf(values.CodeNullValue, path, "null in a required field")
			}
			b.Col(i).B.AppendNull()
			continue
		}
		if err := decode(b.Col(i), fv, 1); err != nil {
			b.Abandon()
			err.Path = path + err.Path
			return err
		}
	}
	if err := b.Commit(); err != nil {
		return values.Errorf(values.CodeSyntax, "", err.Error())
	}
	return nil
}

func mismatch(path, want string, v any) *values.Error {
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return values.Errorf(values.CodeNonFinite, path, "a NaN or infinite number is not valid JSON")
	}
	return values.Errorf(values.CodeTypeMismatch, path, "expected "+want+", found "+KindOf(v))
}

// integer splits an integer value of the gojq model into sign and
// magnitude. ok is false for a non-integer; code is set for an integer
// that does not fit 64 bits or a float that is not integral.
func integer(v any) (neg bool, mag uint64, ok bool, code values.Code) {
	switch x := v.(type) {
	case int:
		if x < 0 {
			return true, uint64(-int64(x)), true, ""
		}
		return false, uint64(x), true, ""
	case *big.Int:
		if x.Sign() < 0 {
			a := new(big.Int).Neg(x)
			if !a.IsUint64() {
				return false, 0, true, values.CodeOutOfRange
			}
			return true, a.Uint64(), true, ""
		}
		if !x.IsUint64() {
			return false, 0, true, values.CodeOutOfRange
		}
		return false, x.Uint64(), true, ""
	case json.Number:
		neg, mag, code := values.ParseIntegerLiteral([]byte(x))
		return neg, mag, true, code
	case float64:
		// gojq computes floor, round, ceil and some divisions as floats
		// where jaq yields integers: an integral float is accepted.
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false, 0, false, ""
		}
		if x != math.Trunc(x) {
			return false, 0, true, values.CodeNotInteger
		}
		if x < 0 {
			if x < -9223372036854775808 {
				return false, 0, true, values.CodeOutOfRange
			}
			return true, uint64(-x), true, ""
		}
		if x >= 18446744073709551616 {
			return false, 0, true, values.CodeOutOfRange
		}
		return false, uint64(x), true, ""
	}
	return false, 0, false, ""
}

// float reads a number of the gojq model at the width of float kind k:
// number text is parsed at that width (so the shortest text of an F32
// reads back to the same bits), integers exactly rounded, floats narrowed
// once; a number beyond k's range is refused (values.FloatRange).
func float(v any, k types.Kind) (float64, bool, *values.Error) {
	f, ok, err := widen(v, k.Bits())
	if ok && err == nil && math.IsInf(f, 0) {
		return 0, true, values.Errorf(values.CodeOutOfRange, "", values.FloatRange(k))
	}
	return f, ok, err
}

// widen is float without the range check.
func widen(v any, bits int) (float64, bool, *values.Error) {
	switch x := v.(type) {
	case json.Number:
		b := unsafe.Slice(unsafe.StringData(string(x)), len(x))
		if !values.ValidNumber(b) {
			return 0, false, nil
		}
		return values.ParseNumber(b, bits), true, nil
	case int:
		if bits == 64 && x >= -(1<<53) && x <= 1<<53 {
			return float64(x), true, nil
		}
		f, _ := strconv.ParseFloat(strconv.Itoa(x), bits)
		return f, true, nil
	case *big.Int:
		f, _ := strconv.ParseFloat(x.String(), bits)
		return f, true, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, true, values.Errorf(values.CodeNonFinite, "", "a NaN or infinite number is not valid JSON")
		}
		if bits == 32 {
			return float64(float32(x)), true, nil
		}
		return x, true, nil
	}
	return 0, false, nil
}

// appendInteger appends an integer split into sign and magnitude (code
// as integer gives it) to an integer column.
func appendInteger(c *rows.Col, neg bool, mag uint64, code values.Code) *values.Error {
	const path = ""
	k := c.Kind
	switch code {
	case values.CodeNotInteger:
		return values.Errorf(code, path, "expected an integer, found a number with a fraction or exponent")
	case values.CodeOutOfRange:
		return values.Errorf(code, path, "integer is outside the range of "+k.String())
	}
	if k.IsUnsigned() {
		u, fit := values.FitUnsigned(k, neg, mag)
		if !fit {
			return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
		}
		c.AppendUint(u)
	} else {
		s, fit := values.FitSigned(k, neg, mag)
		if !fit {
			return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
		}
		c.AppendInt(s)
	}
	return nil
}

// Decode appends v, a value at nesting depth (1 for a field's own value)
// of an output object, to column c as Target.Append does: the error's
// Path is relative to v ("" for v itself, "[2][0]" inside it).
func Decode(c *rows.Col, v any, depth int) *values.Error { return decode(c, v, depth) }

// DecodeNumber appends number text at nesting depth to c: what Decode
// does with json.Number(raw), without building the value. raw must be
// JSON number syntax (as a JSON decoder yields it; it is not checked
// again).
func DecodeNumber(c *rows.Col, raw []byte, depth int) *values.Error {
	k := c.Kind
	switch {
	case k.IsInteger():
		neg, mag, code := values.ParseIntegerLiteral(raw)
		return appendInteger(c, neg, mag, code)
	case k == types.F32 || k == types.F64:
		f := values.ParseNumber(raw, k.Bits())
		if math.IsInf(f, 0) {
			return values.Errorf(values.CodeOutOfRange, "", values.FloatRange(k))
		}
		if k == types.F32 {
			c.F32.Append(float32(f))
		} else {
			c.F64.Append(f)
		}
		return nil
	}
	return decode(c, json.Number(raw), depth)
}

// DecodeString appends a string at nesting depth to c: what Decode does
// with s. s is not kept.
func DecodeString(c *rows.Col, s string, depth int) *values.Error {
	switch c.Kind {
	case types.String, types.Bytes, types.Datetime:
		return decodeString(c, s)
	}
	return decode(c, s, depth)
}

// decodeString appends s to a String, Bytes or Datetime column.
func decodeString(c *rows.Col, s string) *values.Error {
	const path = ""
	switch c.Kind {
	case types.String:
		if !utf8.ValidString(s) {
			return values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
		}
		c.Str.Append(s)
	case types.Bytes:
		b, ok := values.DecodeBase64(nil, unsafe.Slice(unsafe.StringData(s), len(s)))
		if !ok {
			return values.Errorf(values.CodeInvalidBase64, path, "expected canonical padded standard base64")
		}
		c.Bin.Append(b)
	case types.Datetime:
		ns, code := values.ParseRFC3339(unsafe.Slice(unsafe.StringData(s), len(s)), 9)
		if code != "" {
			if code == values.CodeOutOfRange {
				return values.Errorf(code, path, "datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z")
			}
			return values.Errorf(code, path, "expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)")
		}
		c.TS.Append(arrow.Timestamp(ns))
	}
	return nil
}

// decode appends v to c. An error's Path is relative to v ("" for v
// itself, "[2][0]" inside it); the caller prefixes the field name.
func decode(c *rows.Col, v any, depth int) *values.Error {
	const path = ""
	k := c.Kind
	switch {
	case k.IsInteger():
		neg, mag, ok, code := integer(v)
		if !ok {
			return mismatch(path, "an integer", v)
		}
		return appendInteger(c, neg, mag, code)
	case k == types.F32 || k == types.F64:
		f, ok, err := float(v, k)
		if err != nil {
			err.Path = path
			return err
		}
		if !ok {
			return mismatch(path, "a number", v)
		}
		if k == types.F32 {
			c.F32.Append(float32(f))
		} else {
			c.F64.Append(f)
		}
	case k == types.Bool:
		b, ok := v.(bool)
		if !ok {
			return mismatch(path, "a boolean", v)
		}
		c.Bool.Append(b)
	case k == types.String || k == types.Bytes || k == types.Datetime:
		s, ok := v.(string)
		if !ok {
			want := "a string"
			switch k {
			case types.Bytes:
				want = "a base64 string"
			case types.Datetime:
				want = "an RFC 3339 string"
			}
			return mismatch(path, want, v)
		}
		return decodeString(c, s)
	case k == types.Array || k == types.Vec:
		if depth > MaxDepth {
			return values.Errorf(values.CodeTooDeep, path, "nesting too deep")
		}
		xs, ok := v.([]any)
		if !ok {
			return mismatch(path, "an array", v)
		}
		if k == types.Array {
			if len(xs) != c.N {
				return values.Errorf(values.CodeShape, path, "fixed axis of length "+strconv.Itoa(c.N)+" has "+strconv.Itoa(len(xs))+" elements")
			}
			c.FSL.Append(true)
		} else {
			c.List.Append(true)
		}
		for j, x := range xs {
			if x == nil {
				return values.Errorf(values.CodeNullValue, values.IndexPath("", j), "null where a value is required (collection elements are never null)")
			}
			if err := decode(c.Elem, x, depth+1); err != nil {
				err.Path = values.IndexPath("", j) + err.Path
				return err
			}
		}
	default:
		return values.Errorf(values.CodeTypeMismatch, path, "unsupported type")
	}
	return nil
}
