package testkit

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// echo runs a loopback server that answers each line with "echo: " and the
// line, and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, "echo: "+line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends line over c and returns the answer, or the error.
func roundTrip(c net.Conn, line string) (string, error) {
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func TestProxy(t *testing.T) {
	p := NewProxy(t, "tcp://"+echo(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "one"); got != "echo: one\n" || err != nil {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}
	if got := p.Latest(); got != "echo: one\n" {
		t.Fatalf("Latest = %q", got)
	}
	// Cut ends the open connection; a new one is forwarded.
	p.Cut()
	if got, err := roundTrip(c, "two"); err == nil {
		t.Fatalf("after Cut the old connection answered %q", got)
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := roundTrip(c2, "three"); got != "echo: three\n" || err != nil {
		t.Fatalf("after Cut, a new connection: %q, %v", got, err)
	}
	// Down closes new connections at once, until Up.
	p.Down()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3, "four"); err == nil {
		t.Fatalf("while down a connection answered %q", got)
	}
	p.Up()
	// Hold keeps new connections waiting until Release.
	p.Hold()
	c4, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c4.Close()
	WaitFor(t, 5*time.Second, "the connection held", func() bool { return p.Held() == 1 })
	p.Release()
	if got, err := roundTrip(c4, "five"); got != "echo: five\n" || err != nil {
		t.Fatalf("after Release: %q, %v", got, err)
	}
	// Close: nothing answers on the port.
	p.Close()
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Fatal("a connection was accepted after Close")
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, 5*time.Second, "the third check", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
}

func TestFreePort(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d was not free: %v", port, err)
	}
	ln.Close()
}

// parkedForGoroutines is a function name only the goroutines of
// TestGoroutines run.
func parkedForGoroutines(release <-chan struct{}) { <-release }

func TestGoroutines(t *testing.T) {
	release := make(chan struct{})
	for range 3 {
		go parkedForGoroutines(release)
	}
	WaitFor(t, 5*time.Second, "three parked goroutines", func() bool { return Goroutines("testkit.parkedForGoroutines") == 3 })
	close(release)
	WaitFor(t, 5*time.Second, "none left", func() bool { return Goroutines("testkit.parkedForGoroutines") == 0 })
}
