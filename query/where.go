// Package query owns herald's query language: WHERE predicates over an
// event type's identifier fields and typed payload fields (SQL's
// three-valued logic, literals canonicalised by each field's handler),
// compiled once and evaluated on every record without allocating, and
// the identifier a predicate's top-level AND conditions pin; and the
// statements of a WebSocket session's execute request (CREATE
// SUBSCRIPTION, DELETE SUBSCRIPTION, DESCRIBE EVENT TYPE), whose WHERE
// clauses are such predicates.
//
// It knows no notification type and no handler: a predicate is compiled
// against a Schema (the fields as the caller describes them, with their
// canonicalisers) and evaluated on a Record (what the caller's stored
// notification exposes). It may import the codec core only.
package query

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
)

// Schema is what a predicate is compiled against: one event type's
// identifier fields and typed payload.
type Schema struct {
	// EventType names the event type in messages.
	EventType string
	// Generic is a schema-less event type: any name is a text field read
	// from the record's identifier values.
	Generic bool
	// Fields are the identifier fields, in declaration order.
	Fields []Field
	// Payload is the internal schema of a typed payload; nil for an
	// opaque one (no payload.<name> fields).
	Payload *types.Schema
	// NumberText returns the JSON number text an identifier value written
	// as the number text would have (aviso-server's spelling, as a
	// request's number is coerced); it must be set when Fields is not
	// empty.
	NumberText func(number string) (string, error)
}

// Kind is how a field's canonical values compare.
type Kind uint8

// Field kinds.
const (
	// Text fields compare their canonical text.
	Text Kind = iota
	// Int fields compare as integers.
	Int
	// Float fields compare as floats.
	Float
)

// Field is one identifier field of a Schema.
type Field struct {
	Name string
	// Pos is its position in the record's subject tokens (0: not routed).
	Pos int
	// Type is its handler's name, for messages.
	Type string
	// Kind says how its canonical values compare.
	Kind Kind
	// Spatial fields (polygons, point clouds) cannot be tested in WHERE.
	Spatial bool
	// Canonical canonicalises a literal's text (the value an identifier
	// would carry) as the field's handler does.
	Canonical func(text string) (string, error)
	// Constraint, when set, compiles a constraint object {op: operand}
	// as a watch request's identifier would carry it and returns the
	// values it compares with (one slice set, by the field's kind); nil
	// for a field that takes no constraint objects. Pins uses it.
	Constraint func(op string, operand json.RawMessage) (ints []int64, floats []float64, texts []string, err error)
}

// field returns the named identifier field.
func (s *Schema) field(name string) (*Field, bool) {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i], true
		}
	}
	return nil, false
}

// fieldNames lists the identifier fields, for messages.
func (s *Schema) fieldNames() []string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names
}

// Record is what a predicate reads of one stored notification.
type Record interface {
	// Token returns the decoded subject token at pos (the topic base is
	// 0), false beyond the last.
	Token(pos int) (string, bool)
	// IdentifierValue returns the identifier value of name, for
	// schema-less event types, whose fields are not routed by position.
	IdentifierValue(name string) (string, bool)
	// StoredPayload returns the payload as stored and its content type
	// (a typed payload's stored row, or opaque JSON).
	StoredPayload() (payload []byte, contentType string)
}

// This file compiles WHERE predicates (the session protocol,
// docs/sessions.md): boolean expressions over a notification's identifier,
// typed by the schema's handlers, with SQL's three-valued logic. A predicate
// is compiled once, when a subscription or watch is created, and evaluated on
// every notification afterwards without allocating.

// WhereError is a predicate that does not compile: Pos is the byte
// offset in the predicate text where the problem is, Line and Column its
// 1-based position (columns count characters).
type WhereError struct {
	Pos          int
	Line, Column int
	Msg          string
}

