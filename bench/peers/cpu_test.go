package main

import (
	"os"
	"testing"
	"time"
)

// TestParseStatCPU checks utime+stime of /proc stat lines, command names
// with spaces and parentheses among them, and refusals.
func TestParseStatCPU(t *testing.T) {
	for _, c := range []struct {
		stat string
		want time.Duration
		ok   bool
	}{
		{"123 (herald) S 1 2 3 4 5 6 7 8 9 10 250 75 0 0 20 0", 3250 * time.Millisecond, true},
		{"7 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 1 2 0 0", 30 * time.Millisecond, true},
		{"7 (x) R 1 2 3", 0, false},
		{"7 x R 1 2 3 4 5 6 7 8 9 10 1 2", 0, false},
		{"7 (x) R 1 2 3 4 5 6 7 8 9 10 a 2", 0, false},
		{"7 (x) R 1 2 3 4 5 6 7 8 9 10 -1 2", 0, false},
	} {
		got, err := parseStatCPU(c.stat)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseStatCPU(%q) = %v, %v; want %v, ok %v", c.stat, got, err, c.want, c.ok)
		}
	}
}

// TestProcCPU reads this process's own CPU time through /proc and finds
// it within a tick of getrusage's after some work.
func TestProcCPU(t *testing.T) {
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	p, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	s, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > s+clockTick || s-p > 5*clockTick {
		t.Errorf("/proc CPU %v, getrusage %v (after %d loops)", p, s, x)
	}
}
