// Package leanhttp is a minimal HTTP/1.1 keep-alive client for the load
// generators of the benchmarks.
//
// A load generator shares the machine with the server it measures, so its
// own cost counts against every figure. net/http's client spends about as
// much CPU per exchange as a lean server does (two goroutines and a
// header map per request), which makes a load client-bound. This client
// writes each request from a reused buffer over a connection of its own
// and reads the answer just enough not to misread it: the status line,
// Content-Length, Transfer-Encoding: chunked, Connection: close, and the
// body (kept for an error or when asked for, skipped otherwise). It sends
// no other header than Host, Content-Type and Content-Length and does not
// follow redirects, decompress or negotiate anything.
package leanhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
)

const (
	// Timeout bounds one exchange, from writing the request to reading
	// the end of the answer.
	Timeout = 30 * time.Second
	// MaxIdle is the number of idle connections a Pool keeps; more are
	// closed when they are returned.
	MaxIdle = 4096
	// MaxErrorBody is how much of the body of a non-2xx answer the error
	// quotes; the rest is read and dropped.
	MaxErrorBody = 4 << 10
	// MaxBody bounds the body Read returns.
	MaxBody = 64 << 20
	// maxHeaders bounds the header lines of one answer.
	maxHeaders = 256
	// maxInterim bounds the 1xx answers skipped before the final one.
	maxInterim = 8
)

// Pool is a set of keep-alive connections to one server. Each Do takes an
// idle connection or dials a new one and returns it afterwards, so a load
// of n concurrent workers runs over n connections, each used by one
// request at a time. It is safe for concurrent use.
type Pool struct {
	addr  string
	dial  func() (net.Conn, error)
	conns chan *conn
}

// conn is one connection with its reader and request buffer.
type conn struct {
	c    net.Conn
	br   *bufio.Reader
	wbuf []byte
}

// New returns a Pool of connections to addr (host:port, over TCP). It
// dials nothing until the first request.
func New(addr string) *Pool {
	p := &Pool{addr: addr, conns: make(chan *conn, MaxIdle)}
	p.dial = func() (net.Conn, error) { return net.Dial("tcp", p.addr) }
	return p
}

// get returns an idle connection (reused true) or a new one.
func (p *Pool) get() (c *conn, reused bool, err error) {
	select {
	case c := <-p.conns:
		return c, true, nil
	default:
	}
	nc, err := p.dial()
	if err != nil {
		return nil, false, err
	}
	return &conn{c: nc, br: bufio.NewReaderSize(nc, 16<<10)}, false, nil
}

// put keeps c for the next request, or closes it when MaxIdle are kept.
func (p *Pool) put(c *conn) {
	select {
	case p.conns <- c:
	default:
		c.c.Close()
	}
}

// Close closes the idle connections. It is meant for the end of a load,
// once every Do has returned: a connection returned later stays open.
func (p *Pool) Close() {
	for {
		select {
		case c := <-p.conns:
			c.c.Close()
		default:
			return
		}
	}
}

// Do sends one request and returns the answer's status code. A body,
// when not nil, goes as application/json. A non-2xx answer is an error
// that quotes its body (up to MaxErrorBody bytes), returned with its
// status; a failed exchange returns status 0.
func (p *Pool) Do(method, path string, body []byte) (int, error) {
	status, _, err := p.exchange(method, path, body, nil, false)
	return status, err
}

// Read is Do that also returns the body of a 2xx answer, appended to
// buf[:0] (a body over MaxBody is an error).
func (p *Pool) Read(method, path string, body, buf []byte) (int, []byte, error) {
	return p.exchange(method, path, body, buf[:0], true)
}