// Error renders the problem with its position.
func (e *WhereError) Error() string {
	if e.Line > 1 {
		return fmt.Sprintf("where: line %d column %d: %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("where: column %d: %s", e.Column, e.Msg)
}

// Where is a compiled predicate. It is immutable and safe for concurrent
// use.
type Where struct {
	root wnode
}

// String returns the compiled form: the expression fully parenthesised,
// names resolved and literals canonicalised (DESCRIBE … WHERE shows it).
func (w *Where) String() string { return w.root.String() }

// Match reports whether the predicate is TRUE for r (FALSE and NULL do
// not select).
func (w *Where) Match(r Record) bool { return w.root.eval(r) == triTrue }

// Compile compiles a predicate against s: names are the schema's routed
// identifier fields (bare or as identifier.<name>) and its payload
// fields (payload.<name>), literals are canonicalised by the field's
// Canonical, and each comparison is typed by the field (numbers for Int
// and Float fields, canonical text for the others). Errors are
// *WhereError.
func Compile(src string, s *Schema) (*Where, error) {
	p := &whereParser{src: src, schema: s}
	if err := p.lex(); err != nil {
		return nil, err
	}
	if len(p.toks) == 1 {
		return nil, p.errAt(0, "the predicate is empty")
	}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errAt(t.pos, fmt.Sprintf("unexpected %s after the end of the predicate", t.describe()))
	}
	return &Where{root: root}, nil
}

// ---- lexer ----

type wtokKind uint8

const (
	tEOF wtokKind = iota
	tIdent
	tString
	tNumber
	tOp     // = != <> < <= > >=
	tLParen // (
	tRParen // )
	tComma
	tDot
	tMinus
	tQuoted // a name between backticks or double quotes: never a keyword
)

type wtok struct {
	kind wtokKind
	text string // identifier as written, string value, number text, operator
	pos  int
}

func (t wtok) describe() string {
	switch t.kind {
	case tEOF:
		return "end of the predicate"
	case tString:
		return "string '" + t.text + "'"
	case tNumber:
		return "number " + t.text
	case tIdent:
		return "'" + t.text + "'"
	}
	return "'" + t.text + "'"
}

// keyword reports whether t is the keyword kw (case-insensitive).
func (t wtok) keyword(kw string) bool { return t.kind == tIdent && strings.EqualFold(t.text, kw) }

type whereParser struct {
	src    string
	schema *Schema
	toks   []wtok
	i      int
}

// errAt builds the error at byte offset pos.
func (p *whereParser) errAt(pos int, msg string) *WhereError {
	line, col := 1, 1
	for _, r := range p.src[:min(pos, len(p.src))] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &WhereError{Pos: pos, Line: line, Column: col, Msg: msg}
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || ('0' <= c && c <= '9') }

func (p *whereParser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			p.toks = append(p.toks, wtok{tIdent, s[i:j], i})
			i = j
		case c == '`':
			// A name between backticks, as the codec statements write a
			// field named like a reserved word: a backtick inside is
			// doubled.
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return p.errAt(i, "unterminated quoted name: a ` has no closing ` (write `` for a backtick inside a name)")
				}
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			p.toks = append(p.toks, wtok{tQuoted, b.String(), i})
			i = j + 1
		case c == '"':
			// A double-quoted name, for names that are keywords.
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return p.errAt(i, "unterminated quoted name: a \" has no closing \"")
			}
			p.toks = append(p.toks, wtok{tQuoted, s[i+1 : i+1+j], i})
			i += j + 2
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return p.errAt(i, "unterminated string: a ' has no closing ' (write '' for a quote inside a string)")
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			p.toks = append(p.toks, wtok{tString, b.String(), i})
			i = j + 1
		case '0' <= c && c <= '9':
			j := i
			for j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			if j < len(s) && s[j] == '.' {
				j++
				for j < len(s) && '0' <= s[j] && s[j] <= '9' {
					j++
				}
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && '0' <= s[k] && s[k] <= '9' {
					for k < len(s) && '0' <= s[k] && s[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(s) && isIdentStart(s[j]) {
				return p.errAt(i, fmt.Sprintf("%q is not a number", s[i:j+1]))
			}
			p.toks = append(p.toks, wtok{tNumber, s[i:j], i})
			i = j
		case c == '=':
			p.toks = append(p.toks, wtok{tOp, "=", i})
			i++
		case c == '!' && i+1 < len(s) && s[i+1] == '=':
			p.toks = append(p.toks, wtok{tOp, "!=", i})
			i += 2
		case c == '<' && i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '='):
			p.toks = append(p.toks, wtok{tOp, s[i : i+2], i})
			i += 2
		case c == '>' && i+1 < len(s) && s[i+1] == '=':
			p.toks = append(p.toks, wtok{tOp, ">=", i})
			i += 2
		case c == '<' || c == '>':
			p.toks = append(p.toks, wtok{tOp, s[i : i+1], i})
			i++
		case c == '(':
			p.toks = append(p.toks, wtok{tLParen, "(", i})
			i++
		case c == ')':
			p.toks = append(p.toks, wtok{tRParen, ")", i})
			i++
		case c == ',':
			p.toks = append(p.toks, wtok{tComma, ",", i})
			i++
		case c == '.':
			p.toks = append(p.toks, wtok{tDot, ".", i})
			i++
		case c == '-':
			p.toks = append(p.toks, wtok{tMinus, "-", i})
			i++
		default:
			r := []rune(s[i:])[0]
			return p.errAt(i, fmt.Sprintf("unexpected character %q", r))
		}
	}
	p.toks = append(p.toks, wtok{tEOF, "", len(s)})
	return nil
}

