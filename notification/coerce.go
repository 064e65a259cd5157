package notification

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Sentinel errors of Coerce for the JSON values that have no scalar text.
// Test for them with errors.Is.
var (
	// ErrNullValue is returned for JSON null.
	ErrNullValue = errors.New("value is null; a string, number or boolean is required")
	// ErrObjectValue is returned for a JSON object. Constraint objects are
	// accepted on watch and replay only, where the caller handles them
	// before coercing.
	ErrObjectValue = errors.New("value is an object; a string, number or boolean is required (constraint objects are accepted on watch and replay only)")
	// ErrArrayValue is returned for a JSON array.
	ErrArrayValue = errors.New("value is an array; a string, number or boolean is required")
)

// Coerce turns one JSON identifier value into the text its handler validates
// (Aviso's notify, docs/api.md): a string gives its value, a number its text
// as Aviso's serde_json prints the parsed number (see CoerceNumberText), true
// and false give "true" and "false". null, objects and arrays give
// ErrNullValue, ErrObjectValue and ErrArrayValue. Text that is not one valid
// JSON value is an error, and so are strings that serde_json rejects although
// Go's encoding/json accepts them (invalid UTF-8, unpaired UTF-16 surrogate
// escapes).
func Coerce(raw json.RawMessage) (string, error) {
	v := coerceTrimSpace(raw)
	if len(v) == 0 {
		return "", errors.New("value is empty; a JSON string, number or boolean is required")
	}
	switch c := v[0]; {
	case c == '"':
		return coerceJSONString(v)
	case c == '-' || (c >= '0' && c <= '9'):
		return CoerceNumberText(string(v))
	case c == 't' && string(v) == "true":
		return "true", nil
	case c == 'f' && string(v) == "false":
		return "false", nil
	case c == 'n' && string(v) == "null":
		return "", ErrNullValue
	case c == '{' && json.Valid(v):
		return "", ErrObjectValue
	case c == '[' && json.Valid(v):
		return "", ErrArrayValue
	}
	return "", fmt.Errorf("value %s is not valid JSON; a JSON string, number or boolean is required", coerceSnippet(string(v)))
}

// CoerceNumberText is the number rule of Coerce applied to the text of one
// JSON number. It mirrors serde_json 1.0.150 (the release aviso-server
// 0.7.1 locks, which prints floats with zmij) with its default
// features, as Aviso builds it: an integer that fits u64 (or, when negative, i64)
// prints as an integer; every other number (fraction, exponent, -0, or an
// integer outside those ranges) is parsed into an f64 with serde_json's
// fast algorithm, which is not always correctly rounded, and printed the
// way serde_json prints an f64 (ryu's shortest digits: 4.0 → "4.0",
// 1e3 → "1000.0", 1e16 → "1e+16", 0.00001 → "0.00001", 1.5e-7 → "1.5e-7",
// -0 → "-0.0"). Text that is not a JSON number is an error, and so is a
// number too large for f64 (serde_json rejects 1e400).
func CoerceNumberText(num string) (string, error) {
	n, err := serdeParseNumber(num)
	if err != nil {
		return "", err
	}
	return n.text(), nil
}

// coerceTrimSpace removes JSON whitespace around a raw value.
func coerceTrimSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// coerceSnippet quotes s for an error message, shortened when long.
func coerceSnippet(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// coerceShow shows raw JSON text in an error message: as it is when it is
// short printable UTF-8 (and, for a string, ends with its quote), quoted
// and shortened otherwise.
func coerceShow(v []byte) string {
	unterminated := len(v) > 0 && v[0] == '"' && (len(v) < 2 || v[len(v)-1] != '"')
	if len(v) > 64 || !utf8.Valid(v) || unterminated {
		return coerceSnippet(string(v))
	}
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return coerceSnippet(string(v))
		}
	}
	return string(v)
}

