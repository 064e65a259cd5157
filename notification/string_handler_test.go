package notification

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewStringHandler(t *testing.T) {
	intPtr := func(n int) *int { return &n }
	tests := []struct {
		maxLength *int
		describe  string
		errHas    string
	}{
		{maxLength: nil, describe: `{"max_length":null}`},
		{maxLength: intPtr(1), describe: `{"max_length":1}`},
		{maxLength: intPtr(64), describe: `{"max_length":64}`},
		{maxLength: intPtr(0), errHas: "max_length must be at least 1, got 0; omit it for no limit"},
		{maxLength: intPtr(-3), errHas: "max_length must be at least 1, got -3"},
	}
	for _, tc := range tests {
		h, err := NewStringHandler(tc.maxLength)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("NewStringHandler(%v) error = %v; want one containing %q", tc.maxLength, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatalf("NewStringHandler(%v): %v", tc.maxLength, err)
		}
		got, _ := json.Marshal(h.Describe())
		if string(got) != tc.describe {
			t.Errorf("Describe() = %s, want %s", got, tc.describe)
		}
		if h.Type() != "StringHandler" {
			t.Errorf("Type() = %q", h.Type())
		}
	}
}

func TestStringHandlerCanonical(t *testing.T) {
	eight := 8
	limited, _ := NewStringHandler(&eight)
	unlimited, _ := NewStringHandler(nil)
	tests := []struct {
		h      *StringHandler
		in     string
		want   string
		errHas string
	}{
		{h: limited, in: "abc", want: "abc"},
		{h: limited, in: "abcdefgh", want: "abcdefgh"},
		{h: limited, in: "éééé", want: "éééé"}, // 8 bytes
		{h: limited, in: " a B ", want: " a B "},
		{h: limited, in: "*", want: "*"},
		{h: limited, in: "ééééé", errHas: "value is 10 bytes long, more than max_length 8 (the length counts UTF-8 bytes)"},
		{h: limited, in: "abcdefghi", errHas: "value is 9 bytes long, more than max_length 8"},
		{h: limited, in: "", errHas: "value is empty; a non-empty string is required"},
		{h: unlimited, in: strings.Repeat("x", 10000), want: strings.Repeat("x", 10000)},
		{h: unlimited, in: "MiXeD.case/and%dots", want: "MiXeD.case/and%dots"},
		{h: unlimited, in: "", errHas: "value is empty"},
	}
	for _, tc := range tests {
		got, err := tc.h.Canonical(tc.in)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("Canonical(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.errHas)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzStringHandlerCanonical(f *testing.F) {
	for _, s := range []string{"abc", "", "ééééé", "éééé", "*", "a.b"} {
		f.Add(s)
	}
	eight := 8
	h, _ := NewStringHandler(&eight)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := h.Canonical(v)
		if err != nil {
			if v != "" && len(v) <= 8 {
				t.Fatalf("Canonical(%q) rejected a valid value: %v", v, err)
			}
			return
		}
		if got != v || len(v) == 0 || len(v) > 8 {
			t.Fatalf("Canonical(%q) = %q", v, got)
		}
	})
}
