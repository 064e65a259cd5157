package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"herald/notification"
)

// This file parses the session-local statements of `execute` (the
// execute request of the AsyncAPI document):
//
//	CREATE SUBSCRIPTION name TO event_type [BLOCKING|DROPPING] [BATCH SAMPLE RATE r] [WHERE predicate]
//	DELETE SUBSCRIPTION name
//	DESCRIBE EVENT TYPE event_type [WHERE predicate]
//
// one per request, an optional ';' at the end, keywords in any case.
// Errors carry the line and column in the statement.

// StatementError is a statement that does not parse.
type StatementError struct {
	Line, Column int
	Msg          string
}

// Error renders the problem with its position.
func (e *StatementError) Error() string {
	return fmt.Sprintf("line %d column %d: %s", e.Line, e.Column, e.Msg)
}

// Statement is one parsed statement.
type Statement struct {
	// Kind is "CREATE SUBSCRIPTION", "DELETE SUBSCRIPTION" or
	// "DESCRIBE EVENT TYPE".
	Kind string
	// Name is the subscription name; EventType the event type.
	Name, EventType string
	// Dropping selects DROPPING delivery (default BLOCKING).
	Dropping bool
	// SampleRate is the BATCH SAMPLE RATE (HasRate when given).
	SampleRate float64
	HasRate    bool
	// Where is the predicate text; WherePos its byte offset in the
	// statement (-1 without WHERE).
	Where    string
	WherePos int
	// EndPos is the byte offset where the clauses of a CREATE
	// SUBSCRIPTION without WHERE end (where a WHERE would go).
	EndPos int
}

// stmtParser reads a statement word by word.
type stmtParser struct {
	src string
	i   int
}

// position returns the line and column of byte offset off.
func position(src string, off int) (int, int) {
	line, col := 1, 1
	for _, r := range src[:min(off, len(src))] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func (p *stmtParser) errAt(off int, format string, args ...any) error {
	line, col := position(p.src, off)
	return &StatementError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *stmtParser) skipSpace() {
	for p.i < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.i]) >= 0 {
		p.i++
	}
}

// word returns the next word (letters, digits, '_', '-', '.', or a
// double-quoted name) and its offset; "" at the end.
func (p *stmtParser) word() (string, int, error) {
	p.skipSpace()
	start := p.i
	if p.i < len(p.src) && p.src[p.i] == '"' {
		end := strings.IndexByte(p.src[p.i+1:], '"')
		if end < 0 {
			return "", start, p.errAt(start, "unterminated quoted name")
		}
		p.i += end + 2
		return p.src[start+1 : p.i-1], start, nil
	}
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '_' || c == '-' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
			p.i++
			continue
		}
		break
	}
	return p.src[start:p.i], start, nil
}

// expect reads the keyword kw.
func (p *stmtParser) expect(kw string) error {
	w, off, err := p.word()
	if err != nil {
		return err
	}
	if !strings.EqualFold(w, kw) {
		return p.errAt(off, "expected %s, found %s", kw, describeWord(w))
	}
	return nil
}

func describeWord(w string) string {
	if w == "" {
		return "the end of the statement"
	}
	return "'" + w + "'"
}

// name reads a name.
func (p *stmtParser) name(what string) (string, error) {
	w, off, err := p.word()
	if err != nil {
		return "", err
	}
	if w == "" {
		return "", p.errAt(off, "expected %s, found %s", what, describeWord(p.rest()))
	}
	return w, nil
}

// rest is the first character left, for messages.
func (p *stmtParser) rest() string {
	p.skipSpace()
	if p.i >= len(p.src) {
		return ""
	}
	return p.src[p.i : p.i+1]
}

// end checks that only an optional ';' is left.
func (p *stmtParser) end() error {
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == ';' {
		p.i++
		p.skipSpace()
	}
	if p.i < len(p.src) {
		return p.errAt(p.i, "unexpected %q after the end of the statement (one statement per request)", p.src[p.i:min(len(p.src), p.i+20)])
	}
	return nil
}

