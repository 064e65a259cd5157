package cbor

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// The direct walk: one pass over the payload that appends straight into
// the builders, without the library's generic tree. It takes only what it
// can decide exactly as the generic path would (definite lengths, text
// keys, every value in its field's domain); on anything else (every
// refusal, indefinite lengths, maps nested in undeclared fields, more than
// a handful of undeclared keys) it abandons the row and Decode runs the
// generic path, which then decides and words the outcome. So the verdict,
// the values and every error message are the generic path's by
// construction; FuzzDecode checks that the walk never accepts what the
// generic path refuses and that both build the same row.

// Bounds of the generic path's strict configuration.
const (
	maxMapPairs = 131072 // the library's default MaxMapPairs
	maxDepth    = 256    // MaxNestedLevels
	maxUnknown  = 8      // undeclared keys the walk tracks for duplicates
)

// walk is the state of one direct walk over one payload.
type walk struct {
	p        []byte
	off      int
	maxElems int
	bin      []byte
}

// rest is the number of bytes not read yet.
func (w *walk) rest() uint64 { return uint64(len(w.p) - w.off) }

// head reads a head with a definite argument; ok is false on a truncated
// head, a reserved additional information (28–30) or an indefinite length
// or break (31).
func (w *walk) head() (major byte, ai byte, val uint64, ok bool) {
	p, off := w.p, w.off
	if off >= len(p) {
		return 0, 0, 0, false
	}
	c := p[off]
	major, ai = c>>5, c&31
	switch {
	case ai < 24:
		w.off = off + 1
		return major, ai, uint64(ai), true
	case ai == 24:
		if off+2 > len(p) {
			return 0, 0, 0, false
		}
		val, w.off = uint64(p[off+1]), off+2
	case ai == 25:
		if off+3 > len(p) {
			return 0, 0, 0, false
		}
		val, w.off = uint64(binary.BigEndian.Uint16(p[off+1:])), off+3
	case ai == 26:
		if off+5 > len(p) {
			return 0, 0, 0, false
		}
		val, w.off = uint64(binary.BigEndian.Uint32(p[off+1:])), off+5
	case ai == 27:
		if off+9 > len(p) {
			return 0, 0, 0, false
		}
		val, w.off = binary.BigEndian.Uint64(p[off+1:]), off+9
	default:
		return 0, 0, 0, false
	}
	return major, ai, val, true
}

// text reads a definite text string holding valid UTF-8.
func (w *walk) text() ([]byte, bool) {
	if w.off >= len(w.p) || w.p[w.off]>>5 != 3 {
		return nil, false
	}
	_, _, n, ok := w.head()
	if !ok || n > w.rest() {
		return nil, false
	}
	s := w.p[w.off : w.off+int(n)]
	w.off += int(n)
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return s, utf8.Valid(s)
		}
	}
	return s, true
}

// half converts an IEEE 754 binary16 to float64 (exactly).
func half(h uint16) float64 {
	exp, mant := int(h>>10&0x1f), float64(h&0x3ff)
	var f float64
	switch exp {
	case 0:
		f = math.Ldexp(mant, -24)
	case 31:
		if mant != 0 {
			return math.NaN()
		}
		f = math.Inf(1)
	default:
		f = math.Ldexp(1024+mant, exp-25)
	}
	if h&0x8000 != 0 {
		f = -f
	}
	return f
}

// peekFloat decodes the float at the read position without moving.
func (w *walk) peekFloat() (float64, bool) {
	p, off := w.p, w.off
	switch {
	case p[off] == 0xf9 && off+3 <= len(p):
		return half(binary.BigEndian.Uint16(p[off+1:])), true
	case p[off] == 0xfa && off+5 <= len(p):
		return float64(math.Float32frombits(binary.BigEndian.Uint32(p[off+1:]))), true
	case p[off] == 0xfb && off+9 <= len(p):
		return math.Float64frombits(binary.BigEndian.Uint64(p[off+1:])), true
	}
	return 0, false
}

// number reads an integer or a finite float as a value of the given width,
// rounded as the generic path rounds it.
func (w *walk) number(bits int) (float64, bool) {
	if w.off >= len(w.p) {
		return 0, false
	}
	if c := w.p[w.off]; c >= 0xf9 && c <= 0xfb {
		f, ok := w.peekFloat()
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		w.off += 1 + 2<<(c-0xf9)
		return f, true
	}
	neg, mag, ok := w.integer()
	if !ok {
		return 0, false
	}
	if mag <= 1<<53 { // exact in a float64: one rounding to the width, as parsing the digits
		f := float64(mag)
		if neg {
			f = -f
		}
		return f, true
	}
	var buf [24]byte
	t := buf[:0]
	if neg {
		t = append(t, '-')
	}
	return values.ParseFloat(strconv.AppendUint(t, mag, 10), bits), true
}