// exchange runs one request over a pooled connection. A request that
// failed on a reused connection before any byte of its answer came (the
// server closed the idle connection) is sent again on the next idle
// connection, or a new one: after a pause every idle connection may have
// been closed, and each is tried (and dropped) once at most.
func (p *Pool) exchange(method, path string, body, buf []byte, keep bool) (int, []byte, error) {
	for {
		c, reused, err := p.get()
		if err != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		a, err := c.exchange(method, path, body, buf, keep)
		if err != nil {
			c.c.Close()
			if reused && a.none {
				continue
			}
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if a.reuse {
			p.put(c)
		} else {
			c.c.Close()
		}
		if a.status/100 != 2 {
			return a.status, nil, fmt.Errorf("%s %s: status %d: %s", method, path, a.status, a.body)
		}
		return a.status, a.body, nil
	}
}

// answer is what an exchange read.
type answer struct {
	status int
	body   []byte // the kept body: a 2xx one for Read, or an error's
	reuse  bool   // the connection may carry another request
	none   bool   // nothing of the answer came (on an error)
}

// Errors of answers the client cannot read.
var (
	errStatusLine = errors.New("bad status line")
	errHeader     = errors.New("bad header")
	errChunk      = errors.New("bad chunked body")
	errNoLength   = errors.New("answer without Content-Length or Transfer-Encoding: chunked")
	errTooLarge   = errors.New("answer body over leanhttp.MaxBody")
)

// exchange writes one request and reads its answer.
func (c *conn) exchange(method, path string, body, buf []byte, keep bool) (answer, error) {
	w := c.wbuf[:0]
	w = append(w, method...)
	w = append(w, ' ')
	w = append(w, path...)
	w = append(w, " HTTP/1.1\r\nHost: bench\r\n"...)
	if body != nil {
		w = append(w, "Content-Type: application/json\r\nContent-Length: "...)
		w = strconv.AppendInt(w, int64(len(body)), 10)
		w = append(w, "\r\n"...)
	}
	w = append(w, "\r\n"...)
	w = append(w, body...)
	c.wbuf = w
	_ = c.c.SetDeadline(time.Now().Add(Timeout))
	if _, err := c.c.Write(w); err != nil {
		return answer{none: true}, err
	}
	return readAnswer(c.br, method == "HEAD", buf, keep)
}

// readAnswer reads one answer from br: interim 1xx answers are skipped,
// the final one's body is kept (appended to buf) when keep is set and the
// status is 2xx, its first MaxErrorBody bytes when the status is not 2xx,
// and skipped otherwise.
func readAnswer(br *bufio.Reader, head bool, buf []byte, keep bool) (answer, error) {
	var a answer
	var h header
	for interim := 0; ; interim++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			a.none = interim == 0 && len(line) == 0 && (errors.Is(err, io.EOF) || isReset(err))
			if errors.Is(err, bufio.ErrBufferFull) {
				return a, fmt.Errorf("%w: longer than %d bytes", errStatusLine, br.Size())
			}
			return a, err
		}
		status, http11, err := statusLine(line)
		if err != nil {
			return a, err
		}
		if h, err = headers(br); err != nil {
			return a, err
		}
		if h.chunked && !http11 {
			// HTTP/1.0 has no chunked coding: the framing is faulty.
			return a, fmt.Errorf("%w: Transfer-Encoding in an HTTP/1.0 answer", errHeader)
		}
		if status >= 200 {
			a.status = status
			a.reuse = http11 && !h.close
			break
		}
		if status == 101 || interim+1 >= maxInterim {
			return a, fmt.Errorf("%w: interim answer %d", errStatusLine, status)
		}
	}
	var s sink
	switch {
	case a.status/100 != 2:
		s = sink{buf: buf[:0], limit: MaxErrorBody}
	case keep:
		s = sink{buf: buf, limit: MaxBody, strict: true}
	}
	var err error
	switch {
	case head || a.status == 204 || a.status == 304:
		// no body, whatever the headers say
	case h.chunked:
		err = chunked(br, &s)
	case h.length >= 0:
		err = s.take(br, h.length)
	default:
		return a, errNoLength
	}
	a.body = s.buf
	return a, err
}

// statusLine parses "HTTP/1.x NNN reason": the status code, and whether
// the version is 1.1 (a 1.0 answer closes its connection).
func statusLine(line []byte) (status int, http11 bool, err error) {
	bad := func() (int, bool, error) {
		return 0, false, fmt.Errorf("%w %q", errStatusLine, line)
	}
	if len(line) < 13 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') ||
		line[8] != ' ' || (line[12] != ' ' && line[12] != '\r' && line[12] != '\n') {
		return bad()
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return bad()
		}
		status = status*10 + int(d-'0')
	}
	if status < 100 || status > 599 {
		return bad()
	}
	return status, line[7] == '1', nil
}

// header is what the client reads of an answer's headers.
type header struct {
	length  int64 // Content-Length, -1 when absent
	chunked bool  // Transfer-Encoding: chunked
	close   bool  // Connection: close
}

