package avro

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/endian"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// opKind is what one decode op reads from the datum.
type opKind uint8

const (
	opBool     opKind = iota // one byte, 0 or 1
	opInt                    // Avro int: a zigzag varint whose value fits 32 bits
	opLong                   // Avro long: a zigzag varint of at most 10 bytes, 64 bits
	opFloat                  // 4 bytes, little-endian IEEE 754
	opDouble                 // 8 bytes
	opString                 // length-prefixed UTF-8 text
	opBytes                  // length-prefixed bytes
	opDatetime               // an Avro string holding RFC 3339 text
	opArray                  // Avro array into a fixed axis of n elements
	opVec                    // Avro array into a VEC
)

// op decodes one value. The program of a codec is its list of fields, each
// with the op of its wire type, compiled once when the codec is built.
type op struct {
	kind opKind
	// ik is the internal kind an integer is stored as, Invalid for a
	// wire-only field (no range but the wire type's own).
	ik     types.Kind
	lo, hi int64  // the range of a signed ik
	umax   uint64 // the maximum of an unsigned ik
	// bits: a single U64 field's long carries the value's 64 bits, so any
	// long is a U64 (set by wireOp only: elements keep the range check)
	bits bool
	// min is the fewest bytes one value takes: the guard for block counts.
	min  int
	n    int // fixed axis length (opArray)
	elem *op // element op (opArray, opVec)
}

func newOp(kind opKind, ik types.Kind) *op {
	o := &op{kind: kind, ik: ik, min: 1}
	switch kind {
	case opFloat:
		o.min = 4
	case opDouble:
		o.min = 8
	}
	if ik.IsUnsigned() {
		o.umax = values.UintMax(ik)
	} else if ik.IsInteger() {
		o.lo, o.hi = values.IntRange(ik)
	}
	return o
}

// itemOp is the op of an ARRAY/VEC element of internal type t, matching
// itemType's schema.
func itemOp(t types.Type) *op {
	switch t.Kind {
	case types.Bool:
		return newOp(opBool, t.Kind)
	case types.I8, types.I16, types.I32:
		return newOp(opInt, t.Kind)
	case types.F32:
		return newOp(opFloat, t.Kind)
	case types.F64:
		return newOp(opDouble, t.Kind)
	case types.String:
		return newOp(opString, t.Kind)
	case types.Datetime:
		return newOp(opDatetime, t.Kind)
	case types.Bytes:
		return newOp(opBytes, t.Kind)
	case types.Array:
		o := newOp(opArray, t.Kind)
		o.n, o.elem = t.Len(), itemOp(t.Inner())
		return o
	case types.Vec:
		o := newOp(opVec, t.Kind)
		o.elem = itemOp(t.Inner())
		return o
	}
	return newOp(opLong, t.Kind) // I64, U8…U64
}

// wireOp is the op of a top-level wire field of wire kind k bound to
// internal type t (the zero Type for a wire-only field), matching
// wireType's schema.
func wireOp(k types.WireKind, t types.Type) *op {
	switch k {
	case types.ABoolean:
		return newOp(opBool, t.Kind)
	case types.AInt:
		return newOp(opInt, t.Kind)
	case types.ALong:
		o := newOp(opLong, t.Kind)
		o.bits = t.Kind == types.U64
		return o
	case types.AFloat:
		return newOp(opFloat, t.Kind)
	case types.ADouble:
		return newOp(opDouble, t.Kind)
	case types.AString:
		if t.Kind == types.Datetime {
			return newOp(opDatetime, t.Kind)
		}
		return newOp(opString, t.Kind)
	case types.ABytes:
		return newOp(opBytes, t.Kind)
	}
	return itemOp(t)
}

// reader reads one datum; it never copies the payload.
type reader struct {
	b []byte
	i int
}

func zigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// long reads one zigzag varint of at most 10 bytes whose value fits 64
// bits (the 10th byte holds only bit 63). Non-minimal encodings are
// accepted, as every Avro reader does.
func (r *reader) long() (int64, bool) {
	if r.i < len(r.b) {
		if c := r.b[r.i]; c < 0x80 {
			r.i++
			return zigzag(uint64(c)), true
		}
	}
	return r.longSlow()
}

