package notification

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/herald-gateway/herald/configs"
)

// IntHandler accepts signed 64-bit integers, optionally inside an inclusive
// range, and canonicalises them to plain decimal (Aviso's identifier handlers,
// docs/configuration.md): "007" → "7", "+3" → "3", "-0" → "0". It parses with
// Rust's i64 rules: an optional sign and ASCII digits, nothing else.
type IntHandler struct {
	hasRange bool
	min, max int64
}

// NewIntHandler builds an IntHandler. rng is the optional range key: nil
// for no range, otherwise exactly two scalar texts [min, max] that parse
// as i64 with min <= max.
func NewIntHandler(rng []string) (*IntHandler, error) {
	if rng == nil {
		return &IntHandler{}, nil
	}
	if len(rng) != 2 {
		return nil, fmt.Errorf("range must be [min, max] with exactly two integers, got %d values", len(rng))
	}
	var bounds [2]int64
	for i, name := range []string{"min", "max"} {
		v, err := rustParseI64(rng[i])
		if err != nil {
			return nil, fmt.Errorf("range %s %q is not a 64-bit integer: %v", name, rng[i], err)
		}
		bounds[i] = v
	}
	if bounds[0] > bounds[1] {
		return nil, fmt.Errorf("range min %d is greater than max %d; write the range as [min, max]", bounds[0], bounds[1])
	}
	return &IntHandler{hasRange: true, min: bounds[0], max: bounds[1]}, nil
}

// Type returns configs.HandlerInt, "IntHandler".
func (h *IntHandler) Type() string { return configs.HandlerInt }

// Canonical parses value as an i64, checks the range and prints it in
// decimal.
func (h *IntHandler) Canonical(value string) (string, error) {
	v, err := rustParseI64(value)
	if err != nil {
		if value == "" {
			return "", errors.New("value is empty; an integer is required")
		}
		return "", fmt.Errorf("value %s is not a valid integer: %v", coerceSnippet(value), err)
	}
	if h.hasRange && (v < h.min || v > h.max) {
		return "", fmt.Errorf("value %d is outside the allowed range [%d, %d]", v, h.min, h.max)
	}
	return strconv.FormatInt(v, 10), nil
}

// Describe returns {"range": [min, max]}, with nil when unset.
func (h *IntHandler) Describe() map[string]any {
	if !h.hasRange {
		return map[string]any{"range": nil}
	}
	return map[string]any{"range": []int64{h.min, h.max}}
}

// Constraint compiles one of eq, in, gt, gte, lt, lte and between. Every
// operand must be a JSON integer within i64 and within the range.
func (h *IntHandler) Constraint(op string, operand json.RawMessage) (Constraint, error) {
	return compileOrdered(op, operand, "an "+configs.HandlerInt, constraintIntOperand,
		func(v int64) string { return strconv.FormatInt(v, 10) }, h.hasRange, h.min, h.max, intToken)
}

// intToken reads a canonical IntHandler token as an i64.
func intToken(s string) (int64, bool) {
	x, err := rustParseI64(s)
	return x, err == nil
}

// Errors of rustParseI64 and rustParseU32, worded like Rust's
// ParseIntError.
var (
	errRustIntEmpty    = errors.New("cannot parse integer from empty string")
	errRustIntInvalid  = errors.New("invalid digit found in string (only an optional sign and ASCII digits are allowed)")
	errRustIntOverflow = errors.New("number too large to fit in target type")
	errRustIntNegative = errors.New("number too small to fit in target type")
)

// rustParseI64 parses s as Rust's i64::from_str does: an optional "+" or
// "-" followed by at least one ASCII digit, and nothing else.
func rustParseI64(s string) (int64, error) {
	if s == "" {
		return 0, errRustIntEmpty
	}
	neg := false
	digits := s
	switch s[0] {
	case '+':
		digits = s[1:]
	case '-':
		neg = true
		digits = s[1:]
	}
	if digits == "" {
		return 0, errRustIntInvalid
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit = 1 << 63
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, errRustIntInvalid
		}
		d := uint64(c - '0')
		if n > (limit-d)/10 {
			if neg {
				return 0, errRustIntNegative
			}
			return 0, errRustIntOverflow
		}
		n = n*10 + d
	}
	if neg {
		return -int64(n), nil // n == 1<<63 wraps to MinInt64, as intended
	}
	return int64(n), nil
}

var (
	_ Handler     = (*IntHandler)(nil)
	_ Constrainer = (*IntHandler)(nil)
)
