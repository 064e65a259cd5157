package json

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

type efield struct {
	col       int
	name      string
	key       []byte // `"name":`, escaped when the encoder is built
	typ       types.Type
	optional  bool // the wire field's OPTIONAL (the row view: the field's)
	sensitive bool
	nullMsg   string // the error of a null in a required field
}

// Encoder writes rows of a record batch as WIRE JSON objects, in internal
// schema field order. It is safe for concurrent use once built.
type Encoder struct {
	fields []efield
	// MaxSize bounds one encoded payload (object or batch container) in
	// bytes; 0 means unbounded.
	MaxSize int
	rowView bool
	reveal  bool
}

// NewEncoder compiles an encoder for a WIRE JSON plan.
func NewEncoder(p *bind.Plan) *Encoder {
	e := &Encoder{}
	for _, f := range p.Fields {
		if f.Wire < 0 {
			continue // internal-only field: not on the wire
		}
		e.fields = append(e.fields, efield{col: f.Internal, name: f.Name, key: appendKey(nil, f.Name), typ: f.Type, optional: f.WireOptional, sensitive: f.Sensitive, nullMsg: nullMsg(f)})
	}
	return e
}

// nullMsg is the encode error of a null in field f when its wire field is
// required.
func nullMsg(f bind.Field) string {
	if f.Optional {
		return bind.MsgNullWireRequired
	}
	return "null in a required field"
}

// NewRowViewEncoder compiles the row-view writer of schema s: every field
// in schema order, optional nulls as null, non-finite floats as "NaN",
// "Infinity", "-Infinity", and SENSITIVE values as "***" unless reveal.
func NewRowViewEncoder(s *types.Schema, reveal bool) *Encoder {
	e := &Encoder{rowView: true, reveal: reveal}
	for i, f := range s.Fields {
		e.fields = append(e.fields, efield{col: i, name: f.Name, key: appendKey(nil, f.Name), typ: f.Type, optional: f.Optional, sensitive: f.Sensitive, nullMsg: "null in a required field"})
	}
	return e
}

func appendKey(dst []byte, name string) []byte {
	dst = jsonstr.Append(dst, name)
	return append(dst, ':')
}

// AppendRow appends row i of rec as one JSON object to dst.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	start := len(dst)
	out, err := e.appendObject(dst, rec, i)
	if err != nil {
		return dst[:start], err
	}
	if e.MaxSize > 0 && len(out)-start > e.MaxSize {
		return dst[:start], values.Errorf(values.CodeTooLarge, "", "encoded payload exceeds the size bound of "+strconv.Itoa(e.MaxSize)+" bytes")
	}
	return out, nil
}

// AppendBatch appends the rows as one batch container, a compact JSON
// array of the members; it returns the number of rows written (all).
func (e *Encoder) AppendBatch(dst []byte, rec arrow.RecordBatch, rowIdx []int) ([]byte, int, error) {
	start := len(dst)
	dst = append(dst, '[')
	var err error
	for n, i := range rowIdx {
		if n > 0 {
			dst = append(dst, ',')
		}
		if dst, err = e.appendObject(dst, rec, i); err != nil {
			return dst[:start], 0, err
		}
		if e.MaxSize > 0 && len(dst)-start > e.MaxSize {
			return dst[:start], 0, values.Errorf(values.CodeTooLarge, "", "encoded batch exceeds the size bound of "+strconv.Itoa(e.MaxSize)+" bytes")
		}
	}
	return append(dst, ']'), len(rowIdx), nil
}

func (e *Encoder) appendObject(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	for k := range e.fields {
		f := &e.fields[k]
		col := rec.Column(f.col)
		if col.IsNull(i) {
			if !f.optional {
				return dst, values.Errorf(values.CodeRequiredNull, f.name, f.nullMsg)
			}
			if !e.rowView {
				continue
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, f.key...)
		if col.IsNull(i) {
			dst = append(dst, "null"...)
			continue
		}
		if f.sensitive && e.rowView && !e.reveal {
			dst = append(dst, `"***"`...)
			continue
		}
		var err error
		if dst, err = e.value(dst, col, i, f.typ, f.name); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func (e *Encoder) float(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if !e.rowView {
			return append(dst, "null"...)
		}
		switch {
		case math.IsNaN(f):
			return append(dst, `"NaN"`...)
		case f > 0:
			return append(dst, `"Infinity"`...)
		default:
			return append(dst, `"-Infinity"`...)
		}
	}
	return values.AppendFloat(dst, f, bits)
}

// float32 appends an F32 value: finite ones through the shortest F32
// path without a detour through float64.
func (e *Encoder) float32(dst []byte, f float32) []byte {
	if math.Float32bits(f)&0x7f800000 == 0x7f800000 {
		return e.float(dst, float64(f), 32)
	}
	return values.AppendFloat32(dst, f)
}

// value appends element i of arr, of internal type t.
func (e *Encoder) value(dst []byte, arr arrow.Array, i int, t types.Type, path string) ([]byte, error) {
	switch a := arr.(type) {
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), nil
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), nil
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), nil
	case *array.Uint64:
		return strconv.AppendUint(dst, a.Value(i), 10), nil
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), nil
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), nil
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), nil
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10), nil
	case *array.Float32:
		return e.float32(dst, a.Value(i)), nil
	case *array.Float64:
		return e.float(dst, a.Value(i), 64), nil
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case *array.String:
		s := a.Value(i)
		if !utf8.ValidString(s) {
			return dst, values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
		}
		return jsonstr.Append(dst, s), nil
	case *array.Binary:
		dst = append(dst, '"')
		dst = values.AppendBase64(dst, a.Value(i))
		return append(dst, '"'), nil
	case *array.Timestamp:
		dst = append(dst, '"')
		dst = values.AppendRFC3339(dst, int64(a.Value(i)), 9)
		return append(dst, '"'), nil
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		return e.list(dst, a.ListValues(), int(lo), int(hi), t.Inner(), path)
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		return e.list(dst, a.ListValues(), int(lo), int(hi), t.Inner(), path)
	}
	return dst, values.Errorf(values.CodeUnencodable, path, "unsupported Arrow column type "+arr.DataType().String())
}

func (e *Encoder) list(dst []byte, child arrow.Array, lo, hi int, elem types.Type, path string) ([]byte, error) {
	dst = append(dst, '[')
	if child.NullN() == 0 {
		switch a := child.(type) { // the common float axes, without a type switch per element
		case *array.Float32:
			// Runs of finite values in one call; a non-finite one between.
			vs := a.Float32Values()[lo:hi]
			for k := 0; k < len(vs); {
				if k > 0 {
					dst = append(dst, ',')
				}
				var n int
				dst, n = values.AppendFloat32s(dst, vs[k:])
				if k += n; k < len(vs) {
					if n > 0 {
						dst = append(dst, ',')
					}
					dst = e.float(dst, float64(vs[k]), 32)
					k++
				}
			}
			return append(dst, ']'), nil
		case *array.Float64:
			for j, v := range a.Float64Values()[lo:hi] {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = e.float(dst, v, 64)
			}
			return append(dst, ']'), nil
		}
	}
	var err error
	for j := lo; j < hi; j++ {
		if j > lo {
			dst = append(dst, ',')
		}
		if child.IsNull(j) {
			return dst, values.Errorf(values.CodeRequiredNull, values.IndexPath(path, j-lo), "null collection element")
		}
		if dst, err = e.value(dst, child, j, elem, path); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}
