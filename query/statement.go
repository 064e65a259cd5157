package query

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// StatementKind is which statement a Statement is.
type StatementKind uint8

// The statement kinds; the zero value is no statement.
const (
	CreateSubscription StatementKind = iota + 1
	DeleteSubscription
	DescribeEventType
)

// String is the kind's keywords, as written in a statement.
func (k StatementKind) String() string {
	switch k {
	case CreateSubscription:
		return "CREATE SUBSCRIPTION"
	case DeleteSubscription:
		return "DELETE SUBSCRIPTION"
	case DescribeEventType:
		return "DESCRIBE EVENT TYPE"
	}
	return fmt.Sprintf("StatementKind(%d)", uint8(k))
}

// Statement is one parsed statement.
type Statement struct {
	// Kind says which statement it is.
	Kind StatementKind
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

// Position returns the line and column (both from 1) of byte offset
// off in src.
func Position(src string, off int) (int, int) {
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
	line, col := Position(p.src, off)
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
		st.Kind = CreateSubscription
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
		st.Kind = DeleteSubscription
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
		st.Kind = DescribeEventType
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

// WhereError turns an error of compiling st's WHERE predicate into a
// *StatementError at the predicate's place in src, the statement st was
// parsed from; an error that is not a *WhereError is returned as is.
func (st *Statement) WhereError(src string, err error) error {
	var we *WhereError
	if !errors.As(err, &we) {
		return err
	}
	line, col := Position(src, st.WherePos+we.Pos)
	return &StatementError{Line: line, Column: col, Msg: "WHERE: " + we.Msg}
}
