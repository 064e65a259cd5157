package configs

import (
	"strconv"
	"strings"
	"testing"
)

func TestValidBase(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"weather", true},
		{"Weather_v2", true},
		{"a", true},
		{"0abc", true},
		{"a-b_c-", true},
		{"MARS", true},
		{"", false},
		{"_a", false},
		{"-a", false},
		{"a.b", false},
		{"a b", false},
		{"a*", false},
		{"a>", false},
		{"a%", false},
		{"ü", false},
		{"aü", false},
		{"a/b", false},
		{strings.Repeat("a", MaxBaseBytes), true},
		{strings.Repeat("a", MaxBaseBytes+1), false},
	}
	for _, tt := range tests {
		if got := ValidBase(tt.in); got != tt.want {
			t.Errorf("ValidBase(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBaseRuleNamesTheLimit(t *testing.T) {
	if !strings.Contains(BaseRule, " "+strconv.Itoa(MaxBaseBytes)+" bytes") {
		t.Errorf("BaseRule %q does not state MaxBaseBytes (%d)", BaseRule, MaxBaseBytes)
	}
}
