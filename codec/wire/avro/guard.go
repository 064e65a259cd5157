package avro

import (
	"strconv"
	"unicode/utf8"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/values"
)

// The guards live in reader.blockCount and reader.text: every block count
// and length is checked against the bytes that remain before anything is
// read or appended, so a forged count cannot make the decoder allocate or
// loop past what the payload could hold.

// errMalformed is the error of a datum that does not have the wire
// schema's structure.
func errMalformed() *values.Error {
	return &values.Error{Code: values.CodeSyntax, Msg: "malformed Avro datum for the wire schema", Offset: -1}
}

// diagnose names what is wrong with a payload the fast path refused, in
// the order the rules rank them: a malformed datum anywhere, then trailing
// bytes, then the first value that breaks a rule, in wire field order and,
// within an array, its length before its elements.
func (c *Codec) diagnose(payload []byte) error {
	r := reader{b: payload}
	for k := range c.fields {
		f := &c.fields[k]
		if f.optional {
			br, ok := r.long()
			if !ok || br>>1 != 0 {
				return errMalformed()
			}
			if br == 0 {
				continue
			}
		}
		if !r.skip(f.op) {
			return errMalformed()
		}
	}
	if r.i != len(payload) {
		return &values.Error{Code: values.CodeTrailing, Msg: "data after the Avro datum: a payload holds exactly one datum", Offset: r.i}
	}
	r.i = 0
	for k := range c.fields {
		f := &c.fields[k]
		if f.optional {
			if br, _ := r.long(); br == 0 {
				if f.required {
					return values.Errorf(values.CodeNullValue, f.name, bind.MsgNullWireOptional)
				}
				continue
			}
		}
		if f.col < 0 { // wire-only: only a string has a rule (UTF-8)
			if f.op.kind != opString {
				r.skip(f.op)
			} else if s, _ := r.text(); !utf8.Valid(s) {
				return values.Errorf(values.CodeInvalidUTF8, f.name, "string is not valid UTF-8")
			}
			continue
		}
		if err := r.check(f.op, f.name); err != nil {
			return err
		}
	}
	if c.unbound != "" {
		return values.Errorf(values.CodeMissingField, c.unbound, c.unboundMsg)
	}
	// The fast path and this walk disagree: a decoder bug, never a
	// payload the rules accept.
	return &values.Error{Code: values.CodeSyntax, Msg: "the Avro datum was refused but no rule names why (decoder inconsistency)", Offset: -1}
}

// check applies the value rules to one value of op o whose structure is
// known to be sound, and names the first one broken.
func (r *reader) check(o *op, path string) *values.Error {
	switch o.kind {
	case opInt, opLong:
		x, _ := r.long()
		if o.bits {
			return nil
		}
		if o.umax != 0 && (x < 0 || uint64(x) > o.umax) || o.umax == 0 && (x < o.lo || x > o.hi) {
			return values.Errorf(values.CodeOutOfRange, path, "integer is outside the range of "+o.ik.String())
		}
	case opString, opDatetime:
		s, _ := r.text()
		if !utf8.Valid(s) {
			return values.Errorf(values.CodeInvalidUTF8, path, "string is not valid UTF-8")
		}
		if o.kind == opString {
			return nil
		}
		if _, code := values.ParseRFC3339(s, 9); code != "" {
			if code == values.CodeOutOfRange {
				return values.Errorf(code, path, "datetime is outside 1677-09-21T00:12:43.145224192Z…2262-04-11T23:47:16.854775807Z")
			}
			return values.Errorf(code, path, "expected RFC 3339 text YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)")
		}
	case opArray, opVec:
		start := r.i
		total := 0
		for {
			n, _ := r.blockCount(o.elem.min)
			if n == 0 {
				break
			}
			total += n
			for range n {
				r.skip(o.elem)
			}
		}
		if o.kind == opArray && total != o.n {
			return values.Errorf(values.CodeShape, path, "fixed axis of length "+strconv.Itoa(o.n)+" has "+strconv.Itoa(total)+" elements")
		}
		r.i = start
		i := 0
		for {
			n, _ := r.blockCount(o.elem.min)
			if n == 0 {
				break
			}
			for range n {
				if err := r.check(o.elem, values.IndexPath(path, i)); err != nil {
					return err
				}
				i++
			}
		}
	default:
		r.skip(o)
	}
	return nil
}
