package notification

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// This file parses the replay cursors of watch and replay requests (Aviso's
// watch and replay, docs/api.md): sequence cursors (from_id, to_id) and date
// cursors (from_date, to_date). The errors start with "sequence" or "date" and
// the quoted value, say what is wrong and how to fix it, but do not name the
// field; callers add the field name and turn them into ValidationErrors.

// ParseSequence parses a sequence cursor: a decimal unsigned 64-bit number
// as Rust's u64::from_str reads it, which is what the reference does: an
// optional leading '+', then ASCII digits only (leading zeros allowed), no
// '-', no whitespace anywhere. "0" means "from the beginning".
//
// A value that is empty or only whitespace is rejected as empty. Any other
// value is parsed untrimmed, as in the reference, so " 5" is rejected (the
// error suggests sending "5"). A CloudEvent id such as "mars@5" is rejected
// with a hint to send only the number.
func ParseSequence(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf(`sequence %q is empty: send a decimal sequence number such as "1" ("0" means from the beginning), or omit the field`, s)
	}
	n, err := parseRustU64(s)
	if err == nil {
		return n, nil
	}
	if t != s {
		if _, terr := parseRustU64(t); terr == nil {
			return 0, fmt.Errorf("sequence %q has surrounding whitespace: send only the digits, %q", s, t)
		}
	}
	if at := strings.LastIndexByte(t, '@'); at >= 0 {
		if seq, serr := parseRustU64(t[at+1:]); serr == nil {
			next := "the next one"
			if seq < math.MaxUint64 {
				next = strconv.FormatUint(seq+1, 10)
			}
			return 0, fmt.Errorf("sequence %q is a CloudEvent id (<event_type>@<sequence>): send only the sequence number, %q (the cursor is inclusive: %s resumes after that event)",
				s, strconv.FormatUint(seq, 10), next)
		}
	}
	if err == errU64Range {
		return 0, fmt.Errorf("sequence %q is too large: the largest sequence number is %d", s, uint64(math.MaxUint64))
	}
	if len(t) > 1 && t[0] == '-' && cursorDigits(t[1:]) {
		return 0, fmt.Errorf(`sequence %q has a minus sign: sequence numbers are never negative ("0" means from the beginning)`, s)
	}
	return 0, fmt.Errorf(`sequence %q is not a decimal number: use ASCII digits only, optionally after a '+', such as "1" or "123"`, s)
}

var (
	errU64Syntax = errors.New("not a decimal u64")
	errU64Range  = errors.New("u64 overflow")
)

// parseRustU64 is Rust's u64::from_str: an optional '+' (not alone), then one
// or more ASCII digits, no overflow.
func parseRustU64(s string) (uint64, error) {
	s = strings.TrimPrefix(s, "+")
	if s == "" || !cursorDigits(s) {
		return 0, errU64Syntax
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, errU64Range
		}
		n = n*10 + d
	}
	return n, nil
}

// cursorDigits reports whether s is non-empty and all ASCII digits.
func cursorDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dateCursorForms lists the accepted date cursor forms for error messages.
const dateCursorForms = `RFC 3339 ("2025-06-09T13:15:00Z", "2025-06-09T13:15:00.5+02:00"), ` +
	`a space instead of the "T" with an offset ("2025-06-09 13:15:00+02:00"), ` +
	`a date-time without offset, taken as UTC ("2025-06-09T13:15:00", "2025-06-09 13:15:00"), ` +
	`or a Unix timestamp: up to 11 digits are seconds ("1740509903"), 12 or more milliseconds ("1740509903710")`

// Limits of the reference's date type (chrono: years -262143 to 262142).
const (
	chronoMinYear = -262143
	chronoMaxYear = 262142
)

var (
	chronoMinDate = time.Date(chronoMinYear, time.January, 1, 0, 0, 0, 0, time.UTC)
	chronoMaxDate = time.Date(chronoMaxYear, time.December, 31, 23, 59, 59, 999999999, time.UTC)
)

