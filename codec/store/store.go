// Package store owns the encoding in which herald stores one typed
// payload record: one CBOR data item (RFC 8949) per row, a map keyed by
// field name in internal schema order, every field written (an optional
// null as null), each value at the exact width of its type:
//
//   - U8…U64 and I8…I64 as CBOR integers (major types 0 and 1), so every
//     width keeps its extremes;
//   - F32 as a 4-byte float (0xfa) and F64 as an 8-byte float (0xfb) with
//     their bits as they are: NaN payloads, -0, infinities and the F32
//     halfway values survive, which no JSON form and no float shortening
//     does;
//   - BOOL as true/false, STRING as text (valid UTF-8), BYTES as a byte
//     string;
//   - DATETIME as the extended time of RFC 9581, tag 1001 over
//     {1: seconds, -9: nanoseconds} (the -9 entry only when it is not 0),
//     exact to the nanosecond over the whole DATETIME range;
//   - ARRAY as nested arrays of the axis lengths, VEC as an array.
//
// Heads are the shortest (definite lengths only), so one row has exactly
// one encoding. The format is self-describing by name: history written
// under an older internal schema is read under a newer one field by
// field (absent optional fields read as null, fields the reader does not
// declare are skipped, integers and floats widen), which is what lets a
// compatible schema change keep history readable without a registry of
// old schemas. The content type carries the fingerprint of the schema
// the row was written under (ContentType).
//
// It must not know notifications, formats or HTTP; it reads and writes
// rows of Arrow record batches (and, for a decoder that walks a payload
// straight into a stored row, writes each value and assembles the row:
// AppendFields, so one row still has one encoding), and its errors, like every codec error,
// never quote values.
package store

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herald-gateway/herald/codec/internal/cborhead"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// MediaType is the media type of a stored row.
const MediaType = "application/vnd.herald.row+cbor"

const fingerprintParam = "; fingerprint="

// ContentType returns the content type of a row stored under the internal
// schema whose 64-bit fingerprint is fp: MediaType with a fingerprint
// parameter.
func ContentType(fp string) string { return MediaType + fingerprintParam + fp }

// Fingerprint returns the fingerprint parameter of a content type written
// by ContentType; ok is false for any other content type.
func Fingerprint(contentType string) (fp string, ok bool) {
	rest, found := strings.CutPrefix(contentType, MediaType)
	if !found {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	fp, found = strings.CutPrefix(rest, fingerprintParam)
	return fp, found
}

// IsStored reports whether contentType is a stored row's.
func IsStored(contentType string) bool {
	_, ok := Fingerprint(contentType)
	return ok
}

// MaxDepth bounds the nesting of collections a Decoder reads.
const MaxDepth = 64

// CBOR major types and simple values.
const (
	majUint  = 0
	majNeg   = 1
	majBytes = 2
	majText  = 3
	majArray = 4
	majMap   = 5
	majTag   = 6
	majOther = 7

	cborFalse = 0xf4
	cborTrue  = 0xf5
	cborNull  = 0xf6
	cborF32   = 0xfa
	cborF64   = 0xfb

	// tagTime is RFC 9581's extended time.
	tagTime = 1001
)

func appendInt(dst []byte, v int64) []byte {
	if v >= 0 {
		return cborhead.Append(dst, majUint, uint64(v))
	}
	return cborhead.Append(dst, majNeg, ^uint64(v))
}

func appendText(dst []byte, major byte, s string) []byte {
	dst = cborhead.Append(dst, major, uint64(len(s)))
	return append(dst, s...)
}

// appendTime writes ns as tag 1001 {1: seconds, -9: nanoseconds}.
func appendTime(dst []byte, ns int64) []byte {
	secs, frac := ns/1e9, ns%1e9
	if frac < 0 {
		frac += 1e9
		secs--
	}
	dst = cborhead.Append(dst, majTag, tagTime)
	if frac == 0 {
		dst = append(dst, 0xa1, 0x01)
		return appendInt(dst, secs)
	}
	dst = append(dst, 0xa2, 0x01)
	dst = appendInt(dst, secs)
	dst = append(dst, 0x28) // -9
	return cborhead.Append(dst, majUint, uint64(frac))
}

type efield struct {
	name     string
	key      []byte
	optional bool
}

// Encoder writes rows of record batches of one internal schema. It is
// safe for concurrent use.
type Encoder struct {
	s      *types.Schema
	fields []efield
	head   []byte
}

// NewEncoder returns the encoder of rows of schema s.
func NewEncoder(s *types.Schema) *Encoder {
	e := &Encoder{s: s, head: cborhead.Append(nil, majMap, uint64(len(s.Fields)))}
	for _, f := range s.Fields {
		e.fields = append(e.fields, efield{name: f.Name, key: appendText(nil, majText, f.Name), optional: f.Optional})
	}
	return e
}

// Schema returns the schema the encoder writes.
func (e *Encoder) Schema() *types.Schema { return e.s }

// AppendRow appends row i of rec, whose columns follow the encoder's
// schema, to dst. On error dst is returned unchanged.
func (e *Encoder) AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	start := len(dst)
	dst = append(dst, e.head...)
	for k := range e.fields {
		f := &e.fields[k]
		dst = append(dst, f.key...)
		col := rec.Column(k)
		if col.IsNull(i) {
			if !f.optional {
				return dst[:start], values.Errorf(values.CodeRequiredNull, types.Quote(f.name), "null in a required field")
			}
			dst = append(dst, cborNull)
			continue
		}
		var err *values.Error
		if dst, err = appendValue(dst, col, i, 0); err != nil {
			err.Path = types.Quote(f.name) + err.Path
			return dst[:start], err
		}
	}
	return dst, nil
}

