package testkit

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards loopback TCP connections to a target, so that a test can
// take a client's connection away while the server keeps running: cut the
// open connections, refuse new ones, or hold new ones (accepted, not
// forwarded) while it changes things on the server. It is safe for
// concurrent use; the test's cleanup closes it.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	down     bool
	holding  bool
	held     []net.Conn
	accepted int
	seen     *Buffer // what the target sent on the latest connection
}

// NewProxy listens on a loopback port and forwards to target, a host:port
// or a URL whose scheme (http://, nats://) is dropped.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, seen: &Buffer{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Down()
		p.Release()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		switch {
		case p.down:
			p.mu.Unlock()
			c.Close()
			continue
		case p.holding:
			p.held = append(p.held, c)
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		p.forward(c)
	}
}

// forward connects c to the target.
func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	seen := &Buffer{}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.seen = seen
	p.mu.Unlock()
	done := func() {
		c.Close()
		up.Close()
		p.mu.Lock()
		delete(p.conns, c)
		delete(p.conns, up)
		p.mu.Unlock()
	}
	go func() { _, _ = io.Copy(up, c); done() }()
	go func() { _, _ = io.Copy(io.MultiWriter(seen, c), up); done() }() // seen first: what a client has read is already there
}

// Close stops listening, so that nothing answers on the proxy's port any
// more, and cuts every forwarded connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Down()
}

// Cut closes every forwarded connection, both ends; new connections are
// forwarded as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Down cuts every forwarded connection and closes new ones at once, until
// Up: the server looks gone to the client.
func (p *Proxy) Down() {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.Cut()
}

// Up forwards new connections again after Down.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// Hold makes new connections wait, accepted but not forwarded, until
// Release.
func (p *Proxy) Hold() {
	p.mu.Lock()
	p.holding = true
	p.mu.Unlock()
}

// Release forwards the held connections and stops holding.
func (p *Proxy) Release() {
	p.mu.Lock()
	held := p.held
	p.held, p.holding = nil, false
	p.mu.Unlock()
	for _, c := range held {
		p.forward(c)
	}
}

// Held is how many connections wait for Release.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held)
}

// Latest is what the target has sent so far on the latest forwarded
// connection.
func (p *Proxy) Latest() string {
	p.mu.Lock()
	seen := p.seen
	p.mu.Unlock()
	return seen.String()
}

// Buffer is a bytes.Buffer safe for concurrent writers and readers: a
// log sink or a child process's output that a test reads while it is
// written.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