func (p *whereParser) peek() wtok { return p.toks[p.i] }
func (p *whereParser) next() wtok { t := p.toks[p.i]; p.i++; return t }

// reserved are the keywords that cannot be bare names.
var whereReserved = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "BETWEEN": true, "IS": true, "NULL": true,
	"TRUE": true, "FALSE": true, "DISTINCT": true, "FROM": true,
}

// ---- values and nodes ----

// wkind is the type of an operand.
type wkind uint8

const (
	kNull wkind = iota
	kBool
	kInt
	kFloat
	kText // strings, dates and times: canonical text, ordered as text
	kTime // a payload DATETIME: nanoseconds since the epoch
)

func (k wkind) String() string {
	return [...]string{"NULL", "a boolean", "an integer", "a number", "text", "a datetime"}[k]
}

// numeric reports whether k compares numerically.
func (k wkind) numeric() bool { return k == kInt || k == kFloat }

// wval is one evaluated operand: null, or a value of its kind.
type wval struct {
	null bool
	b    bool
	i    int64
	f    float64
	s    string
	// big marks an integer outside the int64 range: only f holds it.
	big bool
}

type tri uint8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// wnode is a compiled expression.
type wnode interface {
	eval(n Record) tri
	String() string
}

// woperand is a compiled value expression: a field or a literal.
type woperand interface {
	kind() wkind
	value(n Record) wval
	String() string
}

// wfield reads a routed identifier field from the subject tokens, or a
// generic notification's identifier value.
type wfield struct {
	name  string
	pos   int    // subject position; 0 for generic notifications
	field *Field // nil for a schema-less event type's field
	k     wkind
}

func (f *wfield) kind() wkind    { return f.k }
func (f *wfield) String() string { return "identifier." + f.name }

func (f *wfield) value(n Record) wval {
	var text string
	var ok bool
	if f.pos > 0 {
		text, ok = n.Token(f.pos)
	} else {
		text, ok = n.IdentifierValue(f.name)
	}
	if !ok {
		return wval{null: true}
	}
	return parseWval(f.k, text)
}

// parseWval reads canonical text as a value of kind k; text that does
// not read as one (a wildcard value, a corrupt record) is NULL.
func parseWval(k wkind, text string) wval {
	switch k {
	case kInt:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(text, 64)
			if ferr != nil {
				return wval{null: true}
			}
			return wval{f: f, i: int64(f)}
		}
		return wval{i: v, f: float64(v)}
	case kFloat:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return wval{null: true}
		}
		return wval{f: v}
	}
	return wval{s: text}
}

// wliteral is a constant.
type wliteral struct {
	k    wkind
	v    wval
	text string // as shown by String
	// src is the value text the field's handler canonicalised, as a JSON
	// identifier value would carry it ("" for a literal not compared
	// with a schema field).
	src string
}

func (l *wliteral) kind() wkind       { return l.k }
func (l *wliteral) value(Record) wval { return l.v }
func (l *wliteral) String() string    { return l.text }
func (l *wliteral) eval(n Record) tri { return boolTri(l.v) }
func boolTri(v wval) tri {
	if v.null {
		return triNull
	}
	return triOf(v.b)
}

