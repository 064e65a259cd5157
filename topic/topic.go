// Package topic owns subjects: building a subject from a topic base and
// canonical identifier values, the per-token percent-encoding of the four
// reserved characters (. * > %), strict decoding, wildcard patterns for
// watch and replay, matching on decoded tokens, the generic fallback for
// schema-less event types, and Index, a trie for finding the stored
// subjects that match a pattern. It imports no other herald package and
// knows nothing about schemas, storage or transports.
//
// Encoding (Aviso's subject encoding, docs/architecture.md): each token is
// encoded on its own; only '.', '*', '>' and '%' are reserved and become %2E,
// %2A, %3E and %25 (uppercase hex). Everything else, Unicode included, passes
// through. Decoding is strict and single-pass: every '%' must be followed by
// two hex digits and the result must be valid UTF-8. Like the reference,
// decoding accepts lowercase hex digits and escapes of unreserved bytes
// ("%2e", "%41"), but encoding always produces the canonical form, so
// EncodeToken(DecodeToken(s)) equals s only for canonical input.
package topic

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Separator joins subject tokens. It is always "." (the per-schema
// `topic.separator` key of old Aviso configs is obsolete).
const Separator = "."

// Wildcard is the token that matches any single token in a pattern.
const Wildcard = "*"

// ErrInvalidEncoding reports a token that is not a valid percent-encoding.
var ErrInvalidEncoding = errors.New("invalid percent-encoding")

// escapes holds the encoding of each reserved byte (uppercase hex).
var escapes = [256]string{'.': "%2E", '*': "%2A", '>': "%3E", '%': "%25"}

// reserved reports whether c must be percent-encoded.
func reserved(c byte) bool { return len(escapes[c]) != 0 }

// EncodeToken percent-encodes the reserved characters of one token
// ('.' → %2E, '*' → %2A, '>' → %3E, '%' → %25, uppercase hex). Every other
// byte, Unicode included, passes through unchanged.
func EncodeToken(s string) string {
	first := indexReserved(s)
	if first < 0 {
		return s
	}
	n := len(s)
	for i := first; i < len(s); i++ {
		if reserved(s[i]) {
			n += 2
		}
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(s[:first])
	writeEncoded(&b, s[first:])
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// DecodeToken undoes EncodeToken in a single strict pass: every '%' must be
// followed by two hex digits (either case) and the result must be valid
// UTF-8. "1%2525" decodes to "1%25", not "1%". Errors wrap
// ErrInvalidEncoding and say which byte offset is wrong.
func DecodeToken(s string) (string, error) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		if !utf8.ValidString(s) {
			return "", fmt.Errorf("token %q: %w: not valid UTF-8", s, ErrInvalidEncoding)
		}
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("token %q: %w: '%%' at byte %d is not followed by two hex digits (write a literal '%%' as %%25)",
				s, ErrInvalidEncoding, i)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("token %q: %w: %q at byte %d is not '%%' followed by two hex digits (write a literal '%%' as %%25)",
				s, ErrInvalidEncoding, s[i:i+3], i)
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("token %q: %w: decodes to invalid UTF-8", s, ErrInvalidEncoding)
	}
	return string(b), nil
}

// Encode builds a subject from decoded tokens, encoding each one and
// joining them with Separator. Encode(nil) and Encode([]string{""}) are
// both "".
func Encode(tokens []string) string {
	switch len(tokens) {
	case 0:
		return ""
	case 1:
		return EncodeToken(tokens[0])
	}
	n := len(tokens) - 1
	for _, t := range tokens {
		n += len(t)
		for i := 0; i < len(t); i++ {
			if reserved(t[i]) {
				n += 2
			}
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, t := range tokens {
		if i > 0 {
			b.WriteString(Separator)
		}
		writeEncoded(&b, t)
	}
	return b.String()
}

// writeEncoded appends the encoding of one token to b.
func writeEncoded(b *strings.Builder, s string) {
	for {
		i := indexReserved(s)
		if i < 0 {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		b.WriteString(escapes[s[i]])
		s = s[i+1:]
	}
}

// indexReserved returns the index of the first reserved byte of s, or -1.
func indexReserved(s string) int {
	for i := 0; i < len(s); i++ {
		if reserved(s[i]) {
			return i
		}
	}
	return -1
}

// decode splits an encoded subject at every '.' and decodes each token with
// DecodeToken. The empty subject is one empty token. The error names the
// subject and wraps the token's error (and so ErrInvalidEncoding).
func decode(subject string) ([]string, error) {
	parts := strings.Split(subject, Separator)
	for i, p := range parts {
		d, err := DecodeToken(p)
		if err != nil {
			return nil, fmt.Errorf("subject %q: %w", subject, err)
		}
		parts[i] = d
	}
	return parts, nil
}

// Token is one position of a Pattern: a literal decoded value or a
// wildcard matching any single token.
type Token struct {
	// Value is the decoded literal value; ignored for a wildcard.
	Value string
	// Wildcard makes the token match any single subject token.
	Wildcard bool
}

// Pattern is a watch/replay subject pattern over decoded tokens; the first
// token is the topic base.
type Pattern []Token

// Literal returns a literal pattern token.
func Literal(v string) Token { return Token{Value: v} }

// Any returns a wildcard pattern token.
func Any() Token { return Token{Wildcard: true} }

// Match reports whether decoded subject tokens match the pattern: same
// count, equal position by position, wildcards matching anything.
func (p Pattern) Match(tokens []string) bool {
	if len(tokens) != len(p) {
		return false
	}
	for i, t := range p {
		if !t.Wildcard && t.Value != tokens[i] {
			return false
		}
	}
	return true
}

// Display returns the decoded display subject used in SSE control events:
// decoded tokens joined with '.', '*' for wildcards. Dots inside values
// make it ambiguous; it is for display only.
func (p Pattern) Display() string {
	var b strings.Builder
	for i, t := range p {
		if i > 0 {
			b.WriteString(Separator)
		}
		if t.Wildcard {
			b.WriteString(Wildcard)
		} else {
			b.WriteString(t.Value)
		}
	}
	return b.String()
}

// Subject returns the encoded NATS subject of the pattern, '*' for
// wildcards.
func (p Pattern) Subject() string {
	var b strings.Builder
	for i, t := range p {
		if i > 0 {
			b.WriteString(Separator)
		}
		if t.Wildcard {
			b.WriteString(Wildcard)
		} else {
			writeEncoded(&b, t.Value)
		}
	}
	return b.String()
}

// Generic builds the decoded tokens of a schema-less (generic) event type:
// the event type, then the identifier values sorted by key name; just the
// event type when the identifier is empty.
func Generic(eventType string, identifier map[string]string) []string {
	keys := make([]string, 0, len(identifier))
	for k := range identifier {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tokens := make([]string, 0, len(keys)+1)
	tokens = append(tokens, eventType)
	for _, k := range keys {
		tokens = append(tokens, identifier[k])
	}
	return tokens
}

// Length limits. NATS refuses a protocol line longer than its
// max_control_line (4,096 bytes by default on every nats-server) and drops
// the connection that sent it. The JetStream API puts a replay's subject
// filter into the subject of its consumer-create request, next to the
// stream and consumer names and a reply inbox, so herald bounds what it
// lets a request put there well below that line: a request whose subject
// or filter would exceed MaxSubjectBytes, or that names a stream longer
// than a topic base may be (MaxBaseBytes), is refused when it is
// parsed.
//
// MaxSubjectBytes bounds a subject in its NATS wire form (percent escapes
// included, see AppendWireToken): a notification's subject, and the
// subject pattern of a watch or replay.
const MaxSubjectBytes = 2048

const hexDigits = "0123456789ABCDEF"

// AppendWireToken appends the NATS wire form of one decoded token: the
// canonical encoding (EncodeToken) plus escapes only NATS needs: ASCII
// control bytes, space and DEL as %XX, and U+FFFD as %EF%BF%BD (NATS
// subjects cannot hold whitespace, and nats-server's file store treats
// NUL and U+FFFD in a subject as corruption when it recovers its state).
// DecodeToken undoes every %XX escape. An empty token, which NATS cannot
// carry, is written as a lone "%" (no non-empty value encodes to it).
func AppendWireToken(b []byte, t string) []byte {
	if t == "" {
		return append(b, '%')
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c <= ' ' || c == 0x7f || reserved(c):
			b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
		case c == 0xEF && strings.HasPrefix(t[i:], "\uFFFD"):
			b = append(b, "%EF%BF%BD"...)
			i += 2
		default:
			b = append(b, c)
		}
	}
	return b
}

// WireLen returns the length of AppendWireToken's form of t without
// building it.
func WireLen(t string) int {
	if t == "" {
		return 1
	}
	n := len(t)
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c <= ' ' || c == 0x7f || reserved(c):
			n += 2
		case c == 0xEF && strings.HasPrefix(t[i:], "\uFFFD"):
			n += 6
			i += 2
		}
	}
	return n
}

// SubjectLen returns the length of the wire subject of the pattern ('*'
// for wildcards), the longest form a subject of it takes.
func (p Pattern) SubjectLen() int {
	n := max(len(p)-1, 0)
	for _, t := range p {
		if t.Wildcard {
			n += len(Wildcard)
		} else {
			n += WireLen(t.Value)
		}
	}
	return n
}

// WireSubjectLen returns the length of the wire subject of tokens.
func WireSubjectLen(tokens []string) int {
	n := max(len(tokens)-1, 0)
	for _, t := range tokens {
		n += WireLen(t)
	}
	return n
}

// MaxBaseBytes bounds a topic base, and so a stream name (JetStream
// refuses stream names longer than 255 bytes).
const MaxBaseBytes = 255

// BaseRule states the rule ValidBase checks, for error messages.
const BaseRule = "[A-Za-z0-9][A-Za-z0-9_-]*, at most 255 bytes"

// ValidBase reports whether s is a valid topic base:
// [A-Za-z0-9][A-Za-z0-9_-]* and at most MaxBaseBytes long. A base names
// the event type's subjects and its JetStream stream; the config file
// declares it (topic.base, or the event type's name), and notify, the
// admin endpoints and the JetStream engine check names against the same
// rule.
func ValidBase(s string) bool {
	if s == "" || len(s) > MaxBaseBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
		if i == 0 && !alnum {
			return false
		}
		if !alnum && c != '_' && c != '-' {
			return false
		}
	}
	return true
}
