package store

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// reader walks one stored item, refusing everything the encoder never
// writes: indefinite lengths, heads longer than needed, half floats,
// simple values other than false, true and null, tags other than 1001.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) fail(code values.Code, msg string) *values.Error {
	return &values.Error{Code: code, Msg: msg, Offset: r.pos}
}

func (r *reader) truncated() *values.Error {
	return r.fail(values.CodeSyntax, "stored row ends early")
}

// head reads one initial byte and its argument. For major type 7, n is
// the float's bits (info 26, 27) or the simple value.
func (r *reader) head() (major, info byte, n uint64, err *values.Error) {
	if r.pos >= len(r.b) {
		return 0, 0, 0, r.truncated()
	}
	ib := r.b[r.pos]
	major, info = ib>>5, ib&0x1f
	r.pos++
	need := 0
	switch {
	case info < 24:
		n = uint64(info)
	case info == 24:
		need = 1
	case info == 25:
		need = 2
	case info == 26:
		need = 4
	case info == 27:
		need = 8
	default:
		return 0, 0, 0, r.fail(values.CodeSyntax, "stored row holds an indefinite length or a reserved head")
	}
	if need > 0 {
		if len(r.b)-r.pos < need {
			return 0, 0, 0, r.truncated()
		}
		p := r.b[r.pos : r.pos+need]
		switch need {
		case 1:
			n = uint64(p[0])
		case 2:
			n = uint64(binary.BigEndian.Uint16(p))
		case 4:
			n = uint64(binary.BigEndian.Uint32(p))
		default:
			n = binary.BigEndian.Uint64(p)
		}
		r.pos += need
	}
	if major == majOther {
		switch {
		case info == 26 || info == 27:
		case info == 20 || info == 21 || info == 22:
		default:
			return 0, 0, 0, r.fail(values.CodeSyntax, "stored row holds a simple value or float form herald never writes")
		}
		return major, info, n, nil
	}
	// the shortest head only: one encoding per value
	if (info == 24 && n < 24) || (info == 25 && n <= math.MaxUint8) || (info == 26 && n <= math.MaxUint16) || (info == 27 && n <= math.MaxUint32) {
		return 0, 0, 0, r.fail(values.CodeSyntax, "stored row holds a head longer than needed")
	}
	return major, info, n, nil
}

