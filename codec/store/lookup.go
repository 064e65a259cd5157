package store

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// ValueKind is the kind of a value Lookup finds.
type ValueKind uint8

// Value kinds.
const (
	// Null: an optional field's null, or a field the row does not hold.
	Null ValueKind = iota
	// Int: an integer, Neg and Mag.
	Int
	// Float: a float, F (Bits 32 or 64).
	Float
	// Bool: B.
	Bool
	// Text: valid UTF-8 text, S.
	Text
	// Bytes: S.
	Bytes
	// Time: nanoseconds since the epoch, Time.
	Time
	// Collection: an ARRAY or VEC value.
	Collection
)

// Value is one stored field value, found without decoding the row.
type Value struct {
	Kind ValueKind
	// Neg and Mag are an integer's sign and magnitude (-Mag when Neg;
	// Mag is 1…2^64-1 then, and the value -2^64 has Neg with Mag 0).
	Neg bool
	Mag uint64
	// F is a float's value; Bits its stored width.
	F    float64
	Bits int
	B    bool
	// S is text or bytes; it aliases the stored row.
	S []byte
	// Time is a datetime in nanoseconds since the epoch.
	Time int64
}

// Lookup returns the value of field name in a stored row. A field the row
// does not hold is Null with found false. Collections are reported as
// Collection without their elements.
func Lookup(data []byte, name string) (v Value, found bool, err error) {
	r := reader{b: data}
	if err := r.seek(name); err != nil {
		if err == errAbsent {
			return Value{}, false, nil
		}
		return Value{}, false, err
	}
	v, verr := r.scalar()
	if verr != nil {
		return Value{}, false, verr
	}
	return v, true, nil
}

// errAbsent is seek's report of a field the row does not hold.
var errAbsent = &values.Error{Code: values.CodeMissingField, Msg: "absent", Offset: -1}

// seek moves the cursor to the value of field name.
func (r *reader) seek(name string) *values.Error {
	major, _, n, err := r.head()
	if err != nil {
		return err
	}
	if major != majMap {
		return r.fail(values.CodeExpectedObject, "stored row is not a map")
	}
	if err := r.count(n); err != nil {
		return err
	}
	for k := uint64(0); k < n; k++ {
		km, _, kn, err := r.head()
		if err != nil {
			return err
		}
		if km != majText {
			return r.fail(values.CodeSyntax, "stored row has a key that is not text")
		}
		key, err := r.span(kn)
		if err != nil {
			return err
		}
		if string(key) == name {
			return nil
		}
		if err := r.skip(1); err != nil {
			return err
		}
	}
	return errAbsent
}

func (r *reader) scalar() (Value, *values.Error) {
	start := r.pos
	major, info, n, err := r.head()
	if err != nil {
		return Value{}, err
	}
	switch major {
	case majUint:
		return Value{Kind: Int, Mag: n}, nil
	case majNeg:
		return Value{Kind: Int, Neg: true, Mag: n + 1}, nil // n+1 wraps to 0 for -2^64
	case majBytes, majText:
		s, err := r.span(n)
		if err != nil {
			return Value{}, err
		}
		if major == majBytes {
			return Value{Kind: Bytes, S: s}, nil
		}
		if !utf8.Valid(s) {
			return Value{}, r.fail(values.CodeInvalidUTF8, "stored text is not valid UTF-8")
		}
		return Value{Kind: Text, S: s}, nil
	case majTag:
		if n != tagTime {
			return Value{}, r.fail(values.CodeSyntax, "stored row holds a tag herald never writes")
		}
		ns, err := r.time()
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: Time, Time: ns}, nil
	case majArray, majMap:
		r.pos = start
		if err := r.skip(1); err != nil {
			return Value{}, err
		}
		return Value{Kind: Collection}, nil
	}
	switch info {
	case 20, 21:
		return Value{Kind: Bool, B: info == 21}, nil
	case 22:
		return Value{Kind: Null}, nil
	case 26:
		return Value{Kind: Float, F: float64(math.Float32frombits(uint32(n))), Bits: 32}, nil
	}
	return Value{Kind: Float, F: math.Float64frombits(n), Bits: 64}, nil
}

// AppendJSON appends the value of field name of a stored row as JSON:
// integers exact, floats in their shortest text, text as a string, bytes
// as padded base64, datetimes as RFC 3339 UTC text, collections as
// arrays, null as null. found is false when the row does not hold the
// field. A NaN or infinite float, which JSON has no number for, is an
// error (CodeNonFinite).
func AppendJSON(dst, data []byte, name string) (out []byte, found bool, err error) {
	r := reader{b: data}
	if err := r.seek(name); err != nil {
		if err == errAbsent {
			return dst, false, nil
		}
		return dst, false, err
	}
	out, verr := r.json(dst, 0)
	if verr != nil {
		verr.Path = types.Quote(name) + verr.Path
		return dst, true, verr
	}
	return out, true, nil
}

func (r *reader) json(dst []byte, depth int) ([]byte, *values.Error) {
	if depth > MaxDepth {
		return dst, r.fail(values.CodeTooDeep, "stored row nests too deep")
	}
	if r.pos < len(r.b) && r.b[r.pos]>>5 == majArray {
		_, _, n, err := r.head()
		if err != nil {
			return dst, err
		}
		if err := r.count(n); err != nil {
			return dst, err
		}
		dst = append(dst, '[')
		for i := uint64(0); i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = r.json(dst, depth+1); err != nil {
				err.Path = values.IndexPath("", int(i)) + err.Path
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	v, err := r.scalar()
	if err != nil {
		return dst, err
	}
	switch v.Kind {
	case Null:
		return append(dst, "null"...), nil
	case Int:
		if v.Neg {
			dst = append(dst, '-')
			if v.Mag == 0 {
				return append(dst, "18446744073709551616"...), nil
			}
		}
		return strconv.AppendUint(dst, v.Mag, 10), nil
	case Float:
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			return dst, values.Errorf(values.CodeNonFinite, "", "a NaN or infinite number has no JSON form")
		}
		return values.AppendFloat(dst, v.F, v.Bits), nil
	case Bool:
		if v.B {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case Text:
		return jsonstr.Append(dst, string(v.S)), nil
	case Bytes:
		dst = append(dst, '"')
		dst = values.AppendBase64(dst, v.S)
		return append(dst, '"'), nil
	case Time:
		dst = append(dst, '"')
		dst = values.AppendRFC3339(dst, v.Time, 9)
		return append(dst, '"'), nil
	}
	return dst, values.Errorf(values.CodeUnencodable, "", "a stored map has no JSON form here")
}
