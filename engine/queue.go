package engine

import (
	"context"
	"sync"
	"sync/atomic"
)

// OverflowPolicy says what a subscriber's queue does with a live record
// when it already holds QueueSize records the subscriber has not read.
type OverflowPolicy uint8

// Overflow policies.
const (
	// CloseOnOverflow (the default) ends the subscription with ErrOverflow:
	// a watcher that cannot keep up is closed, not silently starved, and
	// reconnects from the last sequence it processed.
	CloseOnOverflow OverflowPolicy = iota
	// DropOnOverflow discards the record and counts it; the subscriber
	// reads the count with Subscription.Dropped or takes it with
	// Subscription.TakeDropped to report "N dropped" (the WebSocket
	// DROPPING mode).
	DropOnOverflow
	// BlockOnOverflow makes the pusher wait for room or for the
	// subscription to end: back-pressure for transports that ask for it
	// (the WebSocket BLOCKING mode). A waiting push holds back every later
	// record of the stream for this subscriber and makes Hub.Deliver (and
	// so the engine's Publish of that stream) wait, but it never holds a
	// hub lock: other subscribers of the record have already received it,
	// and Subscribe, Close, EndStream and deliveries on other streams go
	// on. A transport using it must keep reading C or Close the
	// subscription (for example when its client stops reading for too
	// long); Close, EndStream and Hub.Close release a waiting push at once.
	BlockOnOverflow
)

// String returns "close", "drop" or "block".
func (p OverflowPolicy) String() string {
	switch p {
	case CloseOnOverflow:
		return "close"
	case DropOnOverflow:
		return "drop"
	case BlockOnOverflow:
		return "block"
	}
	return "unknown"
}

// queueChanCap bounds the channel part of a queue; records beyond it wait
// in a spill buffer that grows only while it is used.
const queueChanCap = 32

// spillShrinkCap is the spill buffer capacity above which an emptied
// buffer is released rather than kept for the next burst.
const spillShrinkCap = 256

// offerResult is the outcome of a push that must not wait.
type offerResult uint8

const (
	// offerQueued: the record is in the queue.
	offerQueued offerResult = iota
	// offerDropped: the queue was full and the record was counted as
	// dropped (DropOnOverflow).
	offerDropped
	// offerOverflow: the queue was full; the subscription must end with
	// ErrOverflow (CloseOnOverflow).
	offerOverflow
	// offerWait: the queue is full, or earlier pushes are still waiting;
	// the returned ticket must be completed with wait (BlockOnOverflow).
	offerWait
	// offerStopped: the queue has been stopped; the record is discarded.
	offerStopped
)

// ticket orders the waiting pushes of a BlockOnOverflow queue: a push may
// enqueue once turn is closed and closes next when it is finished, so
// pushes reserved in sequence order enqueue in sequence order however the
// goroutines that complete them are scheduled.
type ticket struct {
	turn, next chan struct{}
}

// closedTurn is the turn of every queue's first ticket: closed, and
// only ever received from, so one channel serves every queue.
var closedTurn = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// queue is one subscriber's bounded FIFO of live records with its overflow
// policy. Records reach the subscriber through a small channel; when the
// subscriber lags, further records wait in a spill buffer that a pump
// goroutine (running only while the buffer is non-empty) moves into the
// channel in order. The bound counts both parts, so a queue's memory is
// proportional to its backlog, and the channel's receiver sees every
// queued record in push order. A queue that fits its channel (size up to
// queueChanCap) holds exactly size records; a larger one may hold one
// more, the record the pump is handing over (a channel send cannot be
// accounted atomically; erring this way never overflows early).
//
// Pushes that do not wait (offer) must be serialised by the caller (the
// hub holds the stream lock); waiting pushes are ordered by tickets that
// offer hands out.
type queue struct {
	policy OverflowPolicy
	ch     chan *Record
	// size bounds the records in ch and spill together.
	size int
	// stop is closed when the subscription ends, for any reason.
	stop     chan struct{}
	stopOnce sync.Once
	dropped  atomic.Uint64

	mu sync.Mutex
	// spill holds records waiting for room in ch, oldest first. While it
	// is non-empty, or the pump is handing its oldest record over to ch,
	// pumping is set and pushes append to spill, never to ch.
	spill   ring
	pumping bool
	// room is signalled (without blocking) each time the pump moves a
	// record, to wake a BlockOnOverflow push waiting for spill room.
	room chan struct{}
	// pending counts reserved tickets not yet finished; tail is the next
	// ticket's turn channel (BlockOnOverflow only).
	pending int
	tail    chan struct{}
	stopped bool

	// wake, when set, is called after each record reaches ch (and when
	// the hub ends the subscription): a subscriber with no goroutine
	// waiting on ch learns that it has something to read.
	wake atomic.Pointer[func()]
}

// notify calls the wake function, if one is set.
func (q *queue) notify() {
	if f := q.wake.Load(); f != nil {
		(*f)()
	}
}

// newQueue returns an empty queue bounded to size records
// (DefaultLiveQueueSize when size <= 0). Unknown policies behave as CloseOnOverflow.
func newQueue(size int, policy OverflowPolicy) *queue {
	if size <= 0 {
		size = DefaultLiveQueueSize
	}
	if policy > BlockOnOverflow {
		policy = CloseOnOverflow
	}
	c := min(size, queueChanCap)
	q := &queue{
		policy: policy,
		ch:     make(chan *Record, c),
		size:   size,
		stop:   make(chan struct{}),
	}
	if policy == BlockOnOverflow {
		q.room = make(chan struct{}, 1)
		q.tail = closedTurn
	}
	return q
}

