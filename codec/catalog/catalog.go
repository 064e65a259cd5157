// Package catalog owns the set of codec entities (internal schemas, JSON,
// CBOR and AVRO wire schemas, codecs, JAQ-native and protobuf codecs
// included) and executes statements against it:
// CREATE, ALTER (left to right, each operation seeing the previous), DROP,
// SHOW CREATE and BEGIN … COMMIT transactions validated against one
// candidate graph and applied atomically. It tracks dependencies, so a
// schema a codec uses cannot be dropped or changed out from under it, and
// records a compatibility verdict for every ALTER. A JAQ-backed codec's
// programs are compiled, and a protobuf codec's descriptors built from the
// catalog's resources, when the codec is created, so a program or a
// .proto that does not compile fails the statement at its position.
//
// It must not decode or encode payloads; the wire packages do that from
// the plans it hands out. A Catalog is not safe for concurrent use.
package catalog

import (
	"errors"
	"fmt"
	"sort"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/ddl"
	"github.com/herald-gateway/herald/codec/evolve"
	"github.com/herald-gateway/herald/codec/jaq/program"
	"github.com/herald-gateway/herald/codec/protobuf"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/types"
)

// Key identifies an entity: its kind, its wire format (wire schemas only)
// and its name. JSON, CBOR and AVRO wire schemas of one name do not collide.
type Key struct {
	Kind   ddl.Kind
	Format types.Format
	Name   string
}

// String renders the key as it is written in statements, e.g.
// "WIRE JSON SCHEMA notification_wire".
func (k Key) String() string {
	switch k.Kind {
	case ddl.KindSchema:
		return "SCHEMA " + types.Quote(k.Name)
	case ddl.KindWire:
		return "WIRE " + k.Format.String() + " SCHEMA " + types.Quote(k.Name)
	case ddl.KindCodec:
		return "CODEC " + types.Quote(k.Name)
	}
	return "?"
}

type state struct {
	schemas map[string]*types.Schema
	wires   map[Key]*types.WireSchema
	codecs  map[string]*types.Codec
	protos  map[string]*protobuf.Schema // compiled descriptors per protobuf codec
	order   []Key
	touched map[Key]ddl.Pos
}

func newState() *state {
	return &state{
		schemas: map[string]*types.Schema{},
		wires:   map[Key]*types.WireSchema{},
		codecs:  map[string]*types.Codec{},
		protos:  map[string]*protobuf.Schema{},
		touched: map[Key]ddl.Pos{},
	}
}

// clone copies the maps; entities are immutable once stored (ALTER stores
// a modified copy), so they are shared.
func (s *state) clone() *state {
	c := newState()
	for k, v := range s.schemas {
		c.schemas[k] = v
	}
	for k, v := range s.wires {
		c.wires[k] = v
	}
	for k, v := range s.codecs {
		c.codecs[k] = v
	}
	for k, v := range s.protos {
		c.protos[k] = v
	}
	c.order = append([]Key(nil), s.order...)
	return c
}

func (s *state) exists(k Key) bool {
	switch k.Kind {
	case ddl.KindSchema:
		return s.schemas[k.Name] != nil
	case ddl.KindWire:
		return s.wires[k] != nil
	case ddl.KindCodec:
		return s.codecs[k.Name] != nil
	}
	return false
}

func (s *state) remove(k Key) {
	switch k.Kind {
	case ddl.KindSchema:
		delete(s.schemas, k.Name)
	case ddl.KindWire:
		delete(s.wires, k)
	case ddl.KindCodec:
		delete(s.codecs, k.Name)
		delete(s.protos, k.Name)
	}
	for i, o := range s.order {
		if o == k {
			s.order = append(s.order[:i:i], s.order[i+1:]...)
			break
		}
	}
}

// Catalog holds the committed entities.
type Catalog struct {
	st  *state
	res *resource.Set
}

// New returns an empty catalog without resources: it refuses protobuf
// codecs.
func New() *Catalog { return &Catalog{st: newState()} }

// NewWithResources returns an empty catalog whose protobuf codecs compile
// their descriptors from the resources of set.
func NewWithResources(set *resource.Set) *Catalog { return &Catalog{st: newState(), res: set} }