// integer reads an integer within 64 bits as sign and magnitude (a
// negative integer below -2^63 is a bignum to the generic path).
func (w *walk) integer() (neg bool, mag uint64, ok bool) {
	major, _, val, ok := w.head()
	switch {
	case !ok:
		return false, 0, false
	case major == 0:
		return false, val, true
	case major == 1 && val <= math.MaxInt64:
		return true, val + 1, true
	}
	return false, 0, false
}

// fast decodes payload into one row of b by the direct walk. It reports
// false, with the row abandoned or never begun, when the generic path must
// decide.
func (d *Decoder) fast(p []byte, b *rows.Builder) bool {
	if len(p) == 0 || p[0]>>5 != 5 {
		return false
	}
	w := walk{p: p, maxElems: d.maxElems}
	_, _, n, ok := w.head()
	if !ok || n > maxMapPairs || n > w.rest()/2 {
		return false
	}
	var seenBuf [64]bool
	var seen []bool
	if len(d.fields) <= len(seenBuf) {
		seen = seenBuf[:len(d.fields)]
	} else {
		seen = make([]bool, len(d.fields))
	}
	b.BeginRow()
	if !d.row(&w, b, int(n), seen) {
		b.Abandon()
		return false
	}
	return b.Commit() == nil
}

func (d *Decoder) row(w *walk, b *rows.Builder, n int, seen []bool) bool {
	var unknown [maxUnknown][]byte
	nu := 0
	for range n {
		k, ok := w.text()
		if !ok {
			return false
		}
		i, declared := d.byName[string(k)]
		if !declared {
			if !d.loose || nu == maxUnknown {
				return false
			}
			for _, u := range unknown[:nu] {
				if bytes.Equal(u, k) {
					return false
				}
			}
			unknown[nu] = k
			nu++
			if !w.skip(2) {
				return false
			}
			continue
		}
		if seen[i] {
			return false
		}
		seen[i] = true
		if !d.field(w, b, &d.fields[i]) {
			return false
		}
	}
	if w.off != len(w.p) {
		return false
	}
	for i := range d.fields {
		if seen[i] {
			continue
		}
		f := &d.fields[i]
		if !f.optional || f.required {
			return false
		}
		if f.col >= 0 {
			b.Col(f.col).B.AppendNull()
		}
	}
	if d.unbound != "" {
		return false
	}
	for _, c := range d.nullCols {
		b.Col(c).B.AppendNull()
	}
	return true
}

// field decodes one declared field's value (null, or a non-finite float
// read as null, in an optional field).
func (d *Decoder) field(w *walk, b *rows.Builder, f *dfield) bool {
	if w.off >= len(w.p) {
		return false
	}
	null := false
	switch c := w.p[w.off]; {
	case c == 0xf6:
		null = true
		w.off++
	case c >= 0xf9 && c <= 0xfb:
		v, ok := w.peekFloat()
		if ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			null = true
			w.off += 1 + 2<<(c-0xf9)
		}
	}
	if null {
		if !f.optional || f.required {
			return false
		}
		if f.col >= 0 {
			b.Col(f.col).B.AppendNull()
		}
		return true
	}
	if f.col < 0 {
		return w.check(f.typ)
	}
	return w.value(b.Col(f.col), 2)
}

// value appends one value (never null) to c; depth is its nesting level
// were it an array.
func (w *walk) value(c *rows.Col, depth int) bool {
	k := c.Kind
	switch {
	case k == types.F32:
		f, ok := w.number(32)
		v, fit := values.FitF32(f)
		if ok && fit {
			c.F32.Append(v)
		}
		return ok && fit // beyond F32's range: the generic path says so
	case k == types.F64:
		f, ok := w.number(64)
		if ok {
			c.F64.Append(f)
		}
		return ok
	case k.IsInteger():
		neg, mag, ok := w.integer()
		if !ok {
			return false
		}
		if k.IsUnsigned() {
			u, ok := values.FitUnsigned(k, neg, mag)
			if ok {
				c.AppendUint(u)
			}
			return ok
		}
		s, ok := values.FitSigned(k, neg, mag)
		if ok {
			c.AppendInt(s)
		}
		return ok
	case k == types.Bool:
		if w.off >= len(w.p) || w.p[w.off]&^1 != 0xf4 {
			return false
		}
		c.Bool.Append(w.p[w.off] == 0xf5)
		w.off++
		return true
	case k == types.String:
		s, ok := w.text()
		if ok {
			c.Str.BinaryBuilder.Append(s)
		}
		return ok
	case k == types.Bytes:
		s, ok := w.text()
		if !ok {
			return false
		}
		if w.bin, ok = values.DecodeBase64(w.bin[:0], s); ok {
			c.Bin.Append(w.bin)
		}
		return ok
	case k == types.Datetime:
		s, ok := w.text()
		if !ok {
			return false
		}
		ns, code := values.ParseRFC3339(s, 9)
		if code != "" {
			return false
		}
		c.TS.Append(timestamp(ns))
		return true
	case k == types.Array || k == types.Vec:
		return w.array(c, depth)
	}
	return false
}

