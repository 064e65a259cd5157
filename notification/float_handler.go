package notification

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/herald-gateway/herald/configs"
)

// FloatHandler accepts finite 64-bit floats, optionally inside an inclusive
// range (Aviso's identifier handlers, docs/configuration.md). It parses with
// Rust's f64::from_str rules and prints the shortest decimal that reads back
// as the same float, never in exponent notation and without a trailing ".0"
// (Rust's Display): "42.50" → "42.5", "1e1" → "10", "1e-7" → "0.0000001",
// "-0.0" → "-0". This is strconv.FormatFloat(v, 'f', -1, 64) except where two
// shortest decimals are equally close to the float: Go then picks the even
// last digit and Rust the larger magnitude (755384079777038.25 prints as
// "755384079777038.3", Go would print "…038.2"); herald prints Rust's.
type FloatHandler struct {
	hasRange bool
	min, max float64
}

// NewFloatHandler builds a FloatHandler. rng is the optional range key:
// nil for no range, otherwise exactly two scalar texts [min, max] that
// parse as finite floats with min <= max.
func NewFloatHandler(rng []string) (*FloatHandler, error) {
	if rng == nil {
		return &FloatHandler{}, nil
	}
	if len(rng) != 2 {
		return nil, fmt.Errorf("range must be [min, max] with exactly two numbers, got %d values", len(rng))
	}
	var bounds [2]float64
	for i, name := range []string{"min", "max"} {
		v, err := rustParseF64(rng[i])
		if err != nil {
			return nil, fmt.Errorf("range %s %q is not a number: %v", name, rng[i], err)
		}
		if !floatIsFinite(v) {
			return nil, fmt.Errorf("range %s %q is not finite; both bounds must be finite numbers", name, rng[i])
		}
		bounds[i] = v
	}
	if bounds[0] > bounds[1] {
		return nil, fmt.Errorf("range min %s is greater than max %s; write the range as [min, max]",
			constraintFloatText(bounds[0]), constraintFloatText(bounds[1]))
	}
	return &FloatHandler{hasRange: true, min: bounds[0], max: bounds[1]}, nil
}

// Type returns configs.HandlerFloat, "FloatHandler".
func (h *FloatHandler) Type() string { return configs.HandlerFloat }

// Canonical parses value as a finite f64, checks the range and prints it.
func (h *FloatHandler) Canonical(value string) (string, error) {
	v, err := rustParseF64(value)
	if err != nil {
		if value == "" {
			return "", errors.New("value is empty; a number is required")
		}
		return "", fmt.Errorf("value %s is not a valid number: %v", coerceSnippet(value), err)
	}
	if !floatIsFinite(v) {
		return "", fmt.Errorf("value %s is not finite; NaN and infinite values are rejected", coerceSnippet(value))
	}
	if h.hasRange && (v < h.min || v > h.max) {
		return "", fmt.Errorf("value %s is outside the allowed range [%s, %s]",
			constraintFloatText(v), constraintFloatText(h.min), constraintFloatText(h.max))
	}
	return rustFloatDisplay(v), nil
}

// Describe returns {"range": [min, max]}, with nil when unset. The bounds
// are JSON numbers printed as Aviso prints an f64 (0 → 0.0).
func (h *FloatHandler) Describe() map[string]any {
	if !h.hasRange {
		return map[string]any{"range": nil}
	}
	return map[string]any{"range": []json.Number{json.Number(ryuFormat(h.min)), json.Number(ryuFormat(h.max))}}
}

// Constraint compiles one of eq, in, gt, gte, lt, lte and between. Every
// operand must be a finite JSON number within the range; eq and in
// compare exactly.
func (h *FloatHandler) Constraint(op string, operand json.RawMessage) (Constraint, error) {
	return compileOrdered(op, operand, "a "+configs.HandlerFloat, constraintFloatOperand,
		constraintFloatText, h.hasRange, h.min, h.max, floatToken)
}

// floatToken reads a canonical FloatHandler token as an f64; a token that
// is not finite does not count.
func floatToken(s string) (float64, bool) {
	x, err := rustParseF64(s)
	return x, err == nil && floatIsFinite(x)
}