// Resources returns the resources the catalog compiles protobuf codecs
// from (nil when it has none).
func (c *Catalog) Resources() *resource.Set { return c.res }

// ProtoSchema returns the compiled descriptors of a protobuf codec.
func (c *Catalog) ProtoSchema(name string) (*protobuf.Schema, bool) {
	s, ok := c.st.protos[name]
	return s, ok
}

// Result is the outcome of one executed statement.
type Result struct {
	Stmt ddl.Stmt
	// Text is the output of SHOW CREATE.
	Text string
	// Skipped is set when IF NOT EXISTS / IF EXISTS made the statement a
	// no-op.
	Skipped bool
	// Verdicts holds, for an ALTER, the compatibility verdict per wire
	// format (JSON, CBOR, AVRO for an internal schema; the schema's own
	// format for a wire schema).
	Verdicts []evolve.Verdict
}

// Exec parses src and executes its statements.
func (c *Catalog) Exec(src string) ([]Result, error) {
	stmts, err := ddl.Parse(src)
	if err != nil {
		return nil, err
	}
	return c.ExecStmts(stmts)
}

// ExecStmts executes parsed statements in order. A statement outside a
// transaction is applied on its own once the whole graph validates with
// it; the statements between BEGIN and COMMIT are applied together or not
// at all. The first error stops execution; statements applied before it
// stay applied, and an open transaction is discarded.
func (c *Catalog) ExecStmts(stmts []ddl.Stmt) ([]Result, error) {
	var (
		results []Result
		tx      *state
		begin   ddl.Pos
	)
	for _, s := range stmts {
		switch st := s.(type) {
		case *ddl.Begin:
			if tx != nil {
				return results, &ddl.Error{Pos: st.Pos, Msg: fmt.Sprintf("BEGIN inside the transaction begun at %s: expected COMMIT or ROLLBACK first", begin)}
			}
			tx, begin = c.st.clone(), st.Pos
			results = append(results, Result{Stmt: s})
			continue
		case *ddl.Commit:
			if tx == nil {
				return results, &ddl.Error{Pos: st.Pos, Msg: "COMMIT without BEGIN"}
			}
			if err := validate(tx, false, st.Pos); err != nil {
				return results, err
			}
			c.st, tx = tx, nil
			results = append(results, Result{Stmt: s})
			continue
		case *ddl.Rollback:
			if tx == nil {
				return results, &ddl.Error{Pos: st.Pos, Msg: "ROLLBACK without BEGIN"}
			}
			tx = nil
			results = append(results, Result{Stmt: s})
			continue
		}
		target := tx
		if target == nil {
			target = c.st.clone()
		}
		res, err := apply(target, s, c.res)
		if err != nil {
			return results, err
		}
		if tx == nil {
			if _, show := s.(*ddl.ShowCreate); !show {
				if err := validate(target, hintFor(s), s.At()); err != nil {
					return results, err
				}
				c.st = target
			}
		}
		results = append(results, res)
	}
	if tx != nil {
		return results, &ddl.Error{Pos: begin, Msg: "BEGIN without COMMIT: expected COMMIT before the end of input; nothing of the transaction was applied"}
	}
	return results, nil
}

// hintFor reports whether a validation failure after statement s should
// suggest a transaction: s changed a schema a codec depends on.
func hintFor(s ddl.Stmt) bool {
	switch s.(type) {
	case *ddl.AlterSchema, *ddl.AlterWire, *ddl.Drop:
		return true
	}
	return false
}

