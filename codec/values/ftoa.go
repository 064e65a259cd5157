package values

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
)

// Shortest F32 formatting without strconv's general machinery, for the
// floats JSON writes in plain form (float32(1e-6) ≤ |v| < 2^24, the range
// sensor data and images live in). The value's rounding interval (half an
// ulp each side, a quarter below a power of two; inclusive when the
// mantissa is even, as reading rounds half to even) is scaled exactly by a
// power of ten into 64-bit fixed point; the longest run of trailing zeros
// any integer in it has gives the shortest digits, and among those the one
// nearest the value (ties as strconv breaks them) is written. That is strconv's answer (shortest, then nearest), so
// the bytes are identical: TestAppendFloatMatchesStrconv and
// FuzzAppendFloat compare the two. Outside that range strconv writes.

// pow5 holds 5^p for the scales used (p = 8 - floor(log10 v), 1…15).
var pow5 = [16]uint64{1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125, 9765625, 48828125,
	244140625, 1220703125, 6103515625, 30517578125}

// decade holds 10^k as float64 for k = -7…8 (index k+7), for the decade
// of v.
var decade = [16]float64{1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// div10 divides by 10^j (j ≤ 15), with constant divisors up to 10^9.
func div10(x uint64, j int) uint64 {
	switch j {
	case 0:
		return x
	case 1:
		return x / 10
	case 2:
		return x / 100
	case 3:
		return x / 1000
	case 4:
		return x / 10000
	case 5:
		return x / 100000
	case 6:
		return x / 1000000
	case 7:
		return x / 10000000
	case 8:
		return x / 100000000
	case 9:
		return x / 1000000000
	}
	return x / pow10u[j]
}

// pairs holds "00" to "99".
const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

var pow10u = [16]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// AppendFloat32 appends a finite float32 as AppendFloat(dst, float64(v),
// 32) does.
func AppendFloat32(dst []byte, v float32) []byte {
	if out, ok := appendShort32(dst, v); ok {
		return out
	}
	return appendFloatStrconv(dst, float64(v), 32)
}

// AppendFloat32s appends the values of vs as AppendFloat32 does,
// separated by commas, up to the first non-finite one; it returns the
// output and the number of values written.
func AppendFloat32s(dst []byte, vs []float32) ([]byte, int) {
	for i, v := range vs {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return dst, i
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendShort32(dst, v); !ok {
			dst = appendFloatStrconv(dst, float64(v), 32)
		}
	}
	return dst, len(vs)
}

// appendShort32 writes v when float32(1e-6) ≤ |v| < 2^24; ok is false
// otherwise.
func appendShort32(dst []byte, v float32) ([]byte, bool) {
	fb := math.Float32bits(v)
	neg := fb>>31 != 0
	fb &^= 1 << 31
	a := math.Float32frombits(fb)
	if !(a >= 1e-6 && a < 1<<24) {
		return dst, false
	}
	if u := uint32(a); float32(u) == a { // integral: the digits themselves
		if neg {
			dst = append(dst, '-')
		}
		return strconv.AppendUint(dst, uint64(u), 10), true
	}
	exp := int(fb >> 23) // biased; ≥ 1 here (no subnormals)
	m := uint64(fb&(1<<23-1) | 1<<23)
	e2 := exp - 150                  // a = m × 2^e2
	k := ((exp - 127) * 78913) >> 18 // floor(log10 2^floor(log2 a)): the decade, or one below
	if k+8 < len(decade) && float64(a) >= decade[k+8] {
		k++
	}
	p := 8 - k // a × 10^p has nine integer digits
	f := 2 - e2 - p
	if p < 1 || p >= len(pow5) || f < 0 || f > 33 {
		return dst, false
	}
	// The value and its interval bounds in units of 2^(e2-2), scaled by
	// 10^p: fixed point with f fractional bits, exact in 64 bits.
	mv := 4 * m
	mm := mv - 2
	if m == 1<<23 { // a power of two: the ulp below is half the ulp above
		mm = mv - 1
	}
	p5 := pow5[p]
	lo64, v64, hi64 := mm*p5, mv*p5, (mv+2)*p5
	mask := uint64(1)<<f - 1
	var lo, hi uint64
	if m&1 == 0 { // bounds read back to v (half to even)
		lo, hi = (lo64+mask)>>f, hi64>>f
	} else {
		lo, hi = lo64>>f+1, (hi64+mask)>>f-1
	}
	if lo > hi {
		return dst, false
	}
	j := 0
	for j < 9 {
		l2, h2 := (lo+9)/10, hi/10
		if l2 > h2 {
			break
		}
		lo, hi = l2, h2
		j++
	}
	// The candidate nearest the value, kept in the interval; a tie goes
	// to the even digit, but up for a power of two (strconv's Dragonbox
	// rounds the shorter interval's case up).
	q := div10(v64>>f, j)
	unit := pow10u[j] << f
	r := v64 - q*unit
	if 2*r > unit || 2*r == unit && (q&1 == 1 || m == 1<<23) {
		q++
	}
	q = min(max(q, lo), hi)
	// In place, from the right: the fraction (p-j ≥ 1 digits, as v is not
	// integral, zero-padded on the left), the point, the integer part or
	// "0"; two digits a step.
	frac := p - j
	ip := div10(q, frac) // the integer part
	if ip < 10 {
		return appendUnits(dst, neg, ip, q-ip*pow10u[frac], frac), true
	}
	size := 1 + frac + 1 + btoi(neg)
	for t := ip; t >= 10; t /= 10 {
		size++
	}
	start := len(dst)
	if cap(dst)-start < size {
		dst = slices.Grow(dst, size)
	}
	dst = dst[:start+size]
	out := dst[start:]
	i := len(out)
	for ; frac >= 2; frac -= 2 {
		d := q % 100 * 2
		q /= 100
		i -= 2
		out[i], out[i+1] = pairs[d], pairs[d+1]
	}
	if frac == 1 {
		i--
		out[i] = byte('0' + q%10)
		q /= 10
	}
	i--
	out[i] = '.'
	if q == 0 {
		i--
		out[i] = '0'
	}
	for ; q >= 10; q /= 100 {
		d := q % 100 * 2
		i -= 2
		out[i], out[i+1] = pairs[d], pairs[d+1]
	}
	if q > 0 {
		i--
		out[i] = byte('0' + q)
	}
	if neg {
		out[0] = '-'
	}
	return dst, true
}

// appendUnits writes [-]d.fff… for a one-digit integer part d and a
// fraction fp of frac digits (1…15), the fraction eight digits a store
// (whole words written into the spare capacity past the text, which the
// length then leaves out).
func appendUnits(dst []byte, neg bool, d, fp uint64, frac int) []byte {
	start := len(dst)
	n := btoi(neg) + 2 + frac
	if cap(dst)-start < n+8 {
		dst = slices.Grow(dst, n+8)
	}
	out := dst[start : start+n+8]
	o := btoi(neg)
	out[0] = '-'
	out[o] = byte('0' + d)
	out[o+1] = '.'
	if frac <= 8 {
		binary.LittleEndian.PutUint64(out[o+2:], digits8(uint32(fp))>>(8*(8-frac)))
	} else {
		binary.LittleEndian.PutUint64(out[o+2:], digits8(uint32(fp/1e8))>>(8*(16-frac)))
		binary.LittleEndian.PutUint64(out[o+2+frac-8:], digits8(uint32(fp%1e8)))
	}
	return dst[:start+n]
}

// digits8 writes x < 10^8 as eight ASCII digits, zero-padded, in the
// bytes of a little-endian word (the first digit lowest): the halves of
// four digits split into pairs, then the pairs into digits, in parallel
// lanes (a multiply and shift stands for each division: x*10486>>20 is
// x/100 below 10^4, x*103>>10 is x/10 below 100).
func digits8(x uint32) uint64 {
	v := uint64(x/10000) | uint64(x%10000)<<32
	q := (v * 10486 >> 20) & 0x0000007f0000007f
	v = q | (v-q*100)<<16
	q = (v * 103 >> 10) & 0x000f000f000f000f
	v = q | (v-q*10)<<8
	return v + 0x3030303030303030
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