func (r *reader) longSlow() (int64, bool) {
	var u uint64
	b, i := r.b, r.i
	for s := uint(0); s < 63; s += 7 {
		if i >= len(b) {
			return 0, false
		}
		c := b[i]
		i++
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			r.i = i
			return zigzag(u), true
		}
	}
	if i >= len(b) || b[i] > 1 {
		return 0, false
	}
	r.i = i + 1
	return zigzag(u | uint64(b[i])<<63), true
}

// int reads an Avro int: a long whose value fits 32 bits. goavro would
// silently keep the low 32 bits of a wider value; a datum holding one is
// malformed.
func (r *reader) int() (int64, bool) {
	x, ok := r.long()
	return x, ok && x == int64(int32(x))
}

// text reads the length and the content of a string or bytes value.
func (r *reader) text() ([]byte, bool) {
	n, ok := r.long()
	if !ok || n < 0 || n > int64(len(r.b)-r.i) {
		return nil, false
	}
	s := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return s, true
}

// blockCount reads an array block header: the item count and, after a
// negative count, the block's byte size. It refuses a count whose items
// cannot fit in the bytes that remain (each takes at least minSize bytes)
// and a size beyond them, so a forged header never makes the decoder
// allocate or loop past what the payload holds.
func (r *reader) blockCount(minSize int) (int, bool) {
	n, ok := r.long()
	if !ok {
		return 0, false
	}
	if n < 0 {
		if n == math.MinInt64 {
			return 0, false
		}
		n = -n
		sz, ok := r.long()
		if !ok || sz < 0 || sz > int64(len(r.b)-r.i) {
			return 0, false
		}
	}
	if n > int64((len(r.b)-r.i)/minSize) {
		return 0, false
	}
	return int(n), true
}

// value decodes one value of op o into c. It reports only success: on
// failure the caller abandons the row and diagnose names the error.
func (r *reader) value(o *op, c *rows.Col) bool {
	switch o.kind {
	case opInt, opLong:
		x, ok := r.long()
		if !ok || o.kind == opInt && x != int64(int32(x)) {
			return false
		}
		if o.bits {
			c.AppendUint(uint64(x))
			return true
		}
		if o.umax != 0 {
			if x < 0 || uint64(x) > o.umax {
				return false
			}
			c.AppendUint(uint64(x))
			return true
		}
		if x < o.lo || x > o.hi {
			return false
		}
		c.AppendInt(x)
	case opFloat:
		if len(r.b)-r.i < 4 {
			return false
		}
		c.F32.Append(math.Float32frombits(binary.LittleEndian.Uint32(r.b[r.i:])))
		r.i += 4
	case opDouble:
		if len(r.b)-r.i < 8 {
			return false
		}
		c.F64.Append(math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.i:])))
		r.i += 8
	case opBool:
		if r.i >= len(r.b) || r.b[r.i] > 1 {
			return false
		}
		c.Bool.Append(r.b[r.i] == 1)
		r.i++
	case opString:
		s, ok := r.text()
		if !ok || !utf8.Valid(s) {
			return false
		}
		c.Str.BinaryBuilder.Append(s)
	case opBytes:
		s, ok := r.text()
		if !ok {
			return false
		}
		c.Bin.Append(s)
	case opDatetime:
		s, ok := r.text()
		if !ok || !utf8.Valid(s) {
			return false
		}
		ns, code := values.ParseRFC3339(s, 9)
		if code != "" {
			return false
		}
		c.TS.Append(arrow.Timestamp(ns))
	case opArray, opVec:
		return r.array(o, c)
	default:
		return false
	}
	return true
}

// array decodes the blocks of one Avro array into a fixed axis or a VEC.
func (r *reader) array(o *op, c *rows.Col) bool {
	if o.kind == opArray {
		c.FSL.Append(true)
	} else {
		c.List.Append(true)
	}
	e, eo := c.Elem, o.elem
	total := 0
	for {
		n, ok := r.blockCount(eo.min)
		if !ok {
			return false
		}
		if n == 0 {
			break
		}
		if o.kind == opArray && n > o.n-total {
			return false
		}
		total += n
		switch eo.kind {
		case opFloat:
			r.floats(e, n) // blockCount checked the 4n bytes
		case opDouble:
			r.doubles(e, n)
		default:
			for range n {
				if !r.value(eo, e) {
					return false
				}
			}
		}
	}
	return o.kind != opArray || total == o.n
}

