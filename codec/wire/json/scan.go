package json

import (
	"unicode/utf8"

	"github.com/herald-gateway/herald/codec/values"
)

// scanner is a strict RFC 8259 reader over one payload: invalid UTF-8, raw
// control characters, malformed escapes (lone surrogates included) and
// malformed numbers are errors. It never copies the payload; unescaped
// strings go to a reused scratch buffer.
type scanner struct {
	buf     []byte
	pos     int
	scratch []byte
}

func (s *scanner) reset(b []byte) {
	s.buf = b
	s.pos = 0
}

func (s *scanner) fail(code values.Code, msg string) *values.Error {
	return &values.Error{Code: code, Msg: msg, Offset: s.pos}
}

func (s *scanner) ws() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos < len(s.buf) {
		return s.buf[s.pos]
	}
	return 0
}

func (s *scanner) syntax(what string) *values.Error {
	if s.pos >= len(s.buf) {
		return s.fail(values.CodeSyntax, "malformed JSON: unexpected end of payload, expected "+what)
	}
	return s.fail(values.CodeSyntax, "malformed JSON: expected "+what)
}

func (s *scanner) expect(c byte, what string) *values.Error {
	if s.peek() != c {
		return s.syntax(what)
	}
	s.pos++
	return nil
}

// literal consumes true, false or null (the first byte already peeked).
func (s *scanner) literal(word string) *values.Error {
	if len(s.buf)-s.pos < len(word) || string(s.buf[s.pos:s.pos+len(word)]) != word {
		return s.syntax("a JSON value")
	}
	s.pos += len(word)
	return nil
}

