package notification

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestNewIntHandler(t *testing.T) {
	tests := []struct {
		rng      []string
		describe string
		errHas   string
	}{
		{rng: nil, describe: `{"range":null}`},
		{rng: []string{"0", "100000"}, describe: `{"range":[0,100000]}`},
		{rng: []string{"-5", "+5"}, describe: `{"range":[-5,5]}`},
		{rng: []string{"7", "7"}, describe: `{"range":[7,7]}`},
		{rng: []string{"-9223372036854775808", "9223372036854775807"}, describe: `{"range":[-9223372036854775808,9223372036854775807]}`},
		{rng: []string{}, errHas: "range must be [min, max] with exactly two integers, got 0 values"},
		{rng: []string{"5"}, errHas: "range must be [min, max] with exactly two integers, got 1 values"},
		{rng: []string{"1", "2", "3"}, errHas: "got 3 values"},
		{rng: []string{"a", "1"}, errHas: `range min "a" is not a 64-bit integer: invalid digit found in string`},
		{rng: []string{"1.0", "2"}, errHas: `range min "1.0" is not a 64-bit integer`},
		{rng: []string{"1", "9223372036854775808"}, errHas: `range max "9223372036854775808" is not a 64-bit integer: number too large to fit in target type`},
		{rng: []string{"", "1"}, errHas: `range min "" is not a 64-bit integer: cannot parse integer from empty string`},
		{rng: []string{"10", "5"}, errHas: "range min 10 is greater than max 5; write the range as [min, max]"},
	}
	for _, tc := range tests {
		h, err := NewIntHandler(tc.rng)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("NewIntHandler(%q) error = %v; want one containing %q", tc.rng, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(h.Describe())
		if string(got) != tc.describe || h.Type() != "IntHandler" {
			t.Errorf("Describe() = %s, Type() = %q; want %s", got, h.Type(), tc.describe)
		}
	}
}

func TestIntHandlerCanonical(t *testing.T) {
	free, _ := NewIntHandler(nil)
	ranged, _ := NewIntHandler([]string{"0", "100"})
	tests := []struct {
		h                *IntHandler
		in, want, errHas string
	}{
		{h: free, in: "5", want: "5"},
		{h: free, in: "007", want: "7"},
		{h: free, in: "000", want: "0"},
		{h: free, in: "+3", want: "3"},
		{h: free, in: "-0", want: "0"},
		{h: free, in: "+0", want: "0"},
		{h: free, in: "-42", want: "-42"},
		{h: free, in: "9223372036854775807", want: "9223372036854775807"},
		{h: free, in: "-9223372036854775808", want: "-9223372036854775808"},
		{h: free, in: "00000000000000000000000000042", want: "42"},
		{h: free, in: "4.5", errHas: `value "4.5" is not a valid integer: invalid digit found in string (only an optional sign and ASCII digits are allowed)`},
		{h: free, in: "4.0", errHas: `value "4.0" is not a valid integer`},
		{h: free, in: "1e2", errHas: `value "1e2" is not a valid integer`},
		{h: free, in: "abc", errHas: `value "abc" is not a valid integer`},
		{h: free, in: " 3", errHas: `value " 3" is not a valid integer`},
		{h: free, in: "3 ", errHas: `value "3 " is not a valid integer`},
		{h: free, in: "+", errHas: `value "+" is not a valid integer`},
		{h: free, in: "-", errHas: `value "-" is not a valid integer`},
		{h: free, in: "+-1", errHas: `value "+-1" is not a valid integer`},
		{h: free, in: "1_000", errHas: `value "1_000" is not a valid integer`},
		{h: free, in: "0x10", errHas: `value "0x10" is not a valid integer`},
		{h: free, in: "１", errHas: `value "１" is not a valid integer`},
		{h: free, in: "true", errHas: `value "true" is not a valid integer`},
		{h: free, in: "9223372036854775808", errHas: "is not a valid integer: number too large to fit in target type"},
		{h: free, in: "-9223372036854775809", errHas: "is not a valid integer: number too small to fit in target type"},
		{h: free, in: "", errHas: "value is empty; an integer is required"},
		{h: ranged, in: "0", want: "0"},
		{h: ranged, in: "100", want: "100"},
		{h: ranged, in: "050", want: "50"},
		{h: ranged, in: "-1", errHas: "value -1 is outside the allowed range [0, 100]"},
		{h: ranged, in: "101", errHas: "value 101 is outside the allowed range [0, 100]"},
		{h: ranged, in: "-0", want: "0"},
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

func FuzzIntHandlerCanonical(f *testing.F) {
	for _, s := range []string{"5", "007", "+3", "-0", "-9223372036854775808", "9223372036854775808", "4.5", "", "+", " 3", "150"} {
		f.Add(s)
	}
	h, _ := NewIntHandler([]string{"-1000", "1000"})
	f.Fuzz(func(t *testing.T, v string) {
		got, err := h.Canonical(v)
		n, perr := strconv.ParseInt(v, 10, 64)
		if err != nil {
			if perr == nil && n >= -1000 && n <= 1000 {
				t.Fatalf("Canonical(%q) rejected an integer in range: %v", v, err)
			}
			return
		}
		if perr != nil || strconv.FormatInt(n, 10) != got {
			t.Fatalf("Canonical(%q) = %q; strconv gives %d, %v", v, got, n, perr)
		}
		again, err := h.Canonical(got)
		if err != nil || again != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", v, got, got, again, err)
		}
	})
}
