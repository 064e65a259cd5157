// Package jsonstr owns herald's one JSON string writer, used by every
// place that writes JSON by hand: the CloudEvents of package notification,
// the WIRE JSON encoder, the JAQ-native JSON and YAML writers and the
// SYSLOG batch frame. It escapes only what JSON requires, as serde_json
// (and so aviso-server) does: '"' and '\' with a backslash, \b \f \n \r \t
// in their short forms, the other control bytes as \u00XX; everything else,
// '<', '>', '&', DEL, U+2028 and U+2029 included, is written as it is.
// Invalid UTF-8, which serde_json cannot hold and which would make the
// output invalid JSON, is written as U+FFFD, one per invalid byte, as
// encoding/json reads it.
//
// It is a leaf: it imports no herald package, so that codec and
// notification share it. It must not grow number, object or HTML escaping.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes written as they are (DEL is looked at by
// AppendEscaping's escape function).
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['"'] = false
	t['\\'] = false
	return t
}()

// Append appends s to dst as a JSON string.
func Append(dst []byte, s string) []byte { return appendQuoted(dst, s, nil) }

// AppendBytes is Append for text held in a byte slice.
func AppendBytes(dst []byte, s []byte) []byte { return appendQuoted(dst, s, nil) }

// AppendEscaping is Append that also writes as a \u escape (a surrogate
// pair above U+FFFF) every rune from U+007F up for which escape returns
// true; a YAML writer uses it for the characters YAML must not hold raw.
func AppendEscaping(dst []byte, s string, escape func(r rune) bool) []byte {
	return appendQuoted(dst, s, escape)
}

func appendQuoted[S ~string | ~[]byte](dst []byte, s S, escape func(rune) bool) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending, to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] || (c == 0x7f && (escape == nil || !escape(0x7f))) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = appendEscape(dst, rune(c))
			}
			i++
			start = i
			continue
		}
		var b [utf8.UTFMax]byte
		r, size := utf8.DecodeRune(b[:copy(b[:], s[i:])])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
		case escape != nil && escape(r):
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, r)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape writes r as \uXXXX, or as a surrogate pair above U+FFFF.
func appendEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return appendEscape(appendEscape(dst, hi), lo)
	}
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
