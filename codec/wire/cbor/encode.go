package cbor

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/internal/cborhead"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

func timestamp(ns int64) arrow.Timestamp { return arrow.Timestamp(ns) }

type efield struct {
	col      int
	name     string
	key      []byte // the encoded text-string key
	typ      types.Type
	optional bool   // the wire field's OPTIONAL
	nullMsg  string // the error of a null in a required field
}

// Encoder writes rows as WIRE CBOR maps in internal schema field order. It
// is safe for concurrent use.
type Encoder struct {
	fields []efield
	// MaxSize bounds one payload in bytes; 0 means unbounded.
	MaxSize int
}

// NewEncoder compiles an encoder for a WIRE CBOR plan.
func NewEncoder(p *bind.Plan) *Encoder {
	e := &Encoder{}
	for _, f := range p.Fields {
		if f.Wire < 0 {
			continue
		}
		msg := "null in a required field"
		if f.Optional {
			msg = bind.MsgNullWireRequired
		}
		e.fields = append(e.fields, efield{col: f.Internal, name: f.Name, key: appendText(nil, f.Name), typ: f.Type, optional: f.WireOptional, nullMsg: msg})
	}
	return e
}

func appendText(dst []byte, s string) []byte {
	dst = cborhead.Append(dst, 3, uint64(len(s)))
	return append(dst, s...)
}

func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		return cborhead.Append(dst, 1, uint64(-(v + 1)))
	}
	return cborhead.Append(dst, 0, uint64(v))
}

// AppendRow appends row i of rec as one CBOR map.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	start := len(dst)
	out, err := e.appendMap(dst, rec, i)
	if err != nil {
		return dst[:start], err
	}
	if e.MaxSize > 0 && len(out)-start > e.MaxSize {
		return dst[:start], values.Errorf(values.CodeTooLarge, "", "encoded payload exceeds the size bound of "+strconv.Itoa(e.MaxSize)+" bytes")
	}
	return out, nil
}

// AppendBatch appends the rows as one definite-length CBOR array.
func (e *Encoder) AppendBatch(dst []byte, rec arrow.RecordBatch, rowIdx []int) ([]byte, int, error) {
	start := len(dst)
	dst = cborhead.Append(dst, 4, uint64(len(rowIdx)))
	var err error
	for _, i := range rowIdx {
		if dst, err = e.appendMap(dst, rec, i); err != nil {
			return dst[:start], 0, err
		}
		if e.MaxSize > 0 && len(dst)-start > e.MaxSize {
			return dst[:start], 0, values.Errorf(values.CodeTooLarge, "", "encoded batch exceeds the size bound of "+strconv.Itoa(e.MaxSize)+" bytes")
		}
	}
	return dst, len(rowIdx), nil
}

func (e *Encoder) appendMap(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	n := 0
	for k := range e.fields {
		f := &e.fields[k]
		if rec.Column(f.col).IsNull(i) {
			if !f.optional {
				return dst, values.Errorf(values.CodeRequiredNull, f.name, f.nullMsg)
			}
			continue
		}
		n++
	}
	dst = cborhead.Append(dst, 5, uint64(n))
	var err error
	for k := range e.fields {
		f := &e.fields[k]
		col := rec.Column(f.col)
		if col.IsNull(i) {
			continue
		}
		dst = append(dst, f.key...)
		if dst, err = appendValue(dst, col, i, f.name); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func appendValue(dst []byte, arr arrow.Array, i int, path string) ([]byte, error) {
	switch a := arr.(type) {
	case *array.Uint8:
		return cborhead.Append(dst, 0, uint64(a.Value(i))), nil
	case *array.Uint16:
		return cborhead.Append(dst, 0, uint64(a.Value(i))), nil
	case *array.Uint32:
		return cborhead.Append(dst, 0, uint64(a.Value(i))), nil
	case *array.Uint64:
		return cborhead.Append(dst, 0, a.Value(i)), nil
	case *array.Int8:
		return appendInt(dst, int64(a.Value(i))), nil
	case *array.Int16:
		return appendInt(dst, int64(a.Value(i))), nil
	case *array.Int32:
		return appendInt(dst, int64(a.Value(i))), nil
	case *array.Int64:
		return appendInt(dst, a.Value(i)), nil
	case *array.Float32:
		return binary.BigEndian.AppendUint32(append(dst, 0xfa), math.Float32bits(a.Value(i))), nil
	case *array.Float64:
		return binary.BigEndian.AppendUint64(append(dst, 0xfb), math.Float64bits(a.Value(i))), nil
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, 0xf5), nil
		}
		return append(dst, 0xf4), nil
	case *array.String:
		s := a.Value(i)
		if !utf8.ValidString(s) {
			return dst, values.Errorf(values.CodeInvalidUTF8, path, "text is not valid UTF-8")
		}
		return appendText(dst, s), nil
	case *array.Binary:
		v := a.Value(i)
		dst = cborhead.Append(dst, 3, uint64((len(v)+2)/3*4))
		return values.AppendBase64(dst, v), nil
	case *array.Timestamp:
		var buf [40]byte
		return appendText(dst, string(values.AppendRFC3339(buf[:0], int64(a.Value(i)), 9))), nil
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		return appendList(dst, a.ListValues(), int(lo), int(hi), path)
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		return appendList(dst, a.ListValues(), int(lo), int(hi), path)
	}
	return dst, values.Errorf(values.CodeUnencodable, path, "unsupported Arrow column type "+arr.DataType().String())
}

func appendList(dst []byte, child arrow.Array, lo, hi int, path string) ([]byte, error) {
	dst = cborhead.Append(dst, 4, uint64(hi-lo))
	var err error
	for j := lo; j < hi; j++ {
		if child.IsNull(j) {
			return dst, values.Errorf(values.CodeRequiredNull, values.IndexPath(path, j-lo), "null collection element")
		}
		if dst, err = appendValue(dst, child, j, path); err != nil {
			return dst, err
		}
	}
	return dst, nil
}
