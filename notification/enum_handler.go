package notification

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herald-gateway/herald/configs"
)

// EnumHandler accepts one of a configured list of values, ignoring case, and
// canonicalises to the input lowercased (Aviso's identifier handlers,
// docs/configuration.md): configured "West" with input "WEST" gives "west".
// Lowercasing follows Rust's str::to_lowercase (Unicode lowercase mapping, "İ"
// → "i̇", and a word-final "Σ" → "ς").
type EnumHandler struct {
	values  []string            // as configured
	allowed map[string]struct{} // lowercased
}

// NewEnumHandler builds an EnumHandler from the values key. nil is an
// error (values is required); an empty list is allowed and rejects every
// value, as in Aviso. Values must be non-empty and distinct ignoring case.
func NewEnumHandler(values []string) (*EnumHandler, error) {
	if values == nil {
		return nil, errors.New(`values is required: list the allowed values, for example values: ["north", "south"]`)
	}
	h := &EnumHandler{
		values:  append([]string{}, values...),
		allowed: make(map[string]struct{}, len(values)),
	}
	first := make(map[string]string, len(values))
	for i, v := range values {
		if v == "" {
			return nil, fmt.Errorf("values[%d] is empty; allowed values must be non-empty strings", i)
		}
		low := rustToLowercase(v)
		if prev, dup := first[low]; dup {
			return nil, fmt.Errorf("values %q and %q are the same ignoring case; each allowed value must be unique case-insensitively", prev, v)
		}
		first[low] = v
		h.allowed[low] = struct{}{}
	}
	return h, nil
}

// Type returns configs.HandlerEnum, "EnumHandler".
func (h *EnumHandler) Type() string { return configs.HandlerEnum }

// Canonical lowercases value and checks it is one of the allowed values.
func (h *EnumHandler) Canonical(value string) (string, error) {
	if value == "" {
		return "", fmt.Errorf("value is empty; %s", h.allowedText())
	}
	low := rustToLowercase(value)
	if _, ok := h.allowed[low]; !ok {
		return "", fmt.Errorf("value %s is not allowed; %s", coerceSnippet(value), h.allowedText())
	}
	return low, nil
}

// allowedText lists the allowed values for an error message.
func (h *EnumHandler) allowedText() string {
	if len(h.values) == 0 {
		return "the field's list of allowed values is empty, so no value is accepted"
	}
	return "allowed values (case-insensitive): " + strings.Join(h.values, ", ")
}

// Describe returns {"values": [...]} as configured.
func (h *EnumHandler) Describe() map[string]any {
	return map[string]any{"values": append([]string{}, h.values...)}
}

// Constraint compiles eq or in. Operands must be strings; they are
// lowercased and each must be an allowed value.
func (h *EnumHandler) Constraint(op string, operand json.RawMessage) (Constraint, error) {
	cop, ok := constraintOps[op]
	if !ok || (cop != constraintEq && cop != constraintIn) {
		return nil, fmt.Errorf("unknown constraint operator %q for an %s field; allowed operators: %s", op, configs.HandlerEnum, constraintEnumOperators)
	}
	raws, err := constraintOperands(cop, op, operand)
	if err != nil {
		return nil, err
	}
	vals := make([]string, len(raws))
	for i, raw := range raws {
		if vals[i], err = constraintStringOperand(cop, op, i, raw); err != nil {
			return nil, err
		}
		if _, ok := h.allowed[vals[i]]; !ok {
			return nil, fmt.Errorf("operator %q value %s is not allowed; %s", op, coerceSnippet(vals[i]), h.allowedText())
		}
	}
	return &enumConstraint{vals: vals}, nil
}

// rustToLowercase lowercases s as Rust's str::to_lowercase does: each
// character by its Unicode lowercase mapping, "İ" (U+0130) to "i̇", and
// "Σ" to "ς" at the end of a word (Final_Sigma), "σ" elsewhere. Bytes that
// are not valid UTF-8 are kept as they are.
func rustToLowercase(s string) string {
	ascii, upper := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if c >= 'A' && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if !upper {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if c >= 'A' && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte(s[i])
		case r == 'Σ':
			if rustFinalSigma(s, i, i+size) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		case r == 'İ':
			b.WriteString("i\u0307")
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		i += size
	}
	return b.String()
}

// rustFinalSigma applies the Final_Sigma condition to the "Σ" at
// s[start:end]: a cased letter comes before it and none after it, skipping
// case-ignorable characters on both sides.
func rustFinalSigma(s string, start, end int) bool {
	before := false
	for i := start; i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		if rustCaseIgnorable(r) {
			continue
		}
		before = rustCased(r)
		break
	}
	if !before {
		return false
	}
	for i := end; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if rustCaseIgnorable(r) {
			continue
		}
		return !rustCased(r)
	}
	return true
}

// rustCased is Unicode's Cased property: Lowercase, Uppercase or Lt.
func rustCased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// rustCaseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm,
// Sk, and the Word_Break classes MidLetter, MidNumLet and Single_Quote.
func rustCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00B7', '\u0387', '\u055F', '\u05F4', '\u2018', '\u2019',
		'\u2024', '\u2027', '\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

var (
	_ Handler     = (*EnumHandler)(nil)
	_ Constrainer = (*EnumHandler)(nil)
)
