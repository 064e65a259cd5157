package notification

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestCoerce(t *testing.T) {
	tests := []struct {
		raw     string
		want    string
		wantErr error  // sentinel, checked with errors.Is
		errHas  string // substring of the error message
	}{
		{raw: `"abc"`, want: "abc"},
		{raw: `""`, want: ""},
		{raw: `"*"`, want: "*"},
		{raw: `"a\"b\\c\/d"`, want: `a"b\c/d`},
		{raw: `"\b\f\n\r\t"`, want: "\b\f\n\r\t"},
		{raw: `"caf\u00e9 é"`, want: "café é"},
		{raw: `"\ud83d\ude00"`, want: "😀"},
		{raw: `"\u0000"`, want: "\x00"},
		{raw: ` "padded" `, want: "padded"},
		{raw: `true`, want: "true"},
		{raw: `false`, want: "false"},
		{raw: `4`, want: "4"},
		{raw: "\t4\n", want: "4"},
		{raw: `4.0`, want: "4.0"},
		{raw: `12.25`, want: "12.25"},
		{raw: `-7`, want: "-7"},
		{raw: `-0`, want: "-0.0"},
		{raw: `1e3`, want: "1000.0"},
		{raw: `null`, wantErr: ErrNullValue, errHas: "null"},
		{raw: ` null `, wantErr: ErrNullValue},
		{raw: `{"gte": 4}`, wantErr: ErrObjectValue, errHas: "object"},
		{raw: `{}`, wantErr: ErrObjectValue},
		{raw: `[1, 2]`, wantErr: ErrArrayValue, errHas: "array"},
		{raw: `[]`, wantErr: ErrArrayValue},
		{raw: ``, errHas: "value is empty"},
		{raw: `   `, errHas: "value is empty"},
		{raw: `tru`, errHas: `value "tru" is not valid JSON`},
		{raw: `True`, errHas: "is not valid JSON"},
		{raw: `nul`, errHas: "is not valid JSON"},
		{raw: `{`, errHas: "is not valid JSON"},
		{raw: `[1,`, errHas: "is not valid JSON"},
		{raw: `'a'`, errHas: "is not valid JSON"},
		{raw: `"abc`, errHas: "it has no closing quote"},
		{raw: `"`, errHas: `value "\"" is not a valid JSON string: it has no closing quote`},
		{raw: `"a"b`, errHas: "text follows the closing quote"},
		{raw: `"a\`, errHas: "it ends inside an escape"},
		{raw: `"\x"`, errHas: `\x is not a JSON escape`},
		{raw: `"\u12"`, errHas: `\u must be followed by four hex digits`},
		{raw: `"\ud800"`, errHas: `\ud800 is a UTF-16 high surrogate not followed by a low surrogate`},
		{raw: `"\ud800\u0041"`, errHas: "not followed by a low surrogate"},
		{raw: `"\udc00"`, errHas: `\udc00 is a lone trailing UTF-16 surrogate`},
		{raw: "\"a\x01b\"", errHas: "control character U+0001 must be escaped"},
		{raw: "\"\xff\"", errHas: "it is not valid UTF-8"},
		{raw: "\"\xed\xa0\x80\"", errHas: "it is not valid UTF-8"},
		{raw: `+1`, errHas: "is not valid JSON"},
		{raw: `01`, errHas: "a leading zero must not be followed by digits"},
		{raw: `1e400`, errHas: "is out of range"},
		{raw: `-`, errHas: "a digit is required"},
	}
	for _, tc := range tests {
		got, err := Coerce(json.RawMessage(tc.raw))
		if tc.wantErr == nil && tc.errHas == "" {
			if err != nil || got != tc.want {
				t.Errorf("Coerce(%q) = %q, %v; want %q", tc.raw, got, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("Coerce(%q) = %q, want an error", tc.raw, got)
			continue
		}
		if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
			t.Errorf("Coerce(%q) error %v, want errors.Is %v", tc.raw, err, tc.wantErr)
		}
		if !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("Coerce(%q) error %q, want it to contain %q", tc.raw, err, tc.errHas)
		}
	}
}

func TestCoerceSentinelsDistinct(t *testing.T) {
	sentinels := []error{ErrNullValue, ErrObjectValue, ErrArrayValue}
	for i, a := range sentinels {
		for j, b := range sentinels {
			if (i == j) != errors.Is(a, b) {
				t.Errorf("errors.Is(%v, %v) = %v", a, b, errors.Is(a, b))
			}
		}
	}
}

// The expected texts are what serde_json 1.0.140 (default features, as
// Aviso builds it) prints for serde_json::from_str::<Value>(input), taken
// from a Rust program.
func TestCoerceNumberText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "-0.0"},
		{"0.0", "0.0"},
		{"-0.0", "-0.0"},
		{"4", "4"},
		{"-7", "-7"},
		{"100", "100"},
		{"4.0", "4.0"},
		{"12.250", "12.25"},
		{"12.25", "12.25"},
		{"1.5", "1.5"},
		{"-1.5", "-1.5"},
		{"3.14159", "3.14159"},
		{"0.1", "0.1"},
		{"0.3", "0.3"},
		{"0.1e1", "1.0"},
		{"1e3", "1000.0"},
		{"1E2", "100.0"},
		{"1e+2", "100.0"},
		{"1e-0", "1.0"},
		{"123.456e2", "12345.6"},
		{"1e15", "1000000000000000.0"},
		{"1e16", "1e+16"},
		{"1e21", "1e+21"},
		{"1e22", "1e+22"},
		{"1e23", "1e+23"},
		{"1e308", "1e+308"},
		{"0.0001", "0.0001"},
		{"1e-5", "0.00001"},
		{"0.00001", "0.00001"},
		{"2.5e-5", "0.000025"},
		{"1e-7", "1e-7"},
		{"1.5e-7", "1.5e-7"},
		{"1.0000000000000002", "1.0000000000000002"},
		{"0.30000000000000004", "0.30000000000000004"},
		{"123456789.123456789", "123456789.12345679"},
		{"9007199254740993", "9007199254740993"},
		{"9999999999999999", "9999999999999999"},
		{"100000000000000000", "100000000000000000"},
		{"1000000000000000000000", "1e+21"},
		{"123456789012345678901234567890", "1.2345678901234568e+29"},
		{"18446744073709551615", "18446744073709551615"},
		{"18446744073709551616", "1.8446744073709552e+19"},
		{"12345678901234567890.5", "1.2345678901234567e+19"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"-9223372036854775809", "-9.223372036854776e+18"},
		{"-18446744073709551615", "-1.8446744073709552e+19"},
		{"5e-324", "5e-324"},
		{"4.9406564584124654e-324", "5e-324"},
		{"2.4e-324", "0.0"},
		{"1e-400", "0.0"},
		{"-1e-400", "-0.0"},
		{"0e99999999999", "0.0"},
		{"1e-99999999999", "0.0"},
		{"2.2250738585072014e-308", "2.2250738585072014e-308"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		// serde_json's default parser is not always correctly rounded;
		// these print what Aviso prints, not the nearest float.
		{"-0.18173152387941563463", "-0.18173152387941566"},
		{"5892660321456285.98", "5892660321456285.0"},
		{"3438132514460451509335409E22", "3.438132514460451e+46"},
		{"2586309404298164039e200", "2.5863094042981643e+218"},
	}
	for _, tc := range tests {
		got, err := CoerceNumberText(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CoerceNumberText(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCoerceNumberTextErrors(t *testing.T) {
	tests := []struct{ in, errHas string }{
		{"", `"" is not a valid JSON number: a digit is required`},
		{"-", "a digit is required"},
		{"+1", `"+1" is not a valid JSON number: a digit is required where '+' is`},
		{"01", "a leading zero must not be followed by digits"},
		{"-01", "a leading zero must not be followed by digits"},
		{"1.", "a digit is required after the decimal point"},
		{".5", "a digit is required where '.' is"},
		{"1e", "a digit is required in the exponent"},
		{"1e+", "a digit is required in the exponent"},
		{"1x", `unexpected "x" after the number`},
		{" 1", "a digit is required where ' ' is"},
		{"1 ", `unexpected " " after the number`},
		{"0x10", `unexpected "x10" after the number`},
		{"Infinity", "a digit is required"},
		{"NaN", "a digit is required"},
		// serde_json rejects numbers beyond f64, including the one just
		// above the largest float its fast parser can reach.
		{"1e309", `number "1e309" is out of range: its magnitude exceeds the largest 64-bit float`},
		{"1e400", "is out of range"},
		{"-1e400", "is out of range"},
		{"1.7976931348623158e308", "is out of range"},
		{"1e99999999999", "is out of range"},
	}
	for _, tc := range tests {
		got, err := CoerceNumberText(tc.in)
		if err == nil {
			t.Errorf("CoerceNumberText(%q) = %q, want an error", tc.in, got)
			continue
		}
		if !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("CoerceNumberText(%q) error %q, want it to contain %q", tc.in, err, tc.errHas)
		}
	}
}

func TestRyuFormat(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{1234e7, "12340000000.0"},
		{12.34, "12.34"},
		{0.001234, "0.001234"},
		{0.0001234, "0.0001234"},
		{0.00001234, "0.00001234"},
		{0.000001234, "1.234e-6"},
		{1e30, "1e+30"},
		{1234e30, "1.234e+33"},
		{9999999999999998, "9999999999999998.0"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{123456789012345.67, "123456789012345.67"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{-math.SmallestNonzeroFloat64, "-5e-324"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
	}
	for _, tc := range tests {
		if got := ryuFormat(tc.f); got != tc.want {
			t.Errorf("ryuFormat(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func FuzzCoerce(f *testing.F) {
	for _, s := range []string{
		`"abc"`, `""`, `"\ud83d\ude00"`, `"\ud800"`, `true`, `false`, `null`, `{}`, `[]`,
		`4`, `-0`, `4.0`, `1e16`, `1.5e-7`, `18446744073709551616`, `-9223372036854775809`,
		`1e400`, `5e-324`, `1.7976931348623157e308`, `12345678901234567890.5`, "\"\xff\"", `01`, `"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := Coerce(raw)
		if err != nil {
			return
		}
		v := coerceTrimSpace(raw)
		switch v[0] {
		case '"':
			// A decoded string agrees with encoding/json.
			var want string
			if jerr := json.Unmarshal(v, &want); jerr != nil || want != got {
				t.Fatalf("Coerce(%q) = %q; encoding/json gives %q, %v", raw, got, want, jerr)
			}
		case 't', 'f':
			if got != string(v) {
				t.Fatalf("Coerce(%q) = %q", raw, got)
			}
		default:
			checkCoercedNumber(t, string(v), got)
		}
	})
}

