package notification

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestNewFloatHandler(t *testing.T) {
	tests := []struct {
		rng      []string
		describe string
		errHas   string
	}{
		{rng: nil, describe: `{"range":null}`},
		{rng: []string{"0.0", "10.0"}, describe: `{"range":[0.0,10.0]}`},
		{rng: []string{"0", "10"}, describe: `{"range":[0.0,10.0]}`},
		{rng: []string{"-1.5", "1e16"}, describe: `{"range":[-1.5,1e+16]}`},
		{rng: []string{".5", "5."}, describe: `{"range":[0.5,5.0]}`},
		{rng: []string{"-0", "0.00001"}, describe: `{"range":[-0.0,0.00001]}`},
		{rng: []string{"2.5", "2.5"}, describe: `{"range":[2.5,2.5]}`},
		{rng: []string{}, errHas: "range must be [min, max] with exactly two numbers, got 0 values"},
		{rng: []string{"1"}, errHas: "range must be [min, max] with exactly two numbers, got 1 values"},
		{rng: []string{"a", "1"}, errHas: `range min "a" is not a number: invalid float literal`},
		{rng: []string{"1", "1_000"}, errHas: `range max "1_000" is not a number`},
		{rng: []string{"nan", "1"}, errHas: `range min "nan" is not finite; both bounds must be finite numbers`},
		{rng: []string{"0", "inf"}, errHas: `range max "inf" is not finite`},
		{rng: []string{"0", "1e400"}, errHas: `range max "1e400" is not finite`},
		{rng: []string{"10", "0.5"}, errHas: "range min 10 is greater than max 0.5; write the range as [min, max]"},
	}
	for _, tc := range tests {
		h, err := NewFloatHandler(tc.rng)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("NewFloatHandler(%q) error = %v; want one containing %q", tc.rng, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(h.Describe())
		if err != nil || string(got) != tc.describe || h.Type() != "FloatHandler" {
			t.Errorf("Describe() = %s, %v, Type() = %q; want %s", got, err, h.Type(), tc.describe)
		}
	}
}

// The expected values are Rust's f64::from_str followed by Display.
func TestFloatHandlerCanonical(t *testing.T) {
	free, _ := NewFloatHandler(nil)
	ranged, _ := NewFloatHandler([]string{"0", "10"})
	tests := []struct {
		h                *FloatHandler
		in, want, errHas string
	}{
		{h: free, in: "42.50", want: "42.5"},
		{h: free, in: "1e1", want: "10"},
		{h: free, in: "7", want: "7"},
		{h: free, in: "4.0", want: "4"},
		{h: free, in: "0.10", want: "0.1"},
		{h: free, in: "3.14", want: "3.14"},
		{h: free, in: "1e-7", want: "0.0000001"},
		{h: free, in: "-0.0", want: "-0"},
		{h: free, in: "-0", want: "-0"},
		{h: free, in: ".5", want: "0.5"},
		{h: free, in: "5.", want: "5"},
		{h: free, in: "+2.5", want: "2.5"},
		{h: free, in: "-.5e1", want: "-5"},
		{h: free, in: "1E3", want: "1000"},
		{h: free, in: "0.1e1", want: "1"},
		{h: free, in: "1e21", want: "1000000000000000000000"},
		{h: free, in: "123456789012345678901234567890", want: "123456789012345680000000000000"},
		{h: free, in: "1.7976931348623157e308", want: "17976931348623157" + strings.Repeat("0", 292)},
		{h: free, in: "5e-324", want: "0." + strings.Repeat("0", 323) + "5"},
		{h: free, in: "1e-400", want: "0"},
		{h: free, in: "-1e-400", want: "-0"},
		// Two shortest decimals are equally close: Rust takes the larger.
		{h: free, in: "755384079777038.25", want: "755384079777038.3"},
		{h: free, in: "755384079777038.3", want: "755384079777038.3"},
		{h: free, in: "-686320701552597.2095759196584026", want: "-686320701552597.3"},
		{h: free, in: "NaN", errHas: `value "NaN" is not finite; NaN and infinite values are rejected`},
		{h: free, in: "-nan", errHas: "is not finite"},
		{h: free, in: "inf", errHas: `value "inf" is not finite`},
		{h: free, in: "-inf", errHas: "is not finite"},
		{h: free, in: "+infinity", errHas: "is not finite"},
		{h: free, in: "Infinity", errHas: "is not finite"},
		{h: free, in: "1e400", errHas: `value "1e400" is not finite`},
		{h: free, in: "abc", errHas: `value "abc" is not a valid number: invalid float literal`},
		{h: free, in: "infinit", errHas: "is not a valid number"},
		{h: free, in: "nan(1)", errHas: "is not a valid number"},
		{h: free, in: " 1", errHas: `value " 1" is not a valid number`},
		{h: free, in: "1 ", errHas: "is not a valid number"},
		{h: free, in: "0x10", errHas: "is not a valid number"},
		{h: free, in: "0x1p3", errHas: "is not a valid number"},
		{h: free, in: "1_000", errHas: "is not a valid number"},
		{h: free, in: "1,5", errHas: "is not a valid number"},
		{h: free, in: ".", errHas: "is not a valid number"},
		{h: free, in: "e5", errHas: "is not a valid number"},
		{h: free, in: "1e", errHas: "is not a valid number"},
		{h: free, in: "1e+", errHas: "is not a valid number"},
		{h: free, in: "--1", errHas: "is not a valid number"},
		{h: free, in: "+", errHas: "is not a valid number"},
		{h: free, in: "1d", errHas: "is not a valid number"},
		{h: free, in: "", errHas: "value is empty; a number is required"},
		{h: ranged, in: "10", want: "10"},
		{h: ranged, in: "0", want: "0"},
		{h: ranged, in: "-0", want: "-0"},
		{h: ranged, in: "9.99", want: "9.99"},
		{h: ranged, in: "10.0000001", errHas: "value 10.0000001 is outside the allowed range [0, 10]"},
		{h: ranged, in: "-0.1", errHas: "value -0.1 is outside the allowed range [0, 10]"},
		{h: ranged, in: "1e300", errHas: "value 1e+300 is outside the allowed range [0, 10]"},
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

func TestRustFloatDisplayNonFinite(t *testing.T) {
	for f, want := range map[float64]string{math.Inf(1): "inf", math.Inf(-1): "-inf"} {
		if got := rustFloatDisplay(f); got != want {
			t.Errorf("rustFloatDisplay(%v) = %q, want %q", f, got, want)
		}
	}
	if got := rustFloatDisplay(math.NaN()); got != "NaN" {
		t.Errorf("rustFloatDisplay(NaN) = %q", got)
	}
}

func FuzzFloatHandlerCanonical(f *testing.F) {
	for _, s := range []string{"42.50", "1e1", "-0.0", ".5", "5.", "+2.5", "NaN", "inf", "1e400", "1e-400", "0x10", "755384079777038.25", "", "1_0"} {
		f.Add(s)
	}
	h, _ := NewFloatHandler(nil)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := h.Canonical(v)
		if err != nil {
			return
		}
		if strings.ContainsAny(got, "eE") || strings.HasSuffix(got, ".0") {
			t.Fatalf("Canonical(%q) = %q uses an exponent or a trailing .0", v, got)
		}
		want, _ := rustParseF64(v)
		back, perr := rustParseF64(got)
		if perr != nil || math.Float64bits(back) != math.Float64bits(want) {
			t.Fatalf("Canonical(%q) = %q reads back as %v, not %v", v, got, back, want)
		}
		again, err := h.Canonical(got)
		if err != nil || again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", v, got, got, again, err)
		}
	})
}