func errAt(p ddl.Pos, format string, args ...any) error {
	return &ddl.Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

func apply(st *state, s ddl.Stmt, rs *resource.Set) (Result, error) {
	res := Result{Stmt: s}
	switch x := s.(type) {
	case *ddl.CreateSchema:
		k := Key{Kind: ddl.KindSchema, Name: x.Schema.Name}
		if st.exists(k) {
			if x.IfNotExists {
				res.Skipped = true
				return res, nil
			}
			return res, errAt(x.Pos, "%s already exists (use CREATE IF NOT EXISTS, or ALTER it)", k)
		}
		if err := x.Schema.Validate(); err != nil {
			return res, errAt(x.Pos, "%v", err)
		}
		st.schemas[k.Name] = x.Schema
		st.order = append(st.order, k)
		st.touched[k] = x.Pos
	case *ddl.CreateWire:
		k := Key{Kind: ddl.KindWire, Format: x.Wire.Format, Name: x.Wire.Name}
		if st.exists(k) {
			if x.IfNotExists {
				res.Skipped = true
				return res, nil
			}
			return res, errAt(x.Pos, "%s already exists (use CREATE IF NOT EXISTS, or ALTER it)", k)
		}
		if err := x.Wire.Validate(); err != nil {
			return res, errAt(x.Pos, "%v", err)
		}
		st.wires[k] = x.Wire
		st.order = append(st.order, k)
		st.touched[k] = x.Pos
	case *ddl.CreateCodec:
		k := Key{Kind: ddl.KindCodec, Name: x.Codec.Name}
		if st.exists(k) {
			if x.IfNotExists {
				res.Skipped = true
				return res, nil
			}
			return res, errAt(x.Pos, "%s already exists (DROP it first, in the same transaction)", k)
		}
		if x.Codec.Jaq != nil {
			ps, err := checkJaq(x, rs)
			if err != nil {
				return res, err
			}
			if ps != nil {
				st.protos[k.Name] = ps
			}
		}
		st.codecs[k.Name] = x.Codec
		st.order = append(st.order, k)
		st.touched[k] = x.Pos
	case *ddl.AlterSchema:
		return alterSchema(st, x)
	case *ddl.AlterWire:
		return alterWire(st, x)
	case *ddl.Drop:
		k := Key{Kind: x.Kind, Format: x.Format, Name: x.Name}
		if !st.exists(k) {
			if x.IfExists {
				res.Skipped = true
				return res, nil
			}
			return res, errAt(x.Pos, "%s does not exist", k)
		}
		st.remove(k)
		st.touched[k] = x.Pos
	case *ddl.ShowCreate:
		k := Key{Kind: x.Kind, Format: x.Format, Name: x.Name}
		text, ok := st.showCreate(k)
		if !ok {
			return res, errAt(x.Pos, "%s does not exist", k)
		}
		res.Text = text
	default:
		return res, errAt(s.At(), "unsupported statement")
	}
	return res, nil
}

// checkJaq compiles the programs of a JAQ-backed codec, and the
// descriptors of a protobuf codec, when the codec is created: an error
// points at the program position the compiler names, or at the clause at
// fault.
func checkJaq(x *ddl.CreateCodec, rs *resource.Set) (*protobuf.Schema, error) {
	c := x.Codec
	for d, prog := range c.Jaq.Programs {
		if !prog.Set {
			continue
		}
		if _, err := program.Compile(prog.Text); err != nil {
			dir := types.Direction(d)
			var ce *program.CompileError
			if errors.As(err, &ce) {
				return nil, errAt(x.ProgramPos(dir, ce.Offset), "%s program does not compile: %s", dir, ce.Msg)
			}
			return nil, errAt(x.ClausePos(dir), "%s program does not compile: %v", dir, err)
		}
	}
	if c.Proto == nil {
		return nil, nil
	}
	ps, err := protobuf.Build(rs, c.Proto, c.Jaq.Programs[types.EmittingBatch].Set)
	if err != nil {
		pos := x.ResourcePos
		var be *protobuf.BuildError
		if errors.As(err, &be) {
			switch be.Clause {
			case protobuf.ClauseConfig:
				pos = x.ConfigPos
			case protobuf.ClauseMessage:
				pos = x.MessagePos
			case protobuf.ClauseBatchMessage:
				pos = x.BatchMessagePos
			}
		}
		return nil, errAt(pos, "codec %s: %v", types.Quote(c.Name), err)
	}
	return ps, nil
}

func alterSchema(st *state, x *ddl.AlterSchema) (Result, error) {
	res := Result{Stmt: x}
	k := Key{Kind: ddl.KindSchema, Name: x.Name}
	cur := st.schemas[x.Name]
	if cur == nil {
		return res, errAt(x.Pos, "%s does not exist", k)
	}
	formats := []types.Format{types.JSON, types.CBOR, types.AVRO}
	verdicts := make([]evolve.Verdict, len(formats))
	for i, f := range formats {
		verdicts[i] = evolve.Verdict{Entity: k.String(), Format: f}
	}
	for _, op := range x.Ops {
		next := cur.Clone()
		if err := applySchemaOp(next, op); err != nil {
			return res, err
		}
		for i, f := range formats {
			verdicts[i].Breaks = append(verdicts[i].Breaks, evolve.Schema(op.String(), cur, next, f)...)
		}
		cur = next
	}
	if err := cur.Validate(); err != nil {
		return res, errAt(x.Pos, "%v", err)
	}
	st.schemas[x.Name] = cur
	st.touched[k] = x.Pos
	res.Verdicts = verdicts
	return res, nil
}

func applySchemaOp(s *types.Schema, op ddl.Op) error {
	q := types.Quote(op.Field)
	i := s.Index(op.Field)
	if op.Kind != ddl.OpAdd && i < 0 {
		return errAt(op.Pos, "%s: schema %s has no field %s", op, types.Quote(s.Name), q)
	}
	switch op.Kind {
	case ddl.OpAdd:
		if i >= 0 {
			return errAt(op.Pos, "%s: schema %s already has a field %s", op, types.Quote(s.Name), q)
		}
		if err := op.Type.Validate(); err != nil {
			return errAt(op.Pos, "%s: %v", op, err)
		}
		s.Fields = append(s.Fields, types.Field{Name: op.Field, Type: op.Type, Optional: op.Optional, Sensitive: op.Sensitive})
	case ddl.OpDrop:
		if len(s.Fields) == 1 {
			return errAt(op.Pos, "%s: schema %s must retain at least one field", op, types.Quote(s.Name))
		}
		s.Fields = append(s.Fields[:i:i], s.Fields[i+1:]...)
	case ddl.OpRename:
		if s.Index(op.To) >= 0 {
			return errAt(op.Pos, "%s: schema %s already has a field %s", op, types.Quote(s.Name), types.Quote(op.To))
		}
		s.Fields[i].Name = op.To
	case ddl.OpSetType:
		if err := op.Type.Validate(); err != nil {
			return errAt(op.Pos, "%s: %v", op, err)
		}
		s.Fields[i].Type = op.Type
	case ddl.OpSetOptional:
		s.Fields[i].Optional = true
	case ddl.OpDropOptional:
		s.Fields[i].Optional = false
	case ddl.OpSetSensitive:
		s.Fields[i].Sensitive = true
	case ddl.OpDropSensitive:
		s.Fields[i].Sensitive = false
	}
	return nil
}

func alterWire(st *state, x *ddl.AlterWire) (Result, error) {
	res := Result{Stmt: x}
	k := Key{Kind: ddl.KindWire, Format: x.Format, Name: x.Name}
	cur := st.wires[k]
	if cur == nil {
		return res, errAt(x.Pos, "%s does not exist", k)
	}
	v := evolve.Verdict{Entity: k.String(), Format: x.Format}
	if x.Mode != nil {
		next := cur.Clone()
		next.Mode = *x.Mode
		v.Breaks = evolve.Wire("MODE "+next.Mode.String(), cur, next)
		cur = next
	}
	for _, op := range x.Ops {
		next := cur.Clone()
		if err := applyWireOp(next, op); err != nil {
			return res, err
		}
		v.Breaks = append(v.Breaks, evolve.Wire(op.String(), cur, next)...)
		cur = next
	}
	if err := cur.Validate(); err != nil {
		return res, errAt(x.Pos, "%v", err)
	}
	st.wires[k] = cur
	st.touched[k] = x.Pos
	res.Verdicts = []evolve.Verdict{v}
	return res, nil
}

func applyWireOp(w *types.WireSchema, op ddl.Op) error {
	q := types.Quote(op.Field)
	i := w.Index(op.Field)
	name := fmt.Sprintf("wire %s schema %s", w.Format, types.Quote(w.Name))
	if op.Kind != ddl.OpAdd && i < 0 {
		return errAt(op.Pos, "%s: %s has no field %s", op, name, q)
	}
	switch op.Kind {
	case ddl.OpAdd:
		if i >= 0 {
			return errAt(op.Pos, "%s: %s already has a field %s", op, name, q)
		}
		w.Fields = append(w.Fields, types.WireField{Name: op.Field, Type: op.Wire, Optional: op.Optional})
	case ddl.OpDrop:
		if len(w.Fields) == 1 {
			return errAt(op.Pos, "%s: %s must retain at least one field", op, name)
		}
		w.Fields = append(w.Fields[:i:i], w.Fields[i+1:]...)
	case ddl.OpRename:
		if w.Index(op.To) >= 0 {
			return errAt(op.Pos, "%s: %s already has a field %s", op, name, types.Quote(op.To))
		}
		w.Fields[i].Name = op.To
	case ddl.OpSetType:
		w.Fields[i].Type = op.Wire
	case ddl.OpSetOptional:
		w.Fields[i].Optional = true
	case ddl.OpDropOptional:
		w.Fields[i].Optional = false
	}
	return nil
}

// validate checks the whole graph: every codec's schemas exist and bind.
// The error is placed at the latest statement that touched the codec or
// one of its dependencies.
func validate(st *state, hintTx bool, fallback ddl.Pos) error {
	names := make([]string, 0, len(st.codecs))
	for n := range st.codecs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cd := st.codecs[n]
		ck := Key{Kind: ddl.KindCodec, Name: n}
		sk := Key{Kind: ddl.KindSchema, Name: cd.Schema}
		wk := Key{Kind: ddl.KindWire, Format: cd.Format, Name: cd.Wire}
		pos := latest(st, ck, sk, wk)
		if pos == (ddl.Pos{}) {
			pos = fallback
		}
		hint := ""
		if hintTx {
			hint = " (change a codec and its schemas together in one BEGIN … COMMIT)"
		}
		s := st.schemas[cd.Schema]
		if s == nil {
			return errAt(pos, "codec %s uses %s, which does not exist: drop or recreate the codec too%s", types.Quote(n), sk, hint)
		}
		var w *types.WireSchema
		if cd.Format != types.SYSLOG && cd.Jaq == nil {
			if w = st.wires[wk]; w == nil {
				return errAt(pos, "codec %s uses %s, which does not exist: drop or recreate the codec too%s", types.Quote(n), wk, hint)
			}
		}
		if _, err := bind.Compile(cd, s, w); err != nil {
			return errAt(pos, "%v%s", err, hint)
		}
	}
	return nil
}

