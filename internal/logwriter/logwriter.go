// Package logwriter takes the writing of log lines off the path of the
// code that logs: Async keeps the lines in a bounded memory buffer and
// one goroutine writes them, in order and unchanged, to the real output.
// A request that logs its access log line then pays for a copy under a
// short lock instead of a write system call under the log handler's lock
// (where every other request queues behind it while a slow or
// descheduled write is in progress).
package logwriter

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxBuffered is Options.MaxBuffered.
	DefaultMaxBuffered = 1 << 20
	// DefaultMaxWait is Options.MaxWait.
	DefaultMaxWait = 100 * time.Millisecond
	// DefaultDelay is Options.Delay.
	DefaultDelay = 5 * time.Millisecond
)

// Options configure an Async.
type Options struct {
	// MaxBuffered bounds the bytes waiting to be written (default
	// DefaultMaxBuffered); while a batch is being written the next one
	// fills, so at most twice as much is held. A single line larger than
	// the bound is accepted when nothing is waiting.
	MaxBuffered int
	// MaxWait bounds how long a Write waits for room when the buffer is
	// full (default DefaultMaxWait). A line that finds no room in that
	// time is dropped and counted, and so is every further line until the
	// output takes a batch again (a stuck output costs one wait, not one
	// per line).
	MaxWait time.Duration
	// Delay is how long the first line into an empty buffer waits for
	// others before the batch is written (default DefaultDelay), unless
	// the buffer fills to half first. A logging goroutine then wakes the
	// writing goroutine once per batch, not once per line.
	Delay time.Duration
	// Dropped, when not nil, is called by the writing goroutine with the
	// number of lines dropped since its previous call, when it takes the
	// buffer after drops: what it logs through the same Async lands right
	// after the lines kept before the drops. Close reports the drops not
	// yet reported the same way.
	Dropped func(n uint64)
}

// Async is an io.Writer that buffers and writes asynchronously. Each
// Write is kept whole, in the order of the calls (log/slog handlers make
// one Write per record). Close writes everything buffered; writes after
// Close go straight to the output. It is safe for concurrent use.
type Async struct {
	out  io.Writer
	opts Options

	mu      sync.Mutex
	buf     []byte
	room    chan struct{} // closed when the writer takes the buffer
	stalled bool          // a Write found no room in MaxWait: drop until room
	closing bool
	closed  bool // the writer has stopped: Write goes to out directly
	err     error

	wake    chan struct{} // capacity 1: the buffer has something, or is half full
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when the writing goroutine ends
	outMu   sync.Mutex    // one writer of out at a time
	dropped atomic.Uint64
}

// New returns an Async writing to out and starts its writing goroutine;
// Close stops it.
func New(out io.Writer, opts Options) *Async {
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = DefaultMaxBuffered
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Delay <= 0 {
		opts.Delay = DefaultDelay
	}
	a := &Async{out: out, opts: opts, room: make(chan struct{}), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go a.loop()
	return a
}

// Write buffers a copy of p and returns len(p) and nil. It waits for room
// at most MaxWait; a line that gets none is dropped (counted by Dropped).
// After Close it writes p to the output itself.
func (a *Async) Write(p []byte) (int, error) {
	var timer *time.Timer
	expired := false
	for {
		a.mu.Lock()
		if a.closed {
			a.mu.Unlock()
			a.outMu.Lock()
			defer a.outMu.Unlock()
			return a.out.Write(p)
		}
		if len(a.buf) == 0 || len(a.buf)+len(p) <= a.opts.MaxBuffered {
			first := len(a.buf) == 0
			a.buf = append(a.buf, p...)
			hurry := len(a.buf) >= a.opts.MaxBuffered/2
			a.mu.Unlock()
			if first || hurry {
				select {
				case a.wake <- struct{}{}:
				default:
				}
			}
			if timer != nil {
				timer.Stop()
			}
			return len(p), nil
		}
		if a.stalled || expired {
			a.stalled = true
			a.mu.Unlock()
			a.dropped.Add(1)
			return len(p), nil
		}
		room := a.room
		a.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(a.opts.MaxWait)
		}
		select {
		case <-room:
		case <-timer.C:
			expired = true
		}
	}
}

// loop is the writing goroutine: it takes the whole buffer at once and
// writes it with one call.
func (a *Async) loop() {
	defer close(a.done)
	var spare []byte
	var reported uint64
	delay := time.NewTimer(a.opts.Delay)
	delay.Stop()
	for {
		select {
		case <-a.wake:
		case <-a.stop:
		}
		// Let the lines of a burst gather into one batch, unless the
		// buffer is half full already (its signal may have been folded
		// into the one just taken).
		a.mu.Lock()
		gather := len(a.buf) < a.opts.MaxBuffered/2
		a.mu.Unlock()
		if gather {
			delay.Reset(a.opts.Delay)
			select {
			case <-delay.C:
			case <-a.wake: // half full
				delay.Stop()
			case <-a.stop:
				delay.Stop()
			}
		}
		for {
			a.mu.Lock()
			batch := a.buf
			if len(batch) == 0 {
				if a.closing {
					a.closed = true
					a.mu.Unlock()
					a.report(&reported)
					return
				}
				a.mu.Unlock()
				break
			}
			a.buf = spare[:0]
			close(a.room)
			a.room = make(chan struct{})
			a.stalled = false
			a.mu.Unlock()
			// Reported with room in the buffer: what Dropped logs lands
			// right after this batch, the lines kept before the drops.
			a.report(&reported)
			a.outMu.Lock()
			_, err := a.out.Write(batch)
			a.outMu.Unlock()
			if err != nil {
				a.mu.Lock()
				if a.err == nil {
					a.err = err
				}
				a.mu.Unlock()
			}
			// Reuse the written buffer, unless an oversized line left it
			// huge.
			if cap(batch) <= 2*a.opts.MaxBuffered {
				spare = batch[:0]
			} else {
				spare = nil
			}
		}
	}
}

// report tells Options.Dropped the drops since the last report.
func (a *Async) report(reported *uint64) {
	if n := a.dropped.Load() - *reported; n > 0 {
		*reported += n
		if a.opts.Dropped != nil {
			a.opts.Dropped(n)
		}
	}
}

// Dropped returns the number of lines dropped so far.
func (a *Async) Dropped() uint64 { return a.dropped.Load() }

// Close writes everything buffered, stops the writing goroutine and
// returns the first error of the output, if any. Later writes go to the
// output directly. Close waits for the output: a stuck output blocks it.
func (a *Async) Close() error {
	a.mu.Lock()
	if !a.closing {
		a.closing = true
		close(a.stop)
	}
	a.mu.Unlock()
	<-a.done
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}
