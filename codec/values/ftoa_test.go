package values

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkFloat compares AppendFloat (and AppendFloat32) with the strconv
// path at both widths.
func checkFloat(t testing.TB, f float64) {
	t.Helper()
	for _, bits := range []int{32, 64} {
		want := string(appendFloatStrconv([]byte("x"), f, bits))
		if got := string(AppendFloat([]byte("x"), f, bits)); got != want {
			t.Fatalf("AppendFloat(%v (%#x), %d) = %s, want %s", f, math.Float64bits(f), bits, got, want)
		}
		if bits == 32 && float64(float32(f)) == f {
			if got := string(AppendFloat32([]byte("x"), float32(f))); got != want {
				t.Fatalf("AppendFloat32(%v) = %s, want %s", float32(f), got, want)
			}
		}
	}
}

// TestAppendFloatMatchesStrconv: the fast paths write strconv's bytes on
// random bit patterns, every float32 near the edges of the fast range, the
// decades and the powers of two, integral values, subnormals, extremes,
// signed zeros and float64 inputs halfway between two float32s.
func TestAppendFloatMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	n := 200000
	if testing.Short() {
		n = 20000
	}
	for range n {
		checkFloat(t, float64(math.Float32frombits(r.Uint32())))
		checkFloat(t, float64(r.Float32()))
		checkFloat(t, float64(r.Float32()*640))
		checkFloat(t, math.Float64frombits(r.Uint64()))
	}
	around := func(f32 float32, k int) {
		for v, i := f32, 0; i < k && !math.IsInf(float64(v), 0); i++ {
			checkFloat(t, float64(v))
			checkFloat(t, -float64(v))
			v = math.Nextafter32(v, float32(math.Inf(1)))
		}
		for v, i := f32, 0; i < k; i++ {
			checkFloat(t, float64(v))
			v = math.Nextafter32(v, 0)
		}
	}
	for _, edge := range []float32{1e-6, 1 << 24, 1 << 23, 1, 0.1, 0.5, 1.5, 100, 640, math.MaxFloat32, math.SmallestNonzeroFloat32, 1.1754944e-38} {
		around(edge, 5000)
	}
	for e := -149; e <= 127; e++ {
		around(float32(math.Ldexp(1, e)), 20)
	}
	for k := -45; k <= 38; k++ {
		around(float32(math.Pow(10, float64(k))), 50)
	}
	for i := range 1 << 16 {
		checkFloat(t, float64(i))
		checkFloat(t, float64(i)+0.5)
		checkFloat(t, float64(i)/1024)
	}
	for range 50000 { // halfway between two float32s, and a hair either side
		f := float64(math.Float32frombits(r.Uint32() &^ (1 << 31)))
		if math.IsInf(f, 0) || math.IsNaN(f) || f == math.MaxFloat32 {
			continue
		}
		next := float64(math.Nextafter32(float32(f), float32(math.Inf(1))))
		mid := f + (next-f)/2
		checkFloat(t, mid)
		checkFloat(t, math.Nextafter(mid, 0))
		checkFloat(t, math.Nextafter(mid, math.Inf(1)))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 - 1, -(1<<53 - 1), 1e21, 1e-7, 123456789012345678} {
		checkFloat(t, f)
	}
}

// FuzzAppendFloat: AppendFloat writes strconv's bytes for any float64 and
// any float32 bit pattern, at both widths.
func FuzzAppendFloat(f *testing.F) {
	for _, s := range []uint64{0, 1 << 63, 0x3f800000, 0x358637bd, 0x4b800000, 0x4b7fffff, 0x00000001, 0x7f7fffff, 0x3dcccccd, math.Float64bits(0.1), math.Float64bits(1 << 53)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b uint64) {
		if f64 := math.Float64frombits(b); !math.IsNaN(f64) && !math.IsInf(f64, 0) {
			checkFloat(t, f64)
		}
		if f32 := float64(math.Float32frombits(uint32(b))); !math.IsNaN(f32) && !math.IsInf(f32, 0) {
			checkFloat(t, f32)
		}
	})
}

// BenchmarkAppendFloat32: the shortest F32 path against strconv (the
// previous path) on the same floats, in one run.
func BenchmarkAppendFloat32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	fs := make([]float32, 4096)
	for i := range fs {
		fs[i] = r.Float32() * 100
	}
	b.Run("herald", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := range b.N {
			buf = AppendFloat32(buf[:0], fs[i&4095])
		}
	})
	b.Run("strconv", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := range b.N {
			buf = appendFloatStrconv(buf[:0], float64(fs[i&4095]), 32)
		}
	})
}

// TestAppendFloat32s: runs stop before a non-finite value and join with
// commas.
func TestAppendFloat32s(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	for _, c := range []struct {
		vs   []float32
		want string
		n    int
	}{
		{nil, "", 0}, {[]float32{nan}, "", 0}, {[]float32{0.1, -2, 1e-7, nan, 3}, "0.1,-2,1e-7", 3},
		{[]float32{1.5, 3.4028235e38, inf}, "1.5,3.4028235e+38", 2}, {[]float32{0, 16777216}, "0,16777216", 2},
	} {
		out, n := AppendFloat32s(nil, c.vs)
		if string(out) != c.want || n != c.n {
			t.Errorf("%v: %q %d, want %q %d", c.vs, out, n, c.want, c.n)
		}
	}
}
