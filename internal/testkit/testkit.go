// Package testkit holds the helpers herald's tests share: waiting for a
// condition with a deadline, a free loopback port, and a TCP proxy that
// injects faults between a client and a server.
//
// Tests wait on conditions through WaitFor, never by sleeping and hoping;
// it is the one polling loop of the test suite.
package testkit

import (
	"net"
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
