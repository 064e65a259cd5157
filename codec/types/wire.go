package types

import (
	"fmt"
	"strings"
)

// Format is a wire format of a codec.
type Format uint8

// The wire formats. JSON, CBOR and AVRO are the formats of declared wire
// schemas; SYSLOG is the predefined wire schema; JSON, YAML, TOML, XML and
// CBOR are also the formats of JAQ-native codecs, and PROTOBUF that of
// protobuf codecs.
const (
	FormatNone Format = iota
	JSON
	CBOR
	AVRO
	SYSLOG
	YAML
	TOML
	XML
	PROTOBUF
)

var formatNames = [...]string{FormatNone: "NONE", JSON: "JSON", CBOR: "CBOR", AVRO: "AVRO", SYSLOG: "SYSLOG",
	YAML: "YAML", TOML: "TOML", XML: "XML", PROTOBUF: "PROTOBUF"}

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

// ParseNativeFormat returns the JAQ-native format named by word
// (case-insensitive): JSON, YAML, TOML, XML or CBOR.
func ParseNativeFormat(word string) Format {
	switch strings.ToUpper(word) {
	case "JSON":
		return JSON
	case "YAML":
		return YAML
	case "TOML":
		return TOML
	case "XML":
		return XML
	case "CBOR":
		return CBOR
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
// target internal schema and the field encoding rules, or the JAQ
// transformations of a JAQ-native or protobuf codec.
type Codec struct {
	Name string
	// Format is JSON, CBOR or AVRO for a declared wire schema, SYSLOG for
	// the predefined syslog schema, JSON, YAML, TOML, XML or CBOR for a
	// JAQ-native codec (Jaq set, Proto nil) and PROTOBUF for a protobuf
	// codec (Jaq and Proto set).
	Format Format
	// Wire names the declared wire schema; empty for SYSLOG, JAQ-native
	// and protobuf codecs.
	Wire string
	// Schema names the internal schema.
	Schema string
	// RFC3339 lists the internal DATETIME fields whose wire value is a
	// string holding RFC 3339 text (ENCODE f AS RFC3339), in declaration
	// order.
	RFC3339 []string
	// Jaq holds the JAQ transformations of a JAQ-native or protobuf
	// codec; nil for schemaful and SYSLOG codecs.
	Jaq *Jaq
	// Proto holds the protobuf source of a PROTOBUF codec.
	Proto *Proto
}

// IsJaq reports whether c is a JAQ-backed codec (JAQ-native or protobuf).
func (c *Codec) IsJaq() bool { return c.Jaq != nil }

// Clone returns a deep copy of c.
func (c *Codec) Clone() *Codec {
	d := *c
	d.RFC3339 = append([]string(nil), c.RFC3339...)
	if c.Jaq != nil {
		j := *c.Jaq
		d.Jaq = &j
	}
	if c.Proto != nil {
		p := *c.Proto
		p.Config = make([]ConfigEntry, len(c.Proto.Config))
		for i, e := range c.Proto.Config {
			p.Config[i] = ConfigEntry{Key: e.Key, List: e.List, Values: append([]string(nil), e.Values...)}
		}
		d.Proto = &p
	}
	return &d
}

// Direction names one JAQ transformation of a codec.
type Direction uint8

// The JAQ transformations, in the order a statement writes them.
const (
	Ingestion Direction = iota
	Emitting
	EmittingBatch
)

// String returns the clause that declares the transformation, e.g.
// "ON EMITTING BATCH".
func (d Direction) String() string {
	switch d {
	case Ingestion:
		return "ON INGESTION"
	case Emitting:
		return "ON EMITTING"
	case EmittingBatch:
		return "ON EMITTING BATCH"
	}
	return "ON ?"
}

// Program is one JAQ program as written; Set distinguishes an empty
// program from an absent clause.
type Program struct {
	Set  bool
	Text string
}

// Jaq holds the JAQ transformations of a codec, indexed by Direction.
type Jaq struct {
	Programs [3]Program
}

// Program returns the program of direction d.
func (j *Jaq) Program(d Direction) Program { return j.Programs[d] }

// ConfigEntry is one compile parameter of a protobuf codec's CONFIG:
// 'file', 'files', 'include' or 'includes' and its value, a single string
// or a list.
type ConfigEntry struct {
	Key    string
	Values []string
	// List is set when the value was written as a list [ … ].
	List bool
}

// Proto is the protobuf source of a codec: a resource version, its compile
// parameters and the message names.
type Proto struct {
	Resource string
	// Version is the resource version; 0 means LATEST, resolved against
	// the resources the catalog was given.
	Version int
	// Config holds the CONFIG entries as written.
	Config []ConfigEntry
	// Message is the full name of the message one payload holds.
	Message string
	// BatchMessage is the full name of the batch container message; empty
	// when not declared.
	BatchMessage string
}

// Files returns the source files CONFIG selects ('file' and 'files'), in
// order; none means every .proto file of the resource.
func (p *Proto) Files() []string { return p.values("file", "files") }

// Includes returns the import roots CONFIG selects ('include' and
// 'includes'), in order; none means the resource root.
func (p *Proto) Includes() []string { return p.values("include", "includes") }

func (p *Proto) values(keys ...string) []string {
	var out []string
	for _, e := range p.Config {
		for _, k := range keys {
			if e.Key == k {
				out = append(out, e.Values...)
			}
		}
	}
	return out
}
