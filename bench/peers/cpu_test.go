package main

import (
	"testing"
	"time"
)

// TestPerOp checks the CPU time per operation of each process, in µs.
func TestPerOp(t *testing.T) {
	a := cpuSample{server: time.Second, nats: 2 * time.Second, self: 0}
	b := cpuSample{server: 3 * time.Second, nats: 2 * time.Second, self: 500 * time.Millisecond}
	if s, n, l := perOp(a, b, 1000); s != 2000 || n != 0 || l != 500 {
		t.Fatalf("perOp = %v, %v, %v; want 2000, 0, 500", s, n, l)
	}
	if s, _, _ := perOp(a, b, 0); s != 2e6 {
		t.Fatalf("perOp with no operations = %v, want the whole 2 s", s)
	}
}
