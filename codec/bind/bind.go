// Package bind owns the binding rules between a declared wire schema (or
// the predefined SYSLOG schema) and an internal schema: which wire type
// binds which internal type, the ENCODE … AS RFC3339 rule, the BYTES
// representation rules and the SYSLOG field contract. It compiles a codec
// definition into a Plan the wire formats execute.
//
// OPTIONAL is declared on each side on its own ("Append OPTIONAL to either
// an internal schema field or a wire schema field when the value may be
// absent"), and a required internal field need not have a wire field:
// what the two sides disagree on is decided per value, at run time. A
// decode fails, naming the field, only when a required internal field's
// value is missing (absent or null in the payload, or never on the wire
// because no wire field binds it); an encode fails only when a required
// wire field's value is null.
//
// It must not decode or encode payloads, nor look entities up: callers
// pass the schemas in.
package bind

import (
	"fmt"
	"strings"

	"github.com/herald-gateway/herald/codec/types"
)

// Field is the binding of one field.
type Field struct {
	// Name is the field name (the same on both sides).
	Name string
	// Internal is the index in the internal schema, -1 for a wire-only
	// optional field (decoded for validation, then dropped).
	Internal int
	// Wire is the index in the wire schema, -1 for an internal-only
	// optional field (always null on decode, dropped on encode).
	Wire int
	// Type is the internal type (for a wire-only field, a type with the
	// wire type's value domain, see WireOnlyType).
	Type types.Type
	// WireType is the declared wire type (WireInvalid for internal-only).
	WireType types.WireKind
	// Optional is the internal field's OPTIONAL (for a wire-only field,
	// the wire field's): whether a row may hold null.
	Optional bool
	// WireOptional is the wire field's OPTIONAL (false for an
	// internal-only field): whether a payload may omit the value or
	// carry null.
	WireOptional bool
	// Sensitive marks an internal SENSITIVE field.
	Sensitive bool
}

// Plan is a compiled binding.
type Plan struct {
	Codec  *types.Codec
	Schema *types.Schema
	// Wire is nil for SYSLOG.
	Wire *types.WireSchema
	// Fields holds one entry per internal field, in internal order.
	Fields []Field
	// WireOnly holds the optional wire fields without an internal field.
	WireOnly []Field
	// WireOrder maps each wire position to its Field: index into Fields,
	// or -(1+index into WireOnly).
	WireOrder []int
	// Syslog is set for a SYSLOG codec.
	Syslog *SyslogPlan
}

// Error is a codec that cannot bind: it names the codec, the field, both
// types and the rule that was broken.
type Error struct {
	Codec    string
	Field    string
	WireType string
	Internal string
	Rule     string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "codec %s cannot bind field %s", types.Quote(e.Codec), types.Quote(e.Field))
	if e.WireType != "" || e.Internal != "" {
		fmt.Fprintf(&b, " (wire %s, internal %s)", orNone(e.WireType), orNone(e.Internal))
	}
	b.WriteString(": ")
	b.WriteString(e.Rule)
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func fieldDesc(t string, optional bool) string {
	if t == "" {
		return ""
	}
	if optional {
		return t + " OPTIONAL"
	}
	return t
}