// chunk is how many floats go to a builder at once through a stack buffer.
const chunk = 128

// floats appends n floats (4n bytes known to be there) to c in bulk.
func (r *reader) floats(c *rows.Col, n int) {
	b := r.b[r.i : r.i+4*n]
	r.i += 4 * n
	if n < 16 || endian.IsBigEndian {
		c.F32.Reserve(n)
		for k := 0; k < len(b); k += 4 {
			c.F32.UnsafeAppend(math.Float32frombits(binary.LittleEndian.Uint32(b[k:])))
		}
		return
	}
	var buf [chunk]float32
	for len(b) > 0 {
		k := min(len(b)/4, chunk)
		copy(arrow.Float32Traits.CastToBytes(buf[:k]), b)
		c.F32.AppendValues(buf[:k], nil)
		b = b[4*k:]
	}
}

// doubles appends n doubles (8n bytes known to be there) to c in bulk.
func (r *reader) doubles(c *rows.Col, n int) {
	b := r.b[r.i : r.i+8*n]
	r.i += 8 * n
	if n < 8 || endian.IsBigEndian {
		c.F64.Reserve(n)
		for k := 0; k < len(b); k += 8 {
			c.F64.UnsafeAppend(math.Float64frombits(binary.LittleEndian.Uint64(b[k:])))
		}
		return
	}
	var buf [chunk / 2]float64
	for len(b) > 0 {
		k := min(len(b)/8, chunk/2)
		copy(arrow.Float64Traits.CastToBytes(buf[:k]), b)
		c.F64.AppendValues(buf[:k], nil)
		b = b[8*k:]
	}
}

// skip checks the structure of one value of op o without storing it: what
// the fast path and goavro would refuse as a malformed datum.
func (r *reader) skip(o *op) bool {
	switch o.kind {
	case opInt:
		_, ok := r.int()
		return ok
	case opLong:
		_, ok := r.long()
		return ok
	case opFloat, opDouble:
		if len(r.b)-r.i < o.min {
			return false
		}
		r.i += o.min
	case opBool:
		if r.i >= len(r.b) || r.b[r.i] > 1 {
			return false
		}
		r.i++
	case opString, opBytes, opDatetime:
		_, ok := r.text()
		return ok
	case opArray, opVec:
		for {
			n, ok := r.blockCount(o.elem.min)
			if !ok {
				return false
			}
			if n == 0 {
				return true
			}
			if m := o.elem.min; o.elem.kind == opFloat || o.elem.kind == opDouble {
				r.i += n * m
				continue
			}
			for range n {
				if !r.skip(o.elem) {
					return false
				}
			}
		}
	default:
		return false
	}
	return true
}

// Decode decodes one raw Avro datum into one row of b. It walks the bytes
// straight into the builders with the program compiled by New; on any
// failure the row is abandoned and diagnose names the error exactly as the
// rules order it (structure, then trailing bytes, then values in field
// order).
func (c *Codec) Decode(payload []byte, b *rows.Builder) (int, error) {
	if len(payload) == 0 {
		return 0, &values.Error{Code: values.CodeEmpty, Msg: "empty payload: expected one Avro datum", Offset: -1}
	}
	r := reader{b: payload}
	b.BeginRow()
	for k := range c.fields {
		f := &c.fields[k]
		if f.optional {
			br, ok := r.long()
			if !ok || br>>1 != 0 {
				goto fail
			}
			if br == 0 {
				if f.required {
					goto fail
				}
				if f.col >= 0 {
					b.Col(f.col).B.AppendNull()
				}
				continue
			}
		}
		if f.col < 0 { // wire-only: checked, not stored
			if f.op.kind == opString {
				if s, ok := r.text(); !ok || !utf8.Valid(s) {
					goto fail
				}
			} else if !r.skip(f.op) {
				goto fail
			}
			continue
		}
		if !r.value(f.op, b.Col(f.col)) {
			goto fail
		}
	}
	if r.i != len(payload) || c.unbound != "" {
		goto fail
	}
	for _, col := range c.nullCols {
		b.Col(col).B.AppendNull()
	}
	if err := b.Commit(); err != nil {
		return 0, err
	}
	return 1, nil
fail:
	b.Abandon()
	return 0, c.diagnose(payload)
}
