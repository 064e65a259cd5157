package values

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

func TestParseNumberMatchesStrconv(t *testing.T) {
	cases := []string{"0", "-0", "0.1", "-0.0", "7.038531e-26", "16777217", "0.52490145", "123456.789", "1e5",
		"3.4028235e38", "1.4e-45", "9007199254740993", "0.000000000000000000001", "99999999999999999999", "1.5", "-2.25"}
	r := rand.New(rand.NewPCG(1, 1))
	for range 20000 {
		f := r.Float32() * float32(math.Pow(10, float64(r.IntN(12)-6)))
		cases = append(cases, strconv.FormatFloat(float64(f), 'f', -1, 32), strconv.FormatFloat(r.Float64()*1e6, 'f', r.IntN(12), 64))
	}
	for _, c := range cases {
		for _, bits := range []int{32, 64} {
			want, _ := strconv.ParseFloat(c, bits)
			got := ParseNumber([]byte(c), bits)
			if bits == 32 {
				if math.Float32bits(float32(got)) != math.Float32bits(float32(want)) {
					t.Fatalf("%s at 32: %x, want %x", c, math.Float32bits(float32(got)), math.Float32bits(float32(want)))
				}
			} else if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%s at 64: %v, want %v", c, got, want)
			}
		}
	}
}

// TestF32Midpoints: decimals that read as a 64-bit value exactly halfway
// between two F32 values still round once, to the right F32.
func TestF32Midpoints(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for range 20000 {
		a := math.Float32frombits(r.Uint32()&0x3fffffff | 0x30000000)
		b := math.Nextafter32(a, float32(math.Inf(1)))
		mid := (float64(a) + float64(b)) / 2
		text := strconv.FormatFloat(mid, 'f', -1, 64)
		want, _ := strconv.ParseFloat(text, 32)
		if got := ParseNumber([]byte(text), 32); float32(got) != float32(want) {
			t.Fatalf("%s: got %v want %v", text, float32(got), float32(want))
		}
	}
}

func TestRFC3339(t *testing.T) {
	tests := []struct {
		in   string
		ns   int64
		code Code
		out  string
	}{
		{"2026-09-24T10:15:00.123456789+02:00", 1790237700123456789, "", "2026-09-24T08:15:00.123456789Z"},
		{"2026-09-24t08:15:00z", 1790237700000000000, "", "2026-09-24T08:15:00Z"},
		{"1970-01-01T00:00:00Z", 0, "", "1970-01-01T00:00:00Z"},
		{"1969-12-31T23:59:59.999999999Z", -1, "", "1969-12-31T23:59:59.999999999Z"},
		{"2000-02-29T00:00:00-23:59", 951868740000000000, "", "2000-02-29T23:59:00Z"},
		{"1900-02-29T00:00:00Z", 0, CodeInvalidDatetime, ""},
		{"2026-09-24T10:15:00.Z", 0, CodeInvalidDatetime, ""},
		{"2026-09-24T10:15:60Z", 0, CodeInvalidDatetime, ""},
		{"2026-09-24 10:15:00Z", 0, CodeInvalidDatetime, ""},
		{"2026-09-24T10:15:00+0200", 0, CodeInvalidDatetime, ""},
		{"1677-09-21T00:12:43.145224192Z", math.MinInt64, "", "1677-09-21T00:12:43.145224192Z"},
		{"2262-04-11T23:47:16.854775807Z", math.MaxInt64, "", "2262-04-11T23:47:16.854775807Z"},
	}
	for _, tt := range tests {
		ns, code := ParseRFC3339([]byte(tt.in), 9)
		if code != tt.code || (code == "" && ns != tt.ns) {
			t.Errorf("%s: %d %s, want %d %s", tt.in, ns, code, tt.ns, tt.code)
			continue
		}
		if code == "" {
			if got := string(AppendRFC3339(nil, ns, 9)); got != tt.out {
				t.Errorf("%s: formatted %s, want %s", tt.in, got, tt.out)
			}
		}
	}
	if got := string(AppendRFC3339(nil, 1790237700123456789, 6)); got != "2026-09-24T08:15:00.123456Z" {
		t.Errorf("µs: %s", got)
	}
	if got := string(AppendRFC3339(nil, 1790237700100000000, 6)); got != "2026-09-24T08:15:00.1Z" {
		t.Errorf("µs: %s", got)
	}
}

func TestAppendFloat(t *testing.T) {
	tests := []struct {
		f    float64
		bits int
		want string
	}{
		{0.1, 64, "0.1"}, {float64(float32(0.1)), 32, "0.1"}, {math.MaxFloat32, 32, "3.4028235e+38"},
		{1e-7, 64, "1e-7"}, {1e21, 64, "1e+21"}, {1e20, 64, "100000000000000000000"}, {math.Copysign(0, -1), 64, "-0"},
		{5e-324, 64, "5e-324"}, {float64(math.Float32frombits(1)), 32, "1e-45"},
	}
	for _, tt := range tests {
		if got := string(AppendFloat(nil, tt.f, tt.bits)); got != tt.want {
			t.Errorf("%v/%d = %s, want %s", tt.f, tt.bits, got, tt.want)
		}
	}
}

func TestIntegers(t *testing.T) {
	neg, mag, code := ParseIntegerLiteral([]byte("-9223372036854775808"))
	if v, ok := FitSigned(8, neg, mag); code != "" || !ok || v != math.MinInt64 {
		t.Fatal(v, ok, code)
	}
	if _, _, code := ParseIntegerLiteral([]byte("18446744073709551616")); code != CodeOutOfRange {
		t.Fatal(code)
	}
	if _, _, code := ParseIntegerLiteral([]byte("1.0")); code != CodeNotInteger {
		t.Fatal(code)
	}
}

func TestBase64(t *testing.T) {
	for _, bad := range []string{"AA", "AB==", "QUJ\nD", "_-8=", "A===", "AAAA\r"} {
		if _, ok := DecodeBase64(nil, []byte(bad)); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if out, ok := DecodeBase64(nil, []byte("/+8=")); !ok || string(out) != "\xff\xef" {
		t.Error(out, ok)
	}
}

// TestRFC3339Offsets: any instant written with any offset and any
// fraction length reads back as the same nanosecond, and the UTC text
// herald writes reads back exactly.
func TestRFC3339Offsets(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 20000 {
		ns := int64(r.Uint64())
		off := (r.IntN(2*1439+1) - 1439) * 60 // −23:59 … +23:59
		tm := time.Unix(0, ns).In(time.FixedZone("", off))
		text := tm.Format(time.RFC3339Nano)
		got, code := ParseRFC3339([]byte(text), 9)
		if code != "" {
			t.Fatalf("%s: %s", text, code)
		}
		if got != ns {
			t.Fatalf("%s: %d, want %d", text, got, ns)
		}
		if back, _ := ParseRFC3339(AppendRFC3339(nil, ns, 9), 9); back != ns {
			t.Fatalf("UTC text of %d reads back as %d", ns, back)
		}
	}
}