func appendValue(dst []byte, arr arrow.Array, i, depth int) ([]byte, *values.Error) {
	switch a := arr.(type) {
	case *array.Uint8:
		return cborhead.Append(dst, majUint, uint64(a.Value(i))), nil
	case *array.Uint16:
		return cborhead.Append(dst, majUint, uint64(a.Value(i))), nil
	case *array.Uint32:
		return cborhead.Append(dst, majUint, uint64(a.Value(i))), nil
	case *array.Uint64:
		return cborhead.Append(dst, majUint, a.Value(i)), nil
	case *array.Int8:
		return appendInt(dst, int64(a.Value(i))), nil
	case *array.Int16:
		return appendInt(dst, int64(a.Value(i))), nil
	case *array.Int32:
		return appendInt(dst, int64(a.Value(i))), nil
	case *array.Int64:
		return appendInt(dst, a.Value(i)), nil
	case *array.Float32:
		return binary.BigEndian.AppendUint32(append(dst, cborF32), math.Float32bits(a.Value(i))), nil
	case *array.Float64:
		return binary.BigEndian.AppendUint64(append(dst, cborF64), math.Float64bits(a.Value(i))), nil
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, cborTrue), nil
		}
		return append(dst, cborFalse), nil
	case *array.String:
		s := a.Value(i)
		if !utf8.ValidString(s) {
			return dst, values.Errorf(values.CodeInvalidUTF8, "", "text is not valid UTF-8")
		}
		return appendText(dst, majText, s), nil
	case *array.Binary:
		b := a.Value(i)
		dst = cborhead.Append(dst, majBytes, uint64(len(b)))
		return append(dst, b...), nil
	case *array.Timestamp:
		return appendTime(dst, int64(a.Value(i))), nil
	case *array.FixedSizeList:
		lo, hi := a.ValueOffsets(i)
		return appendList(dst, a.ListValues(), int(lo), int(hi), depth)
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		return appendList(dst, a.ListValues(), int(lo), int(hi), depth)
	}
	return dst, values.Errorf(values.CodeUnencodable, "", "unsupported Arrow column type "+arr.DataType().String())
}

