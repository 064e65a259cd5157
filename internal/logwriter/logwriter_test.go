package logwriter

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

// safeBuffer is a bytes.Buffer for concurrent use that counts the Write
// calls it got.
type safeBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gate is an output that blocks every Write until it is opened.
type gate struct {
	safeBuffer
	open    chan struct{}
	entered chan struct{} // one value per Write that has started
}

func newGate() *gate {
	return &gate{open: make(chan struct{}), entered: make(chan struct{}, 1024)}
}

func (g *gate) Write(p []byte) (int, error) {
	g.entered <- struct{}{}
	<-g.open
	return g.safeBuffer.Write(p)
}

// TestOrderAndBytes: what is written comes out whole, unchanged and in
// order, all of it by the time Close returns, in one batch when the
// delay outlasts the writing.
func TestOrderAndBytes(t *testing.T) {
	var out safeBuffer
	a := New(&out, Options{Delay: time.Hour})
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf(`{"msg":"request","i":%d}`+"\n", i)
		want.WriteString(line)
		if n, err := a.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want.String() {
		t.Fatalf("output differs from what was written:\n%.300s", got)
	}
	if a.Dropped() != 0 || out.writes != 1 {
		t.Fatalf("dropped %d, %d writes of the output, want 0 and 1", a.Dropped(), out.writes)
	}
}

// TestConcurrentNothingDropped: many goroutines logging through a slog
// JSON handler, as herald's requests do, with an output that keeps up:
// every line is there once, intact, and nothing is dropped.
func TestConcurrentNothingDropped(t *testing.T) {
	var out safeBuffer
	a := New(&out, Options{})
	log := slog.New(slog.NewJSONHandler(a, nil))
	const workers, each = 16, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				log.Info("request", "worker", w, "i", i)
			}
		}()
	}
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.Dropped() != 0 {
		t.Fatalf("dropped %d lines", a.Dropped())
	}
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range lines {
		i := strings.Index(l, `"msg":"request","worker":`)
		if i < 0 || !strings.HasSuffix(l, "}") {
			t.Fatalf("mangled line %q", l)
		}
		key := l[i:]
		if seen[key] {
			t.Fatalf("line twice: %q", l)
		}
		seen[key] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d lines, want %d", len(seen), workers*each)
	}
	// Order per goroutine is kept.
	next := make([]int, workers)
	for _, l := range lines {
		var w, i int
		if _, err := fmt.Sscanf(l[strings.Index(l, `"worker":`):], `"worker":%d,"i":%d}`, &w, &i); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if i != next[w] {
			t.Fatalf("worker %d: line %d where %d was next", w, i, next[w])
		}
		next[w]++
	}
}

// TestCloseFlushesSlowOutput: lines still waiting behind a blocked
// output are all written by Close once the output moves again.
func TestCloseFlushesSlowOutput(t *testing.T) {
	g := newGate()
	a := New(g, Options{})
	if _, err := a.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	<-g.entered // the writer is stuck writing "first"
	for i := range 10 {
		if _, err := fmt.Fprintf(a, "line %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the output was blocked", err)
	case <-time.After(50 * time.Millisecond): // a window for a wrong early return; the assertion below does not depend on it
	}
	close(g.open)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	want := "first\n"
	for i := range 10 {
		want += fmt.Sprintf("line %d\n", i)
	}
	if got := g.String(); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	// After Close, writes go straight through.
	if _, err := a.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if got := g.String(); got != want+"after\n" {
		t.Fatalf("after Close: output %q", got)
	}
}

// TestStuckOutputDropsAndReports: with the output stuck and the buffer
// full, Write returns without waiting for the output (after MaxWait once,
// then at once), the lines it could not keep are counted, and the
// Dropped callback reports them once the output moves, its own line
// landing after the lines that were kept.
func TestStuckOutputDropsAndReports(t *testing.T) {
	g := newGate()
	var a *Async
	reports := make(chan uint64, 10)
	a = New(g, Options{MaxBuffered: 64, MaxWait: 20 * time.Millisecond, Dropped: func(n uint64) {
		reports <- n
		fmt.Fprintf(a, "dropped %d\n", n)
	}})
	if _, err := a.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	// 8 lines of 8 bytes fill the 64-byte buffer; the next 5 find no room.
	kept := ""
	for i := range 8 {
		line := fmt.Sprintf("kept %02d\n", i)
		kept += line
		if _, err := a.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := range 5 {
			if n, err := fmt.Fprintf(a, "lost %02d\n", i); n != 8 || err != nil {
				t.Errorf("Write = %d, %v", n, err)
			}
		}
	}()
	select {
	case <-wrote:
	case <-time.After(time.Minute):
		t.Fatal("Write blocked on a stuck output")
	}
	if a.Dropped() != 5 {
		t.Fatalf("dropped %d, want 5", a.Dropped())
	}
	close(g.open)
	select {
	case n := <-reports:
		if n != 5 {
			t.Fatalf("reported %d dropped, want 5", n)
		}
	case <-time.After(time.Minute):
		t.Fatal("the drops were not reported")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := g.String(), "first\n"+kept+"dropped 5\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	select {
	case n := <-reports:
		t.Fatalf("a second report of %d", n)
	default:
	}
	// With room again, lines are kept.
	if _, err := a.Write([]byte("later\n")); err != nil || a.Dropped() != 5 {
		t.Fatalf("after recovery: %v, dropped %d", err, a.Dropped())
	}
}

// TestOutputError: the output's first error is what Close returns.
func TestOutputError(t *testing.T) {
	boom := errors.New("disk full")
	a := New(errWriter{boom}, Options{})
	if _, err := a.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close = %v, want %v", err, boom)
	}
}

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }

// TestHalfFullWritesAtOnce: a buffer filled to half is written without
// waiting for the delay.
func TestHalfFullWritesAtOnce(t *testing.T) {
	var out safeBuffer
	a := New(&out, Options{MaxBuffered: 64, Delay: time.Hour})
	defer a.Close()
	for i := range 4 {
		fmt.Fprintf(a, "line %02d\n", i)
	}
	want := "line 00\nline 01\nline 02\nline 03\n"
	testkit.WaitFor(t, time.Minute, "the output "+strconv.Quote(want), func() bool { return out.String() == want })
}
