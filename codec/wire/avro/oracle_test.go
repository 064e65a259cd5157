package avro

import (
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

func oracleShapes(p *bind.Plan) []*oShape {
	var shapes []*oShape
	for j, wf := range p.Wire.Fields {
		var t types.Type
		if wi := p.WireOrder[j]; wi >= 0 {
			t = p.Fields[wi].Type
		}
		shapes = append(shapes, oWireShape(wf.Type, t, wf.Optional))
	}
	return shapes
}

// shape is the binary shape of an Avro value, used to walk a datum before
// goavro decodes it: every block count and length is checked against the
// bytes that remain, so a forged count cannot make the decoder allocate
// more than the payload could hold.
type oShape struct {
	kind     byte // 'i' int, 'l' long, 'f' float, 'd' double, 'b' bytes/string, 'o' boolean, 'a' array
	optional bool
	items    *oShape
}

func oItemShape(t types.Type) *oShape {
	switch t.Kind {
	case types.Bool:
		return &oShape{kind: 'o'}
	case types.I8, types.I16, types.I32:
		return &oShape{kind: 'i'}
	case types.F32:
		return &oShape{kind: 'f'}
	case types.F64:
		return &oShape{kind: 'd'}
	case types.String, types.Datetime, types.Bytes:
		return &oShape{kind: 'b'}
	case types.Array, types.Vec:
		return &oShape{kind: 'a', items: oItemShape(t.Inner())}
	}
	return &oShape{kind: 'l'}
}

func oWireShape(k types.WireKind, t types.Type, optional bool) *oShape {
	var s *oShape
	switch k {
	case types.ABoolean:
		s = &oShape{kind: 'o'}
	case types.AInt:
		s = &oShape{kind: 'i'}
	case types.ALong:
		s = &oShape{kind: 'l'}
	case types.AFloat:
		s = &oShape{kind: 'f'}
	case types.ADouble:
		s = &oShape{kind: 'd'}
	case types.AString, types.ABytes:
		s = &oShape{kind: 'b'}
	default:
		s = oItemShape(t)
	}
	s.optional = optional
	return s
}

// varint reads one zigzag long; ok is false when it is truncated or longer
// than 10 bytes.
func oVarint(b []byte, i int) (int64, int, bool) {
	var u uint64
	for n := 0; n < 10; n++ {
		if i >= len(b) || n == 9 && b[i] > 1 { // tightened: the value must fit 64 bits
			return 0, i, false
		}
		c := b[i]
		i++
		u |= uint64(c&0x7f) << (7 * n)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i, true
		}
	}
	return 0, i, false
}

// walk checks one value of shape s at b[i:] and returns the next offset.
func oWalk(b []byte, i int, s *oShape, depth int) (int, bool) {
	if depth > 256 {
		return i, false
	}
	if s.optional {
		br, j, ok := oVarint(b, i)
		if !ok || (br != 0 && br != 1) {
			return i, false
		}
		if i = j; br == 0 {
			return i, true
		}
	}
	switch s.kind {
	case 'o':
		return i + 1, i < len(b)
	case 'l':
		_, j, ok := oVarint(b, i)
		return j, ok
	case 'i': // tightened: goavro keeps the low 32 bits of a wider value
		x, j, ok := oVarint(b, i)
		return j, ok && x == int64(int32(x))
	case 'f':
		return i + 4, i+4 <= len(b)
	case 'd':
		return i + 8, i+8 <= len(b)
	case 'b':
		n, j, ok := oVarint(b, i)
		if !ok || n < 0 || n > int64(len(b)-j) {
			return i, false
		}
		return j + int(n), true
	case 'a':
		for {
			n, j, ok := oVarint(b, i)
			if !ok {
				return i, false
			}
			i = j
			if n == 0 {
				return i, true
			}
			if n < 0 { // a negative count is followed by the block size
				n = -n
				sz, j, ok := oVarint(b, i)
				if !ok || sz < 0 || sz > int64(len(b)-j) {
					return i, false
				}
				i = j
			}
			if n > int64(len(b)-i) { // every item takes at least one byte
				return i, false
			}
			for k := int64(0); k < n; k++ {
				if i, ok = oWalk(b, i, s.items, depth+1); !ok {
					return i, false
				}
			}
		}
	}
	return i, false
}