func latest(st *state, keys ...Key) ddl.Pos {
	var best ddl.Pos
	for _, k := range keys {
		p, ok := st.touched[k]
		if !ok {
			continue
		}
		if p.Line > best.Line || (p.Line == best.Line && p.Col > best.Col) {
			best = p
		}
	}
	return best
}

func (s *state) showCreate(k Key) (string, bool) {
	switch k.Kind {
	case ddl.KindSchema:
		if v := s.schemas[k.Name]; v != nil {
			return types.CreateSchema(v), true
		}
	case ddl.KindWire:
		if v := s.wires[k]; v != nil {
			return types.CreateWire(v), true
		}
	case ddl.KindCodec:
		if v := s.codecs[k.Name]; v != nil {
			return types.CreateCodec(v), true
		}
	}
	return "", false
}

// Keys returns every entity's key: internal schemas, then wire schemas,
// then codecs, each in creation order, so that executing their SHOW CREATE
// texts in this order rebuilds the catalog.
func (c *Catalog) Keys() []Key {
	keys := append([]Key(nil), c.st.order...)
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].Kind < keys[j].Kind })
	return keys
}

// ShowCreate returns the canonical definition of an entity.
func (c *Catalog) ShowCreate(k Key) (string, bool) { return c.st.showCreate(k) }

