package types

import (
	"fmt"
	"strings"
)

// Format is a wire format of a codec.
type Format uint8

// The wire formats of schemaful codecs.
const (
	FormatNone Format = iota
	JSON
	CBOR
	AVRO
	SYSLOG
)

var formatNames = [...]string{FormatNone: "NONE", JSON: "JSON", CBOR: "CBOR", AVRO: "AVRO", SYSLOG: "SYSLOG"}

// String returns the keyword of the format.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "NONE"
}

// ParseFormat returns the declared wire format named by word
// (case-insensitive): JSON, CBOR or AVRO. SYSLOG has no declared schema and
// is not returned.
func ParseFormat(word string) Format {
	switch strings.ToUpper(word) {
	case "JSON":
		return JSON
	case "CBOR":
		return CBOR
	case "AVRO":
		return AVRO
	}
	return FormatNone
}

// Mode is the extra-field policy of a declared wire schema.
type Mode uint8

// Wire schema modes.
const (
	Strict Mode = iota
	Loose
)

// String returns STRICT or LOOSE.
func (m Mode) String() string {
	if m == Loose {
		return "LOOSE"
	}
	return "STRICT"
}

// WireKind is a wire field type. JSON and CBOR wire schemas use the generic
// JSON types and the exact numeric and datetime types; AVRO wire schemas
// use the Avro types.
type WireKind uint8

// Wire types.
const (
	WireInvalid WireKind = iota
	// Generic JSON/CBOR types.
	WInteger
	WNumber
	WString
	WBoolean
	WBytes
	WArray
	// Exact JSON/CBOR types; each binds only its namesake internal type.
	WU8
	WU16
	WU32
	WU64
	WI8
	WI16
	WI32
	WI64
	WF32
	WF64
	WDatetime
	// AVRO types.
	ABoolean
	AInt
	ALong
	AFloat
	ADouble
	AString
	ABytes
	AArray
)

var wireNames = [...]string{
	WireInvalid: "invalid",
	WInteger:    "integer", WNumber: "number", WString: "string", WBoolean: "boolean",
	WBytes: "bytes", WArray: "array",
	WU8: "U8", WU16: "U16", WU32: "U32", WU64: "U64", WI8: "I8", WI16: "I16",
	WI32: "I32", WI64: "I64", WF32: "F32", WF64: "F64", WDatetime: "DATETIME",
	ABoolean: "BOOLEAN", AInt: "INT", ALong: "LONG", AFloat: "FLOAT", ADouble: "DOUBLE",
	AString: "STRING", ABytes: "BYTES", AArray: "ARRAY",
}

// String returns the canonical spelling: generic JSON types in lower case,
// exact and AVRO types in upper case.
func (k WireKind) String() string {
	if int(k) < len(wireNames) {
		return wireNames[k]
	}
	return "invalid"
}

// ParseWireKind returns the wire type named by word (case-insensitive) in
// format f, or WireInvalid when f has no such type.
func ParseWireKind(f Format, word string) WireKind {
	switch f {
	case JSON, CBOR:
		for k := WInteger; k <= WDatetime; k++ {
			if strings.EqualFold(wireNames[k], word) {
				return k
			}
		}
	case AVRO:
		for k := ABoolean; k <= AArray; k++ {
			if strings.EqualFold(wireNames[k], word) {
				return k
			}
		}
	}
	return WireInvalid
}

// WireTypeNames lists the wire type spellings of format f, for messages.
func WireTypeNames(f Format) string {
	var names []string
	switch f {
	case JSON, CBOR:
		for k := WInteger; k <= WDatetime; k++ {
			names = append(names, wireNames[k])
		}
	case AVRO:
		for k := ABoolean; k <= AArray; k++ {
			names = append(names, wireNames[k])
		}
	}
	return strings.Join(names, ", ")
}

// ExactKind returns the internal kind an exact JSON/CBOR wire type binds,
// or Invalid for generic and AVRO types.
func (k WireKind) ExactKind() Kind {
	switch k {
	case WU8:
		return U8
	case WU16:
		return U16
	case WU32:
		return U32
	case WU64:
		return U64
	case WI8:
		return I8
	case WI16:
		return I16
	case WI32:
		return I32
	case WI64:
		return I64
	case WF32:
		return F32
	case WF64:
		return F64
	case WDatetime:
		return Datetime
	}
	return Invalid
}

// WireField is one field of a declared wire schema.
type WireField struct {
	Name     string
	Type     WireKind
	Optional bool
}

// WireSchema is a declared JSON, CBOR or AVRO wire schema.
type WireSchema struct {
	Format Format
	Name   string
	Mode   Mode
	Fields []WireField
}

// Index returns the position of the field named name, or -1.
func (w *WireSchema) Index(name string) int {
	for i := range w.Fields {
		if w.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// Clone returns a deep copy of w.
func (w *WireSchema) Clone() *WireSchema {
	c := *w
	c.Fields = append([]WireField(nil), w.Fields...)
	return &c
}

// Validate checks the wire schema rules: at least one field, unique names,
// types of its format, and Avro names for AVRO.
func (w *WireSchema) Validate() error {
	if len(w.Fields) == 0 {
		return fmt.Errorf("wire %s schema %s must declare at least one field", w.Format, Quote(w.Name))
	}
	seen := make(map[string]bool, len(w.Fields))
	for _, f := range w.Fields {
		if seen[f.Name] {
			return fmt.Errorf("wire %s schema %s declares field %s twice", w.Format, Quote(w.Name), Quote(f.Name))
		}
		seen[f.Name] = true
		if ParseWireKind(w.Format, f.Type.String()) != f.Type {
			return fmt.Errorf("wire %s schema %s field %s: type %s is not a %s wire type (expected one of %s)",
				w.Format, Quote(w.Name), Quote(f.Name), f.Type, w.Format, WireTypeNames(w.Format))
		}
		if w.Format == AVRO && !IsAvroName(f.Name) {
			return fmt.Errorf("wire AVRO schema %s field %s: an Avro field name must match [A-Za-z_][A-Za-z0-9_]*", Quote(w.Name), Quote(f.Name))
		}
	}
	if w.Format == AVRO && !IsAvroName(w.Name) {
		return fmt.Errorf("wire AVRO schema %s: an Avro record name must match [A-Za-z_][A-Za-z0-9_]*", Quote(w.Name))
	}
	return nil
}

// IsAvroName reports whether s is a valid Avro name.
func IsAvroName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// Codec is a codec definition: the source wire format and schema, the
// target internal schema and the field encoding rules.
type Codec struct {
	Name string
	// Format is JSON, CBOR or AVRO for a declared wire schema, SYSLOG for
	// the predefined syslog schema.
	Format Format
	// Wire names the declared wire schema; empty for SYSLOG.
	Wire string
	// Schema names the internal schema.
	Schema string
	// RFC3339 lists the internal DATETIME fields whose wire value is a
	// string holding RFC 3339 text (ENCODE f AS RFC3339), in declaration
	// order.
	RFC3339 []string
}

// Clone returns a deep copy of c.
func (c *Codec) Clone() *Codec {
	d := *c
	d.RFC3339 = append([]string(nil), c.RFC3339...)
	return &d
}