// Compile binds codec c to internal schema s and wire schema w (nil for
// SYSLOG and JAQ-backed codecs).
func Compile(c *types.Codec, s *types.Schema, w *types.WireSchema) (*Plan, error) {
	if c.Jaq != nil {
		// a JAQ-backed codec's programs decide the shape: every output is
		// decoded into the internal schema by field name at run time
		p := &Plan{Codec: c, Schema: s}
		for i, f := range s.Fields {
			p.Fields = append(p.Fields, Field{Name: f.Name, Internal: i, Wire: -1, Type: f.Type, Optional: f.Optional, Sensitive: f.Sensitive})
		}
		return p, nil
	}
	if c.Format == types.SYSLOG {
		sp, err := bindSyslog(c, s)
		if err != nil {
			return nil, err
		}
		p := &Plan{Codec: c, Schema: s, Syslog: sp}
		for i, f := range s.Fields {
			p.Fields = append(p.Fields, Field{Name: f.Name, Internal: i, Wire: -1, Type: f.Type, Optional: f.Optional, Sensitive: f.Sensitive})
		}
		return p, nil
	}
	if w == nil || w.Format != c.Format {
		return nil, fmt.Errorf("codec %s: wire %s schema %s is missing", types.Quote(c.Name), c.Format, types.Quote(c.Wire))
	}
	rfc := make(map[string]bool, len(c.RFC3339))
	for _, name := range c.RFC3339 {
		i := s.Index(name)
		if i < 0 {
			return nil, &Error{Codec: c.Name, Field: name, Rule: fmt.Sprintf("ENCODE names a field that schema %s does not declare", types.Quote(s.Name))}
		}
		f := s.Fields[i]
		if f.Type.Kind != types.Datetime {
			return nil, &Error{Codec: c.Name, Field: name, Internal: f.Type.String(), Rule: "ENCODE … AS RFC3339 applies only to an internal DATETIME field"}
		}
		if w.Index(name) < 0 {
			return nil, &Error{Codec: c.Name, Field: name, Internal: f.Type.String(), Rule: fmt.Sprintf("ENCODE names a field that wire %s schema %s does not declare", w.Format, types.Quote(w.Name))}
		}
		rfc[name] = true
	}
	p := &Plan{Codec: c, Schema: s, Wire: w, WireOrder: make([]int, len(w.Fields))}
	for i, f := range s.Fields {
		bf := Field{Name: f.Name, Internal: i, Wire: w.Index(f.Name), Type: f.Type, Optional: f.Optional, Sensitive: f.Sensitive}
		if bf.Wire < 0 {
			// unbound: null on decode when OPTIONAL, a decode error
			// (Unbound) when required; never written
			p.Fields = append(p.Fields, bf)
			continue
		}
		wf := w.Fields[bf.Wire]
		bf.WireType = wf.Type
		bf.WireOptional = wf.Optional
		if err := Check(c, w.Format, wf, f, rfc[f.Name]); err != nil {
			return nil, err
		}
		p.WireOrder[bf.Wire] = len(p.Fields)
		p.Fields = append(p.Fields, bf)
	}
	for j, wf := range w.Fields {
		if s.Index(wf.Name) >= 0 {
			continue
		}
		if !wf.Optional {
			return nil, &Error{Codec: c.Name, Field: wf.Name, WireType: wf.Type.String(),
				Rule: fmt.Sprintf("a required wire field needs an internal field of the same name in schema %s", types.Quote(s.Name))}
		}
		if wf.Type == types.AArray {
			return nil, &Error{Codec: c.Name, Field: wf.Name, WireType: fieldDesc(wf.Type.String(), true),
				Rule: "an Avro ARRAY infers its items from the internal field, so it needs an internal field of the same name"}
		}
		p.WireOrder[j] = -(1 + len(p.WireOnly))
		p.WireOnly = append(p.WireOnly, Field{Name: wf.Name, Internal: -1, Wire: j, Type: WireOnlyType(wf.Type), WireType: wf.Type, Optional: true, WireOptional: true})
	}
	return p, nil
}

// Unbound returns the required internal fields no wire field binds, in
// internal order: a payload can never supply them, so decoding through
// the plan fails with UnboundMsg (encoding is unaffected: the rows hold
// them and the wire leaves them out).
func (p *Plan) Unbound() []Field {
	if p.Wire == nil {
		return nil
	}
	var out []Field
	for _, f := range p.Fields {
		if f.Wire < 0 && !f.Optional {
			out = append(out, f)
		}
	}
	return out
}

// UnboundMsg is the decode error message of an Unbound field.
func (p *Plan) UnboundMsg() string {
	return fmt.Sprintf("required field is missing: wire %s schema %s declares no field of that name, so no payload can supply it", p.Wire.Format, types.Quote(p.Wire.Name))
}

// Messages of the decode errors of a field that is OPTIONAL in the wire
// schema only, when the payload omits it or carries null.
const (
	MsgMissingWireOptional = "required field is missing (it is OPTIONAL in the wire schema only)"
	MsgNullWireOptional    = "null in a required field (it is OPTIONAL in the wire schema only)"
)

// MsgNullWireRequired is the encode error message of a null in a field
// that is OPTIONAL in the internal schema only.
const MsgNullWireRequired = "null in a field the wire schema requires (it is OPTIONAL in the internal schema only)"