// part is one canonical form in an entity's signature: the entity's own
// (ref "") or that of an entity it references.
type part struct {
	ref  string
	text string
}

// parts returns the canonical forms an entity's fingerprint covers: its
// SHOW CREATE text, then, for a codec, the canonical forms of the
// entities it references in the order its statement names them: the wire
// schema it reads (FROM WIRE … SCHEMA) or the resource version its
// descriptors were compiled from (USING RESOURCE, resolved when LATEST),
// then the internal schema (TO SCHEMA). Internal and wire schemas
// reference nothing; SYSLOG is a fixed contract, not an entity.
func (c *Catalog) parts(k Key) ([]part, bool) {
	own, ok := c.st.showCreate(k)
	if !ok {
		return nil, false
	}
	out := []part{{text: own}}
	if k.Kind != ddl.KindCodec {
		return out, true
	}
	cd := c.st.codecs[k.Name]
	add := func(ref Key) {
		if text, ok := c.st.showCreate(ref); ok {
			out = append(out, part{ref: ref.String(), text: text})
		}
	}
	if cd.Format != types.SYSLOG && cd.Jaq == nil {
		add(Key{Kind: ddl.KindWire, Format: cd.Format, Name: cd.Wire})
	}
	if ps := c.st.protos[k.Name]; ps != nil && ps.Resource != nil {
		r := ps.Resource
		out = append(out, part{ref: fmt.Sprintf("RESOURCE %s VERSION %d", types.Quote(r.Name), r.Version), text: r.Canonical()})
	}
	add(Key{Kind: ddl.KindSchema, Name: cd.Schema})
	return out, true
}

