package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// leanPool is a minimal HTTP/1.1 keep-alive client for the B1 load: one
// connection per concurrent worker, requests written from a reused buffer,
// answers parsed just enough (status line, Content-Length, body). The
// load generator shares the machine with the server under test, so its
// own cost counts against every figure; net/http's client (two goroutines
// and a header map per exchange) costs about as much CPU as the server it
// measures. Raw NATS references use their ordinary client.
type leanPool struct {
	addr  string
	conns chan *leanConn
}

type leanConn struct {
	c    net.Conn
	br   *bufio.Reader
	wbuf []byte
}

func newLeanPool(addr string) *leanPool {
	return &leanPool{addr: addr, conns: make(chan *leanConn, 4096)}
}

func (p *leanPool) get() (*leanConn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	default:
	}
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return &leanConn{c: c, br: bufio.NewReaderSize(c, 16<<10)}, nil
}

func (p *leanPool) put(c *leanConn) {
	select {
	case p.conns <- c:
	default:
		c.c.Close()
	}
}

// close closes every idle connection.
func (p *leanPool) close() {
	for {
		select {
		case c := <-p.conns:
			c.c.Close()
		default:
			return
		}
	}
}

// do sends one request and returns the status code; a non-2xx answer
// returns its body in the error.
func (p *leanPool) do(method, path string, body []byte) (int, error) {
	c, err := p.get()
	if err != nil {
		return 0, err
	}
	status, msg, err := c.exchange(method, path, body)
	if err != nil {
		c.c.Close()
		return 0, err
	}
	p.put(c)
	if status/100 != 2 {
		return status, fmt.Errorf("%s %s: status %d: %s", method, path, status, msg)
	}
	return status, nil
}

func (c *leanConn) exchange(method, path string, body []byte) (int, []byte, error) {
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
	_ = c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(w); err != nil {
		return 0, nil, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	length := -1
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		if len(h) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			length, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return 0, nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if length < 0 {
		return 0, nil, errors.New("answer without Content-Length (chunked answers are not supported by the lean client)")
	}
	var msg []byte
	if status/100 != 2 {
		msg = make([]byte, length)
		_, err = io.ReadFull(c.br, msg)
	} else {
		_, err = c.br.Discard(length)
	}
	return status, msg, err
}