func appendList(dst []byte, child arrow.Array, lo, hi, depth int) ([]byte, *values.Error) {
	dst = cborhead.Append(dst, majArray, uint64(hi-lo))
	var err *values.Error
	for j := lo; j < hi; j++ {
		if child.IsNull(j) {
			return dst, values.Errorf(values.CodeRequiredNull, values.IndexPath("", j-lo), "null collection element")
		}
		if dst, err = appendValue(dst, child, j, depth+1); err != nil {
			err.Path = values.IndexPath("", j-lo) + err.Path
			return dst, err
		}
	}
	return dst, nil
}

// The appenders below write one field value in the stored encoding, for a
// decoder that walks a wire payload straight into a stored row instead of
// through a record batch (AppendFields assembles the row). Each writes
// exactly what AppendRow writes for the same value of the same type.

// AppendInt appends a signed integer (I8…I64).
func AppendInt(dst []byte, v int64) []byte { return appendInt(dst, v) }

// AppendUint appends an unsigned integer (U8…U64).
func AppendUint(dst []byte, v uint64) []byte { return cborhead.Append(dst, majUint, v) }

// AppendF32 appends an F32 with its bits as they are.
func AppendF32(dst []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, cborF32), math.Float32bits(v))
}

// AppendF64 appends an F64 with its bits as they are.
func AppendF64(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, cborF64), math.Float64bits(v))
}

// AppendBool appends a BOOL.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, cborTrue)
	}
	return append(dst, cborFalse)
}

// AppendText appends a STRING; text that is not valid UTF-8 is the error
// AppendRow reports for it (without the field's path), and dst is
// returned unchanged.
func AppendText(dst, s []byte) ([]byte, *values.Error) {
	if !utf8.Valid(s) {
		return dst, values.Errorf(values.CodeInvalidUTF8, "", "text is not valid UTF-8")
	}
	dst = cborhead.Append(dst, majText, uint64(len(s)))
	return append(dst, s...), nil
}

// AppendBytes appends a BYTES value.
func AppendBytes(dst, b []byte) []byte {
	dst = cborhead.Append(dst, majBytes, uint64(len(b)))
	return append(dst, b...)
}

// AppendTime appends a DATETIME of ns nanoseconds since the epoch.
func AppendTime(dst []byte, ns int64) []byte { return appendTime(dst, ns) }

// AppendArrayHead appends the head of an ARRAY axis or VEC of n elements;
// the n elements follow it.
func AppendArrayHead(dst []byte, n int) []byte { return cborhead.Append(dst, majArray, uint64(n)) }

// AppendFields appends one row whose field values are already encoded:
// vals[k] is field k's value as the appenders above write it, nil for
// null. It writes what AppendRow writes for the same row, and refuses a
// null in a required field with AppendRow's error; on error dst is
// returned unchanged. When at is not nil (len(vals) long), at[k] is set to
// the offset of field k's value from the start of the row.
func (e *Encoder) AppendFields(dst []byte, vals [][]byte, at []int) ([]byte, error) {
	if len(vals) != len(e.fields) {
		return dst, values.Errorf(values.CodeUnencodable, "", "row has the wrong number of fields for its schema")
	}
	start := len(dst)
	dst = append(dst, e.head...)
	for k := range e.fields {
		f := &e.fields[k]
		dst = append(dst, f.key...)
		if at != nil {
			at[k] = len(dst) - start
		}
		if vals[k] == nil {
			if !f.optional {
				return dst[:start], values.Errorf(values.CodeRequiredNull, types.Quote(f.name), "null in a required field")
			}
			dst = append(dst, cborNull)
			continue
		}
		dst = append(dst, vals[k]...)
	}
	return dst, nil
}

// AppendItemJSON appends one stored value of field name, as an appender
// above writes it (or as AppendFields writes a null), as JSON: what
// AppendJSON appends for the field of a row holding it, errors included.
func AppendItemJSON(dst, item []byte, name string) ([]byte, error) {
	r := reader{b: item}
	out, err := r.json(dst, 0)
	if err != nil {
		err.Path = types.Quote(name) + err.Path
		return dst, err
	}
	return out, nil
}
