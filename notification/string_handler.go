package notification

import (
	"fmt"

	"github.com/herald-gateway/herald/configs"
)

// StringHandler accepts any non-empty string unchanged, optionally no longer
// than max_length UTF-8 bytes (Aviso's identifier handlers,
// docs/configuration.md).
type StringHandler struct {
	maxLength int // 0 when unset
}

// NewStringHandler builds a StringHandler. maxLength is the optional
// max_length key: nil for no limit, otherwise at least 1.
func NewStringHandler(maxLength *int) (*StringHandler, error) {
	if maxLength == nil {
		return &StringHandler{}, nil
	}
	if *maxLength < 1 {
		return nil, fmt.Errorf("max_length must be at least 1, got %d; omit it for no limit", *maxLength)
	}
	return &StringHandler{maxLength: *maxLength}, nil
}

// Type returns configs.HandlerString, "StringHandler".
func (h *StringHandler) Type() string { return configs.HandlerString }

// Canonical returns value unchanged if it is non-empty and within
// max_length bytes.
func (h *StringHandler) Canonical(value string) (string, error) {
	if value == "" {
		return "", fmt.Errorf("value is empty; a non-empty string is required")
	}
	if h.maxLength > 0 && len(value) > h.maxLength {
		return "", fmt.Errorf("value is %d bytes long, more than max_length %d (the length counts UTF-8 bytes)", len(value), h.maxLength)
	}
	return value, nil
}

// Describe returns {"max_length": n}, with nil when unset.
func (h *StringHandler) Describe() map[string]any {
	if h.maxLength == 0 {
		return map[string]any{"max_length": nil}
	}
	return map[string]any{"max_length": h.maxLength}
}

var _ Handler = (*StringHandler)(nil)