// rustFloatDisplay prints an f64 as Rust's Display does: the shortest
// digits that read back as f, the closest of them to f with ties going
// away from zero, in positional notation without exponent and without a
// trailing ".0"; non-finite values print as "NaN", "inf" and "-inf".
func rustFloatDisplay(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	neg := f < 0
	a := math.Abs(f)
	digits, exp := floatSplitE(strconv.FormatFloat(a, 'e', -1, 64))
	n := len(digits)
	// With one more digit, a tie shows as an exact trailing 5.
	t := strconv.FormatFloat(a, 'e', n, 64)
	if tDigits, tExp := floatSplitE(t); tDigits[n] == '5' && floatExactly(t, a) {
		digits, exp = floatRoundUp(tDigits[:n], tExp)
	}
	var b []byte
	if neg {
		b = append(b, '-')
	}
	switch {
	case exp >= n-1:
		b = append(b, digits...)
		for i := n - 1; i < exp; i++ {
			b = append(b, '0')
		}
	case exp >= 0:
		b = append(b, digits[:exp+1]...)
		b = append(b, '.')
		b = append(b, digits[exp+1:]...)
	default:
		b = append(b, '0', '.')
		for i := -1; i > exp; i-- {
			b = append(b, '0')
		}
		b = append(b, digits...)
	}
	return string(b)
}

// floatSplitE splits FormatFloat's 'e' output "d.ddde±x" into its digits
// and decimal exponent.
func floatSplitE(s string) (string, int) {
	i := strings.IndexByte(s, 'e')
	exp, err := strconv.Atoi(s[i+1:])
	if err != nil {
		panic("notification: unexpected FormatFloat output " + s)
	}
	return strings.Replace(s[:i], ".", "", 1), exp
}

// floatExactly reports whether the decimal text equals f exactly.
func floatExactly(text string, f float64) bool {
	r, ok := new(big.Rat).SetString(text)
	return ok && r.Cmp(new(big.Rat).SetFloat64(f)) == 0
}

// floatRoundUp adds one unit in the last place to a digit string, carrying
// into a new leading digit (and exponent) when all digits are 9.
func floatRoundUp(digits string, exp int) (string, int) {
	b := []byte(digits)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return strings.TrimRight(string(b), "0"), exp
		}
		b[i] = '0'
	}
	return "1", exp + 1
}

// floatIsFinite reports whether f is neither NaN nor infinite.
func floatIsFinite(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// Errors of rustParseF64, worded like Rust's ParseFloatError.
var (
	errRustFloatEmpty   = errors.New("cannot parse float from empty string")
	errRustFloatInvalid = errors.New("invalid float literal (accepted: an optional sign, digits with an optional decimal point and exponent, inf, infinity or nan)")
)

// rustParseF64 parses s as Rust's f64::from_str does: an optional sign,
// then either a decimal (digits with at most one ".", at least one digit,
// then optionally "e" or "E", an optional sign and at least one digit) or,
// ignoring ASCII case, "inf", "infinity" or "nan". No whitespace,
// underscores, hex or other forms. Out-of-range decimals give ±Inf or ±0
// as in Rust; the decimal is correctly rounded.
func rustParseF64(s string) (float64, error) {
	if s == "" {
		return 0, errRustFloatEmpty
	}
	neg := false
	rest := s
	switch s[0] {
	case '+':
		rest = s[1:]
	case '-':
		neg = true
		rest = s[1:]
	}
	if rest == "" {
		return 0, errRustFloatInvalid
	}
	var f float64
	switch {
	case rustDecimalSyntax(rest):
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, errRustFloatInvalid
		}
		f = v
	case rustASCIIFold(rest, "inf") || rustASCIIFold(rest, "infinity"):
		f = math.Inf(1)
	case rustASCIIFold(rest, "nan"):
		f = math.NaN()
	default:
		return 0, errRustFloatInvalid
	}
	if neg {
		f = -f
	}
	return f, nil
}

// rustDecimalSyntax reports whether s (without its sign) is a decimal
// number of Rust's float grammar.
func rustDecimalSyntax(s string) bool {
	i, digits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// rustASCIIFold reports whether s equals the lowercase ASCII word, ignoring
// ASCII case only.
func rustASCIIFold(s, word string) bool {
	if len(s) != len(word) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[i] {
			return false
		}
	}
	return true
}

var (
	_ Handler     = (*FloatHandler)(nil)
	_ Constrainer = (*FloatHandler)(nil)
)
