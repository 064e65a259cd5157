package values

// DATETIME values are int64 nanoseconds since the Unix epoch, UTC: the
// Arrow Timestamp(ns, UTC) range 1677-09-21T00:12:43.145224192Z …
// 2262-04-11T23:47:16.854775807Z.

// ParseRFC3339 parses strict RFC 3339 text into UTC nanoseconds:
// YYYY-MM-DDTHH:MM:SS, an optional '.' with 1–9 digits, then Z or ±HH:MM
// ('t' and 'z' accepted as RFC 3339 allows). It refuses what Go's
// time.Parse lets through: a ',' fraction, offsets of 24 hours or more,
// hour 24, impossible dates and more than nine fraction digits. maxFrac
// limits the fraction digits (9 for DATETIME, 6 for syslog).
func ParseRFC3339(b []byte, maxFrac int) (int64, Code) {
	if len(b) < 20 {
		return 0, CodeInvalidDatetime
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for j := i; j < i+n; j++ {
			c := b[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || b[4] != '-' || b[7] != '-' ||
		(b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return 0, CodeInvalidDatetime
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, CodeInvalidDatetime
	}
	i := 19
	nanos := int64(0)
	if b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		n := i - start
		if n == 0 || n > maxFrac {
			return 0, CodeInvalidDatetime
		}
		for j := start; j < start+9; j++ {
			nanos *= 10
			if j < i {
				nanos += int64(b[j] - '0')
			}
		}
	}
	if i >= len(b) {
		return 0, CodeInvalidDatetime
	}
	offset := int64(0)
	switch b[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(b)-i != 6 || b[i+3] != ':' {
			return 0, CodeInvalidDatetime
		}
		oh, ok1 := num(i+1, 2)
		om, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, CodeInvalidDatetime
		}
		offset = int64(oh*3600 + om*60)
		if b[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return 0, CodeInvalidDatetime
	}
	if i != len(b) {
		return 0, CodeInvalidDatetime
	}
	secs := daysFromCivil(int64(year), month, day)*86400 + int64(hour*3600+minute*60+sec) - offset
	return toNanos(secs, nanos)
}

const (
	maxSec   = 9223372036
	maxNanos = 854775807
	minSec   = -9223372037
	minNanos = 145224192
)

func toNanos(secs, nanos int64) (int64, Code) {
	if secs > maxSec || (secs == maxSec && nanos > maxNanos) || secs < minSec || (secs == minSec && nanos < minNanos) {
		return 0, CodeOutOfRange
	}
	return secs*1e9 + nanos, ""
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// AppendRFC3339 appends ns as RFC 3339 UTC text with Z. fracDigits is the
// precision (9 for DATETIME, 6 for syslog): the fraction is truncated to it
// and trailing zero digits are dropped, with no fraction at all when it is
// zero.
func AppendRFC3339(dst []byte, ns int64, fracDigits int) []byte {
	secs := ns / 1e9
	nanos := ns % 1e9
	if nanos < 0 {
		nanos += 1e9
		secs--
	}
	days := secs / 86400
	rem := secs % 86400
	if rem < 0 {
		rem += 86400
		days--
	}
	y, m, d := civilFromDays(days)
	dst = append4(dst, int(y))
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	dst = append2(dst, d)
	dst = append(dst, 'T')
	dst = append2(dst, int(rem/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(rem/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(rem%60))
	for k := 9; k > fracDigits; k-- {
		nanos /= 10
	}
	if nanos != 0 {
		var buf [9]byte
		n := fracDigits
		for j := n - 1; j >= 0; j-- {
			buf[j] = byte('0' + nanos%10)
			nanos /= 10
		}
		for n > 0 && buf[n-1] == '0' {
			n--
		}
		dst = append(dst, '.')
		dst = append(dst, buf[:n]...)
	}
	return append(dst, 'Z')
}

func append2(dst []byte, v int) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }

func append4(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
