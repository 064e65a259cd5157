package engine

import (
	"errors"
	"fmt"

	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// ErrTooLarge: a notification whose stored record would exceed the
// backend's limit on one record. Errors wrapping it are *TooLargeError;
// transports answer it as a request too large (HTTP 413), never as a
// storage failure, and store nothing.
var ErrTooLarge = errors.New("record too large")

// TooLargeError says how large a record would be and the limit it
// exceeds.
type TooLargeError struct {
	// Size is the record's size as the backend would store it, in bytes.
	Size int
	// Limit is the largest record the backend stores, in bytes.
	Limit int
	// Limiter names what sets the limit, for the message.
	Limiter string
}

// Error gives both sizes.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the stored notification would be %d bytes, above the backend's limit of %d bytes (%s): send a smaller payload", e.Size, e.Limit, e.Limiter)
}

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// SizeChecker is implemented by engines that bound the size of one stored
// record, so that callers can refuse a notification before anything is
// stored (a batch as a whole).
type SizeChecker interface {
	// CheckSize returns a *TooLargeError when n, stored, would exceed the
	// engine's limit, nil otherwise.
	CheckSize(n *notification.Notification) error
}

// CheckSize checks n against p's limit on one record (nil when p has
// none). Publish applies the same check; calling it first lets a caller
// refuse a notification of a batch before any of it is stored.
func CheckSize(p Publisher, n *notification.Notification) error {
	if c, ok := p.(SizeChecker); ok && n != nil {
		return c.CheckSize(n)
	}
	return nil
}

// DefaultMaxRecordBytes is the in-memory engine's limit on one stored
// record: 1 MiB, nats-server's default max_payload, the limit a
// JetStream engine on a server with default settings applies, so that a
// notification the JetStream engine would refuse is refused by the
// in-memory engine too.
const DefaultMaxRecordBytes = 1 << 20

// memoryRecordLimiter names the in-memory engine's limit in messages.
const memoryRecordLimiter = "the in-memory engine's limit, nats-server's default max_payload"

// RecordBytes is the size the in-memory engine counts for n's stored
// record: what a backend stores of it, the payload, the subject, the
// event type, the content type, the identifier values and the spatial
// metadata. (The JetStream engine counts its NATS message exactly,
// headers included, which adds some 100 bytes of framing.)
func RecordBytes(n *notification.Notification) int {
	size := len(n.Payload) + len(n.EventType) + len(n.ContentType)
	if n.Subject != "" {
		size += len(n.Subject)
	} else {
		size += len(topic.Encode(n.Tokens))
	}
	for k, v := range n.Identifier {
		size += len(k) + len(v)
	}
	if n.Geometry != nil {
		for k, v := range n.Geometry.Metadata() {
			size += len(k) + len(v)
		}
	}
	return size
}

// CheckSize implements SizeChecker with DefaultMaxRecordBytes (or the
// MemoryOptions limit) over RecordBytes.
func (m *Memory) CheckSize(n *notification.Notification) error {
	if size := RecordBytes(n); size > m.maxRecord {
		return &TooLargeError{Size: size, Limit: m.maxRecord, Limiter: memoryRecordLimiter}
	}
	return nil
}