// tryPushLocked enqueues rec if there is room, keeping FIFO order across
// the channel and the spill buffer. q.mu must be held.
func (q *queue) tryPushLocked(rec *Record) bool {
	if !q.pumping {
		select {
		case q.ch <- rec:
			q.notify()
			return true
		default:
		}
	}
	// len(q.ch) may only shrink meanwhile: the subscriber reads, and the
	// pump's send is of a record no longer counted in spill.
	if len(q.ch)+q.spill.len() >= q.size {
		return false
	}
	q.spill.push(rec)
	if !q.pumping {
		q.pumping = true
		go q.pump()
	}
	return true
}

// pump moves spilled records into the channel, oldest first, and exits
// when the spill buffer is empty or the queue is stopped. While it runs
// (pumping), pushes go to the spill buffer so that none overtakes the
// record it is handing over.
func (q *queue) pump() {
	q.mu.Lock()
	for q.spill.len() > 0 && !q.stopped {
		rec := q.spill.front()
		q.spill.pop()
		q.mu.Unlock()
		select {
		case q.ch <- rec:
			q.notify()
		case <-q.stop:
			return
		}
		q.mu.Lock()
		if q.room != nil {
			select {
			case q.room <- struct{}{}:
			default:
			}
		}
	}
	q.pumping = false
	if q.spill.len() == 0 && q.spill.capacity() > spillShrinkCap {
		q.spill = ring{}
	}
	q.mu.Unlock()
}

// offer pushes rec without waiting and reports what happened. Calls must
// be serialised and made in sequence order. For offerWait the caller must
// complete the returned ticket with wait, outside any lock it holds.
func (q *queue) offer(rec *Record) (offerResult, ticket) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return offerStopped, ticket{}
	}
	if q.policy == BlockOnOverflow && q.pending > 0 {
		return offerWait, q.reserveLocked()
	}
	if q.tryPushLocked(rec) {
		return offerQueued, ticket{}
	}
	switch q.policy {
	case DropOnOverflow:
		q.dropped.Add(1)
		return offerDropped, ticket{}
	case BlockOnOverflow:
		return offerWait, q.reserveLocked()
	}
	return offerOverflow, ticket{}
}

// reserveLocked hands out the next ticket. q.mu must be held.
func (q *queue) reserveLocked() ticket {
	t := ticket{turn: q.tail, next: make(chan struct{})}
	q.tail = t.next
	q.pending++
	return t
}

// wait completes a ticket from offer: it waits for the earlier tickets,
// then for room, and enqueues rec. It returns nil once rec is queued or
// the queue has been stopped (the record is then discarded), and
// ctx.Err() if ctx ends first: rec was not queued, so the queue is stopped
// before any later ticket may push (the subscriber never sees a hole) and
// the caller must end the subscription.
func (q *queue) wait(ctx context.Context, t ticket, rec *Record) error {
	err := q.waitPush(ctx, t, rec)
	if err != nil {
		q.close()
	}
	close(t.next)
	q.mu.Lock()
	q.pending--
	q.mu.Unlock()
	return err
}

// waitPush is wait without the ticket bookkeeping.
func (q *queue) waitPush(ctx context.Context, t ticket, rec *Record) error {
	select {
	case <-t.turn:
	case <-q.stop:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		q.mu.Lock()
		if q.stopped {
			q.mu.Unlock()
			return nil
		}
		if q.tryPushLocked(rec) {
			q.mu.Unlock()
			return nil
		}
		// A queue that fits its channel spills only in a race (the
		// channel full at tryPushLocked's send, with room by its count):
		// while that spilled record is with the pump, a send straight
		// to the channel could overtake it, so wait for the pump's room
		// signal instead.
		direct := q.size <= cap(q.ch) && !q.pumping
		q.mu.Unlock()
		if direct {
			// A full queue is a full channel: room appears when the
			// receiver reads the channel, so wait on the channel itself.
			// Only the ticket holder pushes now, so order is kept.
			select {
			case q.ch <- rec:
				q.notify()
				return nil
			case <-q.stop:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-q.room:
		case <-q.stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close stops the queue: pushes are discarded from now on, waiting pushes
// return, the pump exits and the spilled records are released. Records
// already in the channel stay readable. It is idempotent.
func (q *queue) close() {
	q.stopOnce.Do(func() {
		q.mu.Lock()
		q.stopped = true
		q.spill = ring{}
		q.mu.Unlock()
		close(q.stop)
	})
}

// len returns the number of queued records (channel and spill buffer).
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.ch) + q.spill.len()
}

// ring is a growable FIFO of records.
type ring struct {
	buf  []*Record
	head int
	n    int
}

func (r *ring) len() int      { return r.n }
func (r *ring) capacity() int { return len(r.buf) }

func (r *ring) push(rec *Record) {
	if r.n == len(r.buf) {
		nb := make([]*Record, max(16, 2*len(r.buf)))
		for i := 0; i < r.n; i++ {
			nb[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = rec
	r.n++
}

func (r *ring) front() *Record { return r.buf[r.head] }

func (r *ring) pop() {
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}
