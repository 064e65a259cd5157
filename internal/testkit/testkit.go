// Package testkit holds the helpers herald's tests share: waiting for a
// condition with a deadline, a free loopback port, counting goroutines,
// and a TCP proxy that injects faults between a client and a server.
//
// Tests wait on conditions through WaitFor, never by sleeping and hoping;
// it is the one polling loop of the test suite.
package testkit

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// WaitFor checks cond until it holds, failing the test with what when
// timeout passes first. It checks at once, then every millisecond at
// first and every 10 ms after that, so a condition that holds soon is
// seen soon without a busy loop.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(pause) // polling a condition, with a deadline
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Goroutines counts the goroutines whose stack holds a frame whose name
// contains fn (for instance "stream.(*runner)"), this test's own
// included.
func Goroutines(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}
