package json

import (
	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// storedRow is the state of DecodeStored: the values of the row being
// decoded, in the order the payload holds them, and where each column's
// value lies.
type storedRow struct {
	enc  *store.Encoder
	buf  []byte   // encoded values, in payload order
	span [][2]int // per internal column: [start, end) in buf; start -1 for null
	vals [][]byte // per internal column: its value in buf, nil for null
	row  []byte   // the last row DecodeStored appended (aliases its dst)
	at   []int    // per internal column: offset of its value in row
}

// DecodeStored decodes one payload holding one JSON object straight into
// one row in the stored encoding of package store, appended to dst: the
// bytes the store encoder writes for the row Decode would add to a batch,
// with the same validation and the same errors, without a batch. On error
// dst is returned unchanged. StoredValue then gives each column's value
// in the row.
func (d *Decoder) DecodeStored(dst, payload []byte) ([]byte, error) {
	st := d.stored
	if st == nil {
		if d.schema == nil {
			return dst, &values.Error{Code: values.CodeUnencodable, Msg: "decoder has no internal schema to store rows of", Offset: -1}
		}
		n := len(d.schema.Fields)
		st = &storedRow{enc: store.NewEncoder(d.schema), span: make([][2]int, n), vals: make([][]byte, n), at: make([]int, n)}
		d.stored = st
	}
	st.buf = st.buf[:0]
	st.row = nil
	for k := range st.span {
		st.span[k] = [2]int{-1, -1}
	}
	d.sc.reset(payload)
	d.cur = -1
	d.path = d.path[:0]
	c := d.sc.peek()
	if c == 0 && d.sc.pos >= len(payload) {
		return dst, &values.Error{Code: values.CodeEmpty, Msg: "empty payload: expected one JSON object", Offset: -1}
	}
	if c != '{' {
		if err := d.sc.skip(0); err != nil {
			return dst, err
		}
		return dst, &values.Error{Code: values.CodeExpectedObject, Msg: "payload is not a JSON object", Offset: 0}
	}
	if err := d.object(nil); err != nil {
		return dst, err
	}
	if d.sc.peek() != 0 || d.sc.pos < len(payload) {
		return dst, &values.Error{Code: values.CodeTrailing, Msg: "data after the JSON object: a payload holds exactly one object", Offset: d.sc.pos}
	}
	for k, sp := range st.span {
		st.vals[k] = nil
		if sp[0] >= 0 {
			st.vals[k] = st.buf[sp[0]:sp[1]]
		}
	}
	start := len(dst)
	out, err := st.enc.AppendFields(dst, st.vals, st.at)
	if err != nil {
		return dst, err
	}
	st.row = out[start:]
	return out, nil
}

// StoredValue returns column k's value in the row the last successful
// DecodeStored appended, as the store appenders write it (a null as the
// stored null); it aliases that row.
func (d *Decoder) StoredValue(k int) []byte {
	st := d.stored
	if st == nil || st.row == nil {
		return nil
	}
	if st.vals[k] == nil {
		return st.row[st.at[k] : st.at[k]+1] // the stored null
	}
	return st.row[st.at[k] : st.at[k]+len(st.vals[k])]
}

// topStored is top for DecodeStored.
func (d *Decoder) topStored(f *dfield) *values.Error {
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
		return nil // the span stays null
	}
	st := d.stored
	lo := len(st.buf)
	if err := d.valueStored(d.schema.Fields[f.col].Type, 1); err != nil {
		return err
	}
	st.span[f.col] = [2]int{lo, len(st.buf)}
	return nil
}

// valueStored is value for DecodeStored: the same checks in the same
// order, the value appended to the stored row's buffer.
func (d *Decoder) valueStored(t types.Type, depth int) *values.Error {
	sc := &d.sc
	st := d.stored
	ch := sc.peek()
	if ch == 'n' {
		if err := sc.literal("null"); err != nil {
			return err
		}
		return d.fail(values.CodeNullValue, "null where a value is required (collection elements are never null)")
	}
	k := t.Kind
	switch {
	case k.IsInteger():
		u, i, err := d.integer(k, ch)
		if err != nil {
			return err
		}
		if k.IsUnsigned() {
			st.buf = store.AppendUint(st.buf, u)
		} else {
			st.buf = store.AppendInt(st.buf, i)
		}
	case k == types.F32 || k == types.F64:
		f, err := d.float(k, ch)
		if err != nil {
			return err
		}
		if k == types.F32 {
			st.buf = store.AppendF32(st.buf, float32(f))
		} else {
			st.buf = store.AppendF64(st.buf, f)
		}
	case k == types.Bool:
		switch ch {
		case 't':
			if err := sc.literal("true"); err != nil {
				return err
			}
			st.buf = store.AppendBool(st.buf, true)
		case 'f':
			if err := sc.literal("false"); err != nil {
				return err
			}
			st.buf = store.AppendBool(st.buf, false)
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
		if st.buf, err = store.AppendText(st.buf, s); err != nil {
			err.Path = d.storedPath()
			return err
		}
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
		st.buf = store.AppendBytes(st.buf, d.bin)
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
		st.buf = store.AppendTime(st.buf, ns)
	case k == types.Array || k == types.Vec:
		if depth > maxDepth {
			return d.fail(values.CodeTooDeep, "nesting too deep")
		}
		if ch != '[' {
			return d.mismatch(ch, "an array")
		}
		sc.pos++
		elem := t.Inner()
		n, limit := 0, -1
		head := len(st.buf)
		if k == types.Array {
			limit = t.Len()
			st.buf = store.AppendArrayHead(st.buf, limit)
		}
		d.path = append(d.path, 0)
		if sc.peek() == ']' {
			sc.pos++
		} else {
			for {
				if n == limit {
					return d.fail(values.CodeShape, "too many elements for a fixed axis of length "+itoa(limit))
				}
				d.path[len(d.path)-1] = n
				if err := d.valueStored(elem, depth+1); err != nil {
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
		if k == types.Array {
			if n != limit {
				return d.fail(values.CodeShape, "fixed axis of length "+itoa(limit)+" has "+itoa(n)+" elements")
			}
		} else {
			// the VEC's head goes before its elements, now that their
			// number is known
			var h [9]byte
			hd := store.AppendArrayHead(h[:0], n)
			st.buf = append(st.buf, hd...)
			copy(st.buf[head+len(hd):], st.buf[head:len(st.buf)-len(hd)])
			copy(st.buf[head:], hd)
		}
	default:
		return d.fail(values.CodeTypeMismatch, "unsupported type")
	}
	return nil
}

// storedPath is the path AppendRow's error names for the value being
// decoded: the internal field, then the element indexes.
func (d *Decoder) storedPath() string {
	if d.cur < 0 || d.cur >= len(d.fields) {
		return ""
	}
	p := types.Quote(d.schema.Fields[d.fields[d.cur].col].Name)
	for _, i := range d.path {
		p = values.IndexPath(p, i)
	}
	return p
}
