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
)

// spanQueueOptions configure a spanQueue.
type spanQueueOptions struct {
	size     int
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	target   string
}

// exporter sends a batch of spans (spanExporter).
type exporter interface {
	Export(ctx context.Context, spans []finished) error
	Shutdown(ctx context.Context) error
}

// spanQueue is the export queue of herald's traces: a bounded queue
// that a finished span enters without ever waiting (when it is full the
// span is dropped and counted) and a goroutine that exports it in
// batches of up to 512, every interval or as soon as a batch's worth
// waits. The SDK's batch
// processor drops in the same way but does not say how many, which
// /metrics must.
type spanQueue struct {
	exp      exporter
	q        chan finished
	full     chan struct{} // a batch's worth waits
	batchAt  int
	flush    chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	interval time.Duration
	timeout  time.Duration
	log      *slog.Logger
	target   string

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
	q := &spanQueue{exp: exp, q: make(chan finished, o.size), full: make(chan struct{}, 1), batchAt: min(o.size, spanBatch), flush: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), interval: o.interval, timeout: o.timeout, log: o.log, target: o.target}
	go q.run()
	return q
}

// enqueue queues an ended span, or drops it when the queue is full
// (false); it never waits.
func (q *spanQueue) enqueue(s finished) bool {
	select {
	case q.q <- s:
		if len(q.q) >= q.batchAt {
			select {
			case q.full <- struct{}{}:
			default:
			}
		}
		return true
	default:
		q.dropped.Add(1)
		return false
	}
}

// recyclable is a span that can be reused once exported (the
// recorder's).
type recyclable interface{ recycle() }

// run exports the queue's spans in batches until Shutdown: at each
// interval, when a batch's worth waits, on ForceFlush and on Shutdown.
// Spans wait in the channel itself (not in a batch being filled), so
// that the channel's capacity is the bound on spans waiting.
func (q *spanQueue) run() {
	defer close(q.done)
	tick := time.NewTicker(q.interval)
	defer tick.Stop()
	batch := make([]finished, 0, q.batchAt)
	// drain exports what is queued now, a batch at a time (whole: only
	// whole batches). The exporter is done with a batch's spans when it
	// returns, so they are recycled.
	drain := func(whole bool) {
		for {
			batch = q.take(batch[:0], whole)
			if len(batch) == 0 {
				return
			}
			q.export(batch)
			for _, s := range batch {
				if r, ok := s.(recyclable); ok {
					r.recycle()
				}
			}
			clear(batch)
		}
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

// take appends the next batch of queued spans to batch: up to a batch's
// worth, none when whole and less than that waits (so that a busy queue
// sends full requests; the rest goes at the next signal or tick).
func (q *spanQueue) take(batch []finished, whole bool) []finished {
	if whole && len(q.q) < q.batchAt {
		return batch
	}
	for len(batch) < q.batchAt {
		select {
		case s := <-q.q:
			batch = append(batch, s)
		default:
			return batch
		}
	}
	return batch
}

// export sends one batch, bounded by the timeout; a failure is counted
// and said on the diagnostics log (once, then again on recovery).
func (q *spanQueue) export(batch []finished) {
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	if err := q.exp.Export(ctx, batch); err != nil {
		q.failed.Add(1)
		if !q.failing.Swap(true) {
			q.log.Warn("OTLP span export failed; the spans of the batch are dropped", "endpoint", q.target, "spans", len(batch), "error", err.Error())
		}
		return
	}
	q.exported.Add(uint64(len(batch)))
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