// oracleDecode is the decoder before the precompiled decode program (a
// bounds walk, goavro's generic NativeFromBinary, then the value rules on
// the native tree), kept
// as the oracle of FuzzDecode. Its walk has two tightenings the new
// decoder also applies: a long must fit 64 bits (the 10th varint byte
// holds only bit 63) and an int must fit 32 bits (goavro would keep the
// low 32 bits of a wider value).
func oracleDecode(c *Codec, shapes []*oShape, payload []byte, b *rows.Builder) (int, error) {
	if len(payload) == 0 {
		return 0, &values.Error{Code: values.CodeEmpty, Msg: "empty payload: expected one Avro datum", Offset: -1}
	}
	at := 0
	for _, s := range shapes {
		var ok bool
		if at, ok = oWalk(payload, at, s, 0); !ok {
			return 0, &values.Error{Code: values.CodeSyntax, Msg: "malformed Avro datum for the wire schema", Offset: -1}
		}
	}
	native, rest, err := c.avro.NativeFromBinary(payload)
	if err != nil {
		return 0, &values.Error{Code: values.CodeSyntax, Msg: "malformed Avro datum for the wire schema", Offset: -1}
	}
	if len(rest) != 0 {
		return 0, &values.Error{Code: values.CodeTrailing, Msg: "data after the Avro datum: a payload holds exactly one datum", Offset: len(payload) - len(rest)}
	}
	m, _ := native.(map[string]any)
	b.BeginRow()
	for i := range c.fields {
		f := &c.fields[i]
		v := m[f.name]
		if f.optional {
			if u, ok := v.(map[string]any); ok {
				v = u[f.union]
			}
		}
		if err := oracleTop(b, f, v); err != nil {
			b.Abandon()
			return 0, err
		}
	}
	for _, col := range c.nullCols {
		b.Col(col).B.AppendNull()
	}
	if err := b.Commit(); err != nil {
		return 0, err
	}
	return 1, nil
}

func oracleTop(b *rows.Builder, f *field, v any) *values.Error {
	if v == nil {
		if f.col >= 0 {
			b.Col(f.col).B.AppendNull()
		}
		return nil
	}
	if f.col < 0 {
		if s, ok := v.(string); ok && !utf8.ValidString(s) {
			return values.Errorf(values.CodeInvalidUTF8, f.name, "string is not valid UTF-8")
		}
		return nil
	}
	if c := b.Col(f.col); c.Kind == types.U64 {
		// a single U64 field's long carries the value's 64 bits
		if x, ok := v.(int64); ok {
			c.AppendUint(uint64(x))
			return nil
		}
	}
	return oracleValue(b.Col(f.col), v, f.name)
}

func oracleValue(c *rows.Col, v any, path string) *values.Error {
	k := c.Kind
	switch {
	case k.IsInteger():
		var x int64
		switch n := v.(type) {
		case int32:
			x = int64(n)
		case int64:
			x = n
		default:
			return values.Errorf(values.CodeTypeMismatch, path, "expected an Avro int or long")
		}
		if k.IsUnsigned() {
			if x < 0 || uint64(x) > values.UintMax(k) {
				return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
			}
			c.AppendUint(uint64(x))
		} else {
			lo, hi := values.IntRange(k)
			if x < lo || x > hi {
				return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+k.String())
			}
			c.AppendInt(x)
		}
	case k == types.F32:
		x, ok := v.(float32)
		if !ok {
			return values.Errorf(values.CodeTypeMismatch, path, "expected an Avro float")
		}
		c.F32.Append(x)
	case k == types.F64:
		x, ok := v.(float64)
		if !ok {
			return values.Errorf(values.CodeTypeMismatch, path, "expected an Avro double")
		}
		c.F64.Append(x)
	case k == types.Bool:
		x, ok := v.(bool)
		if !ok {
			return values.Errorf(values.CodeTypeMismatch, path, "expected an Avro boolean")
		}
		c.Bool.Append(x)
	case k == types.String || k == types.Datetime:
		x, ok := v.(string)
		if !ok {
			return values.Errorf(values.CodeTypeMismatch, path, "expected an Avro string")
		}
		if !utf8.ValidString(x) {
			return values.Errorf(values.CodeInvalidUTF8, path, "string is not valid UTF-8")
		}
		if k == types.String {
			c.Str.Append(x)
			return nil
		}
		ns, code := values.ParseRFC3339([]byte(x), 9)
		if code != "" {
			if code == values.CodeOutOfRange {
				return values.Errorf(code, path, "datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z")
			}
			return values.Errorf(code, path, "expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)")
		}
		c.TS.Append(arrow.Timestamp(ns))
	case k == types.Bytes:
		x, ok := v.([]byte)
		if !ok {
			return values.Errorf(values.CodeTypeMismatch, path, "expected Avro bytes")
		}
		c.Bin.Append(x)
	case k == types.Array || k == types.Vec:
		xs, ok := v.([]any)
		if !ok {
			return values.Errorf(values.CodeTypeMismatch, path, "expected an Avro array")
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
			if err := oracleValue(c.Elem, x, ""); err != nil {
				err.Path = values.IndexPath(path, i) + err.Path
				return err
			}
		}
	default:
		return values.Errorf(values.CodeTypeMismatch, path, "unsupported type")
	}
	return nil
}
