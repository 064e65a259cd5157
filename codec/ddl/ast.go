package ddl

import (
	"strings"

	"github.com/herald-gateway/herald/codec/types"
)

// Kind is the kind of a named entity.
type Kind uint8

// Entity kinds. JSON, CBOR and AVRO wire schemas are separate kinds,
// told apart by Format.
const (
	KindSchema Kind = iota + 1
	KindWire
	KindCodec
)

// Stmt is one parsed statement.
type Stmt interface {
	// At returns the position of the statement's first token.
	At() Pos
}

// CreateSchema is CREATE [IF NOT EXISTS] SCHEMA.
type CreateSchema struct {
	Pos         Pos
	IfNotExists bool
	Schema      *types.Schema
}

// CreateWire is CREATE [IF NOT EXISTS] WIRE JSON|CBOR|AVRO SCHEMA.
type CreateWire struct {
	Pos         Pos
	IfNotExists bool
	Wire        *types.WireSchema
}

// CreateCodec is CREATE [IF NOT EXISTS] CODEC.
type CreateCodec struct {
	Pos         Pos
	IfNotExists bool
	Codec       *types.Codec
	// EncodePos holds the position of each ENCODE rule's field name.
	EncodePos []Pos
	// FormatPos is the position of the format after FROM.
	FormatPos Pos
	// The positions of a protobuf codec's clauses: the resource name, the
	// version, CONFIG and the two message names.
	ResourcePos, VersionPos, ConfigPos, MessagePos, BatchMessagePos Pos

	progs [3]token // program literals per direction; pos is the ON keyword
}

// ClausePos returns the position of the ON clause that declares direction
// d (the zero Pos when absent).
func (s *CreateCodec) ClausePos(d types.Direction) Pos { return s.progs[d].pos }

// ProgramPos returns the statement position of byte offset off of the
// program of direction d, so that an error the program's compiler reports
// at an offset points into the statement text.
func (s *CreateCodec) ProgramPos(d types.Direction, off int) Pos {
	if s.progs[d].kind != tString {
		return s.Pos
	}
	return s.progs[d].posAt(off)
}

// OpKind is the kind of one ALTER operation.
type OpKind uint8

// ALTER operations.
const (
	OpAdd OpKind = iota + 1
	OpDrop
	OpRename
	OpSetType
	OpSetOptional
	OpDropOptional
	OpSetSensitive
	OpDropSensitive
)

// Op is one ALTER operation on a field. Type is set for internal schemas,
// Wire for wire schemas.
type Op struct {
	Pos       Pos
	Kind      OpKind
	Field     string
	To        string // RENAME target
	Type      types.Type
	Wire      types.WireKind
	Optional  bool // ADD … OPTIONAL
	Sensitive bool // ADD … SENSITIVE
}

// String renders the operation canonically, as it would be written.
func (o Op) String() string {
	var b strings.Builder
	switch o.Kind {
	case OpAdd:
		b.WriteString("ADD FIELD " + types.Quote(o.Field) + " ")
		if o.Wire != types.WireInvalid {
			b.WriteString(o.Wire.String())
		} else {
			b.WriteString(o.Type.String())
		}
		if o.Optional {
			b.WriteString(" OPTIONAL")
		}
		if o.Sensitive {
			b.WriteString(" SENSITIVE")
		}
	case OpDrop:
		b.WriteString("DROP FIELD " + types.Quote(o.Field))
	case OpRename:
		b.WriteString("RENAME FIELD " + types.Quote(o.Field) + " TO " + types.Quote(o.To))
	case OpSetType:
		b.WriteString("ALTER FIELD " + types.Quote(o.Field) + " SET TYPE ")
		if o.Wire != types.WireInvalid {
			b.WriteString(o.Wire.String())
		} else {
			b.WriteString(o.Type.String())
		}
	case OpSetOptional:
		b.WriteString("ALTER FIELD " + types.Quote(o.Field) + " SET OPTIONAL")
	case OpDropOptional:
		b.WriteString("ALTER FIELD " + types.Quote(o.Field) + " DROP OPTIONAL")
	case OpSetSensitive:
		b.WriteString("ALTER FIELD " + types.Quote(o.Field) + " SET SENSITIVE")
	case OpDropSensitive:
		b.WriteString("ALTER FIELD " + types.Quote(o.Field) + " DROP SENSITIVE")
	}
	return b.String()
}

// AlterSchema is ALTER SCHEMA name op, op, ….
type AlterSchema struct {
	Pos  Pos
	Name string
	Ops  []Op
}

// AlterWire is ALTER WIRE fmt SCHEMA name op, … or … MODE STRICT|LOOSE.
type AlterWire struct {
	Pos    Pos
	Format types.Format
	Name   string
	Ops    []Op
	// Mode is set for a MODE change (and Ops is empty).
	Mode *types.Mode
}

// Drop is DROP SCHEMA | DROP WIRE fmt SCHEMA | DROP CODEC [IF EXISTS].
type Drop struct {
	Pos      Pos
	Kind     Kind
	Format   types.Format
	Name     string
	IfExists bool
}

// Begin is BEGIN.
type Begin struct{ Pos Pos }

// Commit is COMMIT.
type Commit struct{ Pos Pos }

// Rollback is ROLLBACK.
type Rollback struct{ Pos Pos }

// ShowCreate is SHOW CREATE SCHEMA | WIRE fmt SCHEMA | CODEC name.
type ShowCreate struct {
	Pos    Pos
	Kind   Kind
	Format types.Format
	Name   string
}

// At implements Stmt.
func (s *CreateSchema) At() Pos { return s.Pos }

// At implements Stmt.
func (s *CreateWire) At() Pos { return s.Pos }

// At implements Stmt.
func (s *CreateCodec) At() Pos { return s.Pos }

// At implements Stmt.
func (s *AlterSchema) At() Pos { return s.Pos }

// At implements Stmt.
func (s *AlterWire) At() Pos { return s.Pos }

// At implements Stmt.
func (s *Drop) At() Pos { return s.Pos }

// At implements Stmt.
func (s *Begin) At() Pos { return s.Pos }

// At implements Stmt.
func (s *Commit) At() Pos { return s.Pos }

// At implements Stmt.
func (s *Rollback) At() Pos { return s.Pos }

// At implements Stmt.
func (s *ShowCreate) At() Pos { return s.Pos }
