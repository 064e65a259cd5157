package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func frames(out string) []string             { return strings.Split(out, "\r\x1b[K")[1:] }
func lastFrame(out string) string            { f := frames(out); return f[len(f)-1] }
func noWrite() func() error                  { return nil }
func writeTo(b *bytes.Buffer, s string) func() error {
	return func() error { b.WriteString(s); return nil }
}

// TestProgressLine: the exact progress text with and without a known
// end, the time left from the sequence rate, and the final state.
func TestProgressLine(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	var out bytes.Buffer
	p := newProgress(&out, clk.now, false)
	p.setRange(1, true, 100, true)
	p.tick()
	if got := lastFrame(out.String()); got != "replay [>                       ]   0%  0 events  -/s  ETA -" {
		t.Fatalf("opening frame %q", got)
	}
	clk.advance(2 * time.Second)
	for seq := uint64(1); seq <= 25; seq++ {
		_ = p.event(seq, noWrite())
	}
	p.tick()
	if got := lastFrame(out.String()); got != "replay [======>                 ]  25%  25 events  12/s  ETA 6.0s" {
		t.Fatalf("a quarter %q", got)
	}
	clk.advance(10 * time.Minute)
	_ = p.event(30, noWrite())
	p.tick()
	if got := lastFrame(out.String()); got != "replay [=======>                ]  30%  26 events  0.0/s  ETA 23m25s" {
		t.Fatalf("slow %q", got)
	}
	p.finish(true)
	if got := lastFrame(out.String()); got != "replay [========================] 100%  26 events  0.0/s  done in 10m02s\n" {
		t.Fatalf("final %q", got)
	}

	// Without an end: the count and the rate only.
	out.Reset()
	p = newProgress(&out, clk.now, false)
	clk.advance(500 * time.Millisecond)
	_ = p.event(7, noWrite())
	if got := lastFrame(out.String()); got != "replay 1 event  2.0/s" {
		t.Fatalf("no end %q", got)
	}
	p.finish(true)
	if got := lastFrame(out.String()); got != "replay 1 event  2.0/s  done in 0.5s\n" {
		t.Fatalf("no end, final %q", got)
	}
}

// TestProgressSharesATerminal: when stdout is the same terminal, the bar
// is erased before each line written there and drawn again after it
// (at most every progressEvery), so lines and bar never mix.
func TestProgressSharesATerminal(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	var term bytes.Buffer
	p := newProgress(&term, clk.now, true)
	p.tick()
	_ = p.event(1, writeTo(&term, "line 1\n"))
	_ = p.event(2, writeTo(&term, "line 2\n"))
	clk.advance(progressEvery)
	_ = p.event(3, writeTo(&term, "line 3\n"))
	p.note("herald replay: a notice")
	p.finish(true)
	want := "\r\x1b[Kreplay 0 events  -/s" +
		"\r\x1b[Kline 1\n\r\x1b[Kreplay 1 event  -/s" +
		"\r\x1b[Kline 2\n\r\x1b[Kreplay 2 events  -/s" +
		"\r\x1b[Kline 3\n\r\x1b[Kreplay 3 events  15/s" +
		"\r\x1b[Kherald replay: a notice\n\r\x1b[Kreplay 3 events  15/s" +
		"\r\x1b[Kreplay 3 events  15/s  done in 0.2s\n"
	if term.String() != want {
		t.Fatalf("terminal\n%q\nwant\n%q", term.String(), want)
	}
}

func TestRoundDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		400 * time.Millisecond: "0.4s", 9*time.Second + 960*time.Millisecond: "10.0s", 42 * time.Second: "42s",
		3*time.Minute + 12*time.Second: "3m12s", time.Hour + 2*time.Minute + 20*time.Second: "1h02m",
	} {
		if got := roundDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
