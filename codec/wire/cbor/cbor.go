// Package cbor owns the WIRE CBOR format: a payload is one CBOR data item,
// a map with text keys, read through the same JSON value model as WIRE
// JSON (BYTES as padded base64 text, DATETIME as RFC 3339 text, non-finite
// floats read as null) and written by hand in schema field order with
// definite lengths, shortest integer heads, F32 as a single and F64 as a
// double.
//
// Decoding walks the bytes straight into the builders (walk.go) for every
// payload it can decide exactly; anything else (every refusal, indefinite
// lengths, maps nested in undeclared fields) goes to the generic path,
// fxamacker/cbor in its strict configuration (duplicate keys, tags,
// undefined and non-text keys refused), which decides and words it. The
// package must not re-implement value rules: those come from package
// values.
package cbor

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	fx "github.com/fxamacker/cbor/v2"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

type dfield struct {
	name     string
	col      int
	typ      types.Type
	optional bool // the wire field's OPTIONAL: the payload may omit it or carry null
	// required: the field is OPTIONAL in the wire schema only, so a
	// missing value fails the decode after all
	required bool
}

// Decoder decodes WIRE CBOR payloads. It is safe for concurrent use.
type Decoder struct {
	dm       fx.DecMode
	fields   []dfield
	byName   map[string]int
	nullCols []int
	loose    bool
	maxElems int // MaxArrayElements: the longest fixed axis, at least 131072
	// unbound names the first required internal field no wire field
	// binds ("" when none): every decode fails with unboundMsg.
	unbound, unboundMsg string
}

// maxAxis returns the largest fixed axis in t.
func maxAxis(t types.Type) int {
	m := 0
	for _, d := range t.Dims {
		m = max(m, d)
	}
	if t.Elem != nil {
		m = max(m, maxAxis(*t.Elem))
	}
	return m
}

// NewDecoder compiles a decoder for a WIRE CBOR plan.
func NewDecoder(p *bind.Plan) (*Decoder, error) {
	d := &Decoder{byName: map[string]int{}, loose: p.Wire.Mode == types.Loose}
	maxElems := 131072
	for _, wi := range p.WireOrder {
		var f bind.Field
		if wi >= 0 {
			f = p.Fields[wi]
		} else {
			f = p.WireOnly[-wi-1]
		}
		d.byName[f.Name] = len(d.fields)
		d.fields = append(d.fields, dfield{name: f.Name, col: f.Internal, typ: f.Type, optional: f.WireOptional, required: f.Internal >= 0 && f.WireOptional && !f.Optional})
		maxElems = max(maxElems, maxAxis(f.Type))
	}
	for _, f := range p.Fields {
		if f.Wire < 0 && f.Optional {
			d.nullCols = append(d.nullCols, f.Internal)
		}
	}
	if u := p.Unbound(); len(u) > 0 {
		d.unbound, d.unboundMsg = u[0].Name, p.UnboundMsg()
	}
	d.maxElems = maxElems
	sv, err := fx.NewSimpleValueRegistryFromDefaults(fx.WithRejectedSimpleValue(23))
	if err != nil {
		return nil, err
	}
	d.dm, err = fx.DecOptions{
		DupMapKey:        fx.DupMapKeyEnforcedAPF,
		DefaultMapType:   reflect.TypeOf(map[string]any(nil)),
		TagsMd:           fx.TagsForbidden,
		UTF8:             fx.UTF8RejectInvalid,
		MaxArrayElements: maxElems,
		MaxNestedLevels:  256,
		SimpleValues:     sv,
	}.DecMode()
	if err != nil {
		return nil, err
	}
	return d, nil
}

