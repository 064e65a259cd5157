package configs

import (
	"strconv"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "50s", want: 50 * time.Second},
		{in: "10m", want: 10 * time.Minute},
		{in: "1h", want: time.Hour},
		{in: "2d", want: 48 * time.Hour},
		{in: "1w", want: 7 * 24 * time.Hour},
		{in: "7D", want: 7 * 24 * time.Hour},
		{in: "30M", want: 30 * time.Minute},
		{in: " 10m ", want: 10 * time.Minute},
		{in: "007s", want: 7 * time.Second},
		{in: "9223372036s", want: 9223372036 * time.Second},
		{in: "15250w", want: 15250 * 7 * 24 * time.Hour},
		{in: "", wantErr: "empty duration; write a number and a unit, e.g. 30m or 7d"},
		{in: "  ", wantErr: "empty duration; write a number and a unit, e.g. 30m or 7d"},
		{in: "10", wantErr: `invalid duration "10": missing unit; use s, m, h, d or w`},
		{in: "abc", wantErr: `invalid duration "abc": must start with a whole number, e.g. 30m or 7d`},
		{in: "-5s", wantErr: `invalid duration "-5s": must start with a whole number, e.g. 30m or 7d`},
		{in: "+5s", wantErr: `invalid duration "+5s": must start with a whole number, e.g. 30m or 7d`},
		{in: "1.5h", wantErr: `invalid duration "1.5h": unknown unit ".5h"; use s, m, h, d or w`},
		{in: "10x", wantErr: `invalid duration "10x": unknown unit "x"; use s, m, h, d or w`},
		{in: "1mo", wantErr: `invalid duration "1mo": unknown unit "mo"; use s, m, h, d or w`},
		{in: "1 h", wantErr: `invalid duration "1 h": unknown unit " h"; use s, m, h, d or w`},
		{in: "0s", wantErr: `invalid duration "0s": must be greater than zero`},
		{in: "0w", wantErr: `invalid duration "0w": must be greater than zero`},
		{in: "9223372036S", want: 9223372036 * time.Second},
		{in: "153722867m", want: 153722867 * time.Minute},
		{in: "153722868m", wantErr: `invalid duration "153722868m": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years)`},
		{in: "9223372037s", wantErr: `invalid duration "9223372037s": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years)`},
		{in: "15251w", wantErr: `invalid duration "15251w": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years)`},
		{in: "18446744073709551616s", wantErr: `invalid duration "18446744073709551616s": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years)`},
		{in: "١s", wantErr: `invalid duration "١s": must start with a whole number, e.g. 30m or 7d`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseDuration(%q) = %v, %v; want error %s", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "100K", want: 100_000},
		{in: "100Ki", want: 102_400},
		{in: "2M", want: 2_000_000},
		{in: "2Mi", want: 2_097_152},
		{in: "1G", want: 1_000_000_000},
		{in: "2Gi", want: 2 << 30},
		{in: "3T", want: 3_000_000_000_000},
		{in: "1Ti", want: 1 << 40},
		{in: " 64Ki ", want: 65536},
		{in: "8388607Ti", want: 8388607 << 40},
		{in: "9223372T", want: 9223372 * 1_000_000_000_000},
		{in: "", wantErr: "empty size; write a number and a unit, e.g. 500M or 2Gi"},
		{in: "1024", wantErr: `invalid size "1024": missing unit; use K, Ki, M, Mi, G, Gi, T or Ti`},
		{in: "Mi", wantErr: `invalid size "Mi": must start with a whole number, e.g. 500M or 2Gi`},
		{in: "-1M", wantErr: `invalid size "-1M": must start with a whole number, e.g. 500M or 2Gi`},
		{in: "10m", wantErr: `invalid size "10m": unknown unit "m"; use K, Ki, M, Mi, G, Gi, T or Ti (case-sensitive)`},
		{in: "10mi", wantErr: `invalid size "10mi": unknown unit "mi"; use K, Ki, M, Mi, G, Gi, T or Ti (case-sensitive)`},
		{in: "10MiB", wantErr: `invalid size "10MiB": unknown unit "MiB"; use K, Ki, M, Mi, G, Gi, T or Ti (case-sensitive)`},
		{in: "10B", wantErr: `invalid size "10B": unknown unit "B"; use K, Ki, M, Mi, G, Gi, T or Ti (case-sensitive)`},
		{in: "0Mi", wantErr: `invalid size "0Mi": must be greater than zero`},
		{in: "8388608Ti", wantErr: `invalid size "8388608Ti": too large (at most 8 EiB)`},
		{in: "9223373T", wantErr: `invalid size "9223373T": too large (at most 8 EiB)`},
		{in: "99999999999999999999K", wantErr: `invalid size "99999999999999999999K": too large (at most 8 EiB)`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseSize(%q) = %v, %v; want error %s", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSize(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzParseDuration checks that any accepted duration is positive, whole
// seconds, and reads back the same when written in seconds.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"50s", "10m", "1h", "2d", "1w", "7D", "", "10", "abc", "0s", "9223372037s", "15250w", " 1h "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if d <= 0 || d%time.Second != 0 {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
		back, err := ParseDuration(strconv.FormatInt(int64(d/time.Second), 10) + "s")
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, but %ds reads %v, %v", s, d, d/time.Second, back, err)
		}
	})
}

// FuzzParseSize checks that any accepted size is positive and reads back
// the same when written in bytes of K (when divisible).
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"100K", "100Ki", "2Gi", "1Ti", "", "1024", "10m", "0Mi", "8388608Ti", " 5M "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if n <= 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if n%1000 == 0 {
			back, err := ParseSize(strconv.FormatInt(n/1000, 10) + "K")
			if err != nil || back != n {
				t.Fatalf("ParseSize(%q) = %d, but %dK reads %d, %v", s, n, n/1000, back, err)
			}
		}
	})
}