// span reads the n bytes of a byte or text string.
func (r *reader) span(n uint64) ([]byte, *values.Error) {
	if n > uint64(len(r.b)-r.pos) {
		return nil, r.truncated()
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

// count checks that n items of at least one byte each can follow.
func (r *reader) count(n uint64) *values.Error {
	if n > uint64(len(r.b)-r.pos) {
		return r.truncated()
	}
	return nil
}

// time reads the content of tag 1001 (the tag already read).
func (r *reader) time() (int64, *values.Error) {
	major, _, n, err := r.head()
	if err != nil {
		return 0, err
	}
	if major != majMap || (n != 1 && n != 2) {
		return 0, r.fail(values.CodeSyntax, "stored datetime is not {1: seconds, -9: nanoseconds}")
	}
	var secs int64
	var frac uint64
	for k := uint64(0); k < n; k++ {
		km, _, kn, err := r.head()
		if err != nil {
			return 0, err
		}
		switch {
		case k == 0 && km == majUint && kn == 1:
			vm, _, vn, err := r.head()
			if err != nil {
				return 0, err
			}
			switch {
			case vm == majUint && vn <= math.MaxInt64:
				secs = int64(vn)
			case vm == majNeg && vn <= math.MaxInt64:
				secs = -1 - int64(vn)
			default:
				return 0, r.fail(values.CodeOutOfRange, "stored datetime is outside the DATETIME range")
			}
		case k == 1 && km == majNeg && kn == 8:
			vm, _, vn, err := r.head()
			if err != nil {
				return 0, err
			}
			if vm != majUint || vn == 0 || vn >= 1e9 {
				return 0, r.fail(values.CodeSyntax, "stored datetime has a nanosecond part outside 1…999999999")
			}
			frac = vn
		default:
			return 0, r.fail(values.CodeSyntax, "stored datetime is not {1: seconds, -9: nanoseconds}")
		}
	}
	// secs*1e9 + frac must fit the nanoseconds of an int64
	const (
		maxSecs int64  = math.MaxInt64 / 1_000_000_000 // 9223372036, up to …854775807 ns
		minSecs int64  = -maxSecs - 1                  // -9223372037, from …145224192 ns
		maxFrac uint64 = math.MaxInt64 % 1_000_000_000
		minFrac uint64 = 1_000_000_000 - (math.MaxInt64%1_000_000_000 + 1)
	)
	if secs > maxSecs || secs < minSecs || (secs == maxSecs && frac > maxFrac) || (secs == minSecs && frac < minFrac) {
		return 0, r.fail(values.CodeOutOfRange, "stored datetime is outside the DATETIME range")
	}
	ns := secs*1e9 + int64(frac)
	return ns, nil
}

// skip passes over one item.
func (r *reader) skip(depth int) *values.Error {
	if depth > MaxDepth+2 {
		return r.fail(values.CodeTooDeep, "stored row nests too deep")
	}
	major, _, n, err := r.head()
	if err != nil {
		return err
	}
	switch major {
	case majBytes, majText:
		s, err := r.span(n)
		if err != nil {
			return err
		}
		if major == majText && !utf8.Valid(s) {
			return r.fail(values.CodeInvalidUTF8, "stored text is not valid UTF-8")
		}
	case majArray:
		if err := r.count(n); err != nil {
			return err
		}
		for i := uint64(0); i < n; i++ {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
	case majMap:
		if err := r.count(n); err != nil {
			return err
		}
		for i := uint64(0); i < 2*n; i++ {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
	case majTag:
		if n != tagTime {
			return r.fail(values.CodeSyntax, "stored row holds a tag herald never writes")
		}
		_, err := r.time()
		return err
	}
	return nil
}

type dfield struct {
	name     string
	typ      types.Type
	optional bool
	masked   bool
}

// Decoder reads stored rows into rows of one internal schema, by field
// name: the row may have been written under an older schema. A stored
// field the schema does not declare is skipped, an absent optional field
// reads as null, integers widen, integers read as floats (to the nearest),
// F32 reads as F64 exactly, DATETIME reads as STRING (RFC 3339 text) and
// STRING as BYTES. Anything else is an error naming the field. A Decoder
// is not safe for concurrent use.
type Decoder struct {
	fields []dfield
	byName map[string]int
	seen   []bool
	r      reader
	text   []byte
}

// MaskText is what a masked STRING or BYTES value reads as.
const MaskText = "***"

// NewDecoder returns a decoder into schema s. Fields for which masked
// reports true read as a mask instead of their value: STRING and BYTES as
// MaskText, any other type as null when it is OPTIONAL and as its zero
// value otherwise (0, false, 1970-01-01T00:00:00Z, an empty VEC, an ARRAY
// of zeros); a stored null stays null. masked may be nil.
func NewDecoder(s *types.Schema, masked func(types.Field) bool) *Decoder {
	d := &Decoder{byName: make(map[string]int, len(s.Fields)), seen: make([]bool, len(s.Fields))}
	for i, f := range s.Fields {
		d.byName[f.Name] = i
		d.fields = append(d.fields, dfield{name: f.Name, typ: f.Type, optional: f.Optional, masked: masked != nil && masked(f)})
	}
	return d
}

// Decode reads one stored row into one new row of b, whose schema must be
// the decoder's. On error the row is abandoned and the error names the
// field and the rule.
func (d *Decoder) Decode(data []byte, b *rows.Builder) error {
	d.r = reader{b: data}
	b.BeginRow()
	if err := d.row(b); err != nil {
		b.Abandon()
		return err
	}
	return b.Commit()
}

func (d *Decoder) row(b *rows.Builder) *values.Error {
	r := &d.r
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
	clear(d.seen)
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
		i := -1
		if int(k) < len(d.fields) && d.fields[k].name == string(key) {
			i = int(k)
		} else if j, ok := d.byName[string(key)]; ok {
			i = j
		}
		if i < 0 {
			if err := r.skip(1); err != nil {
				return err
			}
			continue
		}
		if d.seen[i] {
			return &values.Error{Code: values.CodeDuplicateField, Path: types.Quote(d.fields[i].name), Msg: "field occurs twice in the stored row", Offset: r.pos}
		}
		d.seen[i] = true
		if err := d.top(b.Col(i), &d.fields[i]); err != nil {
			if err.Path == "" || err.Path[0] == '[' {
				err.Path = types.Quote(d.fields[i].name) + err.Path
			}
			return err
		}
	}
	if r.pos != len(r.b) {
		return r.fail(values.CodeTrailing, "data after the stored row")
	}
	for i := range d.fields {
		if d.seen[i] {
			continue
		}
		f := &d.fields[i]
		if !f.optional {
			return values.Errorf(values.CodeMissingField, types.Quote(f.name), "required field is missing from the stored row (the schema changed incompatibly)")
		}
		b.Col(i).B.AppendNull()
	}
	return nil
}

func (d *Decoder) top(c *rows.Col, f *dfield) *values.Error {
	r := &d.r
	if r.pos < len(r.b) && r.b[r.pos] == cborNull {
		r.pos++
		if !f.optional {
			return r.fail(values.CodeNullValue, "null in a required field")
		}
		c.B.AppendNull()
		return nil
	}
	if f.masked {
		if err := r.skip(1); err != nil {
			return err
		}
		if f.optional && f.typ.Kind != types.String && f.typ.Kind != types.Bytes {
			c.B.AppendNull()
			return nil
		}
		appendMask(c)
		return nil
	}
	return d.value(c, 1)
}

// appendMask appends the mask of c's type: MaskText for text and bytes,
// the zero value otherwise.
func appendMask(c *rows.Col) {
	switch k := c.Kind; {
	case k.IsUnsigned():
		c.AppendUint(0)
	case k.IsInteger():
		c.AppendInt(0)
	case k == types.F32:
		c.F32.Append(0)
	case k == types.F64:
		c.F64.Append(0)
	case k == types.Bool:
		c.Bool.Append(false)
	case k == types.String:
		c.Str.Append(MaskText)
	case k == types.Bytes:
		c.Bin.Append([]byte(MaskText))
	case k == types.Datetime:
		c.TS.Append(0)
	case k == types.Array:
		c.FSL.Append(true)
		for i := 0; i < c.N; i++ {
			appendMask(c.Elem)
		}
	case k == types.Vec:
		c.List.Append(true)
	}
}

func (d *Decoder) mismatch(major byte, want types.Type) *values.Error {
	return d.r.fail(values.CodeTypeMismatch, "stored "+kindName(major)+" cannot be read as "+want.String()+" (the schema changed incompatibly)")
}

func kindName(major byte) string {
	switch major {
	case majUint, majNeg:
		return "integer"
	case majBytes:
		return "bytes"
	case majText:
		return "text"
	case majArray:
		return "array"
	case majMap:
		return "map"
	case majTag:
		return "datetime"
	}
	return "value"
}

// value reads one non-null value into c.
func (d *Decoder) value(c *rows.Col, depth int) *values.Error {
	r := &d.r
	start := r.pos
	major, info, n, err := r.head()
	if err != nil {
		return err
	}
	k := c.Kind
	if major == majOther && info == 22 {
		return r.fail(values.CodeNullValue, "null where a value is required (collection elements are never null)")
	}
	switch {
	case k.IsInteger():
		if major != majUint && major != majNeg {
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
		neg, mag := major == majNeg, n
		if neg {
			if n == math.MaxUint64 {
				return r.fail(values.CodeOutOfRange, "integer is outside the range of "+k.String())
			}
			mag = n + 1
		}
		if k.IsUnsigned() {
			v, ok := values.FitUnsigned(k, neg, mag)
			if !ok {
				return r.fail(values.CodeOutOfRange, "integer is outside the range of "+k.String())
			}
			c.AppendUint(v)
		} else {
			v, ok := values.FitSigned(k, neg, mag)
			if !ok {
				return r.fail(values.CodeOutOfRange, "integer is outside the range of "+k.String())
			}
			c.AppendInt(v)
		}
	case k == types.F32 || k == types.F64:
		var f float64
		switch {
		case major == majOther && info == 26:
			f = float64(math.Float32frombits(uint32(n)))
		case major == majOther && info == 27:
			if k == types.F32 {
				return r.fail(values.CodeTypeMismatch, "stored F64 cannot be read as F32 without rounding (the schema changed incompatibly)")
			}
			f = math.Float64frombits(n)
		case major == majUint || major == majNeg:
			f = intToFloat(major == majNeg, n, k.Bits())
		default:
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
		if k == types.F32 {
			if major == majOther {
				c.F32.Append(math.Float32frombits(uint32(n)))
			} else {
				c.F32.Append(float32(f))
			}
		} else {
			c.F64.Append(f)
		}
	case k == types.Bool:
		if major != majOther || (info != 20 && info != 21) {
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
		c.Bool.Append(info == 21)
	case k == types.String:
		switch major {
		case majText:
			s, err := r.span(n)
			if err != nil {
				return err
			}
			if !utf8.Valid(s) {
				return r.fail(values.CodeInvalidUTF8, "stored text is not valid UTF-8")
			}
			c.Str.BinaryBuilder.Append(s)
		case majTag:
			if n != tagTime {
				return r.fail(values.CodeSyntax, "stored row holds a tag herald never writes")
			}
			ns, err := r.time()
			if err != nil {
				return err
			}
			d.text = values.AppendRFC3339(d.text[:0], ns, 9)
			c.Str.BinaryBuilder.Append(d.text)
		default:
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
	case k == types.Bytes:
		if major != majBytes && major != majText {
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
		s, err := r.span(n)
		if err != nil {
			return err
		}
		if major == majText && !utf8.Valid(s) {
			return r.fail(values.CodeInvalidUTF8, "stored text is not valid UTF-8")
		}
		c.Bin.Append(s)
	case k == types.Datetime:
		if major != majTag || n != tagTime {
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
		ns, err := r.time()
		if err != nil {
			return err
		}
		c.TS.Append(arrow.Timestamp(ns))
	case k == types.Array || k == types.Vec:
		if depth > MaxDepth {
			return r.fail(values.CodeTooDeep, "stored row nests too deep")
		}
		if major != majArray {
			r.pos = start
			return d.mismatchSkip(major, c.Type)
		}
		if err := r.count(n); err != nil {
			return err
		}
		if k == types.Array {
			if n != uint64(c.N) {
				return r.fail(values.CodeShape, "fixed axis of length "+strconv.Itoa(c.N)+" has "+strconv.FormatUint(n, 10)+" elements")
			}
			c.FSL.Append(true)
		} else {
			c.List.Append(true)
		}
		for j := 0; j < int(n); j++ {
			if err := d.value(c.Elem, depth+1); err != nil {
				err.Path = values.IndexPath("", j) + err.Path
				return err
			}
		}
	default:
		return r.fail(values.CodeTypeMismatch, "unsupported type")
	}
	return nil
}

// mismatchSkip validates the item at the cursor (a malformed item is a
// syntax error first) and reports the type mismatch.
func (d *Decoder) mismatchSkip(major byte, want types.Type) *values.Error {
	if err := d.r.skip(1); err != nil {
		return err
	}
	return d.mismatch(major, want)
}

// intToFloat converts a stored integer (CBOR major 0 or 1 with argument
// n) to the nearest float of width bits.
func intToFloat(neg bool, n uint64, bits int) float64 {
	var text []byte
	if neg {
		text = append(text, '-')
		if n == math.MaxUint64 {
			text = append(text, "18446744073709551616"...)
		} else {
			text = strconv.AppendUint(text, n+1, 10)
		}
	} else {
		text = strconv.AppendUint(text, n, 10)
	}
	f, _ := strconv.ParseFloat(string(text), bits)
	return f
}
