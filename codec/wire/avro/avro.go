// Package avro owns the WIRE AVRO format: a payload is one raw Avro datum
// (no object container, no schema registry header) of a record generated
// from the wire schema, with ARRAY items inferred recursively from the
// internal schema. A single U64 field travels as the Avro long with the
// same 64 bits, so it keeps its whole range (another Avro reader sees a
// value above 9223372036854775807 as a negative long); other unsigned
// values, and U64 elements of an ARRAY or VEC, are range-checked both
// ways (an element above 9223372036854775807 fails to encode). Strings
// are UTF-8 checked, trailing bytes are refused, and the batch container
// is one Avro array block.
//
// Decoding walks the bytes straight into the batch's Arrow builders with a
// program of per-field ops compiled with the codec (no generic value
// tree); encoding uses goavro. Value rules are not re-implemented here:
// ranges and datetimes come from package values.
package avro

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/linkedin/goavro/v2"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// itemType returns the Avro type of an ARRAY/VEC element of internal type
// t: narrow signed integers as int, unsigned and 64-bit integers as long,
// DATETIME as RFC 3339 string, nested collections as arrays.
func itemType(t types.Type) any {
	switch t.Kind {
	case types.Bool:
		return "boolean"
	case types.I8, types.I16, types.I32:
		return "int"
	case types.I64, types.U8, types.U16, types.U32, types.U64:
		return "long"
	case types.F32:
		return "float"
	case types.F64:
		return "double"
	case types.String, types.Datetime:
		return "string"
	case types.Bytes:
		return "bytes"
	case types.Array, types.Vec:
		return map[string]any{"type": "array", "items": itemType(t.Inner())}
	}
	return "null"
}

func wireType(k types.WireKind, t types.Type) any {
	switch k {
	case types.ABoolean:
		return "boolean"
	case types.AInt:
		return "int"
	case types.ALong:
		return "long"
	case types.AFloat:
		return "float"
	case types.ADouble:
		return "double"
	case types.AString:
		return "string"
	case types.ABytes:
		return "bytes"
	case types.AArray:
		return itemType(t)
	}
	return "null"
}

func unionName(t any) string {
	if s, ok := t.(string); ok {
		return s
	}
	return "array"
}

// Schema returns the Avro schema (JSON text) generated for a plan.
func Schema(p *bind.Plan) string {
	fields := make([]any, len(p.Wire.Fields))
	for j, wf := range p.Wire.Fields {
		var t types.Type
		if wi := p.WireOrder[j]; wi >= 0 {
			t = p.Fields[wi].Type
		}
		var at any = wireType(wf.Type, t)
		if wf.Optional {
			at = []any{"null", at}
		}
		fields[j] = map[string]any{"name": wf.Name, "type": at}
	}
	b, _ := json.Marshal(map[string]any{"type": "record", "name": p.Wire.Name, "fields": fields})
	return string(b)
}

type field struct {
	name     string
	col      int // internal column, -1 for wire-only
	typ      types.Type
	optional bool   // the wire field's OPTIONAL: a null union
	required bool   // OPTIONAL in the wire schema only: a null fails the decode
	union    string // the non-null branch name of an optional field
	op       *op    // the decode op of its wire type
	nullMsg  string // the encode error of a null in a required field
}

// Codec decodes and encodes WIRE AVRO payloads. It is safe for concurrent
// use.
type Codec struct {
	avro     *goavro.Codec
	fields   []field // wire order: the decode program
	nullCols []int
	// unbound names the first required internal field no wire field
	// binds ("" when none): every decode fails with unboundMsg
	unbound, unboundMsg string
	// MaxSize bounds one payload in bytes; 0 means unbounded.
	MaxSize int
}

// New compiles a WIRE AVRO codec for a plan.
func New(p *bind.Plan) (*Codec, error) {
	ac, err := goavro.NewCodec(Schema(p))
	if err != nil {
		return nil, fmt.Errorf("codec %s: generating the Avro schema: %w", types.Quote(p.Codec.Name), err)
	}
	c := &Codec{avro: ac}
	for j, wf := range p.Wire.Fields {
		f := field{name: wf.Name, col: -1, optional: wf.Optional, union: unionName(wireType(wf.Type, types.Type{})), nullMsg: "null in a required field"}
		if wi := p.WireOrder[j]; wi >= 0 {
			bf := p.Fields[wi]
			f.col = bf.Internal
			f.typ = bf.Type
			f.union = unionName(wireType(wf.Type, f.typ))
			f.required = wf.Optional && !bf.Optional
			if bf.Optional {
				f.nullMsg = bind.MsgNullWireRequired
			}
		}
		f.op = wireOp(wf.Type, f.typ)
		c.fields = append(c.fields, f)
	}
	for _, f := range p.Fields {
		if f.Wire < 0 && f.Optional {
			c.nullCols = append(c.nullCols, f.Internal)
		}
	}
	if u := p.Unbound(); len(u) > 0 {
		c.unbound, c.unboundMsg = u[0].Name, p.UnboundMsg()
	}
	return c, nil
}