// headers reads header lines up to the blank line that ends them.
func headers(br *bufio.Reader) (header, error) {
	h := header{length: -1}
	for n := 0; ; n++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return h, fmt.Errorf("%w: a line longer than %d bytes", errHeader, br.Size())
			}
			return h, noEOF(err)
		}
		line = trimEOL(line)
		if len(line) == 0 {
			break
		}
		if n >= maxHeaders {
			return h, fmt.Errorf("%w: more than %d lines", errHeader, maxHeaders)
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(k) == 0 || bytes.ContainsAny(k, " \t") {
			return h, fmt.Errorf("%w %q", errHeader, line)
		}
		v = bytes.Trim(v, " \t")
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			n, ok := decimal(v)
			if !ok || (h.length >= 0 && n != h.length) {
				return h, fmt.Errorf("%w: Content-Length %q", errHeader, v)
			}
			h.length = n
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			if !bytes.EqualFold(v, []byte("chunked")) || h.chunked {
				return h, fmt.Errorf("%w: Transfer-Encoding %q (only a single chunked is read)", errHeader, v)
			}
			h.chunked = true
		case bytes.EqualFold(k, []byte("Connection")):
			for _, tok := range bytes.Split(v, []byte(",")) {
				if bytes.EqualFold(bytes.Trim(tok, " \t"), []byte("close")) {
					h.close = true
				}
			}
		}
	}
	if h.chunked && h.length >= 0 {
		return h, fmt.Errorf("%w: both Transfer-Encoding and Content-Length", errHeader)
	}
	return h, nil
}

// decimal parses a non-negative decimal of at most 15 digits.
func decimal(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 15 {
		return 0, false
	}
	var n int64
	for _, d := range v {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// chunked reads a chunked body into s, up to the end of its trailers.
func chunked(br *bufio.Reader, s *sink) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return fmt.Errorf("%w: a chunk size line longer than %d bytes", errChunk, br.Size())
			}
			return noEOF(err)
		}
		size, _, _ := bytes.Cut(trimEOL(line), []byte(";")) // extensions are ignored
		size = bytes.Trim(size, " \t")
		if len(size) == 0 || len(size) > 15 {
			return fmt.Errorf("%w: chunk size %q", errChunk, size)
		}
		var n int64
		for _, d := range size {
			switch {
			case '0' <= d && d <= '9':
				n = n<<4 | int64(d-'0')
			case 'a' <= d && d <= 'f':
				n = n<<4 | int64(d-'a'+10)
			case 'A' <= d && d <= 'F':
				n = n<<4 | int64(d-'A'+10)
			default:
				return fmt.Errorf("%w: chunk size %q", errChunk, size)
			}
		}
		if n == 0 {
			break
		}
		if err := s.take(br, n); err != nil {
			return err
		}
		var crlf [2]byte
		if _, err := io.ReadFull(br, crlf[:]); err != nil {
			return noEOF(err)
		}
		if crlf != [2]byte{'\r', '\n'} {
			return fmt.Errorf("%w: chunk data not followed by CRLF", errChunk)
		}
	}
	// Trailers, up to the blank line; their content is not used.
	for n := 0; ; n++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return fmt.Errorf("%w: a trailer line longer than %d bytes", errChunk, br.Size())
			}
			return noEOF(err)
		}
		if len(trimEOL(line)) == 0 {
			return nil
		}
		if n >= maxHeaders {
			return fmt.Errorf("%w: more than %d trailer lines", errChunk, maxHeaders)
		}
	}
}

// sink takes body bytes: it appends up to limit of them to buf and drops
// the rest, or fails past limit when strict. A zero sink drops all.
type sink struct {
	buf    []byte
	limit  int
	strict bool
}

// take reads n body bytes from br.
func (s *sink) take(br *bufio.Reader, n int64) error {
	room := int64(s.limit - len(s.buf))
	if s.strict && n > room {
		return errTooLarge
	}
	// The buffer grows by what arrives, not by what the answer claims.
	for k := min(n, max(room, 0)); k > 0; {
		piece := min(k, 32<<10)
		start := len(s.buf)
		s.buf = append(s.buf, make([]byte, piece)...)
		if _, err := io.ReadFull(br, s.buf[start:]); err != nil {
			s.buf = s.buf[:start]
			return noEOF(err)
		}
		k -= piece
		n -= piece
	}
	if n > 0 {
		if _, err := br.Discard(int(n)); err != nil {
			return noEOF(err)
		}
	}
	return nil
}

// trimEOL drops the line's CRLF or LF.
func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// noEOF turns an end of stream inside an answer into
// io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// isReset reports whether err is a connection reset or a broken pipe, as
// when a server closed an idle connection.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
