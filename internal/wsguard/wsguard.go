// Package wsguard guards the bytes a WebSocket server reads, below its
// WebSocket library (coder/websocket): the library refuses an unmasked
// client frame without a close status (the session then closed with
// 1000), and it enforces the read limit only on payload bytes actually
// received, so a header declaring 2^62 bytes with nothing after it held
// the connection until the keep-alive gave up. Neither can be
// configured; the guard follows the client's frame headers in the byte
// stream and refuses both at the header.
package wsguard

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
)

// ErrUnmaskedFrame is the read error of a client frame without a mask, which RFC 6455
// requires of every client frame (the server closes with 1002).
var ErrUnmaskedFrame = errors.New("the client sent an unmasked frame: RFC 6455 requires a client to mask every frame")

// FrameTooBigError is the read error of a data frame whose declared length takes its message
// beyond the read limit (the server closes with 1009).
type FrameTooBigError struct {
	declared, limit uint64
}

// Error names both sizes.
func (e *FrameTooBigError) Error() string {
	return "a frame declares a message of " + strconv.FormatUint(e.declared, 10) + " bytes, above the limit of " + strconv.FormatUint(e.limit, 10)
}

// Writer is the upgrade's ResponseWriter as the WebSocket library sees
// it: its Hijack hands the library the connection behind a guard that
// refuses, at the header, an unmasked frame (ErrUnmaskedFrame) and a
// data message declared longer than Limit bytes (*FrameTooBigError).
type Writer struct {
	http.ResponseWriter
	// Limit is the largest message, in bytes; <= 0 means no limit.
	Limit int64
}

// Hijack takes the connection over and wraps it; the bytes the server
// had already read past the handshake (frames a client sent without
// waiting for the 101) go through the guard first.
//
// The guard reads through the server's own buffered reader, which holds
// those bytes and stays allocated as long as the connection's handler
// runs; the library's reader over the guard then needs no buffer of its
// own (the smallest bufio allows), which saves a 4 KiB buffer per
// session.
func (w *Writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	g := &frameGuard{Conn: conn, r: brw.Reader, limit: w.Limit}
	return g, bufio.NewReadWriter(bufio.NewReaderSize(g, minReaderSize), brw.Writer), nil
}

// minReaderSize is the buffer of the library's reader over the guard:
// bufio's smallest.
const minReaderSize = 16

// Unwrap returns the wrapped ResponseWriter (http.ResponseController).
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// frameGuard follows the frames of a client's byte stream (RFC 6455
// framing) as the library reads it. At the byte of a header that shows a
// violation it stops: the library gets the bytes before that byte, never
// the whole header, and its next read returns the violation (and every
// read after it). Only the library's reader reads it, one read at a
// time.
type frameGuard struct {
	net.Conn
	r io.Reader
	// limit is the largest message, in bytes (max_body_bytes; <= 0: no
	// limit).
	limit int64

	head [14]byte // the frame header being read
	hn   int      // its bytes so far
	// size is the current frame's payload length once its header has
	// told it; skip the payload bytes still to pass.
	size, skip uint64
	msg        uint64 // bytes of the current data message so far
	err        error  // the violation found
}

// Read reads from the connection and follows the frames read.
func (g *frameGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; {
		if g.skip > 0 {
			k := min(uint64(n-i), g.skip)
			g.skip -= k
			i += int(k)
			continue
		}
		g.head[g.hn] = p[i]
		g.hn++
		i++
		if bad := g.header(); bad != nil {
			g.err = bad
			if i > 1 {
				return i - 1, nil
			}
			return 0, bad
		}
	}
	return n, err
}

// header looks at the frame header read so far: the violation it shows,
// if any; once it is whole, the payload follows.
func (g *frameGuard) header() error {
	h := g.head[:g.hn]
	if len(h) < 2 {
		return nil
	}
	if h[1]&0x80 == 0 {
		return ErrUnmaskedFrame
	}
	ext := 0
	switch h[1] & 0x7f {
	case 126:
		ext = 2
	case 127:
		ext = 8
	}
	switch len(h) {
	case 2 + ext:
		// The length is known: a data frame is judged now, before the
		// mask key and the payload it announces.
		switch ext {
		case 0:
			g.size = uint64(h[1] & 0x7f)
		case 2:
			g.size = uint64(h[2])<<8 | uint64(h[3])
		default:
			g.size = 0
			for _, b := range h[2:10] {
				g.size = g.size<<8 | uint64(b)
			}
		}
		switch opcode := h[0] & 0x0f; {
		case opcode&0x8 != 0:
			// A control frame: the library checks it (at most 125 bytes).
		case opcode == 0:
			g.msg += g.size
		default:
			g.msg = g.size
		}
		if g.limit > 0 && h[0]&0x08 == 0 && (g.size > uint64(g.limit) || g.msg > uint64(g.limit)) {
			return &FrameTooBigError{declared: max(g.size, g.msg), limit: uint64(g.limit)}
		}
	case 2 + ext + 4:
		g.skip, g.hn = g.size, 0
	}
	return nil
}
