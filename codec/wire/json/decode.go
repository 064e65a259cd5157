// Package json owns the WIRE JSON format: a strict decoder that walks one
// JSON object straight into a batch's Arrow builders, and an encoder that
// writes objects in schema field order straight from Arrow columns. The
// decoder also walks one object straight into the stored row of package
// store (DecodeStored), with the same checks and errors, for the
// one-record notify that needs no batch. It also serves the row view (the JSON form of internal rows that `herald
// codec` reads and prints), which shares every rule but floats and nulls.
//
// It must not build a generic JSON tree or a row map, and must not apply
// value rules of its own: ranges, floats, datetimes and base64 come from
// package values.
package json

import (
	"math"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// dfield is one compiled wire field.
type dfield struct {
	name     string
	col      int // internal column, -1 for a wire-only field
	typ      types.Type
	optional bool // the wire field's OPTIONAL: the payload may omit it or carry null
	// required: the field is OPTIONAL in the wire schema only, so a
	// missing value fails the decode after all
	required bool
}

// Decoder decodes WIRE JSON payloads (one object each) into rows. Field
// lookups and types are resolved when it is built. A Decoder is not safe
// for concurrent use; build one per goroutine.
type Decoder struct {
	fields   []dfield
	byName   map[string]int
	nullCols []int // internal-only optional columns: always null
	loose    bool
	rowView  bool
	seen     []uint32
	gen      uint32
	sc       scanner
	bin      []byte
	path     []int    // element indexes of the value being decoded
	cur      int      // field being decoded
	unknown  []string // LOOSE: undeclared names seen in this object
	// stored is the state of DecodeStored; nil until its first use.
	stored *storedRow
	// schema is the internal schema (nil for the row view's decoder).
	schema *types.Schema
	// unbound names the first required internal field no wire field
	// binds ("" when none): every decode fails with unboundMsg.
	unbound, unboundMsg string
}

// NewDecoder compiles a decoder for a WIRE JSON plan.
func NewDecoder(p *bind.Plan) *Decoder {
	d := &Decoder{byName: map[string]int{}, loose: p.Wire.Mode == types.Loose, schema: p.Schema}
	for _, wi := range p.WireOrder {
		var f bind.Field
		if wi >= 0 {
			f = p.Fields[wi]
		} else {
			f = p.WireOnly[-wi-1]
		}
		d.byName[f.Name] = len(d.fields)
		d.fields = append(d.fields, dfield{name: f.Name, col: f.Internal, typ: f.Type, optional: f.WireOptional, required: f.Internal >= 0 && f.WireOptional && !f.Optional})
	}
	for _, f := range p.Fields {
		if f.Wire < 0 && f.Optional {
			d.nullCols = append(d.nullCols, f.Internal)
		}
	}
	if u := p.Unbound(); len(u) > 0 {
		d.unbound, d.unboundMsg = u[0].Name, p.UnboundMsg()
	}
	d.seen = make([]uint32, len(d.fields))
	return d
}

// NewRowViewDecoder compiles a decoder of the row view of schema s: every
// field by its internal name, floats also as "NaN", "Infinity" and
// "-Infinity", STRICT.
func NewRowViewDecoder(s *types.Schema) *Decoder {
	d := &Decoder{byName: map[string]int{}, rowView: true}
	for i, f := range s.Fields {
		d.byName[f.Name] = i
		d.fields = append(d.fields, dfield{name: f.Name, col: i, typ: f.Type, optional: f.Optional})
	}
	d.seen = make([]uint32, len(d.fields))
	return d
}

func (d *Decoder) errPath() string {
	if d.cur < 0 || d.cur >= len(d.fields) {
		return ""
	}
	p := d.fields[d.cur].name
	for _, i := range d.path {
		p = values.IndexPath(p, i)
	}
	return p
}

func (d *Decoder) fail(code values.Code, msg string) *values.Error {
	return &values.Error{Code: code, Path: d.errPath(), Msg: msg, Offset: d.sc.pos}
}

// Decode decodes one payload holding one JSON object into one row of b.
// On error nothing is added to b (the row is abandoned) and the error is a
// *values.Error naming the field and the rule, never a payload value.
func (d *Decoder) Decode(payload []byte, b *rows.Builder) (int, error) {
	d.sc.reset(payload)
	d.cur = -1
	d.path = d.path[:0]
	c := d.sc.peek()
	if c == 0 && d.sc.pos >= len(payload) {
		return 0, &values.Error{Code: values.CodeEmpty, Msg: "empty payload: expected one JSON object", Offset: -1}
	}
	if c != '{' {
		if err := d.sc.skip(0); err != nil {
			return 0, err
		}
		return 0, &values.Error{Code: values.CodeExpectedObject, Msg: "payload is not a JSON object", Offset: 0}
	}
	b.BeginRow()
	if err := d.object(b); err != nil {
		b.Abandon()
		return 0, err
	}
	if d.sc.peek() != 0 || d.sc.pos < len(payload) {
		b.Abandon()
		return 0, &values.Error{Code: values.CodeTrailing, Msg: "data after the JSON object: a payload holds exactly one object", Offset: d.sc.pos}
	}
	if err := b.Commit(); err != nil {
		return 0, err
	}
	return 1, nil
}

func (d *Decoder) object(b *rows.Builder) *values.Error {
	sc := &d.sc
	sc.pos++ // '{'
	d.unknown = d.unknown[:0]
	d.gen++
	if d.gen == 0 { // wrapped: clear
		clear(d.seen)
		d.gen = 1
	}
	if sc.peek() == '}' {
		sc.pos++
	} else {
		for {
			key, err := sc.str()
			if err != nil {
				if sc.pos < len(sc.buf) && err.Code == values.CodeSyntax {
					return sc.syntax("a member name")
				}
				return err
			}
			i, ok := d.byName[string(key)]
			if err := sc.expect(':', "':' after a member name"); err != nil {
				return err
			}
			if !ok {
				if !d.loose {
					return &values.Error{Code: values.CodeUnexpectedField, Path: safeName(key), Msg: "field is not declared by the STRICT wire schema", Offset: sc.pos}
				}
				for _, u := range d.unknown {
					if u == string(key) {
						return &values.Error{Code: values.CodeDuplicateField, Path: safeName(key), Msg: "field occurs twice in the object", Offset: sc.pos}
					}
				}
				d.unknown = append(d.unknown, string(key))
				if err := sc.skip(1); err != nil {
					return err
				}
			} else {
				if d.seen[i] == d.gen {
					return &values.Error{Code: values.CodeDuplicateField, Path: d.fields[i].name, Msg: "field occurs twice in the object", Offset: sc.pos}
				}
				d.seen[i] = d.gen
				d.cur = i
				f := &d.fields[i]
				if f.col < 0 {
					if err := d.check(f.typ, 1); err != nil {
						return err
					}
				} else if b == nil {
					if err := d.topStored(f); err != nil {
						return err
					}
				} else if err := d.top(b.Col(f.col), f); err != nil {
					return err
				}
				d.cur = -1
			}
			switch sc.peek() {
			case ',':
				sc.pos++
			case '}':
				sc.pos++
				goto done
			default:
				return sc.syntax("',' or '}'")
			}
		}
	}
done:
	for i := range d.fields {
		if d.seen[i] == d.gen {
			continue
		}
		f := &d.fields[i]
		if !f.optional {
			return &values.Error{Code: values.CodeMissingField, Path: f.name, Msg: "required field is missing", Offset: -1}
		}
		if f.required {
			return &values.Error{Code: values.CodeMissingField, Path: f.name, Msg: bind.MsgMissingWireOptional, Offset: -1}
		}
		if f.col >= 0 && b != nil {
			b.Col(f.col).B.AppendNull()
		}
	}
	if d.unbound != "" {
		return &values.Error{Code: values.CodeMissingField, Path: d.unbound, Msg: d.unboundMsg, Offset: -1}
	}
	if b != nil {
		for _, c := range d.nullCols {
			b.Col(c).B.AppendNull()
		}
	}
	return nil
}

// safeName renders a payload member name for an error: it is a name, not
// a value, but it is still bounded and quoted.
func safeName(k []byte) string {
	const max = 64
	s := string(k)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return types.Quote(s)
}

func (d *Decoder) top(c *rows.Col, f *dfield) *values.Error {
	if d.sc.peek() == 'n' {
		if err := d.sc.literal("null"); err != nil {
			return err
		}
		if !f.optional {
			return d.fail(values.CodeNullValue, "null in a required field")
		}
		if f.required {
			return d.fail(values.CodeNullValue, bind.MsgNullWireOptional)
		}
		c.B.AppendNull()
		return nil
	}
	return d.value(c, 1)
}

// integer reads an integer literal of kind k at ch (the peeked byte):
// its value as u (unsigned kinds) or i (signed kinds), range-checked.
// value and valueStored share it, so both walks refuse alike.
func (d *Decoder) integer(k types.Kind, ch byte) (u uint64, i int64, _ *values.Error) {
	sc := &d.sc
	if ch != '-' && (ch < '0' || ch > '9') {
		return 0, 0, d.mismatch(ch, "an integer")
	}
	text, isInt, err := sc.number()
	if err != nil {
		return 0, 0, err
	}
	if !isInt {
		return 0, 0, d.fail(values.CodeNotInteger, "expected an integer literal, found a number with a fraction or exponent")
	}
	neg, mag, code := values.ParseIntegerLiteral(text)
	if code != "" {
		return 0, 0, d.fail(values.CodeOutOfRange, "integer is outside the range of "+k.String())
	}
	ok := false
	if k.IsUnsigned() {
		u, ok = values.FitUnsigned(k, neg, mag)
	} else {
		i, ok = values.FitSigned(k, neg, mag)
	}
	if !ok {
		return 0, 0, d.fail(values.CodeOutOfRange, "integer is outside the range of "+k.String())
	}
	return u, i, nil
}

// float reads a number of kind k (F32 or F64) at ch, or in the row view
// one of the strings "NaN", "Infinity", "-Infinity".
func (d *Decoder) float(k types.Kind, ch byte) (float64, *values.Error) {
	sc := &d.sc
	if ch == '"' && d.rowView {
		s, err := sc.str()
		if err != nil {
			return 0, err
		}
		switch string(s) {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return 0, d.fail(values.CodeTypeMismatch, `expected a number or "NaN", "Infinity", "-Infinity"`)
	}
	if ch != '-' && (ch < '0' || ch > '9') {
		return 0, d.mismatch(ch, "a number")
	}
	f, err := sc.float(k.Bits())
	if err == nil && math.IsInf(f, 0) {
		// JSON text is always a finite number: it lies beyond the range.
		return 0, d.fail(values.CodeOutOfRange, values.FloatRange(k))
	}
	return f, err
}

// value decodes one non-null value into c.
func (d *Decoder) value(c *rows.Col, depth int) *values.Error {
	sc := &d.sc
	ch := sc.peek()
	if ch == 'n' {
		if err := sc.literal("null"); err != nil {
			return err
		}
		return d.fail(values.CodeNullValue, "null where a value is required (collection elements are never null)")
	}
	k := c.Kind
	switch {
	case k.IsInteger():
		u, i, err := d.integer(k, ch)
		if err != nil {
			return err
		}
		if k.IsUnsigned() {
			c.AppendUint(u)
		} else {
			c.AppendInt(i)
		}
	case k == types.F32 || k == types.F64:
		f, err := d.float(k, ch)
		if err != nil {
			return err
		}
		if k == types.F32 {
			c.F32.Append(float32(f))
		} else {
			c.F64.Append(f)
		}
	case k == types.Bool:
		switch ch {
		case 't':
			if err := sc.literal("true"); err != nil {
				return err
			}
			c.Bool.Append(true)
		case 'f':
			if err := sc.literal("false"); err != nil {
				return err
			}
			c.Bool.Append(false)
		default:
			return d.mismatch(ch, "a boolean")
		}
	case k == types.String:
		if ch != '"' {
			return d.mismatch(ch, "a string")
		}
		s, err := sc.str()
		if err != nil {
			return d.withPath(err)
		}
		c.Str.BinaryBuilder.Append(s)
	case k == types.Bytes:
		if ch != '"' {
			return d.mismatch(ch, "a base64 string")
		}
		s, err := sc.str()
		if err != nil {
			return d.withPath(err)
		}
		var ok bool
		d.bin, ok = values.DecodeBase64(d.bin[:0], s)
		if !ok {
			return d.fail(values.CodeInvalidBase64, "expected canonical padded standard base64")
		}
		c.Bin.Append(d.bin)
	case k == types.Datetime:
		if ch != '"' {
			return d.mismatch(ch, "an RFC 3339 string")
		}
		s, err := sc.str()
		if err != nil {
			return d.withPath(err)
		}
		ns, code := values.ParseRFC3339(s, 9)
		if code != "" {
			if code == values.CodeOutOfRange {
				return d.fail(code, "datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z")
			}
			return d.fail(code, "expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)")
		}
		c.TS.Append(arrowTimestamp(ns))
	case k == types.Array || k == types.Vec:
		if depth > maxDepth {
			return d.fail(values.CodeTooDeep, "nesting too deep")
		}
		if ch != '[' {
			return d.mismatch(ch, "an array")
		}
		sc.pos++
		if k == types.Array {
			c.FSL.Append(true)
			if ek := c.Elem.Kind; ek == types.F32 || ek == types.F64 {
				return d.floats(c)
			}
		} else {
			c.List.Append(true)
		}
		n := 0
		d.path = append(d.path, 0)
		if sc.peek() == ']' {
			sc.pos++
		} else {
			for {
				if k == types.Array && n == c.N {
					return d.fail(values.CodeShape, "too many elements for a fixed axis of length "+itoa(c.N))
				}
				d.path[len(d.path)-1] = n
				if err := d.value(c.Elem, depth+1); err != nil {
					return err
				}
				n++
				ch := sc.peek()
				if ch == ',' {
					sc.pos++
					continue
				}
				if ch == ']' {
					sc.pos++
					break
				}
				return sc.syntax("',' or ']'")
			}
		}
		d.path = d.path[:len(d.path)-1]
		if k == types.Array && n != c.N {
			return d.fail(values.CodeShape, "fixed axis of length "+itoa(c.N)+" has "+itoa(n)+" elements")
		}
	default:
		return d.fail(values.CodeTypeMismatch, "unsupported type")
	}
	return nil
}

func (d *Decoder) withPath(e *values.Error) *values.Error {
	if e.Path == "" {
		e.Path = d.errPath()
	}
	return e
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// kindOf names the JSON kind starting with c.
func kindOf(c byte) string {
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return "malformed JSON"
}

func (d *Decoder) mismatch(c byte, want string) *values.Error {
	// validate what is there first: malformed JSON is a syntax error
	if err := d.sc.skip(1); err != nil {
		return d.withPath(err)
	}
	return d.fail(values.CodeTypeMismatch, "expected "+want+", found "+kindOf(c))
}

// check validates a wire-only field's value against its wire type's
// domain without storing it.
func (d *Decoder) check(t types.Type, depth int) *values.Error {
	sc := &d.sc
	ch := sc.peek()
	if ch == 'n' {
		return sc.literal("null")
	}
	switch {
	case t.Kind == types.Invalid: // array of anything
		if ch != '[' {
			return d.mismatch(ch, "an array")
		}
		return sc.skip(depth)
	case t.Kind.IsInteger():
		if ch != '-' && (ch < '0' || ch > '9') {
			return d.mismatch(ch, "an integer")
		}
		_, isInt, err := sc.number()
		if err != nil {
			return err
		}
		if !isInt {
			return d.fail(values.CodeNotInteger, "expected an integer literal, found a number with a fraction or exponent")
		}
		return nil
	case t.Kind.IsFloat():
		if ch != '-' && (ch < '0' || ch > '9') {
			return d.mismatch(ch, "a number")
		}
		_, _, err := sc.number()
		return err
	case t.Kind == types.Bool:
		if ch != 't' && ch != 'f' {
			return d.mismatch(ch, "a boolean")
		}
		return sc.skip(depth)
	default: // STRING, BYTES, DATETIME
		if ch != '"' {
			return d.mismatch(ch, "a string")
		}
		s, err := sc.str()
		if err != nil {
			return err
		}
		if t.Kind == types.Bytes {
			if _, ok := values.DecodeBase64(d.bin[:0], s); !ok {
				return d.fail(values.CodeInvalidBase64, "expected canonical padded standard base64")
			}
		}
		if t.Kind == types.Datetime {
			if _, code := values.ParseRFC3339(s, 9); code != "" {
				return d.fail(code, "expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)")
			}
		}
		return nil
	}
}

// floats decodes the elements of a fixed axis of F32 or F64 (the '[' and
// the list entry already consumed) with one capacity check for the axis.
func (d *Decoder) floats(c *rows.Col) *values.Error {
	sc := &d.sc
	e := c.Elem
	bits := e.Kind.Bits()
	if bits == 32 {
		e.F32.Reserve(c.N)
	} else {
		e.F64.Reserve(c.N)
	}
	d.path = append(d.path, 0)
	n := 0
	if sc.peek() == ']' {
		sc.pos++
	} else {
		for {
			if n == c.N {
				return d.fail(values.CodeShape, "too many elements for a fixed axis of length "+itoa(c.N))
			}
			d.path[len(d.path)-1] = n
			ch := sc.peek()
			if ch == '"' && d.rowView {
				// the row view writes non-finite elements as text
				if err := d.value(e, 2); err != nil {
					return err
				}
				n++
				if ch = sc.peek(); ch == ',' {
					sc.pos++
					continue
				}
				if ch == ']' {
					sc.pos++
					break
				}
				return sc.syntax("',' or ']'")
			}
			if ch != '-' && (ch < '0' || ch > '9') {
				if ch == 'n' {
					if err := sc.literal("null"); err != nil {
						return err
					}
					return d.fail(values.CodeNullValue, "null where a value is required (collection elements are never null)")
				}
				return d.mismatch(ch, "a number")
			}
			f, err := sc.float(bits)
			if err != nil {
				return err
			}
			if math.IsInf(f, 0) {
				return d.fail(values.CodeOutOfRange, values.FloatRange(e.Kind))
			}
			if bits == 32 {
				e.F32.UnsafeAppend(float32(f))
			} else {
				e.F64.UnsafeAppend(f)
			}
			n++
			ch = sc.peek()
			if ch == ',' {
				sc.pos++
				continue
			}
			if ch == ']' {
				sc.pos++
				break
			}
			return sc.syntax("',' or ']'")
		}
	}
	d.path = d.path[:len(d.path)-1]
	if n != c.N {
		return d.fail(values.CodeShape, "fixed axis of length "+itoa(c.N)+" has "+itoa(n)+" elements")
	}
	return nil
}