// coerceJSONString decodes a JSON string literal that makes up the whole of
// v, as strictly as serde_json: control characters must be escaped, the
// text must be valid UTF-8, and \u escapes of UTF-16 surrogates must come
// in high-low pairs.
func coerceJSONString(v []byte) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("value %s is not a valid JSON string: %s", coerceShow(v), fmt.Sprintf(format, args...))
	}
	var b strings.Builder
	b.Grow(len(v))
	i := 1
	for {
		if i >= len(v) {
			return bad("it has no closing quote")
		}
		c := v[i]
		switch {
		case c == '"':
			if i != len(v)-1 {
				return bad("text follows the closing quote")
			}
			return b.String(), nil
		case c == '\\':
			if i+1 >= len(v) {
				return bad("it ends inside an escape")
			}
			e := v[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := coerceHex4(v[i:])
				if !ok {
					return bad("\\u must be followed by four hex digits")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 {
						return bad("escape \\u%04x is a lone trailing UTF-16 surrogate", r)
					}
					var r2 rune
					if i+1 < len(v) && v[i] == '\\' && v[i+1] == 'u' {
						r2, ok = coerceHex4(v[i+2:])
					} else {
						ok = false
					}
					if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
						return bad("escape \\u%04x is a UTF-16 high surrogate not followed by a low surrogate escape", r)
					}
					i += 6
					r = utf16.DecodeRune(r, r2)
				}
				b.WriteRune(r)
			default:
				return bad("\\%c is not a JSON escape", e)
			}
		case c < 0x20:
			return bad("control character U+%04X must be escaped", c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(v[i:])
			if r == utf8.RuneError && size == 1 {
				return bad("it is not valid UTF-8")
			}
			b.Write(v[i : i+size])
			i += size
		}
	}
}

// coerceHex4 decodes the four hex digits at the start of b.
func coerceHex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// serdeKind tells which of serde_json's number representations a parsed
// JSON number has.
type serdeKind uint8

const (
	serdePosInt serdeKind = iota // fits u64
	serdeNegInt                  // negative, fits i64
	serdeFloat                   // everything else, as f64
)

// serdeNumber is a JSON number as serde_json holds it after parsing.
type serdeNumber struct {
	kind serdeKind
	u    uint64
	i    int64
	f    float64
}

// text prints the number as serde_json does: integers in decimal, floats
// with ryu's layout.
func (n serdeNumber) text() string {
	switch n.kind {
	case serdePosInt:
		return strconv.FormatUint(n.u, 10)
	case serdeNegInt:
		return strconv.FormatInt(n.i, 10)
	default:
		return ryuFormat(n.f)
	}
}

// asF64 converts the number the way serde_json's as_f64 does.
func (n serdeNumber) asF64() float64 {
	switch n.kind {
	case serdePosInt:
		return float64(n.u)
	case serdeNegInt:
		return float64(n.i)
	default:
		return n.f
	}
}

// serdePow10 holds the correctly rounded f64 values of 1e0 … 1e308, the
// POW10 table of serde_json.
var serdePow10 = func() [309]float64 {
	var t [309]float64
	for i := range t {
		f, err := strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
		if err != nil {
			panic(err)
		}
		t[i] = f
	}
	return t
}()

// serdeNumberParser parses one JSON number following serde_json 1.0.150's
// deserializer without the float_roundtrip feature, step by step, so that
// the f64 it produces is the same, including its rounding.
type serdeNumberParser struct {
	s string
	p int
}

// serdeParseNumber parses the JSON number that makes up all of s.
func serdeParseNumber(s string) (serdeNumber, error) {
	ps := &serdeNumberParser{s: s}
	positive := true
	if ps.peek() == '-' {
		positive = false
		ps.p++
	}
	n, err := ps.integer(positive)
	if err != nil {
		return serdeNumber{}, err
	}
	if ps.p != len(s) {
		return serdeNumber{}, ps.invalid("unexpected %s after the number", coerceSnippet(s[ps.p:]))
	}
	return n, nil
}

func (ps *serdeNumberParser) peek() byte {
	if ps.p < len(ps.s) {
		return ps.s[ps.p]
	}
	return 0
}