// array appends one ARRAY axis or VEC.
func (w *walk) array(c *rows.Col, depth int) bool {
	if depth > maxDepth || w.off >= len(w.p) || w.p[w.off]>>5 != 4 {
		return false
	}
	_, _, n, ok := w.head()
	if !ok || n > uint64(w.maxElems) || n > w.rest() {
		return false
	}
	if c.Kind == types.Array {
		if n != uint64(c.N) {
			return false
		}
		c.FSL.Append(true)
	} else {
		c.List.Append(true)
	}
	e := c.Elem
	if e.Kind == types.F32 && w.rest() >= 5*n {
		// The common case, single floats, without a call per element.
		e.F32.Reserve(int(n))
		p := w.p
		for range n {
			off := w.off
			if off+5 <= len(p) && p[off] == 0xfa {
				bits := binary.BigEndian.Uint32(p[off+1:])
				if bits&0x7f800000 == 0x7f800000 {
					return false // non-finite: null where a value is required
				}
				e.F32.UnsafeAppend(math.Float32frombits(bits))
				w.off = off + 5
				continue
			}
			f, ok := w.number(32)
			v, fit := values.FitF32(f)
			if !ok || !fit {
				return false
			}
			e.F32.Append(v)
		}
		return true
	}
	for range n {
		if !w.value(e, depth+1) {
			return false
		}
	}
	return true
}

// check validates a wire-only field's value against its wire type's
// domain, as the generic path's check does.
func (w *walk) check(t types.Type) bool {
	if w.off >= len(w.p) {
		return false
	}
	c := w.p[w.off]
	switch {
	case t.Kind == types.Invalid:
		return c>>5 == 4 && w.skip(2)
	case t.Kind.IsInteger():
		_, _, ok := w.integer()
		return ok
	case t.Kind.IsFloat():
		_, ok := w.number(64)
		return ok
	case t.Kind == types.Bool:
		w.off++
		return c&^1 == 0xf4
	}
	s, ok := w.text()
	if !ok {
		return false
	}
	switch t.Kind {
	case types.Bytes:
		w.bin, ok = values.DecodeBase64(w.bin[:0], s)
	case types.Datetime:
		_, code := values.ParseRFC3339(s, 9)
		ok = code == ""
	}
	return ok
}

// skip validates and passes over one value of an undeclared field (depth
// is its nesting level were it an array): what the generic path accepts
// there, but for maps, tags and indefinite lengths, which the walk leaves
// to it.
func (w *walk) skip(depth int) bool {
	if w.off >= len(w.p) {
		return false
	}
	c := w.p[w.off]
	switch major, ai := c>>5, c&31; major {
	case 0, 1:
		_, _, _, ok := w.head()
		return ok
	case 2:
		_, _, n, ok := w.head()
		if !ok || n > w.rest() {
			return false
		}
		w.off += int(n)
		return true
	case 3:
		_, ok := w.text()
		return ok
	case 4:
		_, _, n, ok := w.head()
		if !ok || depth > maxDepth || n > uint64(w.maxElems) || n > w.rest() {
			return false
		}
		for range n {
			if !w.skip(depth + 1) {
				return false
			}
		}
		return true
	case 7:
		switch {
		case ai < 23: // unassigned simple values, false, true, null
			w.off++
			return true
		case ai == 24: // one-byte simple value: 32…255 only
			if w.off+2 > len(w.p) || w.p[w.off+1] < 32 {
				return false
			}
			w.off += 2
			return true
		case ai >= 25 && ai <= 27:
			_, _, _, ok := w.head()
			return ok
		}
	}
	return false
}
