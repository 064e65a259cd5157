package ddl

import (
	"fmt"
	"strconv"

	"github.com/herald-gateway/herald/codec/types"
)

// Parse parses statements separated by ';' (the last one may omit it).
// The first error stops parsing and names its line and column.
func Parse(src string) ([]Stmt, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	var out []Stmt
	for {
		for p.peek().kind == tPunct && p.peek().text == ";" {
			p.next()
		}
		if p.peek().kind == tEOF {
			return out, nil
		}
		s, err := p.stmt()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		t := p.peek()
		if t.kind == tEOF {
			return out, nil
		}
		if !(t.kind == tPunct && t.text == ";") {
			return nil, p.errf(t, "expected ';' or end of input after the statement, found %s", t.describe())
		}
	}
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errf(t token, format string, args ...any) error {
	return &Error{Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(kw string) (token, error) {
	t := p.next()
	if !t.is(kw) {
		return t, p.errf(t, "expected %s, found %s", kw, t.describe())
	}
	return t, nil
}

func (p *parser) expectPunct(c string) error {
	t := p.next()
	if t.kind != tPunct || t.text != c {
		return p.errf(t, "expected '%s', found %s", c, t.describe())
	}
	return nil
}

func (p *parser) acceptPunct(c string) bool {
	if t := p.peek(); t.kind == tPunct && t.text == c {
		p.next()
		return true
	}
	return false
}

// name reads a bare word (keywords included) or a backtick-quoted name.
func (p *parser) name(what string) (string, token, error) {
	t := p.next()
	if t.kind == tWord || t.kind == tQuoted {
		return t.text, t, nil
	}
	return "", t, p.errf(t, "expected %s, found %s", what, t.describe())
}

func (p *parser) stmt() (Stmt, error) {
	t := p.next()
	switch {
	case t.is("CREATE"):
		return p.create(t)
	case t.is("ALTER"):
		return p.alter(t)
	case t.is("DROP"):
		return p.drop(t)
	case t.is("BEGIN"):
		p.accept("TRANSACTION")
		return &Begin{Pos: t.pos}, nil
	case t.is("COMMIT"):
		return &Commit{Pos: t.pos}, nil
	case t.is("ROLLBACK"):
		return &Rollback{Pos: t.pos}, nil
	case t.is("SHOW"):
		return p.show(t)
	}
	return nil, p.errf(t, "expected a statement (CREATE, ALTER, DROP, BEGIN, COMMIT, ROLLBACK or SHOW CREATE), found %s", t.describe())
}

func (p *parser) ifNotExists() (bool, error) {
	if !p.peek().is("IF") {
		return false, nil
	}
	p.next()
	if _, err := p.expect("NOT"); err != nil {
		return false, err
	}
	if _, err := p.expect("EXISTS"); err != nil {
		return false, err
	}
	return true, nil
}

// wireFormat reads JSON|CBOR|AVRO after WIRE.
func (p *parser) wireFormat() (types.Format, error) {
	t := p.next()
	if t.kind == tWord {
		if f := types.ParseFormat(t.text); f != types.FormatNone {
			return f, nil
		}
		if t.is("SYSLOG") {
			return 0, p.errf(t, "SYSLOG is a predefined wire schema without a declaration: expected JSON, CBOR or AVRO")
		}
	}
	return 0, p.errf(t, "expected a wire format (JSON, CBOR or AVRO), found %s", t.describe())
}

func (p *parser) create(start token) (Stmt, error) {
	t := p.next()
	switch {
	case t.is("IF"):
		p.i--
		ine, err := p.ifNotExists()
		if err != nil {
			return nil, err
		}
		return p.createAfterIf(start, ine)
	default:
		p.i--
		return p.createAfterIf(start, false)
	}
}

func (p *parser) createAfterIf(start token, ine bool) (Stmt, error) {
	t := p.next()
	switch {
	case t.is("SCHEMA"):
		name, _, err := p.name("a schema name")
		if err != nil {
			return nil, err
		}
		fields, err := p.schemaFields()
		if err != nil {
			return nil, err
		}
		return &CreateSchema{Pos: start.pos, IfNotExists: ine, Schema: &types.Schema{Name: name, Fields: fields}}, nil
	case t.is("WIRE"):
		f, err := p.wireFormat()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("SCHEMA"); err != nil {
			return nil, err
		}
		name, _, err := p.name("a wire schema name")
		if err != nil {
			return nil, err
		}
		mode := types.Strict
		if p.accept("MODE") {
			if mode, err = p.mode(); err != nil {
				return nil, err
			}
		}
		fields, err := p.wireFields(f)
		if err != nil {
			return nil, err
		}
		return &CreateWire{Pos: start.pos, IfNotExists: ine, Wire: &types.WireSchema{Format: f, Name: name, Mode: mode, Fields: fields}}, nil
	case t.is("CODEC"):
		return p.createCodec(start, ine)
	}
	return nil, p.errf(t, "expected SCHEMA, WIRE or CODEC after CREATE, found %s", t.describe())
}

func (p *parser) mode() (types.Mode, error) {
	t := p.next()
	switch {
	case t.is("STRICT"):
		return types.Strict, nil
	case t.is("LOOSE"):
		return types.Loose, nil
	}
	return 0, p.errf(t, "expected STRICT or LOOSE, found %s", t.describe())
}

func (p *parser) schemaFields() ([]types.Field, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var fields []types.Field
	if t := p.peek(); t.kind == tPunct && t.text == ")" {
		return nil, p.errf(t, "expected a field definition: a schema must declare at least one field")
	}
	for {
		f, err := p.schemaField()
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			t := p.toks[p.i-1]
			return nil, p.errf(t, "expected ',' or ')' after a field definition, found %s", t.describe())
		}
		return fields, nil
	}
}

func (p *parser) schemaField() (types.Field, error) {
	name, _, err := p.name("a field name")
	if err != nil {
		return types.Field{}, err
	}
	typ, err := p.typ()
	if err != nil {
		return types.Field{}, err
	}
	f := types.Field{Name: name, Type: typ}
	for {
		t := p.peek()
		switch {
		case t.is("OPTIONAL"):
			if f.Optional {
				return f, p.errf(t, "OPTIONAL is given twice")
			}
			f.Optional = true
		case t.is("SENSITIVE"):
			if f.Sensitive {
				return f, p.errf(t, "SENSITIVE is given twice")
			}
			f.Sensitive = true
		default:
			return f, nil
		}
		p.next()
	}
}

func (p *parser) typ() (types.Type, error) {
	t := p.next()
	if t.kind != tWord {
		return types.Type{}, p.errf(t, "expected a type (U8…I64, F32, F64, BOOL, STRING, BYTES, DATETIME, ARRAY<…>, VEC<…>), found %s", t.describe())
	}
	switch {
	case t.is("ARRAY"):
		if err := p.expectPunct("<"); err != nil {
			return types.Type{}, err
		}
		elem, err := p.typ()
		if err != nil {
			return types.Type{}, err
		}
		var dims []int
		for p.acceptPunct(",") {
			n := p.next()
			if n.kind != tNumber {
				return types.Type{}, p.errf(n, "expected an axis length (1…%d), found %s", types.MaxDim, n.describe())
			}
			v, err := strconv.ParseUint(n.text, 10, 64)
			if err != nil || v < 1 || v > types.MaxDim {
				return types.Type{}, p.errf(n, "expected an axis length from 1 to %d, found %s", types.MaxDim, n.text)
			}
			dims = append(dims, int(v))
		}
		if len(dims) == 0 {
			return types.Type{}, p.errf(p.peek(), "expected ',' and at least one axis length in ARRAY<T, D1, …>, found %s", p.peek().describe())
		}
		if err := p.expectPunct(">"); err != nil {
			return types.Type{}, err
		}
		return types.ArrayOf(elem, dims...), nil
	case t.is("VEC"):
		if err := p.expectPunct("<"); err != nil {
			return types.Type{}, err
		}
		elem, err := p.typ()
		if err != nil {
			return types.Type{}, err
		}
		if err := p.expectPunct(">"); err != nil {
			return types.Type{}, err
		}
		return types.VecOf(elem), nil
	}
	k := types.ScalarKind(t.text)
	if k == types.Invalid {
		return types.Type{}, p.errf(t, "expected a type (U8…I64, F32, F64, BOOL, STRING, BYTES, DATETIME, ARRAY<…>, VEC<…>), found %s", t.describe())
	}
	return types.Scalar(k), nil
}

func (p *parser) wireType(f types.Format) (types.WireKind, error) {
	t := p.next()
	if t.kind == tWord {
		if k := types.ParseWireKind(f, t.text); k != types.WireInvalid {
			return k, nil
		}
	}
	article := "a"
	if f == types.AVRO {
		article = "an"
	}
	return 0, p.errf(t, "expected %s %s wire type (%s), found %s", article, f, types.WireTypeNames(f), t.describe())
}

func (p *parser) wireFields(f types.Format) ([]types.WireField, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tPunct && t.text == ")" {
		return nil, p.errf(t, "expected a field definition: a wire schema must declare at least one field")
	}
	var fields []types.WireField
	for {
		wf, err := p.wireField(f)
		if err != nil {
			return nil, err
		}
		fields = append(fields, wf)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			t := p.toks[p.i-1]
			return nil, p.errf(t, "expected ',' or ')' after a field definition, found %s", t.describe())
		}
		return fields, nil
	}
}

func (p *parser) wireField(f types.Format) (types.WireField, error) {
	name, _, err := p.name("a field name")
	if err != nil {
		return types.WireField{}, err
	}
	k, err := p.wireType(f)
	if err != nil {
		return types.WireField{}, err
	}
	wf := types.WireField{Name: name, Type: k}
	if t := p.peek(); t.is("OPTIONAL") {
		p.next()
		wf.Optional = true
	}
	if t := p.peek(); t.is("SENSITIVE") {
		return wf, p.errf(t, "SENSITIVE belongs to internal schema fields, not wire schema fields")
	}
	return wf, nil
}

func (p *parser) createCodec(start token, ine bool) (Stmt, error) {
	name, _, err := p.name("a codec name")
	if err != nil {
		return nil, err
	}
	if _, err := p.expect("FROM"); err != nil {
		return nil, err
	}
	c := &types.Codec{Name: name}
	out := &CreateCodec{Pos: start.pos, IfNotExists: ine, Codec: c}
	t := p.next()
	out.FormatPos = t.pos
	switch {
	case t.is("WIRE"):
		if nt := p.peek(); nt.kind == tWord && types.ParseFormat(nt.text) == types.FormatNone && types.ParseNativeFormat(nt.text) != types.FormatNone {
			return nil, p.errf(nt, "there is no WIRE %s SCHEMA: a %s codec is JAQ-native, written FROM %s TO SCHEMA … WITH JAQ TRANSFORMATIONS …", upper(nt.text), upper(nt.text), upper(nt.text))
		}
		if c.Format, err = p.wireFormat(); err != nil {
			return nil, err
		}
		if _, err := p.expect("SCHEMA"); err != nil {
			return nil, err
		}
		if c.Wire, _, err = p.name("a wire schema name"); err != nil {
			return nil, err
		}
	case t.is("SYSLOG"):
		c.Format = types.SYSLOG
	case t.is("PROTOBUF"):
		c.Format = types.PROTOBUF
		if err := p.protoSource(out); err != nil {
			return nil, err
		}
	case t.kind == tWord && types.ParseNativeFormat(t.text) != types.FormatNone:
		c.Format = types.ParseNativeFormat(t.text)
		c.Jaq = &types.Jaq{}
	default:
		return nil, p.errf(t, "expected WIRE, SYSLOG, JSON, YAML, TOML, XML, CBOR or PROTOBUF after FROM, found %s", t.describe())
	}
	if _, err := p.expect("TO"); err != nil {
		return nil, err
	}
	if _, err := p.expect("SCHEMA"); err != nil {
		return nil, err
	}
	if c.Schema, _, err = p.name("a schema name"); err != nil {
		return nil, err
	}
	if c.Jaq != nil {
		if err := p.jaqClause(out); err != nil {
			return nil, err
		}
		return out, nil
	}
	for p.peek().is("ENCODE") {
		et := p.next()
		if c.Format == types.SYSLOG {
			return nil, p.errf(et, "a SYSLOG codec takes no field encoding rules: expected ';'")
		}
		for {
			f, ft, err := p.name("an internal field name after ENCODE")
			if err != nil {
				return nil, err
			}
			if _, err := p.expect("AS"); err != nil {
				return nil, err
			}
			if _, err := p.expect("RFC3339"); err != nil {
				return nil, err
			}
			for i, prev := range c.RFC3339 {
				if prev == f {
					return nil, p.errf(ft, "field %s already has an ENCODE rule (at %s)", types.Quote(f), out.EncodePos[i])
				}
			}
			c.RFC3339 = append(c.RFC3339, f)
			out.EncodePos = append(out.EncodePos, ft.pos)
			if !p.acceptPunct(",") {
				break
			}
		}
	}
	if t := p.peek(); t.is("WITH") {
		if c.Format == types.SYSLOG {
			return nil, p.errf(t, "a SYSLOG codec takes no JAQ transformations: expected ';'")
		}
		return nil, p.errf(t, "a codec using a declared wire schema takes no JAQ transformations: expected ENCODE or ';'")
	}
	return out, nil
}

// protoSource reads USING RESOURCE name VERSION n|LATEST CONFIG {…}
// MESSAGE '…' [BATCH MESSAGE '…'] after FROM PROTOBUF.
func (p *parser) protoSource(out *CreateCodec) error {
	c := out.Codec
	c.Jaq = &types.Jaq{}
	pr := &types.Proto{}
	c.Proto = pr
	if t := p.peek(); !t.is("USING") {
		return p.errf(t, "a protobuf codec is written FROM PROTOBUF USING RESOURCE name VERSION n|LATEST CONFIG {…} MESSAGE '…': expected USING, found %s", t.describe())
	}
	p.next()
	if _, err := p.expect("RESOURCE"); err != nil {
		return err
	}
	var err error
	var rt token
	if pr.Resource, rt, err = p.name("a resource name"); err != nil {
		return err
	}
	out.ResourcePos = rt.pos
	if t := p.peek(); !t.is("VERSION") {
		return p.errf(t, "USING RESOURCE requires VERSION <n> or VERSION LATEST, found %s", t.describe())
	}
	p.next()
	vt := p.next()
	out.VersionPos = vt.pos
	switch {
	case vt.is("LATEST"):
		pr.Version = 0
	case vt.kind == tNumber:
		v, err := strconv.ParseUint(vt.text, 10, 31)
		if err != nil || v < 1 {
			return p.errf(vt, "expected a resource version from 1 to 2147483647 or LATEST, found %s", vt.text)
		}
		pr.Version = int(v)
	default:
		return p.errf(vt, "expected a resource version (a number) or LATEST, found %s", vt.describe())
	}
	if t := p.peek(); !t.is("CONFIG") {
		return p.errf(t, "expected CONFIG {'file' = …, 'include' = …} after the resource version, found %s", t.describe())
	}
	ct := p.next()
	out.ConfigPos = ct.pos
	if err := p.config(pr); err != nil {
		return err
	}
	if t := p.peek(); !t.is("MESSAGE") {
		return p.errf(t, "expected MESSAGE '<full message name>' after CONFIG, found %s", t.describe())
	}
	p.next()
	mt, err := p.stringLit("the full name of a message, e.g. 'pkg.Message'")
	if err != nil {
		return err
	}
	if mt.text == "" {
		return p.errf(mt, "a message name cannot be empty")
	}
	pr.Message, out.MessagePos = mt.text, mt.pos
	if p.peek().is("BATCH") {
		p.next()
		if _, err := p.expect("MESSAGE"); err != nil {
			return err
		}
		bt, err := p.stringLit("the full name of the batch message")
		if err != nil {
			return err
		}
		if bt.text == "" {
			return p.errf(bt, "a message name cannot be empty")
		}
		pr.BatchMessage, out.BatchMessagePos = bt.text, bt.pos
	}
	return nil
}

var configKeys = map[string]bool{"file": false, "files": true, "include": false, "includes": true}

// config reads CONFIG { 'key' = 'value' | ['v', …], … }.
func (p *parser) config(pr *types.Proto) error {
	if err := p.expectPunct("{"); err != nil {
		return err
	}
	if p.acceptPunct("}") {
		return nil
	}
	seen := map[string]Pos{}
	for {
		kt := p.next()
		if kt.kind != tString && kt.kind != tWord {
			return p.errf(kt, "expected a CONFIG key ('file', 'files', 'include' or 'includes'), found %s", kt.describe())
		}
		plural, ok := configKeys[kt.text]
		if !ok {
			return p.errf(kt, "unknown CONFIG key %s: expected 'file', 'files', 'include' or 'includes'", types.QuoteString(kt.text))
		}
		if prev, dup := seen[kt.text]; dup {
			return p.errf(kt, "CONFIG key %s is given twice (first at %s)", types.QuoteString(kt.text), prev)
		}
		seen[kt.text] = kt.pos
		if err := p.expectPunct("="); err != nil {
			return err
		}
		e := types.ConfigEntry{Key: kt.text}
		if t := p.peek(); t.kind == tPunct && t.text == "[" {
			if !plural {
				return p.errf(t, "CONFIG key %s takes one path: use %s = […] for several", types.QuoteString(kt.text), types.QuoteString(kt.text+"s"))
			}
			p.next()
			e.List = true
			for {
				vt, err := p.stringLit("a path relative to the resource root")
				if err != nil {
					return err
				}
				if vt.text == "" {
					return p.errf(vt, "a path cannot be empty")
				}
				e.Values = append(e.Values, vt.text)
				if p.acceptPunct(",") {
					continue
				}
				if err := p.expectPunct("]"); err != nil {
					return err
				}
				break
			}
		} else {
			vt, err := p.stringLit("a path relative to the resource root")
			if err != nil {
				return err
			}
			if vt.text == "" {
				return p.errf(vt, "a path cannot be empty")
			}
			e.Values = []string{vt.text}
		}
		pr.Config = append(pr.Config, e)
		if p.acceptPunct(",") {
			continue
		}
		t := p.next()
		if t.kind != tPunct || t.text != "}" {
			return p.errf(t, "expected ',' or '}' in CONFIG, found %s", t.describe())
		}
		return nil
	}
}

func (p *parser) stringLit(what string) (token, error) {
	t := p.next()
	if t.kind != tString {
		return t, p.errf(t, "expected %s as a string literal, found %s", what, t.describe())
	}
	return t, nil
}

// jaqClause reads WITH JAQ TRANSFORMATIONS [ON INGESTION p] [ON EMITTING
// p [ON EMITTING BATCH p]].
func (p *parser) jaqClause(out *CreateCodec) error {
	c := out.Codec
	what := "a JAQ-native codec (FROM " + c.Format.String() + ")"
	if c.Proto != nil {
		what = "a protobuf codec"
	}
	t := p.peek()
	if t.is("ENCODE") {
		return p.errf(t, "%s takes no field encoding rules (its programs decide the shape): expected WITH JAQ TRANSFORMATIONS", what)
	}
	if !t.is("WITH") {
		return p.errf(t, "%s must declare WITH JAQ TRANSFORMATIONS ON INGESTION '…' and/or ON EMITTING '…', found %s", what, t.describe())
	}
	p.next()
	if _, err := p.expect("JAQ"); err != nil {
		return err
	}
	if _, err := p.expect("TRANSFORMATIONS"); err != nil {
		return err
	}
	var seen [3]bool
	for p.peek().is("ON") {
		on := p.next()
		dt := p.next()
		var d types.Direction
		switch {
		case dt.is("INGESTION"):
			d = types.Ingestion
		case dt.is("EMITTING"):
			d = types.Emitting
			if p.peek().is("BATCH") {
				p.next()
				d = types.EmittingBatch
			}
		default:
			return p.errf(dt, "expected INGESTION, EMITTING or EMITTING BATCH after ON, found %s", dt.describe())
		}
		if seen[d] {
			return p.errf(on, "%s is given twice (first at %s)", d, out.progs[d].pos)
		}
		switch d {
		case types.Ingestion:
			if seen[types.Emitting] || seen[types.EmittingBatch] {
				return p.errf(on, "ON INGESTION must come before ON EMITTING (at %s)", out.progs[types.Emitting].pos)
			}
		case types.Emitting:
			if seen[types.EmittingBatch] {
				return p.errf(on, "ON EMITTING must come before ON EMITTING BATCH (at %s)", out.progs[types.EmittingBatch].pos)
			}
		case types.EmittingBatch:
			if !seen[types.Emitting] {
				return p.errf(on, "ON EMITTING BATCH is written only after ON EMITTING: its input is the array of ON EMITTING's outputs")
			}
		}
		pt := p.next()
		if pt.kind != tString {
			return p.errf(pt, "expected a JAQ program after %s: a string literal '…' or $jaq$ … $jaq$, found %s", d, pt.describe())
		}
		seen[d] = true
		out.progs[d] = pt
		out.progs[d].pos = on.pos
		c.Jaq.Programs[d] = types.Program{Set: true, Text: pt.text}
	}
	if !seen[types.Ingestion] && !seen[types.Emitting] {
		return p.errf(p.peek(), "WITH JAQ TRANSFORMATIONS requires ON INGESTION '…', ON EMITTING '…', or both in that order, found %s", p.peek().describe())
	}
	if t := p.peek(); t.is("ENCODE") {
		return p.errf(t, "%s takes no field encoding rules (its programs decide the shape): expected ';'", what)
	}
	return nil
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// target reads SCHEMA name | WIRE fmt SCHEMA name | CODEC name.
func (p *parser) target(verb string) (Kind, types.Format, string, error) {
	t := p.next()
	switch {
	case t.is("SCHEMA"):
		n, _, err := p.name("a schema name")
		return KindSchema, 0, n, err
	case t.is("WIRE"):
		f, err := p.wireFormat()
		if err != nil {
			return 0, 0, "", err
		}
		if _, err := p.expect("SCHEMA"); err != nil {
			return 0, 0, "", err
		}
		n, _, err := p.name("a wire schema name")
		return KindWire, f, n, err
	case t.is("CODEC"):
		n, _, err := p.name("a codec name")
		return KindCodec, 0, n, err
	}
	return 0, 0, "", p.errf(t, "expected SCHEMA, WIRE or CODEC after %s, found %s", verb, t.describe())
}

func (p *parser) drop(start token) (Stmt, error) {
	d := &Drop{Pos: start.pos}
	t := p.peek()
	if t.is("IF") && p.peekAt(1).is("EXISTS") {
		p.next()
		p.next()
		d.IfExists = true
	}
	var err error
	if d.Kind, d.Format, d.Name, err = p.target("DROP"); err != nil {
		return nil, err
	}
	return d, nil
}

func (p *parser) show(start token) (Stmt, error) {
	if _, err := p.expect("CREATE"); err != nil {
		return nil, err
	}
	s := &ShowCreate{Pos: start.pos}
	var err error
	if s.Kind, s.Format, s.Name, err = p.target("SHOW CREATE"); err != nil {
		return nil, err
	}
	return s, nil
}

func (p *parser) alter(start token) (Stmt, error) {
	t := p.next()
	switch {
	case t.is("SCHEMA"):
		name, _, err := p.name("a schema name")
		if err != nil {
			return nil, err
		}
		ops, err := p.ops(types.FormatNone)
		if err != nil {
			return nil, err
		}
		return &AlterSchema{Pos: start.pos, Name: name, Ops: ops}, nil
	case t.is("WIRE"):
		f, err := p.wireFormat()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect("SCHEMA"); err != nil {
			return nil, err
		}
		name, _, err := p.name("a wire schema name")
		if err != nil {
			return nil, err
		}
		a := &AlterWire{Pos: start.pos, Format: f, Name: name}
		if p.accept("MODE") {
			m, err := p.mode()
			if err != nil {
				return nil, err
			}
			a.Mode = &m
			return a, nil
		}
		if a.Ops, err = p.ops(f); err != nil {
			return nil, err
		}
		return a, nil
	case t.is("CODEC"):
		return nil, p.errf(t, "a codec cannot be altered: DROP CODEC and CREATE CODEC it again (in one BEGIN … COMMIT)")
	}
	return nil, p.errf(t, "expected SCHEMA or WIRE after ALTER, found %s", t.describe())
}

// ops reads comma-separated ALTER operations; f is FormatNone for an
// internal schema.
func (p *parser) ops(f types.Format) ([]Op, error) {
	var ops []Op
	for {
		op, err := p.op(f)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		if !p.acceptPunct(",") {
			return ops, nil
		}
	}
}

func (p *parser) op(f types.Format) (Op, error) {
	t := p.next()
	op := Op{Pos: t.pos}
	var err error
	switch {
	case t.is("ADD"):
		if _, err := p.expect("FIELD"); err != nil {
			return op, err
		}
		op.Kind = OpAdd
		if op.Field, _, err = p.name("a field name"); err != nil {
			return op, err
		}
		if f == types.FormatNone {
			fd := types.Field{}
			p.i-- // re-read the name through schemaField
			if fd, err = p.schemaField(); err != nil {
				return op, err
			}
			op.Type, op.Optional, op.Sensitive = fd.Type, fd.Optional, fd.Sensitive
		} else {
			p.i--
			wf, err := p.wireField(f)
			if err != nil {
				return op, err
			}
			op.Wire, op.Optional = wf.Type, wf.Optional
		}
		return op, nil
	case t.is("DROP"):
		if _, err := p.expect("FIELD"); err != nil {
			return op, err
		}
		op.Kind = OpDrop
		op.Field, _, err = p.name("a field name")
		return op, err
	case t.is("RENAME"):
		if _, err := p.expect("FIELD"); err != nil {
			return op, err
		}
		op.Kind = OpRename
		if op.Field, _, err = p.name("a field name"); err != nil {
			return op, err
		}
		if _, err := p.expect("TO"); err != nil {
			return op, err
		}
		op.To, _, err = p.name("the new field name")
		return op, err
	case t.is("ALTER"):
		if _, err := p.expect("FIELD"); err != nil {
			return op, err
		}
		if op.Field, _, err = p.name("a field name"); err != nil {
			return op, err
		}
		a := p.next()
		set := a.is("SET")
		if !set && !a.is("DROP") {
			return op, p.errf(a, "expected SET or DROP after ALTER FIELD %s, found %s", types.Quote(op.Field), a.describe())
		}
		w := p.next()
		switch {
		case set && w.is("TYPE"):
			op.Kind = OpSetType
			if f == types.FormatNone {
				op.Type, err = p.typ()
			} else {
				op.Wire, err = p.wireType(f)
			}
			return op, err
		case w.is("OPTIONAL"):
			op.Kind = OpSetOptional
			if !set {
				op.Kind = OpDropOptional
			}
			return op, nil
		case w.is("SENSITIVE"):
			if f != types.FormatNone {
				return op, p.errf(w, "SENSITIVE belongs to internal schema fields, not wire schema fields")
			}
			op.Kind = OpSetSensitive
			if !set {
				op.Kind = OpDropSensitive
			}
			return op, nil
		}
		if set {
			what := "TYPE, OPTIONAL or SENSITIVE"
			if f != types.FormatNone {
				what = "TYPE or OPTIONAL"
			}
			return op, p.errf(w, "expected %s after SET, found %s", what, w.describe())
		}
		what := "OPTIONAL or SENSITIVE"
		if f != types.FormatNone {
			what = "OPTIONAL"
		}
		return op, p.errf(w, "expected %s after DROP, found %s", what, w.describe())
	}
	what := "ADD FIELD, DROP FIELD, RENAME FIELD or ALTER FIELD"
	if f != types.FormatNone {
		what += " or MODE"
	}
	return op, p.errf(t, "expected %s, found %s", what, t.describe())
}