// compare orders two non-null values of comparable kinds.
func compare(a, b wval, ka, kb wkind) int {
	switch {
	case ka == kInt && kb == kInt && !a.big && !b.big, ka == kTime && kb == kTime:
		return cmpOrdered(a.i, b.i)
	case ka.numeric() && kb.numeric():
		return cmpOrdered(a.f, b.f)
	case ka == kBool:
		return cmpOrdered(boolInt(a.b), boolInt(b.b))
	}
	return strings.Compare(a.s, b.s)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T int64 | float64 | int](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wcompare is `a op b`.
type wcompare struct {
	op   string
	a, b woperand
}

func (c *wcompare) String() string { return "(" + c.a.String() + " " + c.op + " " + c.b.String() + ")" }

func (c *wcompare) eval(n Record) tri {
	a, b := c.a.value(n), c.b.value(n)
	if a.null || b.null {
		return triNull
	}
	r := compare(a, b, c.a.kind(), c.b.kind())
	switch c.op {
	case "=":
		return triOf(r == 0)
	case "!=", "<>":
		return triOf(r != 0)
	case "<":
		return triOf(r < 0)
	case "<=":
		return triOf(r <= 0)
	case ">":
		return triOf(r > 0)
	default: // >=
		return triOf(r >= 0)
	}
}

// win is `a [NOT] IN (list)`.
type win struct {
	not  bool
	a    woperand
	list []woperand
}

func (w *win) String() string {
	parts := make([]string, len(w.list))
	for i, o := range w.list {
		parts[i] = o.String()
	}
	op := " IN ("
	if w.not {
		op = " NOT IN ("
	}
	return "(" + w.a.String() + op + strings.Join(parts, ", ") + "))"
}

func (w *win) eval(n Record) tri {
	a := w.a.value(n)
	if a.null {
		return triNull
	}
	res := triFalse
	for _, o := range w.list {
		v := o.value(n)
		if v.null {
			res = triNull
			continue
		}
		if compare(a, v, w.a.kind(), o.kind()) == 0 {
			res = triTrue
			break
		}
	}
	if w.not {
		return triNot(res)
	}
	return res
}

// wbetween is `a [NOT] BETWEEN lo AND hi`.
type wbetween struct {
	not       bool
	a, lo, hi woperand
}

func (w *wbetween) String() string {
	op := " BETWEEN "
	if w.not {
		op = " NOT BETWEEN "
	}
	return "(" + w.a.String() + op + w.lo.String() + " AND " + w.hi.String() + ")"
}

func (w *wbetween) eval(n Record) tri {
	ge := (&wcompare{op: ">=", a: w.a, b: w.lo}).eval(n)
	le := (&wcompare{op: "<=", a: w.a, b: w.hi}).eval(n)
	res := triAnd(ge, le)
	if w.not {
		return triNot(res)
	}
	return res
}

// wisnull is `a IS [NOT] NULL`.
type wisnull struct {
	not bool
	a   woperand
}

func (w *wisnull) String() string {
	if w.not {
		return "(" + w.a.String() + " IS NOT NULL)"
	}
	return "(" + w.a.String() + " IS NULL)"
}

func (w *wisnull) eval(n Record) tri {
	null := w.a.value(n).null
	return triOf(null != w.not)
}

// wdistinct is `a IS [NOT] DISTINCT FROM b`: null-safe (in)equality.
type wdistinct struct {
	not  bool
	a, b woperand
}

func (w *wdistinct) String() string {
	op := " IS DISTINCT FROM "
	if w.not {
		op = " IS NOT DISTINCT FROM "
	}
	return "(" + w.a.String() + op + w.b.String() + ")"
}

func (w *wdistinct) eval(n Record) tri {
	a, b := w.a.value(n), w.b.value(n)
	var distinct bool
	switch {
	case a.null && b.null:
		distinct = false
	case a.null || b.null:
		distinct = true
	default:
		distinct = compare(a, b, w.a.kind(), w.b.kind()) != 0
	}
	return triOf(distinct != w.not)
}

// wlogic is AND / OR over conditions.
type wlogic struct {
	and  bool
	l, r wnode
}

func (w *wlogic) String() string {
	op := " OR "
	if w.and {
		op = " AND "
	}
	return "(" + w.l.String() + op + w.r.String() + ")"
}

func (w *wlogic) eval(n Record) tri {
	l := w.l.eval(n)
	if w.and {
		if l == triFalse {
			return triFalse
		}
		return triAnd(l, w.r.eval(n))
	}
	if l == triTrue {
		return triTrue
	}
	return triOr(l, w.r.eval(n))
}

// wnot is NOT over a condition.
type wnot struct{ x wnode }

func (w *wnot) String() string    { return "(NOT " + w.x.String() + ")" }
func (w *wnot) eval(n Record) tri { return triNot(w.x.eval(n)) }

func triNot(t tri) tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triNull
}

func triAnd(a, b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triNull || b == triNull:
		return triNull
	}
	return triTrue
}

func triOr(a, b tri) tri {
	switch {
	case a == triTrue || b == triTrue:
		return triTrue
	case a == triNull || b == triNull:
		return triNull
	}
	return triFalse
}

// ---- parser ----

