package cborhead

import (
	"bytes"
	"math"
	"testing"
)

// TestAppend checks the shortest head at each width's boundaries, against
// RFC 8949's examples (appendix A).
func TestAppend(t *testing.T) {
	for _, tc := range []struct {
		major byte
		v     uint64
		want  []byte
	}{
		{0, 0, []byte{0x00}},
		{0, 23, []byte{0x17}},
		{0, 24, []byte{0x18, 0x18}},
		{0, 255, []byte{0x18, 0xff}},
		{0, 256, []byte{0x19, 0x01, 0x00}},
		{0, 65535, []byte{0x19, 0xff, 0xff}},
		{0, 65536, []byte{0x1a, 0x00, 0x01, 0x00, 0x00}},
		{0, math.MaxUint32, []byte{0x1a, 0xff, 0xff, 0xff, 0xff}},
		{0, 1 << 32, []byte{0x1b, 0, 0, 0, 1, 0, 0, 0, 0}},
		{0, math.MaxUint64, []byte{0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{1, 99, []byte{0x38, 0x63}},         // -100
		{3, 4, []byte{0x64}},                // text of 4 bytes
		{4, 25, []byte{0x98, 0x19}},         // array of 25
		{6, 1001, []byte{0xd9, 0x03, 0xe9}}, // tag 1001
	} {
		if got := Append([]byte{0xee}, tc.major, tc.v); !bytes.Equal(got, append([]byte{0xee}, tc.want...)) {
			t.Errorf("Append(%d, %d) = % x, want % x", tc.major, tc.v, got[1:], tc.want)
		}
	}
}