// AppendRow appends row i of rec as one raw Avro datum.
func (c *Codec) AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	start := len(dst)
	native, err := c.native(rec, i)
	if err != nil {
		return dst, err
	}
	out, err := c.avro.BinaryFromNative(dst, native)
	if err != nil {
		return dst[:start], values.Errorf(values.CodeUnencodable, "", "the row does not fit the Avro schema")
	}
	if c.MaxSize > 0 && len(out)-start > c.MaxSize {
		return dst[:start], values.Errorf(values.CodeTooLarge, "", "encoded payload exceeds the size bound of "+strconv.Itoa(c.MaxSize)+" bytes")
	}
	return out, nil
}

// AppendBatch appends the rows as one Avro array datum written as a single
// block: the count, the records, then the terminating 0.
func (c *Codec) AppendBatch(dst []byte, rec arrow.RecordBatch, rowIdx []int) ([]byte, int, error) {
	start := len(dst)
	if len(rowIdx) > 0 {
		dst = appendLong(dst, int64(len(rowIdx)))
	}
	for _, i := range rowIdx {
		native, err := c.native(rec, i)
		if err != nil {
			return dst[:start], 0, err
		}
		if dst, err = c.avro.BinaryFromNative(dst, native); err != nil {
			return dst[:start], 0, values.Errorf(values.CodeUnencodable, "", "the row does not fit the Avro schema")
		}
		if c.MaxSize > 0 && len(dst)-start > c.MaxSize {
			return dst[:start], 0, values.Errorf(values.CodeTooLarge, "", "encoded batch exceeds the size bound of "+strconv.Itoa(c.MaxSize)+" bytes")
		}
	}
	return append(dst, 0), len(rowIdx), nil
}

func appendLong(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

func (c *Codec) native(rec arrow.RecordBatch, i int) (map[string]any, error) {
	m := make(map[string]any, len(c.fields))
	for k := range c.fields {
		f := &c.fields[k]
		if f.col < 0 {
			m[f.name] = nil
			continue
		}
		col := rec.Column(f.col)
		if col.IsNull(i) {
			if !f.optional {
				return nil, values.Errorf(values.CodeRequiredNull, f.name, f.nullMsg)
			}
			m[f.name] = nil
			continue
		}
		var v any
		if u, ok := col.(*array.Uint64); ok {
			// a single U64 travels as the long with its 64 bits; only
			// elements are limited to the long's range
			v = int64(u.Value(i))
		} else {
			var err error
			if v, err = rows.Value(col, i, f.name, goavroValues{}); err != nil {
				return nil, err
			}
		}
		if f.optional {
			v = map[string]any{f.union: v}
		}
		m[f.name] = v
	}
	return m, nil
}

// goavroValues converts scalars into goavro's native values for rows.Value.
// Text and bytes are copied out of the batch's memory.
type goavroValues struct{}

func (goavroValues) Int(v int64) any { return v }

// Uint64 converts a U64 element of an ARRAY or VEC: it is written as an
// Avro long, so an element above 9223372036854775807 fails to encode.
func (goavroValues) Uint64(v uint64) (any, *values.Error) {
	if v > math.MaxInt64 {
		return nil, values.Errorf(values.CodeUnencodable, "", "U64 element above 9223372036854775807 does not fit an Avro long")
	}
	return int64(v), nil
}

func (goavroValues) Float32(f float32) any { return f }

func (goavroValues) Float64(f float64) any { return f }

func (goavroValues) String(s string) any { return string([]byte(s)) }

func (goavroValues) Bytes(b []byte) any { return append([]byte(nil), b...) }

func (goavroValues) Datetime(ns int64) any { return string(values.AppendRFC3339(nil, ns, 9)) }

func (goavroValues) Elem(any) *values.Error { return nil }
