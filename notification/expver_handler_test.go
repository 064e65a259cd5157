package notification

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewExpverHandler(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		def       *string
		describe  string
		emptyGets string
		errHas    string
	}{
		{def: nil, describe: `{"default":null}`},
		{def: str("0001"), describe: `{"default":"0001"}`, emptyGets: "0001"},
		{def: str("42"), describe: `{"default":"42"}`, emptyGets: "0042"},
		{def: str("PROD"), describe: `{"default":"PROD"}`, emptyGets: "prod"},
		{def: str(""), errHas: `default must not be empty; give an experiment version such as "0001", or omit default`},
	}
	for _, tc := range tests {
		h, err := NewExpverHandler(tc.def)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("NewExpverHandler(%q) error = %v; want one containing %q", *tc.def, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(h.Describe())
		if string(got) != tc.describe || h.Type() != "ExpverHandler" {
			t.Errorf("Describe() = %s, Type() = %q; want %s", got, h.Type(), tc.describe)
		}
		empty, err := h.Canonical("")
		if tc.def == nil {
			if err == nil || !strings.Contains(err.Error(), `value is empty and the field has no default; send an experiment version such as "0001" or "prod"`) {
				t.Errorf(`Canonical("") = %q, %v; want the no-default error`, empty, err)
			}
		} else if err != nil || empty != tc.emptyGets {
			t.Errorf(`Canonical("") with default %q = %q, %v; want %q`, *tc.def, empty, err, tc.emptyGets)
		}
	}
}

func TestNewExpverHandlerCopiesDefault(t *testing.T) {
	def := "PROD"
	h, _ := NewExpverHandler(&def)
	def = "changed"
	got, _ := json.Marshal(h.Describe())
	if string(got) != `{"default":"PROD"}` {
		t.Errorf("Describe() = %s after changing the caller's string", got)
	}
}

func TestExpverHandlerCanonical(t *testing.T) {
	h, _ := NewExpverHandler(nil)
	tests := []struct{ in, want string }{
		{"1", "0001"},
		{"42", "0042"},
		{"123", "0123"},
		{"9999", "9999"},
		{"12345", "12345"},
		{"0001", "0001"},
		{"0", "0000"},
		{"00000", "0000"},
		{"+5", "0005"},
		{"4294967295", "4294967295"},
		{"4294967296", "4294967296"}, // beyond u32: kept as text
		{"PROD", "prod"},
		{"Test", "test"},
		{"prod", "prod"},
		{"dev-v2.1", "dev-v2.1"},
		{"DEV-V2.1", "dev-v2.1"},
		{"-1", "-1"},
		{"-0", "-0"},
		{"+", "+"},
		{" 1", " 1"},
		{"1 ", "1 "},
		{"1.0", "1.0"},
		{"ΣΑΣ", "σας"},
		{"İ", "i\u0307"},
	}
	for _, tc := range tests {
		got, err := h.Canonical(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzExpverHandlerCanonical(f *testing.F) {
	for _, s := range []string{"1", "0001", "+5", "PROD", "-1", "4294967296", "", "ΣΑΣ", "İ", "\xff"} {
		f.Add(s)
	}
	def := "42"
	h, _ := NewExpverHandler(&def)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := h.Canonical(v)
		if err != nil {
			t.Fatalf("Canonical(%q) failed with a default set: %v", v, err)
		}
		if got == "" {
			t.Fatalf("Canonical(%q) is empty", v)
		}
		again, err := h.Canonical(got)
		if err != nil || again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", v, got, got, again, err)
		}
	})
}
