package notification

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewEnumHandler(t *testing.T) {
	tests := []struct {
		values   []string
		describe string
		errHas   string
	}{
		{values: []string{"north", "South"}, describe: `{"values":["north","South"]}`},
		{values: []string{}, describe: `{"values":[]}`},
		{values: nil, errHas: `values is required: list the allowed values, for example values: ["north", "south"]`},
		{values: []string{"a", "b", "A"}, errHas: `values "a" and "A" are the same ignoring case; each allowed value must be unique case-insensitively`},
		{values: []string{"ΣΑΣ", "σας"}, errHas: `values "ΣΑΣ" and "σας" are the same ignoring case`},
		{values: []string{"a", ""}, errHas: "values[1] is empty; allowed values must be non-empty strings"},
	}
	for _, tc := range tests {
		h, err := NewEnumHandler(tc.values)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("NewEnumHandler(%q) error = %v; want one containing %q", tc.values, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(h.Describe())
		if string(got) != tc.describe || h.Type() != "EnumHandler" {
			t.Errorf("Describe() = %s, Type() = %q; want %s", got, h.Type(), tc.describe)
		}
	}
}

func TestEnumHandlerDescribeIsACopy(t *testing.T) {
	values := []string{"a", "b"}
	h, _ := NewEnumHandler(values)
	values[0] = "changed"
	h.Describe()["values"].([]string)[1] = "changed"
	got, _ := json.Marshal(h.Describe())
	if string(got) != `{"values":["a","b"]}` {
		t.Errorf("Describe() = %s after changing the caller's slices", got)
	}
}

func TestEnumHandlerCanonical(t *testing.T) {
	h, err := NewEnumHandler([]string{"north", "South", "WEST", "ΣΑΣ", "İstanbul"})
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := NewEnumHandler([]string{})
	const allowed = "allowed values (case-insensitive): north, South, WEST, ΣΑΣ, İstanbul"
	tests := []struct {
		h              *EnumHandler
		in, want, errs string
	}{
		{h: h, in: "north", want: "north"},
		{h: h, in: "NORTH", want: "north"},
		{h: h, in: "NoRtH", want: "north"},
		{h: h, in: "south", want: "south"},
		{h: h, in: "South", want: "south"},
		{h: h, in: "WEST", want: "west"},
		{h: h, in: "west", want: "west"},
		{h: h, in: "ΣΑΣ", want: "σας"},
		{h: h, in: "σασ", errs: `value "σασ" is not allowed`}, // not the lowercase of "ΣΑΣ", which is "σας"
		{h: h, in: "İSTANBUL", want: "i\u0307stanbul"},
		{h: h, in: "east", errs: `value "east" is not allowed; ` + allowed},
		{h: h, in: " north", errs: `value " north" is not allowed`},
		{h: h, in: "nörth", errs: `value "nörth" is not allowed`},
		{h: h, in: "", errs: "value is empty; " + allowed},
		{h: empty, in: "x", errs: `value "x" is not allowed; the field's list of allowed values is empty, so no value is accepted`},
		{h: empty, in: "", errs: "value is empty; the field's list of allowed values is empty"},
	}
	for _, tc := range tests {
		got, err := tc.h.Canonical(tc.in)
		if tc.errs != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errs) {
				t.Errorf("Canonical(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.errs)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// The expected values are Rust's str::to_lowercase results.
func TestRustToLowercase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"ABC-def_1.2", "abc-def_1.2"},
		{"İSTANBUL", "i\u0307stanbul"},
		{"ΣΑΣ", "σας"},
		{"Σ", "σ"},
		{"ΑΣ Σ", "ας σ"},
		{"Α'Σ", "α'ς"},
		{"AΣ.", "aς."},
		{"AΣ.B", "aσ.b"},
		{"AΣ1", "aς1"},
		{"ΑΣ\u0301", "ας\u0301"},
		{"ὈΔΥΣΣΕΎΣ", "ὀδυσσεύς"},
		{"ǅ", "ǆ"},
		{"Ω", "ω"},
		{"K", "k"},
		{"A\xffB", "a\xffb"},
	}
	for _, tc := range tests {
		if got := rustToLowercase(tc.in); got != tc.want {
			t.Errorf("rustToLowercase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzEnumHandlerCanonical(f *testing.F) {
	for _, s := range []string{"north", "NORTH", "ΣΑΣ", "İSTANBUL", "east", "", "AΣ.B", "\xff"} {
		f.Add(s)
	}
	h, _ := NewEnumHandler([]string{"north", "South", "WEST", "ΣΑΣ", "İstanbul"})
	f.Fuzz(func(t *testing.T, v string) {
		low := rustToLowercase(v)
		if rustToLowercase(low) != low {
			t.Fatalf("rustToLowercase is not idempotent on %q: %q then %q", v, low, rustToLowercase(low))
		}
		got, err := h.Canonical(v)
		if err != nil {
			return
		}
		if got != low {
			t.Fatalf("Canonical(%q) = %q, want the lowercased input %q", v, got, low)
		}
		again, err := h.Canonical(got)
		if err != nil || again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", v, got, got, again, err)
		}
	})
}