// WireOnlyType returns the internal type whose decode rules check a value
// of wire type k when no internal field receives it: integer → I64 (any
// 64-bit integer), number → F64, string → STRING, bytes → BYTES, array →
// VEC<STRING> is not meaningful, so arrays are only checked to be arrays
// (Kind Invalid).
func WireOnlyType(k types.WireKind) types.Type {
	switch k {
	case types.WInteger, types.ALong, types.AInt:
		return types.Scalar(types.I64)
	case types.WNumber, types.ADouble:
		return types.Scalar(types.F64)
	case types.AFloat:
		return types.Scalar(types.F32)
	case types.WString, types.AString:
		return types.Scalar(types.String)
	case types.WBoolean, types.ABoolean:
		return types.Scalar(types.Bool)
	case types.WBytes, types.ABytes:
		return types.Scalar(types.Bytes)
	}
	if ek := k.ExactKind(); ek != types.Invalid {
		return types.Scalar(ek)
	}
	return types.Type{}
}

// Check applies the binding rule of one wire field to one internal field.
func Check(c *types.Codec, f types.Format, wf types.WireField, in types.Field, rfc bool) error {
	bad := func(rule string) error {
		return &Error{Codec: c.Name, Field: in.Name, WireType: fieldDesc(wf.Type.String(), wf.Optional), Internal: fieldDesc(in.Type.String(), in.Optional), Rule: rule}
	}
	k := in.Type.Kind
	switch wf.Type {
	case types.WInteger:
		if !k.IsInteger() {
			return bad("a JSON integer binds only U8…U64 and I8…I64")
		}
	case types.WNumber:
		if !k.IsFloat() {
			return bad("a JSON number binds only F32 and F64")
		}
	case types.WString:
		switch {
		case k == types.String:
		case k == types.Datetime && rfc:
			return nil
		case k == types.Datetime:
			return bad(fmt.Sprintf("a string wire field binds DATETIME only with ENCODE %s AS RFC3339", types.Quote(in.Name)))
		case k == types.Bytes:
			return bad("a string wire field cannot bind BYTES: declare the wire field as bytes (padded base64 text)")
		default:
			return bad("a string wire field binds only STRING, or DATETIME with ENCODE … AS RFC3339")
		}
	case types.WBoolean:
		if k != types.Bool {
			return bad("a boolean wire field binds only BOOL")
		}
	case types.WBytes:
		if k != types.Bytes {
			return bad("a bytes wire field binds only BYTES")
		}
	case types.WArray, types.AArray:
		if !in.Type.IsCollection() {
			return bad("an array wire field binds only ARRAY<…> and VEC<…>")
		}
	case types.ABoolean:
		if k != types.Bool {
			return bad("an Avro BOOLEAN binds only BOOL")
		}
	case types.AInt:
		switch k {
		case types.I8, types.I16, types.I32, types.U8, types.U16:
		default:
			return bad("an Avro INT binds only I8, I16, I32, U8 and U16 (use LONG for wider integers)")
		}
	case types.ALong:
		if !k.IsInteger() {
			return bad("an Avro LONG binds only U8…U64 and I8…I64")
		}
	case types.AFloat:
		if k != types.F32 {
			return bad("an Avro FLOAT binds only F32")
		}
	case types.ADouble:
		if k != types.F64 {
			return bad("an Avro DOUBLE binds only F64")
		}
	case types.AString:
		switch {
		case k == types.String:
		case k == types.Datetime && rfc:
			return nil
		case k == types.Datetime:
			return bad(fmt.Sprintf("an Avro STRING binds DATETIME only with ENCODE %s AS RFC3339", types.Quote(in.Name)))
		case k == types.Bytes:
			return bad("an Avro STRING cannot bind BYTES: declare the wire field as BYTES")
		default:
			return bad("an Avro STRING binds only STRING, or DATETIME with ENCODE … AS RFC3339")
		}
	case types.ABytes:
		if k != types.Bytes {
			return bad("an Avro BYTES binds only BYTES")
		}
	default:
		ek := wf.Type.ExactKind()
		if ek == types.Invalid {
			return bad("unknown wire type")
		}
		if ek != k {
			return bad(fmt.Sprintf("an exact wire type binds only the internal type of the same name (%s)", ek))
		}
	}
	if rfc {
		if wf.Type == types.WDatetime {
			return bad("an exact DATETIME wire field already carries RFC 3339 text: remove the ENCODE rule")
		}
		return bad("ENCODE … AS RFC3339 needs a string wire field")
	}
	return nil
}