// str reads a string at the current position (after whitespace) and
// returns its content: a view of the payload when it holds no escape, the
// unescaped text in the scratch buffer otherwise.
func (s *scanner) str() ([]byte, *values.Error) {
	if s.peek() != '"' {
		return nil, s.syntax("a string")
	}
	s.pos++
	start := s.pos
	escaped := false
	b := s.buf
	for {
		// fast path over plain ASCII
		for s.pos < len(b) {
			c := b[s.pos]
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
			s.pos++
		}
		if s.pos >= len(b) {
			return nil, s.syntax("the end of a string")
		}
		c := b[s.pos]
		switch {
		case c == '"':
			raw := b[start:s.pos]
			s.pos++
			if !escaped {
				return raw, nil
			}
			return s.unescape(raw), nil
		case c == '\\':
			escaped = true
			if err := s.escape(); err != nil {
				return nil, err
			}
		case c < 0x20:
			return nil, s.fail(values.CodeControlChar, "raw control character in a string: escape it")
		default:
			r, n := utf8.DecodeRune(b[s.pos:])
			if r == utf8.RuneError && n == 1 {
				return nil, s.fail(values.CodeInvalidUTF8, "string is not valid UTF-8")
			}
			s.pos += n
		}
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func (s *scanner) hex4(at int) rune {
	if at+4 > len(s.buf) {
		return -1
	}
	v := 0
	for i := at; i < at+4; i++ {
		h := hexVal(s.buf[i])
		if h < 0 {
			return -1
		}
		v = v<<4 | h
	}
	return rune(v)
}

// escape validates one escape sequence at s.pos (a backslash).
func (s *scanner) escape() *values.Error {
	b := s.buf
	if s.pos+1 >= len(b) {
		return s.fail(values.CodeInvalidEscape, "malformed escape at the end of a string")
	}
	switch b[s.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos += 2
		return nil
	case 'u':
		r := s.hex4(s.pos + 2)
		if r < 0 {
			return s.fail(values.CodeInvalidEscape, `malformed \u escape: expected four hex digits`)
		}
		if r >= 0xDC00 && r <= 0xDFFF {
			return s.fail(values.CodeInvalidEscape, `lone low surrogate in a \u escape`)
		}
		if r >= 0xD800 && r <= 0xDBFF {
			if s.pos+7 >= len(b) || b[s.pos+6] != '\\' || b[s.pos+7] != 'u' {
				return s.fail(values.CodeInvalidEscape, `lone high surrogate in a \u escape`)
			}
			r2 := s.hex4(s.pos + 8)
			if r2 < 0xDC00 || r2 > 0xDFFF {
				return s.fail(values.CodeInvalidEscape, `high surrogate not followed by a low surrogate`)
			}
			s.pos += 12
			return nil
		}
		s.pos += 6
		return nil
	}
	return s.fail(values.CodeInvalidEscape, `malformed escape: expected one of \" \\ \/ \b \f \n \r \t \uXXXX`)
}

// unescape decodes an already validated string body into the scratch.
func (s *scanner) unescape(raw []byte) []byte {
	out := s.scratch[:0]
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(0)
			for _, h := range raw[i+2 : i+6] {
				r = r<<4 | rune(hexVal(h))
			}
			if r >= 0xD800 && r <= 0xDBFF {
				r2 := rune(0)
				for _, h := range raw[i+8 : i+12] {
					r2 = r2<<4 | rune(hexVal(h))
				}
				r = (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000
				i += 6
			}
			out = utf8.AppendRune(out, r)
			i += 6
			continue
		}
		i += 2
	}
	s.scratch = out
	return out
}

// float reads a JSON number for a float field of the given width in one
// pass: grammar check, mantissa and exponent, then the exact fast path or
// strconv at that width.
func (s *scanner) float(bits int) (float64, *values.Error) {
	b := s.buf
	start := s.pos
	i := s.pos
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var mant uint64
	digits, exp := 0, 0
	if i < len(b) && b[i] == '0' {
		i++
	} else if i < len(b) && b[i] >= '1' && b[i] <= '9' {
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if digits < 19 {
				mant = mant*10 + uint64(b[i]-'0')
			}
			digits++
		}
	} else {
		s.pos = i
		return 0, s.syntax("a digit")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if mant == 0 && b[i] == '0' {
				exp--
				continue
			}
			if digits < 19 {
				mant = mant*10 + uint64(b[i]-'0')
				exp--
			}
			digits++
		}
		if i == d {
			s.pos = i
			return 0, s.syntax("a digit after the decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		s.pos = start
		text, _, err := s.number()
		if err != nil {
			return 0, err
		}
		return values.ParseFloat(text, bits), nil
	}
	s.pos = i
	return values.FromDecimal(b[start:i], neg, mant, digits, exp, bits), nil
}

// number reads a JSON number and returns its text and whether it is an
// integer literal (no fraction, no exponent).
func (s *scanner) number() ([]byte, bool, *values.Error) {
	s.ws()
	b := s.buf
	start := s.pos
	i := s.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		s.pos = i
		return nil, false, s.syntax("a number")
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return nil, false, s.syntax("a digit")
	}
	isInt := true
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			s.pos = i
			return nil, false, s.syntax("a digit after the decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			s.pos = i
			return nil, false, s.syntax("a digit in the exponent")
		}
	}
	s.pos = i
	return b[start:i], isInt, nil
}

// skip validates and skips one value of any kind.
func (s *scanner) skip(depth int) *values.Error {
	if depth > maxDepth {
		return s.fail(values.CodeTooDeep, "nesting too deep")
	}
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '[':
		s.pos++
		if s.peek() == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				return nil
			default:
				return s.syntax("',' or ']'")
			}
		}
	case '{':
		s.pos++
		if s.peek() == '}' {
			s.pos++
			return nil
		}
		var names map[string]bool
		for {
			k, err := s.str()
			if err != nil {
				return err
			}
			if names == nil {
				names = map[string]bool{}
			}
			if names[string(k)] {
				return s.fail(values.CodeDuplicateField, "duplicate member name in a nested object")
			}
			names[string(k)] = true
			if err := s.expect(':', "':'"); err != nil {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case '}':
				s.pos++
				return nil
			default:
				return s.syntax("',' or '}'")
			}
		}
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			_, _, err := s.number()
			return err
		}
		return s.syntax("a JSON value")
	}
}

const maxDepth = 512
