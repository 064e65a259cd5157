package values

import "math"

var pow10 = [23]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ParseNumber parses valid JSON number text at the given width (32 or 64)
// to the nearest float of that width. Short decimals take Clinger's exact
// fast path (a mantissa below 2^53 scaled by an exact power of ten is
// correctly rounded to 64 bits); a 32-bit result that lands exactly on a
// midpoint between two F32 values, and everything else, goes through
// strconv at the target width, so the F32 halfway case stays exact.
func ParseNumber(b []byte, bits int) float64 {
	i := 0
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		i = 1
	}
	var mant uint64
	digits := 0
	exp := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if mant != 0 || b[i] != '0' {
			digits++
		}
		mant = mant*10 + uint64(b[i]-'0')
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if mant != 0 || b[i] != '0' {
				digits++
			}
			mant = mant*10 + uint64(b[i]-'0')
			exp--
		}
	}
	if i < len(b) { // an exponent: slow path
		return ParseFloat(b, bits)
	}
	return FromDecimal(b, neg, mant, digits, exp, bits)
}

// FromDecimal returns the float of width bits nearest to the decimal
// (-1)^neg × mant × 10^exp, where digits counts mant's significant digits
// and text is the number's JSON text (for the slow path).
func FromDecimal(text []byte, neg bool, mant uint64, digits, exp, bits int) float64 {
	if digits > 15 || exp < -22 || exp > 0 || mant >= 1<<53 {
		return ParseFloat(text, bits)
	}
	f := float64(mant)
	if exp < 0 {
		f /= pow10[-exp]
	}
	if neg {
		f = -f
	}
	if bits == 32 && mant != 0 {
		// a 64-bit value exactly halfway between two F32 values would
		// round twice: let strconv decide
		if math.Float64bits(f)&(1<<29-1) == 1<<28 {
			return ParseFloat(text, bits)
		}
	}
	return f
}
