package notification

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/herald-gateway/herald/configs"
)

// Canonical formats of DateHandler.
const (
	dateCompactFormat = "%Y%m%d"
	dateISOFormat     = "%Y-%m-%d"
)

// DateHandler validates calendar dates and prints them in the configured
// canonical_format (Aviso's identifier handlers, docs/configuration.md). It
// reads the inputs the way Aviso does with chrono's NaiveDate::parse_from_str,
// trying "%Y-%m-%d", then "%Y%m%d", then "%Y-%j" (day of year): so besides
// YYYY-MM-DD, YYYYMMDD and YYYY-DDD it accepts what chrono accepts for those
// patterns, such as unpadded fields ("2025-7-6"), whitespace before a number,
// and a sign before the year. Unlike Aviso, years outside 0000-9999 are
// rejected, so that every canonical value has four year digits and reads back
// as itself.
type DateHandler struct {
	format string
}

// NewDateHandler builds a DateHandler. canonicalFormat is the optional
// canonical_format key: nil means "%Y%m%d"; otherwise it must be "%Y%m%d"
// or "%Y-%m-%d".
func NewDateHandler(canonicalFormat *string) (*DateHandler, error) {
	if canonicalFormat == nil {
		return &DateHandler{format: dateCompactFormat}, nil
	}
	switch f := *canonicalFormat; f {
	case dateCompactFormat, dateISOFormat:
		return &DateHandler{format: f}, nil
	default:
		return nil, fmt.Errorf("canonical_format %q is not supported; use %q (20250706) or %q (2025-07-06)", f, dateCompactFormat, dateISOFormat)
	}
}

// Type returns configs.HandlerDate, "DateHandler".
func (h *DateHandler) Type() string { return configs.HandlerDate }

// Describe returns {"canonical_format": format}.
func (h *DateHandler) Describe() map[string]any {
	return map[string]any{"canonical_format": h.format}
}

// dateFormats lists the accepted forms for error messages.
const dateFormats = "YYYY-MM-DD, YYYYMMDD or YYYY-DDD (day of year)"

// dateItem is one item of a chrono format: a numeric field or the literal
// "-".
type dateItem uint8

const (
	dateDash dateItem = iota
	dateYear
	dateMonth
	dateDay
	dateOrdinal
)

// The three input patterns, in the order Aviso tries them.
var datePatterns = [][]dateItem{
	{dateYear, dateDash, dateMonth, dateDash, dateDay}, // %Y-%m-%d
	{dateYear, dateMonth, dateDay},                     // %Y%m%d
	{dateYear, dateDash, dateOrdinal},                  // %Y-%j
}

// dateFields holds the numbers read by one pattern.
type dateFields struct {
	year, month, day, ordinal int64
	hasOrdinal                bool
}

// Canonical validates a date and prints it in the canonical format.
func (h *DateHandler) Canonical(value string) (string, error) {
	if value == "" {
		return "", fmt.Errorf("value is empty; a date is required (%s)", dateFormats)
	}
	var firstProblem error
	for _, pattern := range datePatterns {
		f, ok := dateScan(value, pattern)
		if !ok {
			continue
		}
		y, m, d, err := dateResolve(f)
		if err != nil {
			if firstProblem == nil {
				firstProblem = fmt.Errorf("invalid date %q: %v", value, err)
			}
			continue
		}
		if h.format == dateISOFormat {
			return fmt.Sprintf("%04d-%02d-%02d", y, m, d), nil
		}
		return fmt.Sprintf("%04d%02d%02d", y, m, d), nil
	}
	if firstProblem != nil {
		return "", firstProblem
	}
	return "", fmt.Errorf("invalid date %q: accepted forms are %s", value, dateFormats)
}

// dateScan reads value with one pattern the way chrono's parser does:
// before each number it skips whitespace; an unsigned number takes 1 to
// its width in digits (year 4, month 2, day 2, day of year 3); a year
// with a sign takes every digit that follows; the whole input must be
// used.
func dateScan(s string, pattern []dateItem) (dateFields, bool) {
	var f dateFields
	for _, item := range pattern {
		if item == dateDash {
			if !strings.HasPrefix(s, "-") {
				return f, false
			}
			s = s[1:]
			continue
		}
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		var n int64
		var ok bool
		switch item {
		case dateYear:
			switch {
			case strings.HasPrefix(s, "-"):
				n, s, ok = dateNumber(s[1:], len(s))
				n = -n
			case strings.HasPrefix(s, "+"):
				n, s, ok = dateNumber(s[1:], len(s))
			default:
				n, s, ok = dateNumber(s, 4)
			}
			f.year = n
		case dateMonth:
			n, s, ok = dateNumber(s, 2)
			f.month = n
		case dateDay:
			n, s, ok = dateNumber(s, 2)
			f.day = n
		case dateOrdinal:
			n, s, ok = dateNumber(s, 3)
			f.ordinal, f.hasOrdinal = n, true
		}
		if !ok {
			return f, false
		}
	}
	return f, s == ""
}

// dateNumber reads 1 to max ASCII digits from the start of s. A value too
// large for the year check is clamped: it is rejected later anyway.
func dateNumber(s string, max int) (int64, string, bool) {
	i := 0
	var n int64
	for i < len(s) && i < max && s[i] >= '0' && s[i] <= '9' {
		if n < 1e12 {
			n = n*10 + int64(s[i]-'0')
		}
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	return n, s[i:], true
}

// dateResolve turns the fields read by a pattern into a calendar date.
func dateResolve(f dateFields) (year, month, day int, err error) {
	if f.year < 0 || f.year > 9999 {
		return 0, 0, 0, fmt.Errorf("year %d is outside 0000-9999", f.year)
	}
	y := int(f.year)
	if f.hasOrdinal {
		days := 365
		if dateLeap(y) {
			days = 366
		}
		if f.ordinal < 1 || f.ordinal > int64(days) {
			return 0, 0, 0, fmt.Errorf("day of year %d is not between 1 and %d for %04d", f.ordinal, days, y)
		}
		d := int(f.ordinal)
		m := 1
		for d > dateMonthDays(y, m) {
			d -= dateMonthDays(y, m)
			m++
		}
		return y, m, d, nil
	}
	if f.month < 1 || f.month > 12 {
		return 0, 0, 0, fmt.Errorf("month %d is not between 1 and 12", f.month)
	}
	m := int(f.month)
	if n := dateMonthDays(y, m); f.day < 1 || f.day > int64(n) {
		return 0, 0, 0, fmt.Errorf("day %d is not between 1 and %d for %04d-%02d", f.day, n, y, m)
	}
	return y, m, int(f.day), nil
}

// dateLeap reports whether year is a leap year of the proleptic Gregorian
// calendar (year 0 is one).
func dateLeap(year int) bool {
	return year%4 == 0 && (year%100 != 0 || year%400 == 0)
}

// dateMonthDays returns the number of days of a month.
func dateMonthDays(year, month int) int {
	switch month {
	case 2:
		if dateLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

var _ Handler = (*DateHandler)(nil)
