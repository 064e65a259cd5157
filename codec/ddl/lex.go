// Package ddl owns the codec statement language: its lexer, the parser of
// CREATE / ALTER / DROP / BEGIN / COMMIT / ROLLBACK / SHOW CREATE
// statements into a syntax tree (JAQ-native and protobuf codecs with
// their programs, quoted '…' or dollar-quoted $tag$ … $tag$, included),
// and the positions and messages of syntax errors, down to positions
// inside a program.
//
// It must not hold state or judge statements against existing entities:
// whether a name exists, a codec binds or a transaction commits is the
// catalog's business.
package ddl

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Pos is a 1-based line and column (in characters) in the statement text.
type Pos struct {
	Line, Col int
}

// String renders LINE:COL.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is a statement error at a position. Its text is "LINE:COL: MSG".
type Error struct {
	Pos Pos
	Msg string
}

// Error implements error: "LINE:COL: MSG".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

type tokKind uint8

const (
	tEOF tokKind = iota
	tWord
	tQuoted // `backtick name`
	tNumber
	tString // 'text'
	tPunct
)

type token struct {
	kind tokKind
	text string // word, unquoted name, number digits, string content, punct char
	pos  Pos
	// For a string literal: the raw text between the delimiters, where it
	// starts, and whether quotes inside are doubled ('…'; not $tag$…$tag$).
	raw     string
	rawPos  Pos
	doubled bool
}

// posAt returns the position of byte offset off of a string literal's
// content (after undoubling quotes); offsets past the end give the
// position just after the content.
func (t token) posAt(off int) Pos {
	p := t.rawPos
	n := 0 // content bytes passed
	for i := 0; i < len(t.raw) && n < off; {
		if t.doubled && t.raw[i] == '\'' { // '' stands for one quote
			i += 2
			n++
			p.Col += 2
			continue
		}
		r, sz := utf8.DecodeRuneInString(t.raw[i:])
		if r == '\n' {
			p.Line++
			p.Col = 1
		} else {
			p.Col++
		}
		i += sz
		n += sz
	}
	return p
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tWord:
		return fmt.Sprintf("%q", t.text)
	case tQuoted:
		return "quoted name " + fmt.Sprintf("%q", t.text)
	case tNumber:
		return "number " + t.text
	case tString:
		return "string literal"
	}
	return fmt.Sprintf("'%s'", t.text)
}

// is reports whether t is the keyword kw (case-insensitive bare word).
func (t token) is(kw string) bool { return t.kind == tWord && strings.EqualFold(t.text, kw) }

func lex(src string) ([]token, error) {
	var toks []token
	line, col := 1, 1
	i := 0
	adv := func(n int) {
		for k := 0; k < n; {
			r, sz := utf8.DecodeRuneInString(src[i:])
			if r == '\n' {
				line++
				col = 1
			} else {
				col++
			}
			i += sz
			k += sz
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			adv(1)
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			for i < len(src) && src[i] != '\n' {
				adv(1)
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			start := Pos{line, col}
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, &Error{start, "unterminated comment: expected */"}
			}
			adv(end + 4)
		case isWordStart(c):
			start := Pos{line, col}
			j := i
			for j < len(src) && isWordChar(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tWord, text: src[i:j], pos: start})
			adv(j - i)
		case c >= '0' && c <= '9':
			start := Pos{line, col}
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			if j < len(src) && isWordStart(src[j]) {
				return nil, &Error{start, "expected a number or a name: a name cannot start with a digit (quote it with backticks)"}
			}
			toks = append(toks, token{kind: tNumber, text: src[i:j], pos: start})
			adv(j - i)
		case c == '`':
			start := Pos{line, col}
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, &Error{start, "unterminated quoted name: expected a closing backtick"}
				}
				if src[j] == '`' {
					if j+1 < len(src) && src[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			name := b.String()
			if name == "" {
				return nil, &Error{start, "a quoted name cannot be empty"}
			}
			if !utf8.ValidString(name) {
				return nil, &Error{start, "a quoted name must be valid UTF-8"}
			}
			toks = append(toks, token{kind: tQuoted, text: name, pos: start})
			adv(j + 1 - i)
		case c == '$':
			start := Pos{line, col}
			j := i + 1
			for j < len(src) && isWordChar(src[j]) {
				j++
			}
			if j >= len(src) || src[j] != '$' || (j > i+1 && !isWordStart(src[i+1])) {
				return nil, &Error{start, "expected a dollar-quoted string: $tag$ … $tag$, the tag a name or empty"}
			}
			tag := src[i : j+1]
			end := strings.Index(src[j+1:], tag)
			if end < 0 {
				return nil, &Error{start, "unterminated dollar-quoted string: expected the closing " + tag}
			}
			content := src[j+1 : j+1+end]
			adv(len(tag))
			cpos := Pos{line, col}
			toks = append(toks, token{kind: tString, text: content, pos: start, raw: content, rawPos: cpos})
			adv(end + len(tag))
		case c == '\'':
			start := Pos{line, col}
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, &Error{start, "unterminated string literal: expected a closing quote"}
				}
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			toks = append(toks, token{kind: tString, text: b.String(), pos: start, raw: src[i+1 : j], rawPos: Pos{start.Line, start.Col + 1}, doubled: true})
			adv(j + 1 - i)
		case strings.IndexByte("(),;<>{}=.[]", c) >= 0:
			toks = append(toks, token{kind: tPunct, text: string(c), pos: Pos{line, col}})
			adv(1)
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, &Error{Pos{line, col}, fmt.Sprintf("unexpected character %q: expected a keyword, a name, a number or punctuation", r)}
		}
	}
	toks = append(toks, token{kind: tEOF, pos: Pos{line, col}})
	return toks, nil
}

func isWordStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isWordChar(c byte) bool { return isWordStart(c) || (c >= '0' && c <= '9') }
