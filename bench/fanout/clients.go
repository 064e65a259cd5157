package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The clients are as lean as the protocols allow, so that on a shared
// machine they take as little CPU from the server under measurement as
// possible: a WebSocket client on a raw TCP connection (RFC 6455 framing
// by hand, no per-frame allocation) and an SSE client reading the chunked
// body into one reused buffer. Each counts the CloudEvents it receives by
// their "specversion" member, which every CloudEvent has exactly once and
// no other frame or event has.

// marker occurs once per CloudEvent.
var marker = []byte(`"specversion"`)

// phase is one counting period (the warm-up, then the measurement): the
// clients add what they receive to it and close done when target
// events have arrived, or when one of them fails.
type phase struct {
	target int64
	events atomic.Int64
	per    []atomic.Int64 // events by subscriber
	lat    *latHist       // publish-to-delivery latencies (-rate), nil when not measured
	frames atomic.Int64   // WebSocket frames carrying events
	last   atomic.Int64   // unix nanoseconds of the delivery that reached target
	done   chan struct{}
	once   sync.Once
	errMu  sync.Mutex
	err    error
}

// newPhase is a phase in which each of subscribers subscribers is to
// receive each events events.
func newPhase(subscribers int, each int64) *phase {
	return &phase{target: int64(subscribers) * each, per: make([]atomic.Int64, subscribers), done: make(chan struct{})}
}

// add counts n events (in frames frames) received now by subscriber sub.
func (p *phase) add(sub int, n, frames int64) {
	if frames > 0 {
		p.frames.Add(frames)
	}
	if n > 0 {
		p.per[sub].Add(n)
	}
	if n > 0 && p.events.Add(n) >= p.target {
		p.last.CompareAndSwap(0, time.Now().UnixNano())
		p.once.Do(func() { close(p.done) })
	}
}

// fail ends the phase with err.
func (p *phase) fail(err error) {
	p.errMu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.errMu.Unlock()
	p.once.Do(func() { close(p.done) })
}

// check returns an error naming the subscribers that did not receive
// exactly each events, with their counts.
func (p *phase) check(each int64) error {
	var wrong []string
	bad := 0
	for i := range p.per {
		if got := p.per[i].Load(); got != each {
			bad++
			if len(wrong) < 10 {
				wrong = append(wrong, fmt.Sprintf("subscriber %d got %d", i, got))
			}
		}
	}
	if bad == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d subscribers did not receive exactly %d events (%s) — %d delivered in all, want %d",
		bad, len(p.per), each, strings.Join(wrong, ", "), p.events.Load(), p.target)
}

func (p *phase) failure() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

// counter is what a subscriber counts into: the current phase.
type counter struct{ cur atomic.Pointer[phase] }

// ---- WebSocket ----

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
func wsDial(addr, path string) (*wsConn, error) { return wsDialProto(addr, path, "herald.v1") }