// ParseDate parses a date cursor in the exact order of the reference
// (Aviso's watch and replay), which uses Rust's chrono:
//
//  1. Surrounding whitespace is trimmed; nothing left is an error.
//  2. '-' followed only by digits is rejected (negative Unix timestamps).
//  3. An optional '+' followed only by digits is a Unix timestamp. Leading
//     zeros do not count: up to 11 significant digits are seconds (so
//     "10000000000" is in 2286), 12 or more milliseconds (so
//     "946684800000" is 2000-01-01); "0" is seconds. Values past the
//     reference's range are errors.
//  4. RFC 3339 as chrono's DateTime::parse_from_rfc3339 reads it: exactly
//     "YYYY-MM-DD", 'T', 't' or ' ', "HH:MM:SS", an optional '.' and one
//     or more fraction digits (digits past nanoseconds are dropped), then
//     'Z', 'z' or ±HH:MM (up to ±23:59; '−' U+2212 also means minus).
//  5. "YYYY-MM-DD HH:MM:SS±HH:MM" with an optional fraction, as chrono's
//     strftime parser reads "%Y-%m-%d %H:%M:%S%.f%:z".
//  6. "YYYY-MM-DDTHH:MM:SS" or "YYYY-MM-DD HH:MM:SS" with an optional
//     fraction, taken as UTC ("%Y-%m-%dT%H:%M:%S%.f" and
//     "%Y-%m-%d %H:%M:%S%.f"; the 'T' must be uppercase here).
//  7. Anything else, a bare date included, is an error listing the
//     accepted forms.
//
// Steps 5 and 6 keep chrono's leniency, since clients of the reference may
// rely on it: whitespace is allowed before each number, the space between
// date and time may be absent or repeated, fields may have fewer digits
// ("2025-6-9 1:2:3"), the year may be signed ("+2025", "-0044"), and the
// offset of step 5 may be preceded by whitespace and written without its
// colon ("+0200").
//
// The result is in UTC. A leap second (":60", which chrono accepts in any
// minute) becomes the first instant of the next minute, which keeps the
// comparison "timestamp >= cursor" exactly as in the reference for all
// stored timestamps. Results may lie outside the years 0 to 9999 (up to
// the reference's limits); format them with time.Time.Format, not
// MarshalJSON, which rejects such years.
func ParseDate(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return time.Time{}, fmt.Errorf(`date %q is empty: send a date-time such as "2025-06-09T13:15:00Z" or a Unix timestamp, or omit the field`, s)
	}
	if len(t) > 1 && t[0] == '-' && cursorDigits(t[1:]) {
		return time.Time{}, fmt.Errorf("date %q is a negative Unix timestamp: only times from 1970-01-01T00:00:00Z on can be given as a number", t)
	}
	if digits := strings.TrimPrefix(t, "+"); cursorDigits(digits) {
		return parseEpochCursor(t, digits)
	}

	// Steps 4 to 6; the first form that fits syntactically but holds an
	// impossible value (day 31 in June, hour 24, ...) explains the error.
	var firstErr error
	for _, parse := range []func(string) (chronoParsed, bool){chronoRFC3339, chronoSpaceOffset, chronoNaiveT, chronoNaiveSpace} {
		dt, ok := parse(t)
		if !ok {
			continue
		}
		r, err := dt.utc()
		if err == nil {
			return r, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return time.Time{}, fmt.Errorf("date %q is not a valid date-time: %w", t, firstErr)
	}
	if isBareDate(t) {
		return time.Time{}, fmt.Errorf(`date %q has no time of day: add one, such as %q; accepted forms: %s`, t, t+"T00:00:00Z", dateCursorForms)
	}
	return time.Time{}, fmt.Errorf("date %q is not a recognised date-time: use %s", t, dateCursorForms)
}