// parsed is an operand under construction, not yet used in a condition
// (with the position it started at).
type parsed struct {
	op  woperand
	lit *rawLiteral // an operand that is a literal, typed when compared
	pos int
}

// rawLiteral is a literal before its type is known: it takes the type
// of the field it is compared with.
type rawLiteral struct {
	tok    wtok
	neg    bool
	isNull bool
	isBool bool
	b      bool
}

func (p *whereParser) or() (wnode, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek().keyword("OR") {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &wlogic{l: l, r: r}
	}
	return l, nil
}

func (p *whereParser) and() (wnode, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peek().keyword("AND") {
		p.next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &wlogic{and: true, l: l, r: r}
	}
	return l, nil
}

func (p *whereParser) not() (wnode, error) {
	if p.peek().keyword("NOT") {
		p.next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &wnot{x: x}, nil
	}
	return p.predicate()
}

// predicate parses one condition: a parenthesised expression, a boolean
// literal, or a test on an operand.
func (p *whereParser) predicate() (wnode, error) {
	start := p.peek()
	if start.kind == tLParen {
		p.next()
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if t := p.next(); t.kind != tRParen {
			return nil, p.errAt(t.pos, fmt.Sprintf("expected ')' to close the '(' at column %d, found %s", p.errAt(start.pos, "").Column, t.describe()))
		}
		return x, nil
	}
	a, err := p.operand()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tOp:
		p.next()
		b, err := p.operand()
		if err != nil {
			return nil, err
		}
		x, y, err := p.typed(a, b, t)
		if err != nil {
			return nil, err
		}
		return &wcompare{op: t.text, a: x, b: y}, nil
	case t.keyword("IS"):
		p.next()
		not := false
		if p.peek().keyword("NOT") {
			p.next()
			not = true
		}
		switch u := p.peek(); {
		case u.keyword("NULL"):
			p.next()
			x, err := p.alone(a)
			if err != nil {
				return nil, err
			}
			return &wisnull{not: not, a: x}, nil
		case u.keyword("DISTINCT"):
			p.next()
			if f := p.next(); !f.keyword("FROM") {
				return nil, p.errAt(f.pos, "expected FROM after IS [NOT] DISTINCT, found "+f.describe())
			}
			b, err := p.operand()
			if err != nil {
				return nil, err
			}
			x, y, err := p.typed(a, b, u)
			if err != nil {
				return nil, err
			}
			return &wdistinct{not: not, a: x, b: y}, nil
		default:
			return nil, p.errAt(u.pos, "expected NULL or DISTINCT FROM after IS, found "+u.describe())
		}
	case t.keyword("NOT") || t.keyword("IN") || t.keyword("BETWEEN"):
		not := false
		if t.keyword("NOT") {
			p.next()
			not = true
			t = p.peek()
		}
		switch {
		case t.keyword("IN"):
			p.next()
			if l := p.next(); l.kind != tLParen {
				return nil, p.errAt(l.pos, "expected '(' after IN, found "+l.describe())
			}
			var items []parsed
			for {
				it, err := p.operand()
				if err != nil {
					return nil, err
				}
				items = append(items, it)
				sep := p.next()
				if sep.kind == tRParen {
					break
				}
				if sep.kind != tComma {
					return nil, p.errAt(sep.pos, "expected ',' or ')' in the IN list, found "+sep.describe())
				}
			}
			w := &win{not: not}
			for _, it := range items {
				x, y, err := p.typed(a, it, t)
				if err != nil {
					return nil, err
				}
				w.a = x
				w.list = append(w.list, y)
			}
			return w, nil
		case t.keyword("BETWEEN"):
			p.next()
			lo, err := p.operand()
			if err != nil {
				return nil, err
			}
			if k := p.next(); !k.keyword("AND") {
				return nil, p.errAt(k.pos, "expected AND in BETWEEN … AND …, found "+k.describe())
			}
			hi, err := p.operand()
			if err != nil {
				return nil, err
			}
			x, l, err := p.typed(a, lo, t)
			if err != nil {
				return nil, err
			}
			_, h, err := p.typed(a, hi, t)
			if err != nil {
				return nil, err
			}
			return &wbetween{not: not, a: x, lo: l, hi: h}, nil
		default:
			return nil, p.errAt(t.pos, "expected IN or BETWEEN after NOT, found "+t.describe())
		}
	}
	// A bare operand is a condition only when it is a boolean literal.
	if a.lit != nil && a.lit.isBool {
		return &wliteral{k: kBool, v: wval{b: a.lit.b}, text: strings.ToUpper(a.lit.tok.text)}, nil
	}
	if a.lit != nil && a.lit.isNull {
		return &wliteral{k: kNull, v: wval{null: true}, text: "NULL"}, nil
	}
	if t.kind == tEOF {
		return nil, p.errAt(a.pos, fmt.Sprintf("%s is not a condition: compare it, for example %s = …", p.src[a.pos:t.pos], strings.TrimSpace(p.src[a.pos:t.pos])))
	}
	return nil, p.errAt(t.pos, fmt.Sprintf("expected an operator (=, !=, <>, <, <=, >, >=, IN, BETWEEN, IS) after %s, found %s",
		strings.TrimSpace(p.src[a.pos:t.pos]), t.describe()))
}

