package rows

import (
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herald-gateway/herald/codec/values"
)

// Scalars converts the scalar values of a batch's rows into one value
// model (the gojq model of package rowview, goavro's native values, ...)
// for Value. Errors carry a Path relative to the value ("" for the value
// itself); Value prefixes where the value stands.
type Scalars interface {
	// Int converts a signed integer, or an unsigned one below 2^32.
	Int(v int64) any
	// Uint64 converts a U64 value.
	Uint64(v uint64) (any, *values.Error)
	// Float32 and Float64 convert floats, NaN and infinities included.
	Float32(f float32) any
	Float64(f float64) any
	// String converts text already checked to be valid UTF-8. s may share
	// the batch's memory.
	String(s string) any
	// Bytes converts a BYTES value; b shares the batch's memory.
	Bytes(b []byte) any
	// Datetime converts a DATETIME value, nanoseconds since the epoch.
	Datetime(ns int64) any
	// Elem accepts or refuses the converted value of one ARRAY or VEC
	// element.
	Elem(v any) *values.Error
}

// Value returns the value of row i of arr, a column (or element array) of
// a finished batch, in the value model of conv: booleans as bool, ARRAY
// and VEC values as []any of their elements, every other value as conv
// converts it. Text that is not valid UTF-8, a null collection element
// and a column type outside the internal type system are errors naming
// path, the value's place ("detections[2][5]").
func Value(arr arrow.Array, i int, path string, conv Scalars) (any, error) {
	v, err := value(arr, i, conv)
	if err != nil {
		err.Path = path + err.Path
		return nil, err
	}
	return v, nil
}

func value(arr arrow.Array, i int, conv Scalars) (any, *values.Error) {
	switch a := arr.(type) {
	case *array.Uint8:
		return conv.Int(int64(a.Value(i))), nil
	case *array.Uint16:
		return conv.Int(int64(a.Value(i))), nil
	case *array.Uint32:
		return conv.Int(int64(a.Value(i))), nil
	case *array.Uint64:
		return conv.Uint64(a.Value(i))
	case *array.Int8:
		return conv.Int(int64(a.Value(i))), nil
	case *array.Int16:
		return conv.Int(int64(a.Value(i))), nil
	case *array.Int32:
		return conv.Int(int64(a.Value(i))), nil
	case *array.Int64:
		return conv.Int(a.Value(i)), nil
	case *array.Float32:
		return conv.Float32(a.Value(i)), nil
	case *array.Float64:
		return conv.Float64(a.Value(i)), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.String:
		s := a.Value(i)
		if !utf8.ValidString(s) {
			return nil, values.Errorf(values.CodeInvalidUTF8, "", "text is not valid UTF-8")
		}
		return conv.String(s), nil
	case *array.Binary:
		return conv.Bytes(a.Value(i)), nil
	case *array.Timestamp:
		return conv.Datetime(int64(a.Value(i))), nil
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		return list(a.ListValues(), int(lo), int(hi), conv)
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		return list(a.ListValues(), int(lo), int(hi), conv)
	}
	return nil, values.Errorf(values.CodeUnencodable, "", "unsupported Arrow column type "+arr.DataType().String())
}

func list(child arrow.Array, lo, hi int, conv Scalars) ([]any, *values.Error) {
	out := make([]any, hi-lo)
	for j := lo; j < hi; j++ {
		if child.IsNull(j) {
			return nil, values.Errorf(values.CodeRequiredNull, values.IndexPath("", j-lo), "null collection element")
		}
		v, err := value(child, j, conv)
		if err == nil {
			err = conv.Elem(v)
		}
		if err != nil {
			err.Path = values.IndexPath("", j-lo) + err.Path
			return nil, err
		}
		out[j-lo] = v
	}
	return out, nil
}
