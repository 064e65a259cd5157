package notification

import (
	"fmt"
	"strings"

	"github.com/herald-gateway/herald/configs"
)

// TimeHandler canonicalises times of day to four-digit HHMM (Aviso's
// identifier handlers, docs/configuration.md): "H" or "HH" (hours 0-23)
// becomes HH00, "H:MM" or "HH:MM" becomes HHMM, and four digits HHMM are kept
// as they are once checked.
type TimeHandler struct{}

// NewTimeHandler builds a TimeHandler; it has no options.
func NewTimeHandler() *TimeHandler { return &TimeHandler{} }

// Type returns configs.HandlerTime, "TimeHandler".
func (h *TimeHandler) Type() string { return configs.HandlerTime }

// timeFormats lists the accepted forms for error messages.
const timeFormats = "H, HH, H:MM, HH:MM or HHMM with hours 0-23 and minutes 00-59"

// Canonical validates a time and returns it as HHMM.
func (h *TimeHandler) Canonical(value string) (string, error) {
	switch {
	case value == "":
		return "", fmt.Errorf("value is empty; a time is required (%s)", timeFormats)
	case len(value) <= 2 && timeDigits(value):
		hours := timeNumber(value)
		if hours > 23 {
			return "", fmt.Errorf("invalid time %q: hour %d is not between 0 and 23", value, hours)
		}
		return fmt.Sprintf("%02d00", hours), nil
	case strings.Contains(value, ":"):
		hh, mm, _ := strings.Cut(value, ":")
		if len(hh) < 1 || len(hh) > 2 || !timeDigits(hh) || len(mm) != 2 || !timeDigits(mm) {
			return "", fmt.Errorf("invalid time %q: with a colon the form is H:MM or HH:MM (minutes exactly two digits)", value)
		}
		return timeCheck(value, timeNumber(hh), timeNumber(mm))
	case len(value) == 4 && timeDigits(value):
		if _, err := timeCheck(value, timeNumber(value[:2]), timeNumber(value[2:])); err != nil {
			return "", err
		}
		return value, nil
	}
	return "", fmt.Errorf("invalid time %q: accepted forms are %s", value, timeFormats)
}

// timeCheck range-checks hours and minutes and formats them as HHMM.
func timeCheck(value string, hours, minutes int) (string, error) {
	if hours > 23 {
		return "", fmt.Errorf("invalid time %q: hour %d is not between 0 and 23", value, hours)
	}
	if minutes > 59 {
		return "", fmt.Errorf("invalid time %q: minute %d is not between 0 and 59", value, minutes)
	}
	return fmt.Sprintf("%02d%02d", hours, minutes), nil
}

// timeDigits reports whether s is non-empty and all ASCII digits.
func timeDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// timeNumber converts a short string of ASCII digits.
func timeNumber(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// Describe returns an empty map: TimeHandler has no options.
func (h *TimeHandler) Describe() map[string]any { return map[string]any{} }

var _ Handler = (*TimeHandler)(nil)