// operand parses a field name or a literal.
func (p *whereParser) operand() (parsed, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return parsed{lit: &rawLiteral{tok: t}, pos: t.pos}, nil
	case tNumber:
		return parsed{lit: &rawLiteral{tok: t}, pos: t.pos}, nil
	case tMinus:
		n := p.next()
		// '-' applies to numbers only.
		if n.kind != tNumber {
			return parsed{}, p.errAt(n.pos, "expected a number after '-', found "+n.describe())
		}
		return parsed{lit: &rawLiteral{tok: n, neg: true}, pos: t.pos}, nil
	case tQuoted:
		return p.field(t)
	case tIdent:
		switch {
		case t.keyword("NULL"):
			return parsed{lit: &rawLiteral{tok: t, isNull: true}, pos: t.pos}, nil
		case t.keyword("TRUE"), t.keyword("FALSE"):
			return parsed{lit: &rawLiteral{tok: t, isBool: true, b: t.keyword("TRUE")}, pos: t.pos}, nil
		}
		return p.field(t)
	}
	return parsed{}, p.errAt(t.pos, "expected a field name or a value, found "+t.describe())
}

// field resolves a name: `name`, `identifier.name` or `payload.name`.
func (p *whereParser) field(t wtok) (parsed, error) {
	name := t.text
	scope := ""
	if p.peek().kind == tDot {
		p.next()
		n := p.next()
		if n.kind != tIdent && n.kind != tQuoted {
			return parsed{}, p.errAt(n.pos, "expected a field name after '"+name+".', found "+n.describe())
		}
		scope, name = strings.ToLower(t.text), n.text
		switch scope {
		case "identifier":
		case "payload":
			return p.payloadField(t, name)
		default:
			return parsed{}, p.errAt(t.pos, fmt.Sprintf("unknown scope '%s': names are bare identifier fields, identifier.<name> or payload.<name>", t.text))
		}
	} else if t.kind == tIdent && whereReserved[strings.ToUpper(name)] {
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("%s is a keyword; write a field of that name as identifier.%s or `%s`", strings.ToUpper(name), name, name))
	}
	s := p.schema
	if s.Generic {
		return parsed{op: &wfield{name: name, k: kText}, pos: t.pos}, nil
	}
	f, ok := s.field(name)
	if !ok {
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("unknown field '%s' for event type '%s'; its fields are %s", name, s.EventType, quoteList(s.fieldNames())))
	}
	if f.Spatial {
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("field '%s' is a geometry; filter it with the identifier's polygon or point, not in WHERE", name))
	}
	// Every ordinary field is routed (configs requires it), so it has a
	// subject position.
	return parsed{op: &wfield{name: name, pos: f.Pos, field: f, k: fieldKind(f.Kind)}, pos: t.pos}, nil
}

// fieldKind is how a field's canonical values compare.
func fieldKind(k Kind) wkind {
	switch k {
	case Int:
		return kInt
	case Float:
		return kFloat
	}
	return kText
}

// alone types an operand that is tested on its own (IS NULL).
func (p *whereParser) alone(a parsed) (woperand, error) {
	if a.op != nil {
		return a.op, nil
	}
	return p.literal(a, nil)
}

