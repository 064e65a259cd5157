package wsguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// wireVerdict is what a client byte stream deserves: how many of its
// bytes may reach the WebSocket library and why the rest may not (nil:
// all of them). It reads the stream whole, frame by frame (RFC 6455
// framing), as a reference for frameGuard, which sees it in pieces.
func wireVerdict(stream []byte, limit uint64) (int, error) {
	var msg uint64
	for i := 0; i < len(stream); {
		if i+1 >= len(stream) {
			return len(stream), nil
		}
		b0, b1 := stream[i], stream[i+1]
		if b1&0x80 == 0 {
			return i + 1, ErrUnmaskedFrame
		}
		ext := map[byte]int{126: 2, 127: 8}[b1&0x7f]
		if i+2+ext > len(stream) {
			return len(stream), nil
		}
		size := uint64(b1 & 0x7f)
		switch ext {
		case 2:
			size = uint64(binary.BigEndian.Uint16(stream[i+2:]))
		case 8:
			size = binary.BigEndian.Uint64(stream[i+2:])
		}
		if b0&0x08 == 0 {
			if b0&0x0f == 0 {
				msg += size
			} else {
				msg = size
			}
			if size > limit || msg > limit {
				return i + 2 + ext - 1, &FrameTooBigError{}
			}
		}
		next := uint64(i) + uint64(2+ext+4) + size
		if next >= uint64(len(stream)) {
			return len(stream), nil
		}
		i = int(next)
	}
	return len(stream), nil
}

// chunkReader returns its data in reads of the sizes cuts says (cycled).
type chunkReader struct {
	data []byte
	cuts []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := 1
	if len(r.cuts) > 0 {
		k = int(r.cuts[r.n%len(r.cuts)])%17 + 1
		r.n++
	}
	k = min(k, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

// FuzzFrameGuard feeds arbitrary byte streams, cut into arbitrary reads,
// through the frame guard: it lets through exactly the bytes before the
// one that shows a violation (never a whole bad header), then returns
// the violation on every read, as a reading of the whole stream at once
// decides.
func FuzzFrameGuard(f *testing.F) {
	frame := func(b0 byte, size uint64, masked bool, payload int) []byte {
		h := []byte{b0, 0}
		switch {
		case size < 126:
			h[1] = byte(size)
		case size <= 0xffff:
			h[1] = 126
			h = binary.BigEndian.AppendUint16(h, uint16(size))
		default:
			h[1] = 127
			h = binary.BigEndian.AppendUint64(h, size)
		}
		if masked {
			h[1] |= 0x80
			h = append(h, 1, 2, 3, 4)
		}
		return append(h, make([]byte, payload)...)
	}
	cat := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	for _, seed := range [][]byte{
		frame(0x81, 20, true, 20),
		cat(frame(0x81, 20, true, 20), frame(0x89, 2, true, 2), frame(0x81, 0, true, 0)),
		frame(0x81, 20, false, 20),
		cat(frame(0x81, 5, true, 5), frame(0x8a, 0, false, 0)),
		frame(0x81, 1<<62, true, 0),
		frame(0x81, 1<<63+5, true, 0),
		frame(0x81, 300, true, 300),
		frame(0x81, 301, true, 0),
		cat(frame(0x01, 200, true, 200), frame(0x89, 3, true, 3), frame(0x80, 101, true, 0)),
		cat(frame(0x01, 200, true, 200), frame(0x80, 100, true, 100), frame(0x81, 300, true, 1)),
		{0x81},
		{0x81, 0xff, 0, 0},
	} {
		f.Add(seed, []byte{3, 1, 7})
	}
	const limit = 300
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		wantN, wantErr := wireVerdict(stream, limit)
		g := &frameGuard{r: &chunkReader{data: stream, cuts: cuts}, limit: limit}
		var got []byte
		buf := make([]byte, 64)
		var err error
		for {
			var n int
			n, err = g.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		if !bytes.Equal(got, stream[:min(wantN, len(stream))]) {
			t.Fatalf("passed %d bytes, want %d", len(got), wantN)
		}
		var tooBig *FrameTooBigError
		switch {
		case wantErr == nil:
			if err != io.EOF {
				t.Fatalf("error %v, want the end of the stream", err)
			}
		case errors.Is(wantErr, ErrUnmaskedFrame):
			if !errors.Is(err, ErrUnmaskedFrame) {
				t.Fatalf("error %v, want an unmasked frame", err)
			}
		case !errors.As(err, &tooBig):
			t.Fatalf("error %v, want a frame too big", err)
		}
		if wantErr != nil {
			if n, again := g.Read(buf); n != 0 || again != err {
				t.Fatalf("a read after the violation: %d %v", n, again)
			}
		}
	})
}