// parseEpochCursor reads step 3: digits (after an optional '+') as seconds
// or milliseconds by their significant digit count.
func parseEpochCursor(t, digits string) (time.Time, error) {
	significant := len(strings.TrimLeft(digits, "0"))
	if significant == 0 {
		significant = 1
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q is out of range for a Unix timestamp in milliseconds (%d significant digits)", t, significant)
	}
	if significant <= 11 {
		return time.Unix(v, 0).UTC(), nil
	}
	sec, ms := v/1000, v%1000
	if sec > chronoMaxDate.Unix() {
		return time.Time{}, fmt.Errorf("date %q is out of range: as a Unix timestamp in milliseconds (12 or more digits) it is after year %d", t, chronoMaxYear)
	}
	return time.Unix(sec, ms*int64(time.Millisecond)).UTC(), nil
}

// isBareDate reports whether s looks like "YYYY-MM-DD" alone.
func isBareDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	return cursorDigits(s[:4]) && cursorDigits(s[5:7]) && cursorDigits(s[8:])
}

// chronoParsed holds the fields read by the date-time parsers before they are
// checked: chrono's Parsed.
type chronoParsed struct {
	year, month, day, hour, minute, second, nano int64
	// offset is in seconds east of UTC (0 for the naive forms).
	offset int64
}

// utc checks the fields as chrono does and returns the instant in UTC.
func (d chronoParsed) utc() (time.Time, error) {
	switch {
	case d.year < chronoMinYear || d.year > chronoMaxYear:
		return time.Time{}, fmt.Errorf("year %d is out of range (%d to %d)", d.year, chronoMinYear, chronoMaxYear)
	case d.month < 1 || d.month > 12:
		return time.Time{}, fmt.Errorf("month %d is out of range (1 to 12)", d.month)
	case d.day < 1 || d.day > chronoDaysIn(d.year, d.month):
		return time.Time{}, fmt.Errorf("day %d does not exist in %s %d", d.day, time.Month(d.month), d.year)
	case d.hour > 23:
		return time.Time{}, fmt.Errorf("hour %d is out of range (0 to 23)", d.hour)
	case d.minute > 59:
		return time.Time{}, fmt.Errorf("minute %d is out of range (0 to 59)", d.minute)
	case d.second > 60:
		return time.Time{}, fmt.Errorf("second %d is out of range (0 to 60)", d.second)
	case d.offset <= -86400 || d.offset >= 86400:
		return time.Time{}, fmt.Errorf("UTC offset of %d hours is out of range (up to ±23:59)", cursorAbs(d.offset)/3600)
	}
	var r time.Time
	if d.second == 60 {
		// A leap second sorts after every instant of second 59 and before
		// the next minute: use the start of the next minute.
		r = time.Date(int(d.year), time.Month(d.month), int(d.day), int(d.hour), int(d.minute), 59, 0, time.UTC).Add(time.Second)
	} else {
		r = time.Date(int(d.year), time.Month(d.month), int(d.day), int(d.hour), int(d.minute), int(d.second), int(d.nano), time.UTC)
	}
	r = r.Add(-time.Duration(d.offset) * time.Second)
	if r.Before(chronoMinDate) || r.After(chronoMaxDate) {
		return time.Time{}, fmt.Errorf("the instant is outside the supported range (years %d to %d in UTC)", chronoMinYear, chronoMaxYear)
	}
	return r, nil
}

