package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressBarWidth is the number of cells of the bar.
const progressBarWidth = 24

// progressEvery is how often the bar is redrawn at most, and while no
// event arrives.
const progressEvery = 200 * time.Millisecond

// progress is the replay's progress line on a terminal: events so far,
// their rate and, when the end sequence is known (--to-id), a bar and
// the time left. It redraws itself in place (carriage return, erase line)
// and leaves its final state on screen. Its methods are safe for
// concurrent use.
type progress struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
	// clearFirst erases the line before anything else is written to the
	// same terminal (stdout on a terminal too).
	clearFirst bool

	start    time.Time
	lastDraw time.Time
	drawn    bool
	events   int
	// first is the first sequence of the replay (--from, else the first
	// event's); last the latest delivered; end the --to-id.
	first, last   uint64
	haveFirst     bool
	haveLast      bool
	end           uint64
	haveEnd       bool
	stopped, done bool
}

func newProgress(w io.Writer, now func() time.Time, clearFirst bool) *progress {
	return &progress{w: w, now: now, clearFirst: clearFirst, start: now()}
}

// setRange records the start sequence (when --from gave it) and the end
// sequence (when --to-id gave it).
func (p *progress) setRange(first uint64, haveFirst bool, end uint64, haveEnd bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.first, p.haveFirst, p.end, p.haveEnd = first, haveFirst, end, haveEnd
}

// event counts one delivered event; write, when not nil, writes it (to a
// terminal shared with the bar) with the bar erased first.
func (p *progress) event(seq uint64, write func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events++
	if seq != 0 {
		if !p.haveFirst {
			p.first, p.haveFirst = seq, true
		}
		p.last, p.haveLast = seq, true
	}
	if write != nil {
		if p.clearFirst && p.drawn {
			fmt.Fprint(p.w, "\r\x1b[K")
			p.drawn = false
		}
		if err := write(); err != nil {
			return err
		}
	}
	if !p.drawn || p.now().Sub(p.lastDraw) >= progressEvery {
		p.draw()
	}
	return nil
}

// tick redraws the line (the rate and the time left change while no
// event arrives).
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.draw()
	}
}

// note writes a line of text (a notice) above the bar.
func (p *progress) note(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, text)
	if !p.stopped {
		p.draw()
	}
}

// finish draws the final state and ends the line; complete says whether
// the replay reached its end.
func (p *progress) finish(complete bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.done = complete
	p.draw()
	p.stopped = true
	fmt.Fprintln(p.w)
}

// draw writes the line; the caller holds p.mu.
func (p *progress) draw() {
	fmt.Fprint(p.w, "\r\x1b[K"+p.line())
	p.drawn = true
	p.lastDraw = p.now()
}

// line renders the progress text:
//
//	replay [=========>              ]  40%  1234 events  456/s  ETA 8s
//	replay 1234 events  456/s
//
// and, once finished, "done in 2.7s" in place of the time left.
func (p *progress) line() string {
	elapsed := p.now().Sub(p.start)
	var b strings.Builder
	b.WriteString("replay ")
	frac, known := p.fraction()
	if known {
		filled := int(frac * progressBarWidth)
		bar := strings.Repeat("=", filled)
		if filled < progressBarWidth {
			bar += ">" + strings.Repeat(" ", progressBarWidth-filled-1)
		}
		fmt.Fprintf(&b, "[%s] %3d%%  ", bar, int(frac*100))
	}
	noun := "events"
	if p.events == 1 {
		noun = "event"
	}
	fmt.Fprintf(&b, "%d %s  %s", p.events, noun, rate(p.events, elapsed))
	switch {
	case p.done || p.stopped:
		b.WriteString("  done in " + roundDuration(elapsed))
	case known && frac > 0:
		left := time.Duration(float64(elapsed) * (1 - frac) / frac)
		b.WriteString("  ETA " + roundDuration(left))
	case known:
		b.WriteString("  ETA -")
	}
	return b.String()
}

// fraction is how far the replay has come through the sequences from
// first to end, when the end is known.
func (p *progress) fraction() (float64, bool) {
	if !p.haveEnd {
		return 0, false
	}
	if p.done {
		return 1, true
	}
	if !p.haveFirst || !p.haveLast || p.end < p.first {
		return 0, true
	}
	total := float64(p.end-p.first) + 1
	got := float64(min(p.last, p.end)-p.first) + 1
	if p.last < p.first {
		got = 0
	}
	return min(got/total, 1), true
}

// rate renders events per second.
func rate(n int, elapsed time.Duration) string {
	if elapsed <= 0 {
		return "-/s"
	}
	r := float64(n) / elapsed.Seconds()
	if r >= 10 {
		return fmt.Sprintf("%.0f/s", r)
	}
	return fmt.Sprintf("%.1f/s", r)
}

// roundDuration renders a duration to a readable precision: 0.4s, 8s,
// 3m12s, 1h02m.
func roundDuration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}
