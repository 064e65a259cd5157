// Package cborhead writes the head of a CBOR data item (RFC 8949 §3): the
// major type and its argument in the shortest form. It is the one head
// writer of the codec tree: the stored-row encoding, WIRE CBOR and the
// JAQ-native CBOR format all use it.
package cborhead

import (
	"encoding/binary"
	"math"
)

// Append appends the head of a data item of major type major (0-7) with
// argument v, in the shortest encoding (preferred serialisation).
func Append(dst []byte, major byte, v uint64) []byte {
	m := major << 5
	switch {
	case v < 24:
		return append(dst, m|byte(v))
	case v <= math.MaxUint8:
		return append(dst, m|24, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, m|25), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, m|26), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, m|27), v)
}
