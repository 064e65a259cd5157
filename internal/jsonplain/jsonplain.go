// Package jsonplain tells which strings encoding/json writes as they
// are, so that hand-written JSON encoders can copy them without
// escaping and fall back to encoding/json for the others.
package jsonplain

// String reports whether s is printable ASCII but the quote, the
// backslash and the three bytes encoding/json escapes for HTML (<, >
// and &): such a string encoding/json writes between its quotes as it
// is. It is conservative: some other strings (non-ASCII text, DEL) are
// written as they are too, but say false and take the slow path.
func String(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
