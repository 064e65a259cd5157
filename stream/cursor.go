package stream

import (
	"fmt"
	"strings"
	"time"

	"herald/notification"
)

// Cursors are a request's validated start and end points (reference
// §4.2; the end cursors are [N] §21.14). Nil fields are absent.
type Cursors struct {
	FromSeq  *uint64
	FromDate *time.Time
	ToSeq    *uint64
	ToDate   *time.Time
}

// HasStart reports whether the stream starts in history.
func (c Cursors) HasStart() bool { return c.FromSeq != nil || c.FromDate != nil }

// RawCursors are the cursor fields of a request as sent (nil when absent
// or null).
type RawCursors struct {
	FromID, FromDate, ToID, ToDate *string
}

// CursorsOf returns the raw cursors of a parsed request.
func CursorsOf(req *notification.Request) RawCursors {
	return RawCursors{FromID: req.FromID, FromDate: req.FromDate, ToID: req.ToID, ToDate: req.ToDate}
}

// validation wraps a message as a *notification.ValidationError.
func validation(msg string) error {
	return &notification.ValidationError{Message: msg, Detail: msg}
}

// ParseCursors validates the cursors of a watch (mode Watch) or replay
// request, in aviso's order: from_id, from_date, their combination, then
// the end cursors. Sequence cursors are taken as sent (surrounding
// whitespace is an error, as in aviso); dates are trimmed. Errors are *notification.ValidationError naming the
// field.
func ParseCursors(raw RawCursors, mode Mode) (Cursors, error) {
	var c Cursors
	if raw.FromID != nil {
		if strings.TrimSpace(*raw.FromID) == "" {
			return c, validation("from_id must not be empty: send the next sequence wanted as a decimal string, \"0\" for the beginning")
		}
		v, err := notification.ParseSequence(*raw.FromID)
		if err != nil {
			return c, validation("invalid from_id: " + err.Error())
		}
		c.FromSeq = &v
	}
	if raw.FromDate != nil {
		if strings.TrimSpace(*raw.FromDate) == "" {
			return c, validation("from_date must not be empty")
		}
		t, err := notification.ParseDate(strings.TrimSpace(*raw.FromDate))
		if err != nil {
			return c, validation("invalid from_date: " + err.Error())
		}
		c.FromDate = &t
	}
	if c.FromSeq != nil && c.FromDate != nil {
		return c, validation("from_id and from_date cannot be used together: send one start cursor")
	}
	if raw.ToID != nil || raw.ToDate != nil {
		if mode == Watch {
			return c, validation("to_id and to_date are only accepted on /api/v1/replay: a watch has no end")
		}
		if raw.ToID != nil && raw.ToDate != nil {
			return c, validation("to_id and to_date cannot be used together: send one end cursor")
		}
	}
	if raw.ToID != nil {
		v, err := notification.ParseSequence(*raw.ToID)
		if err != nil {
			return c, validation("invalid to_id: " + err.Error())
		}
		if c.FromSeq != nil && v < *c.FromSeq {
			return c, validation(fmt.Sprintf("to_id %d is before from_id %d", v, *c.FromSeq))
		}
		c.ToSeq = &v
	}
	if raw.ToDate != nil {
		t, err := notification.ParseDate(strings.TrimSpace(*raw.ToDate))
		if err != nil {
			return c, validation("invalid to_date: " + err.Error())
		}
		if c.FromDate != nil && t.Before(*c.FromDate) {
			return c, validation("to_date is before from_date")
		}
		c.ToDate = &t
	}
	if mode == Replay && !c.HasStart() {
		return c, validation("replay needs a start cursor: send from_id (\"0\" for the beginning) or from_date")
	}
	return c, nil
}
