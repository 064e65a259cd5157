package notification

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSequence(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"0", 0},
		{"1", 1},
		{"123", 123},
		{"+5", 5},
		{"007", 7},
		{"+007", 7},
		{"+0", 0},
		{"18446744073709551615", math.MaxUint64},
		{"+18446744073709551615", math.MaxUint64},
		{"00000000000000000000000000001", 1},
	}
	for _, tt := range tests {
		got, err := ParseSequence(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSequence(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSequenceErrors(t *testing.T) {
	const (
		notNumber = `sequence %q is not a decimal number: use ASCII digits only, optionally after a '+', such as "1" or "123"`
		empty     = `sequence %q is empty: send a decimal sequence number such as "1" ("0" means from the beginning), or omit the field`
		minus     = `sequence %q has a minus sign: sequence numbers are never negative ("0" means from the beginning)`
		tooLarge  = `sequence %q is too large: the largest sequence number is 18446744073709551615`
	)
	tests := []struct {
		in, want string
	}{
		{"", fmt.Sprintf(empty, "")},
		{"   ", fmt.Sprintf(empty, "   ")},
		{"\t\n", fmt.Sprintf(empty, "\t\n")},
		{" 5", `sequence " 5" has surrounding whitespace: send only the digits, "5"`},
		{"5 ", `sequence "5 " has surrounding whitespace: send only the digits, "5"`},
		{"\t+12\n", `sequence "\t+12\n" has surrounding whitespace: send only the digits, "+12"`},
		{"mars@5", `sequence "mars@5" is a CloudEvent id (<event_type>@<sequence>): send only the sequence number, "5" (the cursor is inclusive: 6 resumes after that event)`},
		{"my@evt@+0042", `sequence "my@evt@+0042" is a CloudEvent id (<event_type>@<sequence>): send only the sequence number, "42" (the cursor is inclusive: 43 resumes after that event)`},
		{" mars@5 ", `sequence " mars@5 " is a CloudEvent id (<event_type>@<sequence>): send only the sequence number, "5" (the cursor is inclusive: 6 resumes after that event)`},
		{"x@18446744073709551615", `sequence "x@18446744073709551615" is a CloudEvent id (<event_type>@<sequence>): send only the sequence number, "18446744073709551615" (the cursor is inclusive: the next one resumes after that event)`},
		{"-5", fmt.Sprintf(minus, "-5")},
		{"-0", fmt.Sprintf(minus, "-0")},
		{"18446744073709551616", fmt.Sprintf(tooLarge, "18446744073709551616")},
		{"+99999999999999999999999", fmt.Sprintf(tooLarge, "+99999999999999999999999")},
		{"+", fmt.Sprintf(notNumber, "+")},
		{"-", fmt.Sprintf(notNumber, "-")},
		{"++5", fmt.Sprintf(notNumber, "++5")},
		{"+-5", fmt.Sprintf(notNumber, "+-5")},
		{"1 2", fmt.Sprintf(notNumber, "1 2")},
		{"5.0", fmt.Sprintf(notNumber, "5.0")},
		{"1e3", fmt.Sprintf(notNumber, "1e3")},
		{"0x10", fmt.Sprintf(notNumber, "0x10")},
		{"1_000", fmt.Sprintf(notNumber, "1_000")},
		{"１２", fmt.Sprintf(notNumber, "１２")},
		{"a@b", fmt.Sprintf(notNumber, "a@b")},
		{"5@", fmt.Sprintf(notNumber, "5@")},
		{"x@-1", fmt.Sprintf(notNumber, "x@-1")},
		{"five", fmt.Sprintf(notNumber, "five")},
	}
	for _, tt := range tests {
		got, err := ParseSequence(tt.in)
		if err == nil {
			t.Errorf("ParseSequence(%q) = %d, nil; want error", tt.in, got)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("ParseSequence(%q) error\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func cursorUTC(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

func TestParseDate(t *testing.T) {
	const ms = int(time.Millisecond)
	tests := []struct {
		in   string
		want time.Time
	}{
		// Step 3: Unix timestamps, classified by significant digits.
		{"1740509903", cursorUTC(2025, 2, 25, 18, 58, 23, 0)},
		{"+1740509903", cursorUTC(2025, 2, 25, 18, 58, 23, 0)},
		{"1740509903710", cursorUTC(2025, 2, 25, 18, 58, 23, 710*ms)},
		{"10000000000", cursorUTC(2286, 11, 20, 17, 46, 40, 0)},
		{"99999999999", cursorUTC(5138, 11, 16, 9, 46, 39, 0)},
		{"946684800000", cursorUTC(2000, 1, 1, 0, 0, 0, 0)},
		{"1000000000000", cursorUTC(2001, 9, 9, 1, 46, 40, 0)},
		{"00000000001740509903", cursorUTC(2025, 2, 25, 18, 58, 23, 0)},
		{"0000946684800000", cursorUTC(2000, 1, 1, 0, 0, 0, 0)},
		{"0", cursorUTC(1970, 1, 1, 0, 0, 0, 0)},
		{"000", cursorUTC(1970, 1, 1, 0, 0, 0, 0)},
		{"+0", cursorUTC(1970, 1, 1, 0, 0, 0, 0)},
		{"1", cursorUTC(1970, 1, 1, 0, 0, 1, 0)},
		{"100000000000", cursorUTC(1973, 3, 3, 9, 46, 40, 0)},
		{"8210266876799999", cursorUTC(262142, 12, 31, 23, 59, 59, 999*ms)},
		{"  1740509903\t\n", cursorUTC(2025, 2, 25, 18, 58, 23, 0)},

		// Step 4: RFC 3339 ('T', 't' or ' '; 'Z' or 'z').
		{"2025-06-09T13:15:00Z", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09t13:15:00z", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09 13:15:00Z", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09 13:15:00z", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2026-02-25T18:58:23Z", cursorUTC(2026, 2, 25, 18, 58, 23, 0)},
		{"2025-06-09T13:15:00+02:00", cursorUTC(2025, 6, 9, 11, 15, 0, 0)},
		{"2025-06-09T13:15:00-02:30", cursorUTC(2025, 6, 9, 15, 45, 0, 0)},
		{"2025-06-09T13:15:00\u221202:00", cursorUTC(2025, 6, 9, 15, 15, 0, 0)},
		{"2025-06-09T13:15:00+00:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09T13:15:00-00:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09T13:15:00+23:59", cursorUTC(2025, 6, 8, 13, 16, 0, 0)},
		{"2025-06-09T00:30:00+01:00", cursorUTC(2025, 6, 8, 23, 30, 0, 0)},
		{"2025-06-09T13:15:00.123Z", cursorUTC(2025, 6, 9, 13, 15, 0, 123*ms)},
		{"2025-06-09T13:15:00.5+01:00", cursorUTC(2025, 6, 9, 12, 15, 0, 500*ms)},
		{"2025-06-09T13:15:00.123456789Z", cursorUTC(2025, 6, 9, 13, 15, 0, 123456789)},
		{"2025-06-09T13:15:00.1234567899999Z", cursorUTC(2025, 6, 9, 13, 15, 0, 123456789)},
		{"2025-06-09T13:15:00.000000001Z", cursorUTC(2025, 6, 9, 13, 15, 0, 1)},
		{"2024-02-29T00:00:00Z", cursorUTC(2024, 2, 29, 0, 0, 0, 0)},
		{"2000-02-29T00:00:00Z", cursorUTC(2000, 2, 29, 0, 0, 0, 0)},
		{"0000-01-01T00:00:00Z", cursorUTC(0, 1, 1, 0, 0, 0, 0)},
		{"0000-01-01T00:00:00+01:00", cursorUTC(-1, 12, 31, 23, 0, 0, 0)},
		{"9999-12-31T23:59:59Z", cursorUTC(9999, 12, 31, 23, 59, 59, 0)},
		{"\u00a0 2025-06-09T13:15:00Z\u3000\n", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		// Leap seconds become the start of the next minute.
		{"2016-12-31T23:59:60Z", cursorUTC(2017, 1, 1, 0, 0, 0, 0)},
		{"2016-12-31T23:59:60.5Z", cursorUTC(2017, 1, 1, 0, 0, 0, 0)},
		{"2025-06-09T13:15:60+02:00", cursorUTC(2025, 6, 9, 11, 16, 0, 0)},

		// Step 5: space, offset (chrono's lenient strftime parser).
		{"2025-06-09 13:15:00+00:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09 13:15:00+0200", cursorUTC(2025, 6, 9, 11, 15, 0, 0)},
		{"2025-06-09 13:15:00 +02:00", cursorUTC(2025, 6, 9, 11, 15, 0, 0)},
		{"2025-06-09 13:15:00.250 -01:00", cursorUTC(2025, 6, 9, 14, 15, 0, 250*ms)},
		{"2025-06-09 13:15:00+02 :30", cursorUTC(2025, 6, 9, 10, 45, 0, 0)},
		{"2025-06-09 13:15:00\u22120100", cursorUTC(2025, 6, 9, 14, 15, 0, 0)},
		{"2025-6-9 1:2:3+01:00", cursorUTC(2025, 6, 9, 0, 2, 3, 0)},

		// Step 6: naive, taken as UTC.
		{"2025-06-09 13:15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09T13:15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09 13:15:00.123", cursorUTC(2025, 6, 9, 13, 15, 0, 123*ms)},
		{"2025-06-09T13:15:00.456", cursorUTC(2025, 6, 9, 13, 15, 0, 456*ms)},
		{"2025-06-09T13:15:00.1234567891", cursorUTC(2025, 6, 9, 13, 15, 0, 123456789)},
		{"2025-6-9 1:2:3", cursorUTC(2025, 6, 9, 1, 2, 3, 0)},
		{"2025-06-0913:15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09   13:15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025- 06-09 13: 15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"2025-06-09T 13:15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"+2025-06-09 13:15:00", cursorUTC(2025, 6, 9, 13, 15, 0, 0)},
		{"-0044-03-15 12:00:00", cursorUTC(-44, 3, 15, 12, 0, 0, 0)},
		{"25-06-09 13:15:00", cursorUTC(25, 6, 9, 13, 15, 0, 0)},
		{"+12345-01-01T00:00:00", cursorUTC(12345, 1, 1, 0, 0, 0, 0)},
		{"2016-12-31 23:59:60", cursorUTC(2017, 1, 1, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		got, err := ParseDate(tt.in)
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseDate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDateErrors(t *testing.T) {
	generic := func(s string) string {
		return fmt.Sprintf("date %q is not a recognised date-time: use %s", s, dateCursorForms)
	}
	invalid := func(s, why string) string {
		return fmt.Sprintf("date %q is not a valid date-time: %s", s, why)
	}
	tests := []struct {
		in, want string
	}{
		{"", `date "" is empty: send a date-time such as "2025-06-09T13:15:00Z" or a Unix timestamp, or omit the field`},
		{" \t", `date " \t" is empty: send a date-time such as "2025-06-09T13:15:00Z" or a Unix timestamp, or omit the field`},
		{"-1", `date "-1" is a negative Unix timestamp: only times from 1970-01-01T00:00:00Z on can be given as a number`},
		{" -0 ", `date "-0" is a negative Unix timestamp: only times from 1970-01-01T00:00:00Z on can be given as a number`},
		{"8210266876800000", `date "8210266876800000" is out of range: as a Unix timestamp in milliseconds (12 or more digits) it is after year 262142`},
		{"9223372036854775807", `date "9223372036854775807" is out of range: as a Unix timestamp in milliseconds (12 or more digits) it is after year 262142`},
		{"9223372036854775808", `date "9223372036854775808" is out of range for a Unix timestamp in milliseconds (19 significant digits)`},
		{"000099999999999999999999", `date "000099999999999999999999" is out of range for a Unix timestamp in milliseconds (20 significant digits)`},
		{"2025-06-09", `date "2025-06-09" has no time of day: add one, such as "2025-06-09T00:00:00Z"; accepted forms: ` + dateCursorForms},
		{"not-a-date", generic("not-a-date")},
		{"-", generic("-")},
		{"+", generic("+")},
		{"++1", generic("++1")},
		{"+-1", generic("+-1")},
		{"1e9", generic("1e9")},
		{"1_000", generic("1_000")},
		{"１２３", generic("１２３")},
		{"2025-06-09T13:15", generic("2025-06-09T13:15")},
		{"2025-06-09 13:15", generic("2025-06-09 13:15")},
		{"2025-06-09T13:15:00.Z", generic("2025-06-09T13:15:00.Z")},
		{"2025-06-09T13:15:00ZZ", generic("2025-06-09T13:15:00ZZ")},
		{"2025-06-09T13:15:00 Z", generic("2025-06-09T13:15:00 Z")},
		{"2025-06-09T13:15:00+0200", generic("2025-06-09T13:15:00+0200")},
		{"2025-06-09T13:15:00+02", generic("2025-06-09T13:15:00+02")},
		{"2025-06-09 13:15:00 Z", generic("2025-06-09 13:15:00 Z")},
		{"2025-06-09 13:15:00+02", generic("2025-06-09 13:15:00+02")},
		{"2025-06-09 13:15:00+02:60", generic("2025-06-09 13:15:00+02:60")},
		{"2025-06-09 13:15:00 UTC", generic("2025-06-09 13:15:00 UTC")},
		{"2025-06-09t13:15:00", generic("2025-06-09t13:15:00")},
		{"2025-06-09T13:15:00.", generic("2025-06-09T13:15:00.")},
		{"20250609T131500Z", generic("20250609T131500Z")},
		{"2025/06/09 13:15:00", generic("2025/06/09 13:15:00")},
		{"Mon, 09 Jun 2025 13:15:00 +0000", generic("Mon, 09 Jun 2025 13:15:00 +0000")},
		{"2025-02-29T00:00:00Z", invalid("2025-02-29T00:00:00Z", "day 29 does not exist in February 2025")},
		{"1900-02-29 00:00:00", invalid("1900-02-29 00:00:00", "day 29 does not exist in February 1900")},
		{"2025-04-31T00:00:00Z", invalid("2025-04-31T00:00:00Z", "day 31 does not exist in April 2025")},
		{"2025-06-00T00:00:00Z", invalid("2025-06-00T00:00:00Z", "day 0 does not exist in June 2025")},
		{"2025-13-01T00:00:00Z", invalid("2025-13-01T00:00:00Z", "month 13 is out of range (1 to 12)")},
		{"2025-00-01 00:00:00", invalid("2025-00-01 00:00:00", "month 0 is out of range (1 to 12)")},
		{"2025-06-09T24:00:00Z", invalid("2025-06-09T24:00:00Z", "hour 24 is out of range (0 to 23)")},
		{"2025-06-09T13:60:00Z", invalid("2025-06-09T13:60:00Z", "minute 60 is out of range (0 to 59)")},
		{"2025-06-09T13:15:61Z", invalid("2025-06-09T13:15:61Z", "second 61 is out of range (0 to 60)")},
		{"2025-06-09T13:15:00+24:00", invalid("2025-06-09T13:15:00+24:00", "UTC offset of 24 hours is out of range (up to ±23:59)")},
		{"2025-06-09 13:15:00-99:59", invalid("2025-06-09 13:15:00-99:59", "UTC offset of 99 hours is out of range (up to ±23:59)")},
		{"+262143-01-01 00:00:00", invalid("+262143-01-01 00:00:00", "year 262143 is out of range (-262143 to 262142)")},
		{"262142-12-31 23:59:59-01:00", generic("262142-12-31 23:59:59-01:00")},
		{"+262142-12-31 23:59:59-01:00", invalid("+262142-12-31 23:59:59-01:00", "the instant is outside the supported range (years -262143 to 262142 in UTC)")},
		{"-262143-01-01 00:00:00+01:00", invalid("-262143-01-01 00:00:00+01:00", "the instant is outside the supported range (years -262143 to 262142 in UTC)")},
		{"+9999999999-01-01 00:00:00", generic("+9999999999-01-01 00:00:00")},
	}
	for _, tt := range tests {
		got, err := ParseDate(tt.in)
		if err == nil {
			t.Errorf("ParseDate(%q) = %v, nil; want error", tt.in, got)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("ParseDate(%q) error\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func FuzzParseSequence(f *testing.F) {
	for _, s := range []string{
		"0", "1", "+5", "007", "18446744073709551615", "18446744073709551616", "", " 5", "-1",
		"mars@5", "x@18446744073709551615", "+", "1e3", "１",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSequence(s)
		if err != nil {
			if n != 0 || err.Error() == "" {
				t.Fatalf("ParseSequence(%q) = %d, %q", s, n, err)
			}
			return
		}
		// Accepted values are exactly Rust's u64 syntax.
		digits := strings.TrimPrefix(s, "+")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			t.Fatalf("ParseSequence(%q) accepted a non-number: %d", s, n)
		}
		if strings.TrimLeft(digits, "0") != strings.TrimLeft(fmt.Sprint(n), "0") {
			t.Fatalf("ParseSequence(%q) = %d", s, n)
		}
	})
}

var cursorStrictRFC3339 = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`)

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{
		"1740509903", "+1740509903", "1740509903710", "10000000000", "946684800000",
		"00000000001740509903", "9223372036854775808", "-1", "", "2025-06-09",
		"2025-06-09T13:15:00Z", "2025-06-09t13:15:00z", "2025-06-09T13:15:00.123456789123+23:59",
		"2025-06-09 13:15:00+0200", "2025-06-09 13:15:00.5 \u221201:00", "2025-6-9 1:2:3",
		"+12345-01-01T00:00:00", "-262143-01-01 00:00:00", "2016-12-31T23:59:60Z", "2025-02-29T00:00:00Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDate(s)
		trimmed := strings.TrimSpace(s)
		// Cross-check with Go's RFC 3339 parser on strict RFC 3339 input
		// (Go is lenient elsewhere: one-digit hours, ',' fractions).
		ref, refErr := time.Parse(time.RFC3339Nano, trimmed)
		goAccepts := refErr == nil && cursorStrictRFC3339.MatchString(trimmed)
		if err != nil {
			if !got.IsZero() || err.Error() == "" {
				t.Fatalf("ParseDate(%q) = %v, %q", s, got, err)
			}
			if goAccepts {
				t.Fatalf("ParseDate(%q) failed (%v), time.Parse = %v", s, err, ref)
			}
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseDate(%q) = %v is not UTC", s, got)
		}
		if got.Before(chronoMinDate) || got.After(chronoMaxDate) {
			t.Fatalf("ParseDate(%q) = %v is out of range", s, got)
		}
		if goAccepts && !got.Equal(ref) {
			t.Fatalf("ParseDate(%q) = %v, time.Parse = %v", s, got, ref)
		}
		if v, err := strconv.ParseInt(strings.TrimPrefix(trimmed, "+"), 10, 64); err == nil && v < 1e11 && !got.Equal(time.Unix(v, 0)) {
			t.Fatalf("ParseDate(%q) = %v, want Unix seconds %d", s, got, v)
		}
	})
}
