package cli

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards loopback connections to a target, so that a test can
// cut them from the server's side of the client, and hold new ones
// (accepted, not forwarded) while it changes things on the server.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	conns    []net.Conn
	held     []net.Conn
	holding  bool
	accepted int
	// seen is what the server sent on the latest forwarded connection.
	seen *syncBuffer
}

func newTCPProxy(t *testing.T, targetURL string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: strings.TrimPrefix(targetURL, "http://"), seen: &syncBuffer{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.release()
	})
	return p
}

// URL is the proxy's base URL.
func (p *tcpProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted++
		if p.holding {
			p.held = append(p.held, c)
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		p.forward(c)
	}
}

// forward connects c to the target.
func (p *tcpProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	seen := &syncBuffer{}
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.seen = seen
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	go func() { _, _ = io.Copy(io.MultiWriter(c, seen), up); c.Close() }()
}

// cut closes every forwarded connection, both ends.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// hold makes new connections wait until release.
func (p *tcpProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = true
}

// release forwards the held connections and stops holding.
func (p *tcpProxy) release() {
	p.mu.Lock()
	held := p.held
	p.held, p.holding = nil, false
	p.mu.Unlock()
	for _, c := range held {
		p.forward(c)
	}
}

// heldCount is how many connections wait.
func (p *tcpProxy) heldCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held)
}

// latest is what the server sent on the latest forwarded connection.
func (p *tcpProxy) latest() *syncBuffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

// opened reports whether the server's answer on the latest connection
// has opened the stream (its first event is written after the
// subscription exists).
func opened(s string) bool {
	return bytes.Contains([]byte(s), []byte("connection_established")) || bytes.Contains([]byte(s), []byte("replay_started"))
}

// waitOpened waits until the latest forwarded connection's stream is
// open.
func (p *tcpProxy) waitOpened(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !opened(p.latest().String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the stream did not open through the proxy; the server sent %q", p.latest().String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
