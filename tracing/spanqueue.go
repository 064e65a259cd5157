package tracing

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the span queue.
const (
	defaultSpanQueue    = 2048
	defaultSpanInterval = time.Second
	defaultSpanTimeout  = 10 * time.Second
	spanBatch           = 512

	// maxSpareBytes bounds the buffer the queue keeps for its next
	// take: some four batches of herald's spans.
	maxSpareBytes = 1 << 19
)

// spanQueueOptions configure a spanQueue.
type spanQueueOptions struct {
	size     int
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	target   string
}

// exporter sends a batch of encoded spans (spanExporter): each span's
// Span message as a field of ScopeSpans (appendSpanField), one after
// the other, all of one resource and instrumentation scope.
type exporter interface {
	Export(ctx context.Context, spans []byte) error
	Shutdown(ctx context.Context) error
}

// spanQueue is the export queue of herald's traces: a bounded queue
// that a finished span enters without ever waiting (when it is full the
// span is dropped and counted) and a goroutine that exports it in
// batches of up to 512, every interval or as soon as a batch's worth
// waits. The SDK's batch processor drops in the same way but does not
// say how many, which /metrics must.
//
// A span enters encoded (the recorder encodes it as it ends, while it
// is in the cache, and reuses it at once), so that what waits is bytes
// the collector takes as they are, with no pointer for the garbage
// collector to follow.
type spanQueue struct {
	exp      exporter
	size     int // the most spans that wait
	batchAt  int
	full     chan struct{} // a batch's worth waits
	flush    chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	target   string

	mu        sync.Mutex
	buf       []byte // the spans waiting, one after the other
	ends      []int  // where each waiting span ends in buf
	spare     []byte // buf of the last export, for the next take
	spareEnds []int

	dropped  atomic.Uint64
	failed   atomic.Uint64
	exported atomic.Uint64
	failing  atomic.Bool
}

// newSpanQueue starts the queue of exp.
func newSpanQueue(exp exporter, o spanQueueOptions) *spanQueue {
	if o.size <= 0 {
		o.size = defaultSpanQueue
	}
	if o.interval <= 0 {
		o.interval = defaultSpanInterval
	}
	if o.timeout <= 0 {
		o.timeout = defaultSpanTimeout
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	q := &spanQueue{exp: exp, size: o.size, batchAt: min(o.size, spanBatch), full: make(chan struct{}, 1), flush: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), interval: o.interval, timeout: o.timeout, log: o.log, target: o.target}
	go q.run()
	return q
}

// enqueue queues a copy of an ended span's encoding, or drops it when
// the queue is full (false); it never waits.
func (q *spanQueue) enqueue(span []byte) bool {
	q.mu.Lock()
	if len(q.ends) >= q.size {
		q.mu.Unlock()
		q.dropped.Add(1)
		return false
	}
	q.buf = append(q.buf, span...)
	q.ends = append(q.ends, len(q.buf))
	n := len(q.ends)
	q.mu.Unlock()
	if n >= q.batchAt {
		select {
		case q.full <- struct{}{}:
		default:
		}
	}
	return true
}

// run exports the queue's spans in batches until Shutdown: at each
// interval, when a batch's worth waits, on ForceFlush and on Shutdown.
func (q *spanQueue) run() {
	defer close(q.done)
	tick := time.NewTicker(q.interval)
	defer tick.Stop()
	// drain exports what is queued now, a batch at a time (whole: only
	// whole batches), and hands the buffers back.
	drain := func(whole bool) {
		buf, ends := q.take(whole)
		for i, from := 0, 0; i < len(ends); {
			j := min(i+q.batchAt, len(ends))
			q.export(buf[from:ends[j-1]], j-i)
			i, from = j, ends[j-1]
		}
		q.giveBack(buf, ends)
	}
	for {
		select {
		case <-q.full:
			drain(true)
		case <-tick.C:
			drain(false)
		case ack := <-q.flush:
			drain(false)
			close(ack)
		case <-q.stop:
			drain(false)
			return
		}
	}
}

// take moves the waiting spans out of the queue and returns them, with
// where each ends: all of them, or when whole only whole batches' worth
// (none when less than a batch waits), so that a busy queue sends full
// requests and the rest goes at the next signal or tick. The spans
// taken no longer count against the queue's size.
func (q *spanQueue) take(whole bool) (buf []byte, ends []int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.ends)
	if whole {
		n -= n % q.batchAt
	}
	if n == 0 {
		return nil, nil
	}
	buf, ends = q.buf, q.ends
	end := ends[n-1]
	// What stays moves to the spare buffers, which become the queue's.
	rest, restEnds := q.spare[:0], q.spareEnds[:0]
	rest = append(rest, buf[end:]...)
	for _, e := range ends[n:] {
		restEnds = append(restEnds, e-end)
	}
	q.buf, q.ends, q.spare, q.spareEnds = rest, restEnds, nil, nil
	return buf[:end], ends[:n]
}

// giveBack hands the buffers take returned back, once exported, for
// the next take; a buffer grown past maxSpareBytes by a burst is let go.
func (q *spanQueue) giveBack(buf []byte, ends []int) {
	if buf == nil || cap(buf) > maxSpareBytes {
		return
	}
	q.mu.Lock()
	q.spare, q.spareEnds = buf[:0], ends[:0]
	q.mu.Unlock()
}

// export sends one batch of n spans, bounded by the timeout; a failure is counted
// and said on the diagnostics log (once, then again on recovery).
func (q *spanQueue) export(spans []byte, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	if err := q.exp.Export(ctx, spans); err != nil {
		q.failed.Add(1)
		if !q.failing.Swap(true) {
			q.log.Warn("OTLP span export failed; the spans of the batch are dropped", "endpoint", q.target, "spans", n, "error", err.Error())
		}
		return
	}
	q.exported.Add(uint64(n))
	if q.failing.Swap(false) {
		q.log.Info("OTLP span export recovered", "endpoint", q.target)
	}
}

// ForceFlush exports what is
// queued now, giving up at ctx's end.
func (q *spanQueue) ForceFlush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case q.flush <- ack:
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown exports what is queued
// and stops the exporter, giving up at ctx's end.
func (q *spanQueue) Shutdown(ctx context.Context) error {
	q.stopOnce.Do(func() { close(q.stop) })
	select {
	case <-q.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return q.exp.Shutdown(ctx)
}