// typed types the two operands of a comparison: a literal takes the type
// of the field on the other side and is canonicalised by its handler;
// two fields must compare alike.
func (p *whereParser) typed(a, b parsed, at wtok) (woperand, woperand, error) {
	switch {
	case a.op != nil && b.op != nil:
		ka, kb := a.op.kind(), b.op.kind()
		if ka != kb && !(ka.numeric() && kb.numeric()) {
			return nil, nil, p.errAt(at.pos, fmt.Sprintf("%s (%s) and %s (%s) cannot be compared", a.op, ka, b.op, kb))
		}
		return a.op, b.op, nil
	case a.op != nil:
		l, err := p.literal(b, a.op)
		return a.op, l, err
	case b.op != nil:
		l, err := p.literal(a, b.op)
		return l, b.op, err
	}
	x, err := p.literal(a, nil)
	if err != nil {
		return nil, nil, err
	}
	y, err := p.literal(b, nil)
	if err != nil {
		return nil, nil, err
	}
	if kx, ky := x.kind(), y.kind(); kx != kNull && ky != kNull && kx != ky && !(kx.numeric() && ky.numeric()) {
		return nil, nil, p.errAt(at.pos, fmt.Sprintf("%s (%s) and %s (%s) cannot be compared", x, kx, y, ky))
	}
	return x, y, nil
}

// literal compiles a literal, canonicalised by field's handler when it
// is compared with a field.
func (p *whereParser) literal(a parsed, field woperand) (woperand, error) {
	r := a.lit
	switch {
	case r.isNull:
		return &wliteral{k: kNull, v: wval{null: true}, text: "NULL"}, nil
	case r.isBool:
		if field != nil && field.kind() == kBool {
			return &wliteral{k: kBool, v: wval{b: r.b}, text: strings.ToUpper(r.tok.text)}, nil
		}
		if field != nil {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s is a boolean; %s holds %s", strings.ToUpper(r.tok.text), field, field.kind()))
		}
		return &wliteral{k: kBool, v: wval{b: r.b}, text: strings.ToUpper(r.tok.text)}, nil
	}
	written := r.tok.text
	if r.neg {
		written = "-" + written
	}
	if pf, ok := field.(*wpayload); ok {
		return p.payloadLiteral(a, pf, written)
	}
	text := written
	if r.tok.kind == tNumber {
		// A number reads as the identifier value it would be in a JSON
		// request (aviso's serde_json text).
		n, err := p.schema.NumberText(text)
		if err != nil {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s: %v", text, err))
		}
		text = n
	}
	f, _ := field.(*wfield)
	if f == nil && r.tok.kind == tNumber {
		// A constant number.
		v, err := strconv.ParseFloat(written, 64)
		if err != nil {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s is not a number", written))
		}
		return &wliteral{k: kFloat, v: wval{f: v}, text: written}, nil
	}
	if f == nil || f.field == nil {
		// A constant string, or a value of a schema-less event type.
		return &wliteral{k: kText, v: wval{s: text}, text: quoteWhere(text)}, nil
	}
	canon, err := f.field.Canonical(text)
	if err != nil {
		return nil, p.errAt(a.pos, fmt.Sprintf("value for '%s' (%s): %v", f.name, f.field.Type, err))
	}
	v := parseWval(f.k, canon)
	if v.null {
		return nil, p.errAt(a.pos, fmt.Sprintf("value for '%s' (%s): %q is not comparable", f.name, f.field.Type, canon))
	}
	// The compiled form shows the canonical value; a number whose text
	// would read back differently is shown as a string, which the
	// handler reads as it is.
	shown := quoteWhere(canon)
	if f.k != kText {
		if again, err := p.schema.NumberText(canon); err == nil && again == canon {
			shown = canon
		}
	}
	return &wliteral{k: f.k, v: v, text: shown, src: text}, nil
}

