package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// The WebSocket client is bench/fanout's (clients.go), trimmed to what a
// producer needs: RFC 6455 framing by hand on a raw TCP connection, no
// per-frame allocation, so that it takes as little CPU from the servers
// under measurement as the protocol allows.

// wsConn is a client WebSocket connection on a raw TCP connection.
type wsConn struct {
	c   net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
	buf []byte // the payload of the last frame read
	out []byte // the frame being written
}

// wsDial opens a WebSocket connection to path offering the herald.v1
// subprotocol.
func wsDial(addr, path string) (*wsConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: herald.v1\r\n\r\n",
		path, addr, base64.StdEncoding.EncodeToString(key[:]))
	br := bufio.NewReaderSize(c, 64<<10)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 101 ") {
		c.Close()
		return nil, fmt.Errorf("upgrade answered %q: %v", strings.TrimSpace(status), err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
	}
	_ = c.SetDeadline(time.Time{})
	return &wsConn{c: c, br: br}, nil
}

// send writes one masked frame.
func (w *wsConn) send(op byte, p []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	b := append(w.out[:0], 0x80|op)
	switch n := len(p); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	b = append(b, key[:]...)
	start := len(b)
	b = append(b, p...)
	for i := range p {
		b[start+i] ^= key[i&3]
	}
	w.out = b
	_, err := w.c.Write(b)
	return err
}

// text reads the next text frame (answering pings on the way); its
// payload is valid until the next call.
func (w *wsConn) text() ([]byte, error) {
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return nil, err
		}
		op := h[0] & 0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var e [2]byte
			if _, err := io.ReadFull(w.br, e[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err := io.ReadFull(w.br, e[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(e[:])
		}
		var key [4]byte
		masked := h[1]&0x80 != 0
		if masked {
			if _, err := io.ReadFull(w.br, key[:]); err != nil {
				return nil, err
			}
		}
		if n > 64<<20 {
			return nil, fmt.Errorf("frame of %d bytes", n)
		}
		if uint64(cap(w.buf)) < n {
			w.buf = make([]byte, n)
		}
		w.buf = w.buf[:n]
		if _, err := io.ReadFull(w.br, w.buf); err != nil {
			return nil, err
		}
		if masked {
			for i := range w.buf {
				w.buf[i] ^= key[i&3]
			}
		}
		switch op {
		case 0x9: // ping
			if err := w.send(0xA, w.buf); err != nil {
				return nil, err
			}
		case 0xA: // pong
		case 0x8:
			return nil, fmt.Errorf("connection closed by the server: %q", w.buf)
		case 0x1:
			return w.buf, nil
		default:
			return nil, fmt.Errorf("frame with opcode %d", op)
		}
	}
}
