package formats

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	fx "github.com/fxamacker/cbor/v2"

	"github.com/herald-gateway/herald/codec/internal/cborhead"
	"github.com/herald-gateway/herald/codec/values"
)

// cborFormat is JAQ-native CBOR: a payload holds consecutive data items
// (none when empty). Text strings must be valid UTF-8 and map keys text;
// integers of any size (bignum tags 2 and 3 included) and floats of every
// width enter as they are; byte strings read as their padded base64 text
// (gojq has no byte strings); every other tag, undefined and unassigned
// simple values are refused, and so are duplicate map keys. A value is
// written with definite lengths, shortest integer heads, bignums above 64
// bits, the float text of an F32 as a single and other floats as doubles,
// map members in member order; the batch container is a definite array.
type cborFormat struct{}

// cborDec is immutable once built and safe for concurrent use.
var cborDec = func() fx.DecMode {
	sv, err := fx.NewSimpleValueRegistryFromDefaults(fx.WithRejectedSimpleValue(23))
	if err != nil {
		panic(err)
	}
	dm, err := fx.DecOptions{
		DupMapKey:        fx.DupMapKeyEnforcedAPF,
		DefaultMapType:   reflect.TypeOf(map[string]any(nil)),
		TagsMd:           fx.TagsAllowed,
		BigIntDec:        fx.BigIntDecodePointer,
		UTF8:             fx.UTF8RejectInvalid,
		MaxArrayElements: 1 << 24,
		MaxMapPairs:      1 << 24,
		MaxNestedLevels:  MaxDepth,
		SimpleValues:     sv,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

func cborErr(err error) *values.Error {
	var dup *fx.DupMapKeyError
	var typ *fx.UnmarshalTypeError
	var depth *fx.MaxNestedLevelError
	switch {
	case errors.As(err, &dup):
		return &values.Error{Code: values.CodeDuplicateField, Msg: "a map holds the same key twice", Offset: -1}
	case errors.As(err, &typ):
		return &values.Error{Code: values.CodeTypeMismatch, Msg: "map keys must be text strings", Offset: -1}
	case errors.As(err, &depth):
		return &values.Error{Code: values.CodeTooDeep, Msg: "nesting too deep", Offset: -1}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &values.Error{Code: values.CodeSyntax, Msg: "malformed CBOR: unexpected end of payload", Offset: -1}
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

func (cborFormat) Read(payload []byte, yield func(any) error) error {
	dec := cborDec.NewDecoder(bytes.NewReader(payload))
	for {
		off := dec.NumBytesRead()
		var v any
		if err := dec.Decode(&v); err != nil {
			if err == io.EOF {
				return nil
			}
			e := cborErr(err)
			e.Offset = off
			return e
		}
		m, err := cborValue(v, "", 0)
		if err != nil {
			if e, ok := err.(*values.Error); ok && e.Offset < 0 {
				e.Offset = off
			}
			return err
		}
		if err := yield(m); err != nil {
			return err
		}
	}
}

func cborValue(v any, path string, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	switch x := v.(type) {
	case nil, bool, string, float64:
		return x, nil
	case uint64:
		if x <= math.MaxInt64 {
			return int(x), nil
		}
		return new(big.Int).SetUint64(x), nil
	case int64:
		return int(x), nil
	case *big.Int:
		if x.IsInt64() {
			return int(x.Int64()), nil
		}
		return x, nil
	case []byte:
		return string(values.AppendBase64(nil, x)), nil
	case []any:
		xs := make([]any, len(x))
		for i, e := range x {
			ev, err := cborValue(e, values.IndexPath(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			xs[i] = ev
		}
		return xs, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ev, err := cborValue(e, keyPath(path, k), depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = ev
		}
		return m, nil
	}
	return nil, values.Errorf(values.CodeTypeMismatch, path, "a CBOR tag other than a bignum, or a value outside the JSON model")
}

func (cborFormat) Append(dst []byte, v any, o KeyOrder) ([]byte, error) {
	return cborAppend(dst, v, o, "", 0)
}

func (cborFormat) AppendContainer(dst []byte, members []any, o KeyOrder) ([]byte, error) {
	return cborAppend(dst, members, o, "", 0)
}

func cborBig(dst []byte, b *big.Int) []byte {
	if b.Sign() >= 0 {
		if b.IsUint64() {
			return cborhead.Append(dst, 0, b.Uint64())
		}
		mag := b.Bytes()
		dst = cborhead.Append(dst, 6, 2)
		return append(cborhead.Append(dst, 2, uint64(len(mag))), mag...)
	}
	n := new(big.Int).Neg(b)
	n.Sub(n, big.NewInt(1)) // CBOR stores -1-n
	if n.IsUint64() {
		return cborhead.Append(dst, 1, n.Uint64())
	}
	mag := n.Bytes()
	dst = cborhead.Append(dst, 6, 3)
	return append(cborhead.Append(dst, 2, uint64(len(mag))), mag...)
}

func cborFloat(dst []byte, f float64, single bool) []byte {
	if single {
		return binary.BigEndian.AppendUint32(append(dst, 0xfa), math.Float32bits(float32(f)))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xfb), math.Float64bits(f))
}

func cborAppend(dst []byte, v any, o KeyOrder, path string, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, values.Errorf(values.CodeTooDeep, path, "nesting too deep")
	}
	switch x := v.(type) {
	case nil:
		return append(dst, 0xf6), nil
	case bool:
		if x {
			return append(dst, 0xf5), nil
		}
		return append(dst, 0xf4), nil
	case int:
		if x >= 0 {
			return cborhead.Append(dst, 0, uint64(x)), nil
		}
		return cborhead.Append(dst, 1, uint64(-(x + 1))), nil
	case *big.Int:
		return cborBig(dst, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, nonFinite(path)
		}
		return cborFloat(dst, x, false), nil
	case json.Number:
		s := string(x)
		isInt, ok := number(s)
		if !ok {
			return dst, unencodable(path, "a number whose text is not a JSON number")
		}
		if isInt {
			b, _ := new(big.Int).SetString(s, 10)
			return cborBig(dst, b), nil
		}
		// the shortest text of an F32 (how the JSON view carries F32
		// values) is written as that single, bits exact; other text as
		// the double nearest to it
		if f32, err := strconv.ParseFloat(s, 32); err == nil {
			if t := values.AppendFloat(nil, f32, 32); string(t) == s || string(t)+".0" == s {
				return cborFloat(dst, f32, true), nil
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		if math.IsInf(f, 0) {
			return dst, nonFinite(path)
		}
		return cborFloat(dst, f, false), nil
	case string:
		if !utf8.ValidString(x) {
			return dst, values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
		}
		return append(cborhead.Append(dst, 3, uint64(len(x))), x...), nil
	case []any:
		dst = cborhead.Append(dst, 4, uint64(len(x)))
		for i, e := range x {
			var err error
			if dst, err = cborAppend(dst, e, o, values.IndexPath(path, i), depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case map[string]any:
		dst = cborhead.Append(dst, 5, uint64(len(x)))
		for _, k := range o.Keys(x) {
			if !utf8.ValidString(k) {
				return dst, values.Errorf(values.CodeInvalidUTF8, path, "a member name is not valid UTF-8")
			}
			dst = append(cborhead.Append(dst, 3, uint64(len(k))), k...)
			var err error
			if dst, err = cborAppend(dst, x[k], o, keyPath(path, k), depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, unencodable(path, "a value outside the JSON model")
}