// Canonical returns the canonical form of an entity, the text its
// fingerprint is computed over. For an internal or wire schema it is the
// SHOW CREATE text. For a codec it is the codec's SHOW CREATE text
// followed, each on lines of its own, by the SHOW CREATE text of the wire
// schema it reads (declared wire codecs), the canonical form of the
// resource version it compiled from (protobuf codecs, see
// resource.Resource.Canonical), and the SHOW CREATE text of its internal
// schema: so a change to any entity a codec references changes the
// codec's fingerprint, as the schema-evolution rules require of a schema
// id ("a change to Address changes the id of a User that references
// it").
func (c *Catalog) Canonical(k Key) (string, bool) {
	ps, ok := c.parts(k)
	if !ok {
		return "", false
	}
	refs := make([]string, 0, len(ps)-1)
	for _, p := range ps[1:] {
		refs = append(refs, p.text)
	}
	return types.Signature(ps[0].text, refs...), true
}

// Fingerprint returns the fingerprint of an entity's canonical form (see
// Canonical).
func (c *Catalog) Fingerprint(k Key) (types.Fingerprint, bool) {
	text, ok := c.Canonical(k)
	if !ok {
		return types.Fingerprint{}, false
	}
	return types.FingerprintOf(text), true
}

// Schema returns an internal schema by name.
func (c *Catalog) Schema(name string) (*types.Schema, bool) {
	s, ok := c.st.schemas[name]
	return s, ok
}

// Wire returns a wire schema by format and name.
func (c *Catalog) Wire(f types.Format, name string) (*types.WireSchema, bool) {
	w, ok := c.st.wires[Key{Kind: ddl.KindWire, Format: f, Name: name}]
	return w, ok
}

// Codec returns a codec definition by name.
func (c *Catalog) Codec(name string) (*types.Codec, bool) {
	cd, ok := c.st.codecs[name]
	return cd, ok
}

// Plan compiles the binding of a codec.
func (c *Catalog) Plan(name string) (*bind.Plan, error) {
	cd, ok := c.st.codecs[name]
	if !ok {
		return nil, fmt.Errorf("codec %s does not exist", types.Quote(name))
	}
	s := c.st.schemas[cd.Schema]
	if s == nil {
		return nil, fmt.Errorf("codec %s: schema %s does not exist", types.Quote(name), types.Quote(cd.Schema))
	}
	var w *types.WireSchema
	if cd.Format != types.SYSLOG && cd.Jaq == nil {
		w = c.st.wires[Key{Kind: ddl.KindWire, Format: cd.Format, Name: cd.Wire}]
	}
	return bind.Compile(cd, s, w)
}
