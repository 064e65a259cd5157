package notification

import (
	"errors"
	"fmt"

	"github.com/herald-gateway/herald/configs"
)

// ExpverHandler canonicalises experiment versions (Aviso's identifier
// handlers, docs/configuration.md): a value that parses as an unsigned 32-bit
// integer (Rust's u32 rules: an optional "+" and ASCII digits) is zero-padded
// to at least four digits ("1" → "0001", "12345" unchanged); anything else is
// lowercased ("PROD" → "prod", "-1" stays "-1"). An empty value takes the
// configured default.
type ExpverHandler struct {
	def          *string // as configured
	defCanonical string
}

// NewExpverHandler builds an ExpverHandler. def is the optional default
// key; it is canonicalised now, and an empty default is an error.
func NewExpverHandler(def *string) (*ExpverHandler, error) {
	if def == nil {
		return &ExpverHandler{}, nil
	}
	if *def == "" {
		return nil, errors.New(`default must not be empty; give an experiment version such as "0001", or omit default`)
	}
	d := *def
	return &ExpverHandler{def: &d, defCanonical: expverCanonical(d)}, nil
}

// Type returns configs.HandlerExpver, "ExpverHandler".
func (h *ExpverHandler) Type() string { return configs.HandlerExpver }

// Canonical returns the canonical experiment version; an empty value is
// replaced by the default, or rejected when there is none.
func (h *ExpverHandler) Canonical(value string) (string, error) {
	if value == "" {
		if h.def == nil {
			return "", errors.New(`value is empty and the field has no default; send an experiment version such as "0001" or "prod"`)
		}
		return h.defCanonical, nil
	}
	return expverCanonical(value), nil
}

// Describe returns {"default": value as configured}, with nil when unset.
func (h *ExpverHandler) Describe() map[string]any {
	if h.def == nil {
		return map[string]any{"default": nil}
	}
	return map[string]any{"default": *h.def}
}

// expverCanonical applies the numeric or lowercase rule to a non-empty
// value.
func expverCanonical(v string) string {
	if n, err := rustParseU32(v); err == nil {
		return fmt.Sprintf("%04d", n)
	}
	return rustToLowercase(v)
}

// rustParseU32 parses s as Rust's u32::from_str does: an optional "+"
// followed by at least one ASCII digit, and nothing else ("-0" is
// rejected).
func rustParseU32(s string) (uint32, error) {
	if s == "" {
		return 0, errRustIntEmpty
	}
	digits := s
	if s[0] == '+' {
		digits = s[1:]
	}
	if digits == "" {
		return 0, errRustIntInvalid
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, errRustIntInvalid
		}
		n = n*10 + uint64(c-'0')
		if n > 1<<32-1 {
			return 0, errRustIntOverflow
		}
	}
	return uint32(n), nil
}

var _ Handler = (*ExpverHandler)(nil)