func (ps *serdeNumberParser) peekDigit() (uint64, bool) {
	c := ps.peek()
	if c >= '0' && c <= '9' {
		return uint64(c - '0'), true
	}
	return 0, false
}

func (ps *serdeNumberParser) invalid(format string, args ...any) error {
	return fmt.Errorf("%s is not a valid JSON number: %s", coerceSnippet(ps.s), fmt.Sprintf(format, args...))
}

func (ps *serdeNumberParser) outOfRange() error {
	return fmt.Errorf("number %s is out of range: its magnitude exceeds the largest 64-bit float (about 1.8e308)", coerceSnippet(ps.s))
}

// serdeOverflow is serde_json's overflow! macro: whether a*10+b > max.
func serdeOverflow(a, b, max uint64) bool {
	return a >= max/10 && (a > max/10 || b > max%10)
}

func (ps *serdeNumberParser) integer(positive bool) (serdeNumber, error) {
	if ps.p >= len(ps.s) {
		return serdeNumber{}, ps.invalid("a digit is required")
	}
	c := ps.s[ps.p]
	ps.p++
	switch {
	case c == '0':
		if _, ok := ps.peekDigit(); ok {
			return serdeNumber{}, ps.invalid("a leading zero must not be followed by digits")
		}
		return ps.number(positive, 0)
	case c >= '1' && c <= '9':
		sig := uint64(c - '0')
		for {
			d, ok := ps.peekDigit()
			if !ok {
				return ps.number(positive, sig)
			}
			if serdeOverflow(sig, d, math.MaxUint64) {
				f, err := ps.longInteger(positive, sig)
				return serdeNumber{kind: serdeFloat, f: f}, err
			}
			ps.p++
			sig = sig*10 + d
		}
	default:
		return serdeNumber{}, ps.invalid("a digit is required where %q is", c)
	}
}

func (ps *serdeNumberParser) number(positive bool, sig uint64) (serdeNumber, error) {
	switch ps.peek() {
	case '.':
		f, err := ps.decimal(positive, sig, 0)
		return serdeNumber{kind: serdeFloat, f: f}, err
	case 'e', 'E':
		f, err := ps.exponent(positive, sig, 0)
		return serdeNumber{kind: serdeFloat, f: f}, err
	}
	if positive {
		return serdeNumber{kind: serdePosInt, u: sig}, nil
	}
	neg := -int64(sig) // wrapping, as Rust's (sig as i64).wrapping_neg()
	if neg >= 0 {
		// -0, or below i64::MIN: serde_json makes it a float.
		return serdeNumber{kind: serdeFloat, f: -float64(sig)}, nil
	}
	return serdeNumber{kind: serdeNegInt, i: neg}, nil
}

func (ps *serdeNumberParser) decimal(positive bool, sig uint64, expBefore int32) (float64, error) {
	ps.p++ // '.'
	var expAfter int32
	for {
		d, ok := ps.peekDigit()
		if !ok {
			break
		}
		if serdeOverflow(sig, d, math.MaxUint64) {
			return ps.decimalOverflow(positive, sig, expBefore+expAfter)
		}
		ps.p++
		sig = sig*10 + d
		expAfter--
	}
	if expAfter == 0 {
		return 0, ps.invalid("a digit is required after the decimal point")
	}
	exp := expBefore + expAfter
	if c := ps.peek(); c == 'e' || c == 'E' {
		return ps.exponent(positive, sig, exp)
	}
	return ps.fromParts(positive, sig, exp)
}

func (ps *serdeNumberParser) exponent(positive bool, sig uint64, startExp int32) (float64, error) {
	ps.p++ // 'e' or 'E'
	positiveExp := true
	switch ps.peek() {
	case '+':
		ps.p++
	case '-':
		ps.p++
		positiveExp = false
	}
	d, ok := ps.peekDigit()
	if !ok {
		return 0, ps.invalid("a digit is required in the exponent")
	}
	ps.p++
	exp := int32(d)
	for {
		d, ok := ps.peekDigit()
		if !ok {
			break
		}
		ps.p++
		if serdeOverflow(uint64(exp), d, math.MaxInt32) {
			return ps.exponentOverflow(positive, sig == 0, positiveExp)
		}
		exp = exp*10 + int32(d)
	}
	var final int32
	if positiveExp {
		final = serdeSaturatingAdd(startExp, exp)
	} else {
		final = serdeSaturatingAdd(startExp, -exp)
	}
	return ps.fromParts(positive, sig, final)
}

