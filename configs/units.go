package configs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxDurationSeconds is the longest config duration in seconds: a
// time.Duration, like JetStream's max_age, is signed 64-bit nanoseconds,
// so 9223372036s fits and 9223372037s does not (about 292 years).
const MaxDurationSeconds = math.MaxInt64 / int64(time.Second)

// ParseDuration parses a config duration: a whole number followed by a
// unit, s, m, h, d (24 h) or w (7 d), the unit in any case, e.g. "30m",
// "7d", "1W". Surrounding spaces are ignored (as in Aviso). The value must
// be greater than zero and at most MaxDurationSeconds, which is also
// JetStream's limit for a stream's max_age (aviso-server 0.13 refuses a
// longer retention_time the same way).
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty duration; write a number and a unit, e.g. 30m or 7d")
	}
	num, unit := splitNumber(t)
	if num == "" {
		return 0, fmt.Errorf("invalid duration %s: must start with a whole number, e.g. 30m or 7d", quote(s))
	}
	if unit == "" {
		return 0, fmt.Errorf("invalid duration %s: missing unit; use s, m, h, d or w", quote(s))
	}
	var per time.Duration
	switch strings.ToLower(unit) {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	case "d":
		per = 24 * time.Hour
	case "w":
		per = 7 * 24 * time.Hour
	default:
		return 0, fmt.Errorf("invalid duration %s: unknown unit %s; use s, m, h, d or w", quote(s), quote(unit))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/int64(per) {
		return 0, fmt.Errorf("invalid duration %s: too long: it exceeds signed 64-bit nanoseconds (at most %ds, about 292 years)", quote(s), MaxDurationSeconds)
	}
	if n == 0 {
		return 0, fmt.Errorf("invalid duration %s: must be greater than zero", quote(s))
	}
	return time.Duration(n) * per, nil
}

// ParseSize parses a config size in bytes: a whole number followed by a
// decimal unit K, M, G, T (10³ steps) or a binary unit Ki, Mi, Gi, Ti (2¹⁰
// steps), e.g. "500M", "2Gi". Units are case-sensitive and required, as in
// Aviso: "10m" and a bare "1024" are errors, so that a size is never
// silently read in the wrong unit. The value must be greater than zero and
// fit an int64.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty size; write a number and a unit, e.g. 500M or 2Gi")
	}
	num, unit := splitNumber(t)
	if num == "" {
		return 0, fmt.Errorf("invalid size %s: must start with a whole number, e.g. 500M or 2Gi", quote(s))
	}
	if unit == "" {
		return 0, fmt.Errorf("invalid size %s: missing unit; use K, Ki, M, Mi, G, Gi, T or Ti", quote(s))
	}
	var per int64
	switch unit {
	case "K":
		per = 1e3
	case "M":
		per = 1e6
	case "G":
		per = 1e9
	case "T":
		per = 1e12
	case "Ki":
		per = 1 << 10
	case "Mi":
		per = 1 << 20
	case "Gi":
		per = 1 << 30
	case "Ti":
		per = 1 << 40
	default:
		return 0, fmt.Errorf("invalid size %s: unknown unit %s; use K, Ki, M, Mi, G, Gi, T or Ti (case-sensitive)", quote(s), quote(unit))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/per {
		return 0, fmt.Errorf("invalid size %s: too large (at most 8 EiB)", quote(s))
	}
	if n == 0 {
		return 0, fmt.Errorf("invalid size %s: must be greater than zero", quote(s))
	}
	return n * per, nil
}

// splitNumber splits s after its leading ASCII digits.
func splitNumber(s string) (num, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}
