package jetstream

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/topic"
)

// Errors for a caller's request the engine refuses before sending
// anything to the server. Their messages name the offending value and
// the rule, never the server or the client library; callers test them
// with errors.Is (an HTTP layer answers 400).
var (
	// ErrInvalidName: a stream name (the stream key of Delete,
	// WipeStream and LastSeq) that no JetStream stream can have, or a
	// topic base that is not one (Publish, Subscribe, History).
	ErrInvalidName error = invalidError("invalid stream name")
	// ErrTooLong: a subject longer than a NATS protocol line can carry
	// (see maxSubjectLen).
	ErrTooLong error = invalidError("subject too long")
)

// invalidError is a refusal of a caller's request; it matches
// engine.ErrInvalid as well as itself.
type invalidError string

// Error returns the message.
func (e invalidError) Error() string { return string(e) }

// Is makes errors.Is(err, engine.ErrInvalid) hold.
func (e invalidError) Is(target error) bool { return target == engine.ErrInvalid }

// maxStreamNameLen is JetStream's limit on stream names (JSMaxNameLen).
const maxStreamNameLen = 255

// streamNameRule states what checkStreamKey accepts, for messages.
const streamNameRule = `1 to 255 bytes of UTF-8 without '.', '*', '>', '/', '\', whitespace or control characters`

// checkStreamKey checks that key, uppercased, can name a JetStream
// stream: nats-server refuses names with '.', '*', '>', '/', '\' or
// whitespace, and herald also refuses control characters and invalid
// UTF-8 (they could not travel in a protocol line or a JSON request
// intact), so that such a key never reaches the server.
func checkStreamKey(key string) error {
	ok := key != "" && len(key) <= maxStreamNameLen && utf8.ValidString(key)
	for _, r := range key {
		if !ok {
			break
		}
		switch {
		case r == '.', r == '*', r == '>', r == '/', r == '\\', unicode.IsSpace(r), unicode.IsControl(r):
			ok = false
		}
	}
	if ok {
		return nil
	}
	return fmt.Errorf("stream name %s (%d bytes) must be %s: %w", shown(key), len(key), streamNameRule, ErrInvalidName)
}

// checkBase checks that base is a topic base (and so names a stream
// herald can own).
func checkBase(base string) error {
	if topic.ValidBase(base) {
		return nil
	}
	return fmt.Errorf("topic base %s (%d bytes) must match %s: %w", shown(base), len(base), topic.BaseRule, ErrInvalidName)
}

// shownLen bounds the part of a refused value that error messages quote.
const shownLen = 64

// shown quotes a value for an error message, cut after shownLen bytes
// (at a rune boundary) with an ellipsis.
func shown(s string) string {
	if len(s) <= shownLen {
		return fmt.Sprintf("%q", s)
	}
	cut := shownLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}