func serdeSaturatingAdd(a, b int32) int32 {
	s := int64(a) + int64(b)
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	if s < math.MinInt32 {
		return math.MinInt32
	}
	return int32(s)
}

func (ps *serdeNumberParser) fromParts(positive bool, sig uint64, exp int32) (float64, error) {
	f := float64(sig)
	for {
		abs := int64(exp)
		if abs < 0 {
			abs = -abs
		}
		if abs < int64(len(serdePow10)) {
			pow := serdePow10[abs]
			if exp >= 0 {
				f *= pow
				if math.IsInf(f, 0) {
					return 0, ps.outOfRange()
				}
			} else {
				f /= pow
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return 0, ps.outOfRange()
		}
		f /= 1e308
		exp += 308
	}
	if !positive {
		f = -f
	}
	return f, nil
}

func (ps *serdeNumberParser) longInteger(positive bool, sig uint64) (float64, error) {
	var exp int32
	for {
		switch ps.peek() {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			ps.p++
			exp++
		case '.':
			return ps.decimal(positive, sig, exp)
		case 'e', 'E':
			return ps.exponent(positive, sig, exp)
		default:
			return ps.fromParts(positive, sig, exp)
		}
	}
}

func (ps *serdeNumberParser) decimalOverflow(positive bool, sig uint64, exp int32) (float64, error) {
	for {
		if _, ok := ps.peekDigit(); !ok {
			break
		}
		ps.p++
	}
	if c := ps.peek(); c == 'e' || c == 'E' {
		return ps.exponent(positive, sig, exp)
	}
	return ps.fromParts(positive, sig, exp)
}

func (ps *serdeNumberParser) exponentOverflow(positive, zeroSig, positiveExp bool) (float64, error) {
	if !zeroSig && positiveExp {
		return 0, ps.outOfRange()
	}
	for {
		if _, ok := ps.peekDigit(); !ok {
			break
		}
		ps.p++
	}
	if positive {
		return 0, nil
	}
	return math.Copysign(0, -1), nil
}

// ryuFormat prints a finite f64 as serde_json 1.0.150 does (zmij's
// format_finite, which keeps ryu's layout and adds a '+' to positive
// exponents): the shortest digits that round-trip, laid out by the
// decimal exponent kk (10^(kk-1) <= |f| < 10^kk) of those digits:
// integers below 1e16 as "digits.0", other values with kk in (-5, 16] in
// positional notation, everything else as d.ddde±x with the exponent's
// sign always written and no padding of the exponent (1e+16, 1.5e-7).
// Zero is "0.0" or "-0.0".
func ryuFormat(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	var b []byte
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// Shortest round-trip digits: "d.ddde±x" or "de±x".
	e := strconv.FormatFloat(f, 'e', -1, 64)
	ePos := strings.IndexByte(e, 'e')
	digits := strings.Replace(e[:ePos], ".", "", 1)
	exp10, err := strconv.Atoi(e[ePos+1:])
	if err != nil {
		panic("notification: unexpected FormatFloat output " + e)
	}
	length := len(digits)
	kk := exp10 + 1
	k := kk - length
	switch {
	case k >= 0 && kk <= 16:
		b = append(b, digits...)
		for i := length; i < kk; i++ {
			b = append(b, '0')
		}
		b = append(b, '.', '0')
	case kk > 0 && kk <= 16:
		b = append(b, digits[:kk]...)
		b = append(b, '.')
		b = append(b, digits[kk:]...)
	case kk > -5 && kk <= 0:
		b = append(b, '0', '.')
		for i := kk; i < 0; i++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if length > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if kk > 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(kk-1), 10)
	}
	return string(b)
}