// wsDialProto opens a WebSocket connection to path offering the
// subprotocol proto (none when empty).
func wsDialProto(addr, path, proto string) (*wsConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	offer := ""
	if proto != "" {
		offer = "Sec-WebSocket-Protocol: " + proto + "\r\n"
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n",
		path, addr, base64.StdEncoding.EncodeToString(key[:]), offer)
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

// next reads the next data frame (answering pings on the way); its
// payload is valid until the next call.
func (w *wsConn) next() (op byte, payload []byte, err error) {
	for {
		var h [2]byte
		if _, err = io.ReadFull(w.br, h[:]); err != nil {
			return 0, nil, err
		}
		op = h[0] & 0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var e [2]byte
			if _, err = io.ReadFull(w.br, e[:]); err != nil {
				return 0, nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err = io.ReadFull(w.br, e[:]); err != nil {
				return 0, nil, err
			}
			n = binary.BigEndian.Uint64(e[:])
		}
		var key [4]byte
		masked := h[1]&0x80 != 0
		if masked {
			if _, err = io.ReadFull(w.br, key[:]); err != nil {
				return 0, nil, err
			}
		}
		if n > 64<<20 {
			return 0, nil, fmt.Errorf("frame of %d bytes", n)
		}
		if uint64(cap(w.buf)) < n {
			w.buf = make([]byte, n)
		}
		w.buf = w.buf[:n]
		if _, err = io.ReadFull(w.br, w.buf); err != nil {
			return 0, nil, err
		}
		if masked {
			for i := range w.buf {
				w.buf[i] ^= key[i&3]
			}
		}
		switch op {
		case 0x9: // ping
			if err = w.send(0xA, w.buf); err != nil {
				return 0, nil, err
			}
		case 0xA: // pong
		case 0x8:
			return op, w.buf, closeError(w.buf)
		default:
			return op, w.buf, nil
		}
	}
}

// closeError is the error of a close frame with payload p: io.EOF,
// with the status code and reason the peer gave.
func closeError(p []byte) error {
	if len(p) < 2 {
		return fmt.Errorf("closed by the peer without a status: %w", io.EOF)
	}
	return fmt.Errorf("closed by the peer with status %d %q: %w", binary.BigEndian.Uint16(p), p[2:], io.EOF)
}

// text reads the next text frame.
func (w *wsConn) text() ([]byte, error) {
	op, p, err := w.next()
	if err != nil {
		return nil, err
	}
	if op != 0x1 {
		return nil, fmt.Errorf("frame with opcode %d", op)
	}
	return p, nil
}

// call sends a request and returns the text of its reply (frames before
// it are discarded).
func (w *wsConn) call(id int, req string) ([]byte, error) {
	if err := w.send(0x1, []byte(req)); err != nil {
		return nil, err
	}
	want := []byte(fmt.Sprintf(`"type":"reply","id":%d,`, id))
	for {
		p, err := w.text()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(p, want) {
			if !bytes.Contains(p, []byte(`"ok":true`)) {
				return nil, fmt.Errorf("request %d refused: %s", id, p)
			}
			return bytes.Clone(p), nil
		}
	}
}

// heraldSession opens a session on herald and subscribes it once.
func heraldSession(addr, subscribe string) (*wsConn, error) {
	w, err := wsDial(addr, "/api/v1/session")
	if err != nil {
		return nil, err
	}
	_ = w.c.SetDeadline(time.Now().Add(30 * time.Second))
	if p, err := w.text(); err != nil || !bytes.Contains(p, []byte(`"type":"welcome"`)) {
		w.c.Close()
		return nil, fmt.Errorf("no welcome frame (%q, %v)", p, err)
	}
	if _, err := w.call(1, subscribe); err != nil {
		w.c.Close()
		return nil, err
	}
	_ = w.c.SetDeadline(time.Time{})
	return w, nil
}

// countWS counts the events of the frames subscriber sub, w, receives
// until it ends. capture, when set, receives a copy of the first events
// frame.
func countWS(sub int, w *wsConn, ctr *counter, capture func([]byte)) {
	for {
		p, err := w.text()
		ph := ctr.cur.Load()
		if ph == nil {
			return // the measurement is over
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				ph.fail(fmt.Errorf("subscriber: %w", err))
			}
			return
		}
		if bytes.HasPrefix(p, []byte(`{"type":"events"`)) {
			if capture != nil {
				capture(bytes.Clone(p))
				capture = nil
			}
			if ph.lat != nil {
				now := time.Now().UnixNano()
				eachSent(p, func(ns int64) { ph.lat.record(time.Duration(now - ns)) })
			}
			ph.add(sub, int64(bytes.Count(p, marker)), 1)
			continue
		}
		if bytes.Contains(p, []byte(`"type":"subscription_ended"`)) || bytes.Contains(p, []byte(`"type":"dropped"`)) ||
			bytes.Contains(p, []byte(`"type":"skipped"`)) {
			ph.fail(fmt.Errorf("subscriber got %s", p))
			return
		}
	}
}

// ---- SSE ----

// sseConn is an open SSE stream.
type sseConn struct {
	c  net.Conn
	rd io.Reader // the decoded body
}

// sseOpen posts body to path and reads the response headers and the
// opening event.
func sseOpen(addr, path, body string) (*sseConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, addr, len(body), body)
	br := bufio.NewReaderSize(c, 64<<10)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		c.Close()
		return nil, fmt.Errorf("answer %q: %v", strings.TrimSpace(status), err)
	}
	chunked := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
		if strings.EqualFold(strings.TrimSpace(line), "Transfer-Encoding: chunked") {
			chunked = true
		}
	}
	var rd io.Reader = br
	if chunked {
		rd = httputil.NewChunkedReader(br)
	}
	// The opening event (connection_established).
	var seen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(seen, []byte("\n\n")) {
		n, err := rd.Read(buf)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("opening event: %w", err)
		}
		seen = append(seen, buf[:n]...)
	}
	_ = c.SetDeadline(time.Time{})
	return &sseConn{c: c, rd: rd}, nil
}

// countSSE counts the events subscriber sub, s, receives until it ends.
// capture, when set, receives the data line of the first CloudEvent.
func countSSE(sub int, s *sseConn, ctr *counter, capture func([]byte)) {
	buf := make([]byte, 64<<10)
	k := len(marker) - 1
	tail := 0 // bytes kept from the previous read, so a split marker counts
	for {
		n, err := s.rd.Read(buf[tail:])
		ph := ctr.cur.Load()
		if ph == nil {
			return // the measurement is over
		}
		if n > 0 {
			data := buf[:tail+n]
			if capture != nil {
				if i := bytes.Index(data, []byte("data: {\"data\"")); i >= 0 {
					if j := bytes.IndexByte(data[i:], '\n'); j > 0 {
						capture(bytes.Clone(data[i+len("data: ") : i+j]))
						capture = nil
					}
				}
			}
			ph.add(sub, int64(bytes.Count(data, marker)), 0)
			if bytes.Contains(data, []byte("connection-closing")) {
				ph.fail(fmt.Errorf("watcher closed: %s", data[bytes.Index(data, []byte("connection-closing")):]))
				return
			}
			tail = min(k, len(data))
			copy(buf, data[len(data)-tail:])
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				ph.fail(fmt.Errorf("watcher: %w", err))
			}
			return
		}
	}
}