func cursorAbs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// chronoDaysIn returns the number of days of a month in the proleptic Gregorian
// calendar (year 0 is a leap year, as in chrono).
func chronoDaysIn(year, month int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// chronoRFC3339 reads step 4, chrono's parse_from_rfc3339.
func chronoRFC3339(s string) (chronoParsed, bool) {
	var d chronoParsed
	ok := true
	num := func(dst *int64, min, max int) {
		if ok {
			s, *dst, ok = chronoNumber(s, min, max)
		}
	}
	lit := func(c byte) {
		if ok {
			ok = len(s) > 0 && s[0] == c
			if ok {
				s = s[1:]
			}
		}
	}
	num(&d.year, 4, 4)
	lit('-')
	num(&d.month, 2, 2)
	lit('-')
	num(&d.day, 2, 2)
	if !ok || len(s) == 0 || (s[0] != 'T' && s[0] != 't' && s[0] != ' ') {
		return d, false
	}
	s = s[1:]
	num(&d.hour, 2, 2)
	lit(':')
	num(&d.minute, 2, 2)
	lit(':')
	num(&d.second, 2, 2)
	if !ok {
		return d, false
	}
	if strings.HasPrefix(s, ".") {
		if s, d.nano, ok = chronoFraction(s[1:]); !ok {
			return d, false
		}
	}
	// chrono limits the offset to ±23:59 here; utc applies the same limit
	// (minutes never exceed 59) and explains it.
	s, d.offset, ok = chronoOffset(s, true, false)
	return d, ok && s == ""
}

// cursorItem is one element of a chrono strftime format used by steps 5 and 6.
type cursorItem uint8

const (
	itYear   cursorItem = iota // %Y
	itMonth                    // %m
	itDay                      // %d
	itHour                     // %H
	itMinute                   // %M
	itSecond                   // %S
	itFrac                     // %.f
	itOffset                   // %:z
	itDash                     // literal '-'
	itColon                    // literal ':'
	itT                        // literal 'T'
	itSpace                    // whitespace in the format
)

var (
	// fmtSpaceOffset is "%Y-%m-%d %H:%M:%S%.f%:z" (step 5; it also covers
	// the reference's "%Y-%m-%d %H:%M:%S%:z").
	fmtSpaceOffset = []cursorItem{itYear, itDash, itMonth, itDash, itDay, itSpace, itHour, itColon, itMinute, itColon, itSecond, itFrac, itOffset}
	// fmtNaiveT is "%Y-%m-%dT%H:%M:%S%.f" (step 6).
	fmtNaiveT = []cursorItem{itYear, itDash, itMonth, itDash, itDay, itT, itHour, itColon, itMinute, itColon, itSecond, itFrac}
	// fmtNaiveSpace is "%Y-%m-%d %H:%M:%S%.f" (step 6).
	fmtNaiveSpace = []cursorItem{itYear, itDash, itMonth, itDash, itDay, itSpace, itHour, itColon, itMinute, itColon, itSecond, itFrac}
)

func chronoSpaceOffset(s string) (chronoParsed, bool) { return chronoParseFormat(s, fmtSpaceOffset) }
func chronoNaiveT(s string) (chronoParsed, bool)      { return chronoParseFormat(s, fmtNaiveT) }
func chronoNaiveSpace(s string) (chronoParsed, bool)  { return chronoParseFormat(s, fmtNaiveSpace) }

// chronoParseFormat is chrono's strftime parser for the items used here: every
// number may be preceded by whitespace and has 1 to 2 digits (the year 1
// to 4, or any number after a sign), whitespace in the format matches any
// run of whitespace including none, the fraction is optional, and the
// offset may be preceded by whitespace.
func chronoParseFormat(s string, items []cursorItem) (chronoParsed, bool) {
	var d chronoParsed
	ok := true
	for _, it := range items {
		switch it {
		case itDash, itColon, itT:
			c := byte('-')
			if it == itColon {
				c = ':'
			} else if it == itT {
				c = 'T'
			}
			if len(s) == 0 || s[0] != c {
				return d, false
			}
			s = s[1:]
		case itSpace:
			s = chronoTrimStart(s)
		case itYear:
			s = chronoTrimStart(s)
			switch {
			case strings.HasPrefix(s, "-"):
				s, d.year, ok = chronoNumber(s[1:], 1, math.MaxInt)
				d.year = -d.year
			case strings.HasPrefix(s, "+"):
				s, d.year, ok = chronoNumber(s[1:], 1, math.MaxInt)
			default:
				s, d.year, ok = chronoNumber(s, 1, 4)
			}
			if d.year < math.MinInt32 || d.year > math.MaxInt32 {
				return d, false
			}
		case itMonth:
			s, d.month, ok = chronoNumber(chronoTrimStart(s), 1, 2)
		case itDay:
			s, d.day, ok = chronoNumber(chronoTrimStart(s), 1, 2)
		case itHour:
			s, d.hour, ok = chronoNumber(chronoTrimStart(s), 1, 2)
		case itMinute:
			s, d.minute, ok = chronoNumber(chronoTrimStart(s), 1, 2)
		case itSecond:
			s, d.second, ok = chronoNumber(chronoTrimStart(s), 1, 2)
		case itFrac:
			if strings.HasPrefix(s, ".") {
				s, d.nano, ok = chronoFraction(s[1:])
			}
		case itOffset:
			s, d.offset, ok = chronoOffset(chronoTrimStart(s), false, true)
		}
		if !ok {
			return d, false
		}
	}
	return d, s == ""
}

// chronoTrimStart drops leading Unicode whitespace, like Rust's trim_start.
func chronoTrimStart(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }

// chronoNumber reads min to max ASCII digits (stopping at the first
// non-digit once min are read), failing on overflow: chrono's
// scan::number.
func chronoNumber(s string, min, max int) (string, int64, bool) {
	if len(s) < min {
		return s, 0, false
	}
	var n int64
	i := 0
	for ; i < len(s) && i < max; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			if i < min {
				return s, 0, false
			}
			break
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return s, 0, false
		}
		n = n*10 + d
	}
	return s[i:], n, true
}

