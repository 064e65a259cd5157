package leanhttp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

// seen is one request as the scripted server received it, byte for byte.
type seen struct {
	conn int // which accepted connection, from 1
	raw  string
}

// scripted is a loopback HTTP server that answers each request with the
// next raw answer it is given, byte for byte, and closes the connection
// after an answer when told to.
type scripted struct {
	t       *testing.T
	ln      net.Listener
	answers chan step
	reqs    chan seen
	accepts atomic.Int64
	wg      sync.WaitGroup
}

// step is one scripted answer.
type step struct {
	raw   string
	close bool // close the connection after writing raw
}

func newScripted(t *testing.T) *scripted {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scripted{t: t, ln: ln, answers: make(chan step, 16), reqs: make(chan seen, 16)}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *scripted) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		n := int(s.accepts.Add(1))
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			var raw bytes.Buffer
			br := bufio.NewReader(io.TeeReader(c, &raw))
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				// The tee has seen what the bufio.Reader read, which
				// is this request and nothing more (the client sends
				// one request at a time).
				s.reqs <- seen{conn: n, raw: raw.String()}
				raw.Reset()
				a, ok := <-s.answers
				if !ok {
					return
				}
				if _, err := io.WriteString(c, a.raw); err != nil || a.close {
					return
				}
			}
		}()
	}
}

// answer scripts the next answers.
func (s *scripted) answer(steps ...step) {
	for _, a := range steps {
		s.answers <- a
	}
}

// next returns the next request the server received.
func (s *scripted) next() seen {
	s.t.Helper()
	select {
	case r := <-s.reqs:
		return r
	default:
		s.t.Fatal("the server received no request")
		return seen{}
	}
}

const ok2 = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

func TestDoRequestOnTheWire(t *testing.T) {
	s := newScripted(t)
	p := New(s.ln.Addr().String())
	defer p.Close()
	s.answer(step{raw: ok2}, step{raw: ok2})
	status, err := p.Do("POST", "/api/v1/notification", []byte(`{"a":1}`))
	if status != 200 || err != nil {
		t.Fatalf("Do = %d, %v; want 200, nil", status, err)
	}
	if r, want := s.next(), "POST /api/v1/notification HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}"; r.raw != want || r.conn != 1 {
		t.Errorf("request on connection %d:\n%q\nwant on connection 1:\n%q", r.conn, r.raw, want)
	}
	status, err = p.Do("GET", "/health", nil)
	if status != 200 || err != nil {
		t.Fatalf("Do = %d, %v; want 200, nil", status, err)
	}
	if r, want := s.next(), "GET /health HTTP/1.1\r\nHost: bench\r\n\r\n"; r.raw != want || r.conn != 1 {
		t.Errorf("request on connection %d:\n%q\nwant on connection 1 (kept alive):\n%q", r.conn, r.raw, want)
	}
}