func FuzzCoerceNumberText(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "4.0", "12.250", "1e3", "1E2", "1e16", "1e15", "0.00001", "1.5e-7",
		"123456789012345678901234567890", "18446744073709551615", "18446744073709551616",
		"-9223372036854775808", "-9223372036854775809", "5e-324", "1.7976931348623157e308",
		"1e400", "1e-400", "0e99999999999", "1.", ".5", "+1", "01",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, num string) {
		got, err := CoerceNumberText(num)
		if err != nil {
			if json.Valid([]byte(num)) && !strings.ContainsAny(num, "\t\n\r ") &&
				!strings.Contains(err.Error(), "out of range") && num != "" && (num[0] == '-' || (num[0] >= '0' && num[0] <= '9')) {
				t.Fatalf("CoerceNumberText(%q) rejected a valid JSON number: %v", num, err)
			}
			return
		}
		if !json.Valid([]byte(num)) {
			t.Fatalf("CoerceNumberText(%q) = %q for text that is not JSON", num, got)
		}
		checkCoercedNumber(t, num, got)
	})
}

// checkCoercedNumber checks the properties of a successful number
// coercion: integers are printed unchanged, and a float prints as the
// shortest text of the float that the serde_json parser produced.
func checkCoercedNumber(t *testing.T, num, got string) {
	t.Helper()
	n, err := serdeParseNumber(num)
	if err != nil {
		t.Fatalf("serdeParseNumber(%q) failed after CoerceNumberText succeeded: %v", num, err)
	}
	switch n.kind {
	case serdePosInt, serdeNegInt:
		if strings.TrimLeft(num, "-") != strings.TrimLeft(got, "-") {
			t.Fatalf("integer %q printed as %q", num, got)
		}
	default:
		back, perr := strconv.ParseFloat(got, 64)
		if perr != nil || math.Float64bits(back) != math.Float64bits(n.f) {
			t.Fatalf("%q printed as %q, which reads back as %v, not %v", num, got, back, n.f)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("%q printed as %q, which is not a JSON number", num, got)
		}
	}
}
