package handlers_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/configs"
)

// rawSession is a session over a plain TCP connection whose frames the
// test writes byte by byte, as a broken or hostile client would.
type rawSession struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

// dialRaw upgrades a TCP connection to a session by hand and reads the
// welcome frame.
func (s *server) dialRaw(t *testing.T) *rawSession {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(wait))
	req := "GET /api/v1/session HTTP/1.1\r\nHost: herald\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: herald.v1\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	r := &rawSession{t: t, c: c, br: bufio.NewReader(c)}
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	if op, data := r.frame(); op != 1 || !strings.Contains(string(data), `"type":"welcome"`) {
		t.Fatalf("first frame %d %s", op, data)
	}
	return r
}

// send writes a frame header (fin, opcode, the declared length, masked
// or not) and payload as given.
func (r *rawSession) send(fin bool, opcode byte, length uint64, masked bool, payload []byte) {
	r.t.Helper()
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	h := []byte{b0, 0}
	switch {
	case length < 126:
		h[1] = byte(length)
	case length <= 0xffff:
		h[1] = 126
		h = binary.BigEndian.AppendUint16(h, uint16(length))
	default:
		h[1] = 127
		h = binary.BigEndian.AppendUint64(h, length)
	}
	mask := [4]byte{0x11, 0x22, 0x33, 0x44}
	if masked {
		h[1] |= 0x80
		h = append(h, mask[:]...)
		p := make([]byte, len(payload))
		for i := range payload {
			p[i] = payload[i] ^ mask[i%4]
		}
		payload = p
	}
	if _, err := r.c.Write(append(h, payload...)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// frame reads one server frame (unmasked): its opcode and payload.
func (r *rawSession) frame() (byte, []byte) {
	r.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		r.t.Fatalf("read a frame header: %v", err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		_, _ = io.ReadFull(r.br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		_, _ = io.ReadFull(r.br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r.br, data); err != nil {
		r.t.Fatalf("read a frame payload: %v", err)
	}
	return h[0] & 0x0f, data
}

// closed reads frames until the close frame and returns its status.
func (r *rawSession) closed() websocket.StatusCode {
	r.t.Helper()
	for {
		op, data := r.frame()
		if op == 8 {
			if len(data) < 2 {
				r.t.Fatalf("close frame without a status: %x", data)
			}
			return websocket.StatusCode(binary.BigEndian.Uint16(data))
		}
		r.t.Logf("frame before the close: %d %s", op, data)
	}
}

// TestSessionWireViolations: RFC 6455 violations a client library would
// never send, written byte by byte. An unmasked client frame closes the
// session with 1002 (protocol error); a frame whose header declares more
// than the read limit (2^62 bytes, with nothing following; or a
// fragment taking its message past the limit) is refused at its header
// with 1009 at once, not when the keep-alive gives up a minute later.
// A masked frame within the limit is served as ever.
func TestSessionWireViolations(t *testing.T) {
	s := startServer(t, testConfig, func(c *configs.Config) { c.Application.MaxBodyBytes = 4096 })
	ping := []byte(`{"id":1,"op":"ping"}`)

	ok := s.dialRaw(t)
	ok.send(true, 1, uint64(len(ping)), true, ping)
	if op, data := ok.frame(); op != 1 || !strings.Contains(string(data), `"id":1,"ok":true`) {
		t.Fatalf("a masked ping: %d %s", op, data)
	}

	for _, c := range []struct {
		name string
		send func(r *rawSession)
		want websocket.StatusCode
	}{
		{"unmasked", func(r *rawSession) { r.send(true, 1, uint64(len(ping)), false, ping) }, websocket.StatusProtocolError},
		{"unmasked ping", func(r *rawSession) { r.send(true, 9, 2, false, []byte("hi")) }, websocket.StatusProtocolError},
		{"declares 2^62 bytes", func(r *rawSession) { r.send(true, 1, 1<<62, true, nil) }, websocket.StatusMessageTooBig},
		{"declares one byte too many", func(r *rawSession) { r.send(true, 1, 4097, true, nil) }, websocket.StatusMessageTooBig},
		{"fragments past the limit", func(r *rawSession) {
			r.send(false, 1, 3000, true, []byte(strings.Repeat(" ", 3000)))
			r.send(true, 0, 3000, true, nil)
		}, websocket.StatusMessageTooBig},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.dialRaw(t)
			start := time.Now()
			c.send(r)
			if got := r.closed(); got != c.want {
				t.Fatalf("closed with %d, want %d", got, c.want)
			}
			if took := time.Since(start); took > wait {
				t.Fatalf("closed after %v", took)
			}
		})
	}
}

// TestSessionFramesWithTheUpgrade: frames a client writes together with
// its upgrade request, before the 101 comes, reach the server's buffered
// reader with the request; they are served (a masked ping is answered
// after the welcome) and guarded (an unmasked frame closes the session
// with 1002) as any later frame.
func TestSessionFramesWithTheUpgrade(t *testing.T) {
	s := startServer(t, testConfig, nil)
	ping := []byte(`{"id":1,"op":"ping"}`)
	for _, c := range []struct {
		name   string
		masked bool
	}{{"masked", true}, {"unmasked", false}} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(wait))
			r := &rawSession{t: t, c: conn, br: bufio.NewReader(conn)}
			// The request and the frame in one write: send renders the
			// frame into a buffer, written after the request.
			var frame bytes.Buffer
			r.c = writerConn{Conn: conn, w: &frame}
			r.send(true, 1, uint64(len(ping)), c.masked, ping)
			r.c = conn
			req := "GET /api/v1/session HTTP/1.1\r\nHost: herald\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: herald.v1\r\n\r\n"
			if _, err := conn.Write(append([]byte(req), frame.Bytes()...)); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(r.br, nil)
			if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %v %v", resp, err)
			}
			if !c.masked {
				if got := r.closed(); got != websocket.StatusProtocolError {
					t.Fatalf("closed with %d, want %d", got, websocket.StatusProtocolError)
				}
				return
			}
			if op, data := r.frame(); op != 1 || !strings.Contains(string(data), `"type":"welcome"`) {
				t.Fatalf("first frame %d %s", op, data)
			}
			if op, data := r.frame(); op != 1 || !strings.Contains(string(data), `"id":1,"ok":true`) {
				t.Fatalf("the ping sent with the upgrade: %d %s", op, data)
			}
		})
	}
}

// writerConn is a net.Conn whose writes go to w.
type writerConn struct {
	net.Conn
	w io.Writer
}

// Write implements net.Conn.
func (c writerConn) Write(p []byte) (int, error) { return c.w.Write(p) }
