package avro

import "herald/codec/types"

// shape is the binary shape of an Avro value, used to walk a datum before
// goavro decodes it: every block count and length is checked against the
// bytes that remain, so a forged count cannot make the decoder allocate
// more than the payload could hold.
type shape struct {
	kind     byte // 'l' int/long, 'f' float, 'd' double, 'b' bytes/string, 'o' boolean, 'a' array
	optional bool
	items    *shape
}

func itemShape(t types.Type) *shape {
	switch t.Kind {
	case types.Bool:
		return &shape{kind: 'o'}
	case types.F32:
		return &shape{kind: 'f'}
	case types.F64:
		return &shape{kind: 'd'}
	case types.String, types.Datetime, types.Bytes:
		return &shape{kind: 'b'}
	case types.Array, types.Vec:
		return &shape{kind: 'a', items: itemShape(t.Inner())}
	}
	return &shape{kind: 'l'}
}

func wireShape(k types.WireKind, t types.Type, optional bool) *shape {
	var s *shape
	switch k {
	case types.ABoolean:
		s = &shape{kind: 'o'}
	case types.AInt, types.ALong:
		s = &shape{kind: 'l'}
	case types.AFloat:
		s = &shape{kind: 'f'}
	case types.ADouble:
		s = &shape{kind: 'd'}
	case types.AString, types.ABytes:
		s = &shape{kind: 'b'}
	default:
		s = itemShape(t)
	}
	s.optional = optional
	return s
}

// varint reads one zigzag long; ok is false when it is truncated or longer
// than 10 bytes.
func varint(b []byte, i int) (int64, int, bool) {
	var u uint64
	for n := 0; n < 10; n++ {
		if i >= len(b) {
			return 0, i, false
		}
		c := b[i]
		i++
		u |= uint64(c&0x7f) << (7 * n)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i, true
		}
	}
	return 0, i, false
}

// walk checks one value of shape s at b[i:] and returns the next offset.
func walk(b []byte, i int, s *shape, depth int) (int, bool) {
	if depth > 256 {
		return i, false
	}
	if s.optional {
		br, j, ok := varint(b, i)
		if !ok || (br != 0 && br != 1) {
			return i, false
		}
		if i = j; br == 0 {
			return i, true
		}
	}
	switch s.kind {
	case 'o':
		return i + 1, i < len(b)
	case 'l':
		_, j, ok := varint(b, i)
		return j, ok
	case 'f':
		return i + 4, i+4 <= len(b)
	case 'd':
		return i + 8, i+8 <= len(b)
	case 'b':
		n, j, ok := varint(b, i)
		if !ok || n < 0 || n > int64(len(b)-j) {
			return i, false
		}
		return j + int(n), true
	case 'a':
		for {
			n, j, ok := varint(b, i)
			if !ok {
				return i, false
			}
			i = j
			if n == 0 {
				return i, true
			}
			if n < 0 { // a negative count is followed by the block size
				n = -n
				sz, j, ok := varint(b, i)
				if !ok || sz < 0 || sz > int64(len(b)-j) {
					return i, false
				}
				i = j
			}
			if n > int64(len(b)-i) { // every item takes at least one byte
				return i, false
			}
			for k := int64(0); k < n; k++ {
				if i, ok = walk(b, i, s.items, depth+1); !ok {
					return i, false
				}
			}
		}
	}
	return i, false
}