// TestAnswers reads one scripted answer per case, then checks that the
// connection is reused or not as the answer says, by a second request
// whose answer must be read right.
func TestAnswers(t *testing.T) {
	long := strings.Repeat("x", MaxErrorBody+100)
	for _, tc := range []struct {
		name   string
		answer string
		head   bool
		status int
		body   string // Read's body on success
		err    string // the exact error, "" for none
		is     error  // what err wraps
		reuse  bool   // the next request goes over the same connection
	}{
		{name: "content-length", answer: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
			status: 200, body: "hello", reuse: true},
		{name: "lower-case headers, no reason", answer: "HTTP/1.1 201\r\ncontent-length:  3 \r\n\r\nabc",
			status: 201, body: "abc", reuse: true},
		{name: "LF line ends", answer: "HTTP/1.1 200 OK\nContent-Length: 1\n\nz", status: 200, body: "z", reuse: true},
		{name: "empty", answer: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, reuse: true},
		{name: "no content", answer: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, reuse: true},
		{name: "HEAD", answer: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", head: true, status: 200, reuse: true},
		{name: "interim 100 skipped", answer: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
			status: 200, body: "hi", reuse: true},
		{name: "chunked", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5;name=value\r\nhello\r\n6\r\n world\r\nA \r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n",
			status: 200, body: "hello world0123456789", reuse: true},
		{name: "chunked, no trailer", answer: "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
			status: 200, body: "ab", reuse: true},
		{name: "error body", answer: "HTTP/1.1 400 Bad Request\r\nContent-Length: 15\r\n\r\n{\"error\":\"bad\"}",
			status: 400, err: `POST /p: status 400: {"error":"bad"}`, reuse: true},
		{name: "error body, chunked", answer: "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbusy\r\n0\r\n\r\n",
			status: 503, err: "POST /p: status 503: busy", reuse: true},
		{name: "error body, empty", answer: "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
			status: 404, err: "POST /p: status 404: ", reuse: false},
		{name: "error body, long", answer: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: " + strconv.Itoa(len(long)) + "\r\n\r\n" + long,
			status: 500, err: "POST /p: status 500: " + long[:MaxErrorBody], reuse: true},
		{name: "connection close", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, Close\r\n\r\nok",
			status: 200, body: "ok", reuse: false},
		{name: "HTTP/1.0", answer: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: false},
		{name: "missing Content-Length", answer: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nbody",
			err: "POST /p: answer without Content-Length or Transfer-Encoding: chunked", is: errNoLength},
		{name: "short status code", answer: "HTTP/1.1 20 OK\r\n\r\n", err: `POST /p: bad status line "HTTP/1.1 20 OK\r\n"`, is: errStatusLine},
		{name: "letters in status code", answer: "HTTP/1.1 2x0 OK\r\n\r\n", err: `POST /p: bad status line "HTTP/1.1 2x0 OK\r\n"`, is: errStatusLine},
		{name: "status code out of range", answer: "HTTP/1.1 600 OK\r\n\r\n", err: `POST /p: bad status line "HTTP/1.1 600 OK\r\n"`, is: errStatusLine},
		{name: "status code too long", answer: "HTTP/1.1 2000 OK\r\n\r\n", err: `POST /p: bad status line "HTTP/1.1 2000 OK\r\n"`, is: errStatusLine},
		{name: "HTTP/2", answer: "HTTP/2 200 OK\r\n\r\n", err: `POST /p: bad status line "HTTP/2 200 OK\r\n"`, is: errStatusLine},
		{name: "not HTTP", answer: "hello there, this is not HTTP\r\n", err: `POST /p: bad status line "hello there, this is not HTTP\r\n"`, is: errStatusLine},
		{name: "switching protocols", answer: "HTTP/1.1 101 Switching Protocols\r\n\r\n", err: "POST /p: bad status line: interim answer 101", is: errStatusLine},
		{name: "bad Content-Length", answer: "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", err: `POST /p: bad header: Content-Length "+5"`, is: errHeader},
		{name: "two Content-Lengths", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", err: `POST /p: bad header: Content-Length "3"`, is: errHeader},
		{name: "both framings", answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
			err: "POST /p: bad header: both Transfer-Encoding and Content-Length", is: errHeader},
		{name: "gzip", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
			err: `POST /p: bad header: Transfer-Encoding "gzip, chunked" (only a single chunked is read)`, is: errHeader},
		{name: "chunked HTTP/1.0", answer: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			err: "POST /p: bad header: Transfer-Encoding in an HTTP/1.0 answer", is: errHeader},
		{name: "header without colon", answer: "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok", err: `POST /p: bad header "Content-Length 2"`, is: errHeader},
		{name: "bad chunk size", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: `POST /p: bad chunked body: chunk size "zz"`, is: errChunk},
		{name: "chunk without CRLF", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
			err: "POST /p: bad chunked body: chunk data not followed by CRLF", is: errChunk},
		{name: "truncated body", answer: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", err: "POST /p: unexpected EOF", is: io.ErrUnexpectedEOF},
		{name: "truncated chunk", answer: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", err: "POST /p: unexpected EOF", is: io.ErrUnexpectedEOF},
		{name: "truncated headers", answer: "HTTP/1.1 200 OK\r\nContent-Len", err: "POST /p: unexpected EOF", is: io.ErrUnexpectedEOF},
		{name: "over MaxBody", answer: "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(MaxBody+1) + "\r\n\r\n",
			err: "POST /p: answer body over leanhttp.MaxBody", is: errTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted(t)
			p := New(s.ln.Addr().String())
			defer p.Close()
			method := "POST"
			if tc.head {
				method = "HEAD"
			}
			// Read, to see the body; an answer that cannot be read
			// leaves the connection closed after it.
			s.answer(step{raw: tc.answer, close: tc.err != "" && tc.status == 0})
			status, body, err := p.Read(method, "/p", []byte("{}"), make([]byte, 3, 64))
			errText := ""
			if err != nil {
				errText = strings.Replace(err.Error(), "HEAD /p", "POST /p", 1)
			}
			if status != tc.status || errText != tc.err || string(body) != tc.body {
				t.Fatalf("Read = %d, %q, %v\nwant %d, %q, %s", status, body, err, tc.status, tc.body, tc.err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("the error does not wrap %v", tc.is)
			}
			if first := s.next(); first.conn != 1 {
				t.Fatalf("the first request came on connection %d", first.conn)
			}
			s.answer(step{raw: ok2})
			if status, err := p.Do("GET", "/again", nil); status != 200 || err != nil {
				t.Fatalf("the next Do = %d, %v; want 200, nil", status, err)
			}
			want := 2
			if tc.reuse {
				want = 1
			}
			if r := s.next(); r.conn != want || r.raw != "GET /again HTTP/1.1\r\nHost: bench\r\n\r\n" {
				t.Errorf("the next request came on connection %d as %q, want on connection %d", r.conn, r.raw, want)
			}
		})
	}
}

// TestDoRetriesClosedIdle checks that a request whose kept-alive
// connection the server closed while it was idle goes once more over a
// new connection, and that the server then sees it once.
func TestDoRetriesClosedIdle(t *testing.T) {
	s := newScripted(t)
	p := New(s.ln.Addr().String())
	defer p.Close()
	// The first answer keeps the connection alive by its headers, yet
	// the server closes it, as a server's idle timeout does.
	s.answer(step{raw: ok2, close: true}, step{raw: ok2})
	for i := range 2 {
		if status, err := p.Do("POST", "/n", []byte(strconv.Itoa(i))); status != 200 || err != nil {
			t.Fatalf("Do %d = %d, %v; want 200, nil", i, status, err)
		}
	}
	for i, conn := range []int{1, 2} {
		want := "POST /n HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n" + strconv.Itoa(i)
		if r := s.next(); r.conn != conn || r.raw != want {
			t.Errorf("request %d came on connection %d as %q, want on connection %d as %q", i, r.conn, r.raw, conn, want)
		}
	}
	select {
	case r := <-s.reqs:
		t.Errorf("an extra request came: %q", r.raw)
	default:
	}
}

// TestConcurrentWorkers checks that n workers doing requests at once
// run over at most n connections, each carrying one request at a time.
func TestConcurrentWorkers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/big" {
			b = bytes.Repeat(b, 1000) // over net/http's buffer: a chunked answer
		}
		_, _ = w.Write(b)
	})}
	var conns atomic.Int64
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	p := New(ln.Addr().String())
	defer p.Close()
	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range each {
				msg := []byte(strconv.Itoa(w*1000 + i))
				path := "/echo"
				want := msg
				if i%5 == 0 {
					path, want = "/big", bytes.Repeat(msg, 1000)
				}
				status, body, err := p.Read("POST", path, msg, buf)
				if err == nil && (status != 200 || !bytes.Equal(body, want)) {
					err = errors.New("answer " + strconv.Itoa(status) + " " + string(body[:min(len(body), 20)]) + ", want 200 " + string(want[:min(len(want), 20)]))
				}
				if err != nil {
					errs <- err
					return
				}
				buf = body
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n < 1 || n > workers {
		t.Errorf("%d connections for %d workers", n, workers)
	}
}

