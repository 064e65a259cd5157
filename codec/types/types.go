// Package types owns herald's internal codec type system: the scalar and
// collection types of internal schemas, declared wire schemas and their wire
// types, codec definitions, the exact Arrow mapping of internal types, and
// the canonical text and fingerprints of every entity.
//
// It holds plain data and pure functions only. It must not parse statements,
// decode or encode payloads, or keep any state; those belong to the ddl,
// catalog and wire packages that build on it.
package types

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is the kind of an internal type.
type Kind uint8

// The internal type kinds. Array and Vec are collections; all others are
// scalars.
const (
	Invalid Kind = iota
	U8
	U16
	U32
	U64
	I8
	I16
	I32
	I64
	F32
	F64
	Bool
	String
	Bytes
	Datetime
	Array
	Vec
)

// MaxDim is the largest length of one fixed ARRAY axis: the largest length
// an Arrow FixedSizeList carries.
const MaxDim = 2147483647

var kindNames = [...]string{
	Invalid: "INVALID", U8: "U8", U16: "U16", U32: "U32", U64: "U64",
	I8: "I8", I16: "I16", I32: "I32", I64: "I64", F32: "F32", F64: "F64",
	Bool: "BOOL", String: "STRING", Bytes: "BYTES", Datetime: "DATETIME",
	Array: "ARRAY", Vec: "VEC",
}

// String returns the keyword of the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "INVALID"
}

// ScalarKind returns the scalar kind named by word (case-insensitive), or
// Invalid.
func ScalarKind(word string) Kind {
	w := strings.ToUpper(word)
	for k := U8; k <= Datetime; k++ {
		if kindNames[k] == w {
			return k
		}
	}
	return Invalid
}

// IsInteger reports whether k is one of U8…I64.
func (k Kind) IsInteger() bool { return k >= U8 && k <= I64 }

// IsUnsigned reports whether k is one of U8…U64.
func (k Kind) IsUnsigned() bool { return k >= U8 && k <= U64 }

// IsFloat reports whether k is F32 or F64.
func (k Kind) IsFloat() bool { return k == F32 || k == F64 }

// Bits returns the width in bits of an integer or float kind, 0 otherwise.
func (k Kind) Bits() int {
	switch k {
	case U8, I8:
		return 8
	case U16, I16:
		return 16
	case U32, I32, F32:
		return 32
	case U64, I64, F64:
		return 64
	}
	return 0
}

// Type is an internal type. Scalars have only Kind. ARRAY<T, D1, …, Dn> has
// Kind Array, Elem T (never itself an Array: nested fixed axes are
// flattened into Dims) and Dims D1…Dn, outermost first. VEC<T> has Kind
// Vec and Elem T.
type Type struct {
	Kind Kind
	Elem *Type
	Dims []int
}

// Scalar returns the scalar type of kind k.
func Scalar(k Kind) Type { return Type{Kind: k} }

// ArrayOf returns ARRAY<elem, dims…>. An ARRAY element is folded into the
// new type's axes, so ArrayOf(ArrayOf(F32, 3), 2) is ARRAY<F32, 2, 3>.
func ArrayOf(elem Type, dims ...int) Type {
	d := append([]int(nil), dims...)
	if elem.Kind == Array {
		d = append(d, elem.Dims...)
		elem = *elem.Elem
	}
	e := elem
	return Type{Kind: Array, Elem: &e, Dims: d}
}

// VecOf returns VEC<elem>.
func VecOf(elem Type) Type {
	e := elem
	return Type{Kind: Vec, Elem: &e}
}

// IsCollection reports whether t is an ARRAY or a VEC.
func (t Type) IsCollection() bool { return t.Kind == Array || t.Kind == Vec }

// Inner returns the element type one Arrow level down: for ARRAY<T, D1, D2>
// that is ARRAY<T, D2>, for ARRAY<T, D> or VEC<T> it is T.
func (t Type) Inner() Type {
	switch t.Kind {
	case Array:
		if len(t.Dims) > 1 {
			return Type{Kind: Array, Elem: t.Elem, Dims: t.Dims[1:]}
		}
		return *t.Elem
	case Vec:
		return *t.Elem
	}
	return Type{}
}

// Len returns the length of the outermost fixed axis of an ARRAY.
func (t Type) Len() int {
	if t.Kind == Array && len(t.Dims) > 0 {
		return t.Dims[0]
	}
	return 0
}