// chronoFraction reads the digits after a '.': one or more, the first nine
// giving nanoseconds and the rest dropped (chrono's scan::nanosecond).
func chronoFraction(s string) (string, int64, bool) {
	rest, v, ok := chronoNumber(s, 1, 9)
	if !ok {
		return s, 0, false
	}
	for i := len(s) - len(rest); i < 9; i++ {
		v *= 10
	}
	return strings.TrimLeft(rest, "0123456789"), v, true
}

// chronoOffset reads a UTC offset as chrono's scan::timezone_offset: 'Z' or
// 'z' when zulu is allowed, else a sign ('+', '-' or U+2212), two hour
// digits, a colon (exactly one when !lenient; any run of colons and
// whitespace, possibly none, when lenient) and two minute digits (00-59).
func chronoOffset(s string, zulu, lenient bool) (string, int64, bool) {
	if zulu && len(s) > 0 && (s[0] == 'Z' || s[0] == 'z') {
		return s[1:], 0, true
	}
	var neg bool
	switch {
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	case strings.HasPrefix(s, "-"):
		s, neg = s[1:], true
	case strings.HasPrefix(s, "\u2212"):
		s, neg = s[len("\u2212"):], true
	default:
		return s, 0, false
	}
	if len(s) < 2 || !cursorDigits(s[:2]) {
		return s, 0, false
	}
	hours := int64(s[0]-'0')*10 + int64(s[1]-'0')
	s = s[2:]
	if lenient {
		s = strings.TrimLeftFunc(s, func(r rune) bool { return r == ':' || unicode.IsSpace(r) })
	} else {
		if len(s) == 0 || s[0] != ':' {
			return s, 0, false
		}
		s = s[1:]
	}
	if len(s) < 2 || s[0] < '0' || s[0] > '5' || s[1] < '0' || s[1] > '9' {
		return s, 0, false
	}
	minutes := int64(s[0]-'0')*10 + int64(s[1]-'0')
	off := hours*3600 + minutes*60
	if neg {
		off = -off
	}
	return s[2:], off, true
}
