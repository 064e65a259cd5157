package stream

import (
	"fmt"
	"strings"
	"time"

	"github.com/herald-gateway/herald/notification"
)

// Cursors are a request's validated start and end points (Aviso's
// watch and replay cursors, docs/api.md; the end cursors are aviso-server
// 0.13's to_id and to_date). Nil fields are absent.
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

// hinted is a *notification.ValidationError whose message is
// aviso-server's wording (which clients may match) and whose details are
// herald's more precise explanation.
func hinted(msg, detail string) error {
	return &notification.ValidationError{Message: msg, Detail: detail}
}

// dateExamples are the examples aviso-server's date cursor errors list.
const dateExamples = "'2025-06-09T13:15:00Z', '2025-06-09 13:15:00+00:00', '2025-06-09 13:15:00', '1740509903', '1740509903710'"

// parseSeqField parses the sequence cursor field (nil when absent).
func parseSeqField(field string, raw *string) (*uint64, error) {
	if raw == nil {
		return nil, nil
	}
	v, err := notification.ParseSequence(*raw)
	if strings.TrimSpace(*raw) == "" {
		return nil, hinted(field+" cannot be empty. Provide a valid sequence number or omit the field", field+": "+err.Error())
	}
	if err != nil {
		return nil, hinted(fmt.Sprintf("%s must be a valid positive integer. Got: '%s'. Valid examples: '1', '123', '9999'", field, *raw), field+": "+err.Error())
	}
	return &v, nil
}

// parseDateField parses the date cursor field (nil when absent).
func parseDateField(field string, raw *string) (*time.Time, error) {
	if raw == nil {
		return nil, nil
	}
	if strings.TrimSpace(*raw) == "" {
		return nil, hinted(field+" cannot be empty. Provide a valid datetime/timestamp or omit the field",
			field+": send a date-time such as \"2025-06-09T13:15:00Z\" or a Unix timestamp, or omit the field")
	}
	t, err := notification.ParseDate(strings.TrimSpace(*raw))
	if err != nil {
		return nil, hinted(fmt.Sprintf("%s must be a valid datetime/timestamp. Got: '%s'. Error: %v. Valid examples: %s", field, *raw, err, dateExamples), field+": "+err.Error())
	}
	return &t, nil
}

// rfc3339 formats a cursor date as aviso-server's messages do (chrono's
// to_rfc3339): RFC 3339 with +00:00, a fraction only when not zero, in
// groups of three digits.
func rfc3339(t time.Time) string {
	t = t.UTC()
	layout := "2006-01-02T15:04:05"
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1e6 == 0:
		layout += ".000"
	case ns%1e3 == 0:
		layout += ".000000"
	default:
		layout += ".000000000"
	}
	return t.Format(layout + "-07:00")
}

// ParseCursors validates the cursors of a watch (mode Watch) or replay
// request in aviso-server's order: from_id, from_date, their combination,
// an end cursor on a watch, a replay without a start, then the end
// cursors (to_id, to_date, their combination, each against the start of
// its kind). Sequence cursors are taken as sent (surrounding whitespace is
// an error, as in aviso); dates are trimmed. Errors are
// *notification.ValidationError with aviso-server's message and herald's
// explanation as the detail.
func ParseCursors(raw RawCursors, mode Mode) (Cursors, error) {
	var c Cursors
	var err error
	if c.FromSeq, err = parseSeqField("from_id", raw.FromID); err != nil {
		return c, err
	}
	if c.FromDate, err = parseDateField("from_date", raw.FromDate); err != nil {
		return c, err
	}
	if c.FromSeq != nil && c.FromDate != nil {
		return c, hinted("Cannot specify both from_id and from_date. Please provide only one replay parameter. Use from_id for sequence-based replay or from_date for time-based replay.",
			"from_id and from_date cannot be used together: send one start cursor")
	}
	if mode == Watch && (raw.ToID != nil || raw.ToDate != nil) {
		return c, hinted("to_id and to_date are only supported for the replay endpoint, not /watch",
			"to_id and to_date are only accepted on /api/v1/replay: a watch has no end")
	}
	if mode == Replay && !c.HasStart() {
		return c, hinted("Replay endpoint requires either from_id or from_date parameter. Use from_id for sequence-based replay or from_date for time-based replay.",
			"replay needs a start cursor: send from_id (\"0\" for the beginning) or from_date")
	}
	if c.ToSeq, err = parseSeqField("to_id", raw.ToID); err != nil {
		return c, err
	}
	if c.ToDate, err = parseDateField("to_date", raw.ToDate); err != nil {
		return c, err
	}
	switch {
	case c.ToSeq != nil && c.ToDate != nil:
		return c, hinted("Cannot specify both to_id and to_date. Please provide only one replay end parameter. Use to_id for a sequence-based end or to_date for a time-based end.",
			"to_id and to_date cannot be used together: send one end cursor")
	case c.ToSeq != nil && c.FromSeq != nil && *c.ToSeq < *c.FromSeq:
		return c, hinted(fmt.Sprintf("to_id (%d) must not be lower than from_id (%d)", *c.ToSeq, *c.FromSeq),
			fmt.Sprintf("to_id %d is before from_id %d", *c.ToSeq, *c.FromSeq))
	case c.ToDate != nil && c.FromDate != nil && c.ToDate.Before(*c.FromDate):
		return c, hinted(fmt.Sprintf("to_date (%s) must not be earlier than from_date (%s)", rfc3339(*c.ToDate), rfc3339(*c.FromDate)),
			"to_date is before from_date")
	}
	return c, nil
}