// quoteWhere writes a string literal.
func quoteWhere(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// wpayload reads a field of a typed payload from the stored record,
// without decoding the rest of it (codec/store). A record stored without
// a typed payload, or without the field, gives NULL; so does a NaN.
type wpayload struct {
	name string
	typ  types.Type
	k    wkind
}

func (f *wpayload) kind() wkind    { return f.k }
func (f *wpayload) String() string { return "payload." + f.name }

func (f *wpayload) value(n Record) wval {
	payload, contentType := n.StoredPayload()
	if !store.IsStored(contentType) {
		return wval{null: true}
	}
	v, found, err := store.Lookup(payload, f.name)
	if err != nil || !found || !readsAs(v.Kind, f.k) {
		return wval{null: true}
	}
	switch v.Kind {
	case store.Int:
		switch {
		case !v.Neg && v.Mag <= math.MaxInt64:
			return wval{i: int64(v.Mag), f: float64(v.Mag)}
		case v.Neg && v.Mag != 0 && v.Mag <= 1<<63:
			return wval{i: -int64(v.Mag-1) - 1, f: -float64(v.Mag)}
		case v.Neg:
			return wval{big: true, f: -math.Ldexp(1, 64)}
		}
		return wval{big: true, f: float64(v.Mag)}
	case store.Float:
		if math.IsNaN(v.F) {
			return wval{null: true}
		}
		return wval{f: v.F}
	case store.Bool:
		return wval{b: v.B}
	case store.Text:
		return wval{s: unsafe.String(unsafe.SliceData(v.S), len(v.S))}
	case store.Time:
		if f.k == kText {
			return wval{s: string(values.AppendRFC3339(nil, v.Time, 9))}
		}
		return wval{i: v.Time}
	}
	return wval{null: true}
}

// readsAs reports whether a stored value of kind v reads as a field of
// kind k: a record stored under an older schema that a forced reload
// changed incompatibly may hold another kind (an F64 where the field is
// now a STRING), which is NULL rather than a value of the wrong kind.
// Integers read as floats and datetimes as text, as the stored decoder
// widens them.
func readsAs(v store.ValueKind, k wkind) bool {
	switch v {
	case store.Int:
		return k.numeric()
	case store.Float:
		return k == kFloat
	case store.Bool:
		return k == kBool
	case store.Text:
		return k == kText
	case store.Time:
		return k == kTime || k == kText
	}
	return false
}

// payloadField resolves payload.<name> against the event type's internal
// schema.
func (p *whereParser) payloadField(t wtok, name string) (parsed, error) {
	s := p.schema
	if s.Payload == nil {
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("payload.%s: event type '%s' has no typed payload (a payload codec), so its payload has no fields to test", name, s.EventType))
	}
	sc := s.Payload
	i := sc.Index(name)
	if i < 0 {
		names := make([]string, len(sc.Fields))
		for j, f := range sc.Fields {
			names[j] = f.Name
		}
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("unknown payload field '%s' for event type '%s'; the fields of schema %s are %s", name, s.EventType, types.Quote(sc.Name), quoteList(names)))
	}
	f := sc.Fields[i]
	if f.Sensitive {
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("payload.%s is SENSITIVE: WHERE cannot test it (a predicate would reveal its value)", name))
	}
	var k wkind
	switch kd := f.Type.Kind; {
	case kd.IsInteger():
		k = kInt
	case kd.IsFloat():
		k = kFloat
	case kd == types.Bool:
		k = kBool
	case kd == types.String:
		k = kText
	case kd == types.Datetime:
		k = kTime
	default:
		return parsed{}, p.errAt(t.pos, fmt.Sprintf("payload.%s is %s: WHERE compares integers, floats, booleans, strings and datetimes", name, f.Type))
	}
	return parsed{op: &wpayload{name: name, typ: f.Type, k: k}, pos: t.pos}, nil
}

// payloadLiteral types a literal compared with a payload field.
func (p *whereParser) payloadLiteral(a parsed, f *wpayload, written string) (woperand, error) {
	r := a.lit
	switch f.k {
	case kInt, kFloat:
		if r.tok.kind != tNumber {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s holds %s (%s): compare it with a number, not %s", f, f.k, f.typ, r.tok.describe()))
		}
		if v, err := strconv.ParseInt(written, 10, 64); err == nil {
			return &wliteral{k: kInt, v: wval{i: v, f: float64(v)}, text: written}, nil
		}
		v, err := strconv.ParseFloat(written, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s is not a number a %s can be compared with", written, f.typ))
		}
		return &wliteral{k: kFloat, v: wval{f: v}, text: written}, nil
	case kText:
		if r.tok.kind != tString {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s holds text (%s): compare it with a string, not %s", f, f.typ, r.tok.describe()))
		}
		return &wliteral{k: kText, v: wval{s: written}, text: quoteWhere(written)}, nil
	case kTime:
		if r.tok.kind != tString {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s is a DATETIME: compare it with an RFC 3339 string such as '2026-12-03T10:00:00Z', not %s", f, r.tok.describe()))
		}
		ns, code := values.ParseRFC3339([]byte(written), 9)
		if code != "" {
			return nil, p.errAt(a.pos, fmt.Sprintf("%s is a DATETIME: %s is not RFC 3339 text within the DATETIME range", f, quoteWhere(written)))
		}
		return &wliteral{k: kTime, v: wval{i: ns}, text: quoteWhere(string(values.AppendRFC3339(nil, ns, 9)))}, nil
	}
	return nil, p.errAt(a.pos, fmt.Sprintf("%s is a boolean: compare it with TRUE or FALSE, not %s", f, r.tok.describe()))
}

// quoteList renders names as 'a', 'b', for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}