// classify maps a library error to a stable code and a message that never
// quotes the payload.
func classify(err error) *values.Error {
	var dup *fx.DupMapKeyError
	var extra *fx.ExtraneousDataError
	var tags *fx.TagsMdError
	var typ *fx.UnmarshalTypeError
	var depth *fx.MaxNestedLevelError
	var elems *fx.MaxArrayElementsError
	var pairs *fx.MaxMapPairsError
	switch {
	case errors.As(err, &dup):
		name := "a member"
		if s, ok := dup.Key.(string); ok {
			name = types.Quote(truncate(s))
		}
		return &values.Error{Code: values.CodeDuplicateField, Msg: "duplicate map key " + name, Offset: -1}
	case errors.As(err, &extra):
		return &values.Error{Code: values.CodeTrailing, Msg: "data after the CBOR data item: a payload holds exactly one item", Offset: -1}
	case errors.As(err, &tags):
		return &values.Error{Code: values.CodeSyntax, Msg: "CBOR tags are not accepted", Offset: -1}
	case errors.As(err, &typ):
		return &values.Error{Code: values.CodeTypeMismatch, Msg: "map keys must be text strings", Offset: -1}
	case errors.As(err, &depth):
		return &values.Error{Code: values.CodeTooDeep, Msg: "nesting too deep", Offset: -1}
	case errors.As(err, &elems), errors.As(err, &pairs):
		return &values.Error{Code: values.CodeSyntax, Msg: "too many array elements or map pairs", Offset: -1}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "UTF-8"):
		return &values.Error{Code: values.CodeInvalidUTF8, Msg: "text string is not valid UTF-8", Offset: -1}
	case strings.Contains(msg, "simple value"):
		return &values.Error{Code: values.CodeSyntax, Msg: "CBOR simple value undefined or unassigned is not accepted", Offset: -1}
	}
	return &values.Error{Code: values.CodeSyntax, Msg: "malformed CBOR", Offset: -1}
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Decode decodes one payload holding one CBOR map into one row of b. On
// error nothing is added to b (the row is abandoned) and the error is a
// *values.Error naming the field and the rule, never a payload value.
func (d *Decoder) Decode(payload []byte, b *rows.Builder) (int, error) {
	if d.fast(payload, b) {
		return 1, nil
	}
	return d.DecodeGeneric(payload, b)
}

// DecodeGeneric decodes through the library's generic tree only: the
// authoritative path for everything the direct walk leaves to it
// (refusals, indefinite lengths, maps nested in undeclared fields), the
// walk's oracle in FuzzDecode, and the previous decoder, exported for the
// same-run benchmark against it.
func (d *Decoder) DecodeGeneric(payload []byte, b *rows.Builder) (int, error) {
	if len(payload) == 0 {
		return 0, &values.Error{Code: values.CodeEmpty, Msg: "empty payload: expected one CBOR map", Offset: -1}
	}
	var v any
	if err := d.dm.Unmarshal(payload, &v); err != nil {
		return 0, classify(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return 0, &values.Error{Code: values.CodeExpectedObject, Msg: "payload is not a CBOR map", Offset: -1}
	}
	for k := range m {
		if _, ok := d.byName[k]; !ok && !d.loose {
			return 0, &values.Error{Code: values.CodeUnexpectedField, Path: types.Quote(truncate(k)), Msg: "field is not declared by the STRICT wire schema", Offset: -1}
		}
	}
	b.BeginRow()
	for i := range d.fields {
		f := &d.fields[i]
		val, present := m[f.name]
		if err := d.top(b, f, val, present); err != nil {
			b.Abandon()
			return 0, err
		}
	}
	if d.unbound != "" {
		b.Abandon()
		return 0, values.Errorf(values.CodeMissingField, d.unbound, d.unboundMsg)
	}
	for _, c := range d.nullCols {
		b.Col(c).B.AppendNull()
	}
	if err := b.Commit(); err != nil {
		return 0, err
	}
	return 1, nil
}

func isNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case float64:
		return math.IsNaN(x) || math.IsInf(x, 0)
	}
	return false
}

func (d *Decoder) top(b *rows.Builder, f *dfield, v any, present bool) *values.Error {
	if !present || isNull(v) {
		if !f.optional {
			if !present {
				return values.Errorf(values.CodeMissingField, f.name, "required field is missing")
			}
			return values.Errorf(values.CodeNullValue, f.name, "null (or a non-finite float, read as null) in a required field")
		}
		if f.required {
			if !present {
				return values.Errorf(values.CodeMissingField, f.name, bind.MsgMissingWireOptional)
			}
			return values.Errorf(values.CodeNullValue, f.name, "null (or a non-finite float, read as null) in a required field (it is OPTIONAL in the wire schema only)")
		}
		if f.col >= 0 {
			b.Col(f.col).B.AppendNull()
		}
		return nil
	}
	if f.col < 0 {
		return check(f.typ, v, f.name)
	}
	return value(b.Col(f.col), v, f.name)
}

func kindName(v any) string {
	switch v.(type) {
	case uint64, int64, big.Int, *big.Int:
		return "an integer"
	case float64:
		return "a float"
	case string:
		return "a text string"
	case []byte:
		return "a byte string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a map"
	case nil:
		return "null"
	}
	return "an unsupported value"
}

func mismatch(path, want string, v any) *values.Error {
	return values.Errorf(values.CodeTypeMismatch, path, "expected "+want+", found "+kindName(v))
}

// integer splits a CBOR integer into sign and magnitude.
func integer(v any) (neg bool, mag uint64, ok, isBig bool) {
	switch x := v.(type) {
	case uint64:
		return false, x, true, false
	case int64:
		if x < 0 {
			return true, uint64(-(x + 1)) + 1, true, false
		}
		return false, uint64(x), true, false
	case big.Int, *big.Int:
		return false, 0, false, true
	}
	return false, 0, false, false
}