// TestDoAfterAllIdleClosed checks that a request made after the server
// closed every idle connection of the pool (a pause longer than its idle
// timeout) skips all of them and goes over a new connection.
func TestDoAfterAllIdleClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opened, closed atomic.Int64
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-release
		}
		_, _ = w.Write([]byte("ok"))
	})}
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed:
			closed.Add(1)
		}
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	p := New(ln.Addr().String())
	defer p.Close()
	// Three requests at once leave three idle connections in the pool.
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if status, err := p.Do("GET", "/hold", nil); status != 200 || err != nil {
				t.Errorf("Do = %d, %v", status, err)
			}
		})
	}
	testkit.WaitFor(t, 10*time.Second, "three connections open", func() bool { return opened.Load() == 3 })
	close(release)
	wg.Wait()
	srv.SetKeepAlivesEnabled(false) // closes the idle connections
	testkit.WaitFor(t, 10*time.Second, "the server closed the idle connections", func() bool { return closed.Load() == 3 })
	if status, err := p.Do("GET", "/after", nil); status != 200 || err != nil {
		t.Fatalf("Do after the idle connections closed = %d, %v; want 200, nil", status, err)
	}
	if n := opened.Load(); n != 4 {
		t.Errorf("%d connections opened, want 4 (three closed idle, one new)", n)
	}
}
