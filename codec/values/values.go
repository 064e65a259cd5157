package values

import (
	"encoding/base64"
	"math"
	"strconv"
	"unsafe"

	"github.com/herald-gateway/herald/codec/types"
)

// Int range limits per integer kind.
var (
	minInt  = map[types.Kind]int64{types.I8: math.MinInt8, types.I16: math.MinInt16, types.I32: math.MinInt32, types.I64: math.MinInt64}
	maxInt  = map[types.Kind]int64{types.I8: math.MaxInt8, types.I16: math.MaxInt16, types.I32: math.MaxInt32, types.I64: math.MaxInt64}
	maxUint = map[types.Kind]uint64{types.U8: math.MaxUint8, types.U16: math.MaxUint16, types.U32: math.MaxUint32, types.U64: math.MaxUint64}
)

// IntRange returns the inclusive range of a signed integer kind.
func IntRange(k types.Kind) (lo, hi int64) { return minInt[k], maxInt[k] }

// UintMax returns the largest value of an unsigned integer kind.
func UintMax(k types.Kind) uint64 { return maxUint[k] }

// ParseIntegerLiteral reads a JSON number literal that must be an integer
// (no fraction, no exponent). It returns the sign and magnitude, NotInteger
// for a number with a fraction or exponent, OutOfRange when the magnitude
// exceeds 64 bits. The text must already be valid JSON number syntax.
func ParseIntegerLiteral(b []byte) (neg bool, mag uint64, code Code) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		neg = true
		i = 1
	}
	for j := i; j < len(b); j++ {
		c := b[j]
		if c < '0' || c > '9' {
			return false, 0, CodeNotInteger
		}
	}
	for ; i < len(b); i++ {
		d := uint64(b[i] - '0')
		if mag > (math.MaxUint64-d)/10 {
			return false, 0, CodeOutOfRange
		}
		mag = mag*10 + d
	}
	return neg, mag, ""
}

// FitUnsigned checks a signed magnitude against an unsigned kind.
func FitUnsigned(k types.Kind, neg bool, mag uint64) (uint64, bool) {
	if neg {
		return 0, mag == 0
	}
	return mag, mag <= maxUint[k]
}

// FitSigned checks a signed magnitude against a signed kind.
func FitSigned(k types.Kind, neg bool, mag uint64) (int64, bool) {
	if neg {
		lim := uint64(-(minInt[k] + 1)) + 1
		if mag > lim {
			return 0, false
		}
		return int64(-mag), true // two's complement wrap gives MinInt64 for 1<<63
	}
	if mag > uint64(maxInt[k]) {
		return 0, false
	}
	return int64(mag), true
}

// ParseFloat parses JSON number text at the given width (32 or 64): the
// nearest float of that width, parsed at that width so the F32 halfway case
// is exact. Magnitudes beyond the range round to an infinity, which the
// decoders refuse as out of range (FloatRange).
func ParseFloat(b []byte, bits int) float64 {
	s := unsafe.String(unsafe.SliceData(b), len(b))
	f, _ := strconv.ParseFloat(s, bits) // ErrRange gives ±Inf or 0: both are the rounded value
	return f
}

// FloatRange is the message of a finite number beyond the range of float
// kind k (F32 or F64). Read at k's width such a number rounds to an
// infinity, which no decoder stores: it is refused as out of range, as an
// integer beyond its type's range is, so that 1e39 is an error for an
// F32 as 1e400 is for an F64 rather than a value the codec cannot write
// back. (An infinity a format carries as such, a CBOR or Avro float, is
// not a number beyond the range and keeps each format's own rule.)
func FloatRange(k types.Kind) string {
	if k == types.F32 {
		return "number is outside the range of F32 (largest magnitude 3.4028235e+38)"
	}
	return "number is outside the range of F64 (largest magnitude 1.7976931348623157e+308)"
}

// FitF32 narrows a finite float64 to F32: false when it lies beyond F32's
// range (it would round to an infinity; see FloatRange).
func FitF32(f float64) (float32, bool) {
	v := float32(f)
	return v, !math.IsInf(float64(v), 0) || math.IsInf(f, 0)
}

// AppendFloat appends a finite float in encoding/json's format: the
// shortest text that reads back to the same bits at the given width, plain
// between 1e-6 and 1e21, exponent form (e+NN, e-N) otherwise.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	if bits == 32 {
		if out, ok := appendShort32(dst, float32(f)); ok {
			return out
		}
	} else if a := math.Abs(f); a < 1<<53 && a == math.Trunc(a) && a != 0 {
		// An integral F64 below 2^53: its digits are the shortest text.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return appendFloatStrconv(dst, f, bits)
}

// appendFloatStrconv is AppendFloat through strconv, for every float.
func appendFloatStrconv(dst []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// DecodeBase64 decodes canonical RFC 4648 standard base64 with padding into
// dst: unpadded text, non-zero pad bits, line breaks and the URL alphabet
// are refused.
func DecodeBase64(dst, src []byte) ([]byte, bool) {
	if len(src)%4 != 0 {
		return dst, false
	}
	for _, c := range src {
		if c == '\r' || c == '\n' {
			return dst, false
		}
	}
	n := base64.StdEncoding.DecodedLen(len(src))
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	m, err := base64.StdEncoding.Strict().Decode(dst[start:], src)
	if err != nil {
		return dst[:start], false
	}
	return dst[:start+m], true
}

// AppendBase64 appends padded standard base64 of src.
func AppendBase64(dst, src []byte) []byte {
	return base64.StdEncoding.AppendEncode(dst, src)
}

// ValidNumber reports whether b is JSON number syntax:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func ValidNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}