func value(c *rows.Col, v any, path string) *values.Error {
	if isNull(v) {
		return values.Errorf(values.CodeNullValue, path, "null (or a non-finite float, read as null) where a value is required (collection elements are never null)")
	}
	k := c.Kind
	switch {
	case k.IsInteger():
		neg, mag, ok, isBig := integer(v)
		if isBig {
			return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
		}
		if !ok {
			if _, f := v.(float64); f {
				return values.Errorf(values.CodeNotInteger, path, "expected an integer, found a float")
			}
			return mismatch(path, "an integer", v)
		}
		if k.IsUnsigned() {
			u, ok := values.FitUnsigned(k, neg, mag)
			if !ok {
				return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
			}
			c.AppendUint(u)
		} else {
			s, ok := values.FitSigned(k, neg, mag)
			if !ok {
				return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
			}
			c.AppendInt(s)
		}
	case k.IsFloat():
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
			if k == types.F32 {
				v, fit := values.FitF32(f)
				if !fit {
					return values.Errorf(values.CodeOutOfRange, path, values.FloatRange(k))
				}
				c.F32.Append(v)
				return nil
			}
		default:
			neg, mag, ok, isBig := integer(v)
			if isBig {
				return mismatch(path, "a number within 64 bits", v)
			}
			if !ok {
				return mismatch(path, "a number", v)
			}
			text := strconv.FormatUint(mag, 10)
			if neg {
				text = "-" + text
			}
			f = values.ParseFloat([]byte(text), k.Bits())
		}
		if k == types.F32 {
			c.F32.Append(float32(f))
		} else {
			c.F64.Append(f)
		}
	case k == types.Bool:
		x, ok := v.(bool)
		if !ok {
			return mismatch(path, "a boolean", v)
		}
		c.Bool.Append(x)
	case k == types.String:
		x, ok := v.(string)
		if !ok {
			return mismatch(path, "a text string", v)
		}
		c.Str.Append(x)
	case k == types.Bytes:
		x, ok := v.(string)
		if !ok {
			return mismatch(path, "a base64 text string", v)
		}
		out, ok := values.DecodeBase64(nil, []byte(x))
		if !ok {
			return values.Errorf(values.CodeInvalidBase64, path, "expected canonical padded standard base64")
		}
		c.Bin.Append(out)
	case k == types.Datetime:
		x, ok := v.(string)
		if !ok {
			return mismatch(path, "an RFC 3339 text string", v)
		}
		ns, code := values.ParseRFC3339([]byte(x), 9)
		if code != "" {
			if code == values.CodeOutOfRange {
				return values.Errorf(code, path, "datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z")
			}
			return values.Errorf(code, path, "expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)")
		}
		c.TS.Append(timestamp(ns))
	case k == types.Array || k == types.Vec:
		xs, ok := v.([]any)
		if !ok {
			return mismatch(path, "an array", v)
		}
		if k == types.Array && len(xs) != c.N {
			return values.Errorf(values.CodeShape, path, "fixed axis of length "+strconv.Itoa(c.N)+" has "+strconv.Itoa(len(xs))+" elements")
		}
		if k == types.Array {
			c.FSL.Append(true)
		} else {
			c.List.Append(true)
		}
		for i, x := range xs {
			if err := value(c.Elem, x, ""); err != nil {
				err.Path = values.IndexPath(path, i) + err.Path
				return err
			}
		}
	default:
		return values.Errorf(values.CodeTypeMismatch, path, "unsupported type")
	}
	return nil
}

// check validates a wire-only field against its wire type's domain.
func check(t types.Type, v any, path string) *values.Error {
	switch {
	case t.Kind == types.Invalid:
		if _, ok := v.([]any); !ok {
			return mismatch(path, "an array", v)
		}
	case t.Kind.IsInteger():
		if _, _, ok, isBig := integer(v); !ok && !isBig {
			return mismatch(path, "an integer", v)
		}
	case t.Kind.IsFloat():
		if _, _, ok, isBig := integer(v); !ok && !isBig {
			if _, f := v.(float64); !f {
				return mismatch(path, "a number", v)
			}
		}
	case t.Kind == types.Bool:
		if _, ok := v.(bool); !ok {
			return mismatch(path, "a boolean", v)
		}
	default:
		s, ok := v.(string)
		if !ok {
			return mismatch(path, "a text string", v)
		}
		if t.Kind == types.Bytes {
			if _, ok := values.DecodeBase64(nil, []byte(s)); !ok {
				return values.Errorf(values.CodeInvalidBase64, path, "expected canonical padded standard base64")
			}
		}
		if t.Kind == types.Datetime {
			if _, code := values.ParseRFC3339([]byte(s), 9); code != "" {
				return values.Errorf(code, path, "expected RFC 3339 text")
			}
		}
	}
	return nil
}