// Equal reports whether t and u are the same type.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind || len(t.Dims) != len(u.Dims) {
		return false
	}
	for i := range t.Dims {
		if t.Dims[i] != u.Dims[i] {
			return false
		}
	}
	if t.Elem == nil || u.Elem == nil {
		return t.Elem == nil && u.Elem == nil
	}
	return t.Elem.Equal(*u.Elem)
}

// Validate checks the structural rules of a type: collections have an
// element, every axis is 1…MaxDim.
func (t Type) Validate() error {
	switch t.Kind {
	case Array:
		if t.Elem == nil || len(t.Dims) == 0 {
			return fmt.Errorf("ARRAY needs an element type and at least one axis")
		}
		for _, d := range t.Dims {
			if d < 1 || d > MaxDim {
				return fmt.Errorf("ARRAY axis length %d is outside 1…%d", d, MaxDim)
			}
		}
		return t.Elem.Validate()
	case Vec:
		if t.Elem == nil {
			return fmt.Errorf("VEC needs an element type")
		}
		return t.Elem.Validate()
	case Invalid:
		return fmt.Errorf("invalid type")
	}
	if t.Kind > Vec {
		return fmt.Errorf("invalid type")
	}
	return nil
}

// String renders the canonical spelling, e.g. VEC<ARRAY<F32, 6>>.
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.Kind {
	case Array:
		b.WriteString("ARRAY<")
		t.Elem.write(b)
		for _, d := range t.Dims {
			b.WriteString(", ")
			b.WriteString(strconv.Itoa(d))
		}
		b.WriteByte('>')
	case Vec:
		b.WriteString("VEC<")
		t.Elem.write(b)
		b.WriteByte('>')
	default:
		b.WriteString(t.Kind.String())
	}
}

// ArrowType returns the exact Arrow data type of t: one FixedSizeList level
// per ARRAY axis, List for VEC (elements never null), Binary for BYTES,
// Utf8 for STRING and Timestamp(ns, UTC) for DATETIME.
func (t Type) ArrowType() arrow.DataType {
	switch t.Kind {
	case U8:
		return arrow.PrimitiveTypes.Uint8
	case U16:
		return arrow.PrimitiveTypes.Uint16
	case U32:
		return arrow.PrimitiveTypes.Uint32
	case U64:
		return arrow.PrimitiveTypes.Uint64
	case I8:
		return arrow.PrimitiveTypes.Int8
	case I16:
		return arrow.PrimitiveTypes.Int16
	case I32:
		return arrow.PrimitiveTypes.Int32
	case I64:
		return arrow.PrimitiveTypes.Int64
	case F32:
		return arrow.PrimitiveTypes.Float32
	case F64:
		return arrow.PrimitiveTypes.Float64
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	case String:
		return arrow.BinaryTypes.String
	case Bytes:
		return arrow.BinaryTypes.Binary
	case Datetime:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case Array:
		inner := t.Inner().ArrowType()
		return arrow.FixedSizeListOfNonNullable(int32(t.Dims[0]), inner)
	case Vec:
		return arrow.ListOfNonNullable(t.Elem.ArrowType())
	}
	return arrow.Null
}

// Field is one field of an internal schema.
type Field struct {
	Name      string
	Type      Type
	Optional  bool
	Sensitive bool
}

// Schema is an internal schema: a named, ordered list of typed fields.
type Schema struct {
	Name   string
	Fields []Field
}

// Index returns the position of the field named name, or -1.
func (s *Schema) Index(name string) int {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// Clone returns a deep copy of s.
func (s *Schema) Clone() *Schema {
	c := &Schema{Name: s.Name, Fields: append([]Field(nil), s.Fields...)}
	return c
}

// ArrowSchema returns the Arrow schema of s: one column per field, nullable
// exactly when the field is OPTIONAL.
func (s *Schema) ArrowSchema() *arrow.Schema {
	fs := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		fs[i] = arrow.Field{Name: f.Name, Type: f.Type.ArrowType(), Nullable: f.Optional}
	}
	return arrow.NewSchema(fs, nil)
}

// Validate checks the schema rules: at least one field, unique names, valid
// types.
func (s *Schema) Validate() error {
	if len(s.Fields) == 0 {
		return fmt.Errorf("schema %s must declare at least one field", Quote(s.Name))
	}
	seen := make(map[string]bool, len(s.Fields))
	for _, f := range s.Fields {
		if seen[f.Name] {
			return fmt.Errorf("schema %s declares field %s twice", Quote(s.Name), Quote(f.Name))
		}
		seen[f.Name] = true
		if err := f.Type.Validate(); err != nil {
			return fmt.Errorf("schema %s field %s: %w", Quote(s.Name), Quote(f.Name), err)
		}
	}
	return nil
}