// where reads an optional WHERE and the predicate after it (to the end,
// without a final ';').
func (p *stmtParser) where(st *Statement) error {
	st.WherePos = -1
	save := p.i
	w, off, err := p.word()
	if err != nil {
		return err
	}
	if !strings.EqualFold(w, "WHERE") {
		p.i = save
		return nil
	}
	body := strings.TrimRight(p.src[off+len(w):], " \t\r\n")
	body = strings.TrimSuffix(body, ";")
	st.Where, st.WherePos = body, off+len(w)
	p.i = len(p.src)
	if strings.TrimSpace(body) == "" {
		return p.errAt(off, "WHERE needs a predicate")
	}
	return nil
}

// ParseStatement parses one execute statement.
func ParseStatement(src string) (*Statement, error) {
	p := &stmtParser{src: src}
	first, off, err := p.word()
	if err != nil {
		return nil, err
	}
	st := &Statement{WherePos: -1}
	switch strings.ToUpper(first) {
	case "CREATE":
		if err := p.expect("SUBSCRIPTION"); err != nil {
			return nil, err
		}
		st.Kind = "CREATE SUBSCRIPTION"
		if st.Name, err = p.name("a subscription name"); err != nil {
			return nil, err
		}
		if err := p.expect("TO"); err != nil {
			return nil, err
		}
		if st.EventType, err = p.name("an event type"); err != nil {
			return nil, err
		}
		for {
			save := p.i
			w, woff, err := p.word()
			if err != nil {
				return nil, err
			}
			switch strings.ToUpper(w) {
			case "BLOCKING", "DROPPING":
				st.Dropping = strings.EqualFold(w, "DROPPING")
				continue
			case "BATCH":
				if err := p.expect("SAMPLE"); err != nil {
					return nil, err
				}
				if err := p.expect("RATE"); err != nil {
					return nil, err
				}
				r, roff, err := p.word()
				if err != nil {
					return nil, err
				}
				v, perr := strconv.ParseFloat(r, 64)
				if perr != nil || v < 0 || v > 1 {
					return nil, p.errAt(roff, "BATCH SAMPLE RATE must be a number between 0 and 1, found %s", describeWord(r))
				}
				st.SampleRate, st.HasRate = v, true
				continue
			case "WHERE":
				p.i = save
				if err := p.where(st); err != nil {
					return nil, err
				}
			case "":
				st.EndPos = woff
			default:
				return nil, p.errAt(woff, "expected BLOCKING, DROPPING, BATCH SAMPLE RATE or WHERE, found %s", describeWord(w))
			}
			break
		}
	case "DELETE":
		if err := p.expect("SUBSCRIPTION"); err != nil {
			return nil, err
		}
		st.Kind = "DELETE SUBSCRIPTION"
		if st.Name, err = p.name("a subscription name"); err != nil {
			return nil, err
		}
	case "DESCRIBE":
		if err := p.expect("EVENT"); err != nil {
			return nil, err
		}
		if err := p.expect("TYPE"); err != nil {
			return nil, err
		}
		st.Kind = "DESCRIBE EVENT TYPE"
		if st.EventType, err = p.name("an event type"); err != nil {
			return nil, err
		}
		if err := p.where(st); err != nil {
			return nil, err
		}
	default:
		return nil, p.errAt(off, "expected CREATE SUBSCRIPTION, DELETE SUBSCRIPTION or DESCRIBE EVENT TYPE, found %s", describeWord(first))
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return st, nil
}

// whereInStatement turns a predicate error into a statement error at
// the predicate's place in the statement.
func whereInStatement(src string, st *Statement, err error) error {
	var we *notification.WhereError
	if !errors.As(err, &we) {
		return err
	}
	line, col := position(src, st.WherePos+we.Pos)
	return &StatementError{Line: line, Column: col, Msg: "WHERE: " + we.Msg}
}

// execute runs one statement.
func (s *Session) execute(req *request) {
	if err := req.fields("statement"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	src, ok, err := req.str("statement")
	if err != nil || !ok {
		s.send(s.replyError(req.id, "INVALID_REQUEST", `execute needs a "statement" (a string)`))
		return
	}
	st, err := req.statement()
	if err != nil {
		s.statementError(req.id, err, "INVALID_REQUEST")
		return
	}
	switch st.Kind {
	case "DELETE SUBSCRIPTION":
		s.unsubscribe(&request{id: req.id, op: "unsubscribe", members: map[string]jsontext.Value{"name": jsontext.Value(mustJSON(st.Name))}})
	case "DESCRIBE EVENT TYPE":
		sc, ok := s.deps.Settings().Registry.Schema(st.EventType)
		if !ok {
			s.send(s.replyError(req.id, "UNKNOWN_EVENT_TYPE", "Event type '"+st.EventType+"' not found"))
			return
		}
		out := map[string]any{"event_type": st.EventType, "schema": sc.Public()}
		if st.WherePos >= 0 {
			w, err := sc.CompileWhere(st.Where)
			if err != nil {
				s.statementError(req.id, whereInStatement(src, st, err), "INVALID_WATCH_REQUEST")
				return
			}
			out["where"] = w.String()
		}
		f, _ := s.replyFits(req.id, out, "the DESCRIBE EVENT TYPE reply", "GET /api/v1/schema/"+st.EventType+" serves the schema")
		s.send(f)
	case "CREATE SUBSCRIPTION":
		members := map[string]jsontext.Value{"event_type": jsontext.Value(mustJSON(st.EventType))}
		o := subscribeOptions{name: st.Name, dropping: st.Dropping, sampleRate: st.SampleRate, hasRate: st.HasRate}
		if sc, err := s.deps.Settings().Registry.Lookup(st.EventType); err == nil {
			// An unknown event type is left to subscribe's answer.
			ident, unpinned, err := statementIdentifier(src, st, sc)
			if err != nil {
				s.statementError(req.id, err, "INVALID_WATCH_REQUEST")
				return
			}
			// Refused after the access check, as subscribe's missing field.
			o.unpinned = unpinned
			if len(ident) > 0 {
				members["identifier"] = jsontext.Value(mustJSON(ident))
			}
		}
		if st.WherePos >= 0 {
			members["where"] = jsontext.Value(mustJSON(st.Where))
		}
		o.body = requestBody(members, "event_type", "identifier", "where")
		s.open(req.id, o, false, CodeInvalidWatch)
	}
}

// statementIdentifier is the identifier of a CREATE SUBSCRIPTION: what
// the top-level AND conditions of its WHERE pin (notification.Where.Pins).
// The whole WHERE stays the subscription's predicate, so the identifier
// only narrows the topic and gives the required fields their values; a
// required field WHERE does not pin is an error at the predicate (or
// where a WHERE would go), returned as unpinned; err is a predicate that
// does not compile.
func statementIdentifier(src string, st *Statement, sc *notification.Schema) (ident map[string]json.RawMessage, unpinned, err error) {
	at := st.EndPos
	if st.WherePos >= 0 {
		w, err := sc.CompileWhere(st.Where)
		if err != nil {
			return nil, nil, whereInStatement(src, st, err)
		}
		if !sc.Generic {
			ident = w.Pins()
		}
		at = st.WherePos + len(st.Where) - len(strings.TrimLeft(st.Where, " \t\r\n"))
	}
	for _, f := range sc.Fields {
		if !f.Required {
			continue
		}
		if _, ok := ident[f.Name]; ok {
			continue
		}
		line, col := position(src, at)
		msg := fmt.Sprintf("required field '%s' must be pinned in WHERE with =, as in %s = …: CREATE SUBSCRIPTION takes its identifier from the top-level AND conditions of WHERE", f.Name, f.Name)
		if f.Spatial() {
			msg = fmt.Sprintf("required field '%s' is a geometry, which WHERE cannot select; use subscribe with an identifier instead", f.Name)
		}
		return ident, &StatementError{Line: line, Column: col, Msg: msg}, nil
	}
	return ident, nil, nil
}

// statementError answers a statement error with its position.
func (s *Session) statementError(id jsontext.Value, err error, code string) {
	var se *StatementError
	if errors.As(err, &se) {
		s.send(s.replyErrorWith(id, code, "execute: "+se.Error(), map[string]any{"position": map[string]int{"line": se.Line, "column": se.Column}}))
		return
	}
	s.send(s.replyError(id, code, "execute: "+err.Error()))
}
