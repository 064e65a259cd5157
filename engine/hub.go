package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// Subscription is one live subscriber of a Hub: the records of one stream
// that match its query, published after it joined, in sequence order.
// Its methods are safe for concurrent use.
type Subscription struct {
	st       *hubStream // nil when created already ended
	query    Query
	filter   *notification.Filter
	boundary uint64
	q        *queue
	// blockTimeout bounds a delivery's wait for room (BlockOnOverflow).
	blockTimeout time.Duration
	// done is closed when the hub ends the subscription (not on Close).
	done chan struct{}

	// idx is the position in st.subs, -1 once removed; leaf and leafIdx
	// are the place in the stream's pattern index. Guarded by st.mu.
	idx     int
	leaf    *patternNode
	leafIdx int

	mu    sync.Mutex
	ended bool  // ended by the hub or closed by the owner
	err   error // the hub's reason; nil after the owner's Close
}

// Boundary returns the last sequence of the stream delivered before the
// subscription joined: records with a greater sequence that match arrive
// on C, records at or below it are history.
func (s *Subscription) Boundary() uint64 { return s.boundary }

// Query returns the query the subscription was created with.
func (s *Subscription) Query() Query { return s.query }

// C returns the channel of live records: those with Seq > Boundary that
// match the query, in ascending sequence order, each at most once. The
// channel is never closed; select on Done as well. After the subscription
// ends, records still buffered in the channel may be read (they are a
// contiguous continuation of what was read before), but a consumer that
// stops at Done and resumes from its last sequence loses nothing either.
func (s *Subscription) C() <-chan *Record { return s.q.ch }

// Done returns a channel closed when the subscription is ended by the hub
// or its engine: ErrOverflow, ErrClosed, ErrGap or an engine-specific
// reason, reported by Err. It is not closed by the owner's own Close.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// SetWake makes the subscription call wake after each record reaches C
// and once the hub ends it (Done), from the goroutine that delivered the
// record or ended it, possibly under the hub's locks: wake must return at
// once and must not call back into the subscription or its hub. It lets
// a subscriber that has no goroutine waiting on C while it is idle start
// one when there is something to read; records already in C when it is
// set cause no call. nil removes it.
func (s *Subscription) SetWake(wake func()) {
	if wake == nil {
		s.q.wake.Store(nil)
		return
	}
	s.q.wake.Store(&wake)
}

// Err returns why the hub ended the subscription, or nil while it is live
// or when its owner closed it.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Dropped returns how many records were discarded because the queue was
// full (DropOnOverflow) since the count was last taken.
func (s *Subscription) Dropped() uint64 { return s.q.dropped.Load() }

// TakeDropped returns the number of dropped records and resets it to zero,
// so that a transport can report each drop exactly once ("N dropped").
func (s *Subscription) TakeDropped() uint64 { return s.q.dropped.Swap(0) }

// Len returns the number of records queued and not yet read: a snapshot
// that, while a backlog is being moved to C, may miss the one record in
// transit.
func (s *Subscription) Len() int { return s.q.len() }

// Close removes the subscription from its hub and stops its queue; a push
// waiting on it (BlockOnOverflow) returns at once. Done is not closed and
// Err keeps its value. Close is idempotent and may be called after the hub
// ended the subscription.
func (s *Subscription) Close() {
	if s.finish(nil) {
		s.detach()
	}
}

// finish moves the subscription to its final state: the queue is stopped,
// and for a hub-side end (err != nil) err is recorded and Done closed. It
// reports whether this call ended it.
func (s *Subscription) finish(err error) bool {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.ended = true
	s.err = err
	s.mu.Unlock()
	s.q.close()
	if err != nil {
		close(s.done)
		s.q.notify()
	}
	return true
}

// detach removes the subscription from its stream's list, if still there.
func (s *Subscription) detach() {
	if s.st == nil {
		return
	}
	s.st.mu.Lock()
	s.st.removeLocked(s)
	s.st.mu.Unlock()
}

// match reports whether rec passes the subscription's filter.
func (s *Subscription) match(rec *Record) bool {
	return s.filter == nil || s.filter.Match(rec.Tokens, rec.Geometry)
}

// Hub is the in-process live fan-out shared by every engine: engines hand
// it each stored record, in sequence order per stream, and it pushes the
// record to the queue of every subscription of that stream whose query
// matches. Matching runs once per subscriber and record; the CloudEvent
// encoding is cached on the Record by the transport (Record.Rendered).
//
// Subscriptions are indexed per stream, and each stream has its own lock,
// so deliveries on different streams run in parallel. A Hub is safe for
// concurrent use. The zero value is not usable; call NewHub.
type Hub struct {
	// streams is a copy-on-write map, replaced under mu when a stream is
	// added, so that Deliver looks streams up without locking.
	streams atomic.Pointer[map[string]*hubStream]
	mu      sync.Mutex
	closed  bool
}

// hubStream holds one stream's subscribers and last delivered sequence.
type hubStream struct {
	mu     sync.Mutex
	last   uint64
	subs   []*Subscription
	closed bool
	// index finds the subscriptions whose pattern matches a record's
	// tokens without looking at the others; unfiltered holds those with a
	// nil filter. scratch is Deliver's reusable candidate list.
	index      patternNode
	unfiltered patternNode
	scratch    []*Subscription
	ended      []*Subscription
}

// patternNode is a node of a stream's pattern index: a trie over pattern
// tokens whose edges are literal values or the wildcard. The subscriptions
// of a node are those whose pattern ends there. Looking a record up
// follows, at each position, the edge of its token and the wildcard edge,
// so the cost depends on the patterns that can match, not on the number
// of subscriptions.
type patternNode struct {
	parent *patternNode
	key    string // the literal edge from parent; unused for wildcard edges
	lit    map[string]*patternNode
	wild   *patternNode
	subs   []*Subscription
}

// insert adds s under pattern p, below n.
func (n *patternNode) insert(p []topic.Token, s *Subscription) {
	for _, t := range p {
		var c *patternNode
		if t.Wildcard {
			if n.wild == nil {
				n.wild = &patternNode{parent: n}
			}
			c = n.wild
		} else {
			c = n.lit[t.Value]
			if c == nil {
				if n.lit == nil {
					n.lit = map[string]*patternNode{}
				}
				c = &patternNode{parent: n, key: t.Value}
				n.lit[t.Value] = c
			}
		}
		n = c
	}
	s.leaf, s.leafIdx = n, len(n.subs)
	n.subs = append(n.subs, s)
}

// removeFromIndex takes s out of its index node and frees the nodes left
// empty. st.mu must be held.
func (s *Subscription) removeFromIndex() {
	n, i := s.leaf, s.leafIdx
	if n == nil || i >= len(n.subs) || n.subs[i] != s {
		return
	}
	last := len(n.subs) - 1
	n.subs[i] = n.subs[last]
	n.subs[i].leafIdx = i
	n.subs[last] = nil
	n.subs = n.subs[:last]
	s.leaf = nil
	for n.parent != nil && len(n.subs) == 0 && len(n.lit) == 0 && n.wild == nil {
		p := n.parent
		if p.wild == n {
			p.wild = nil
		} else {
			delete(p.lit, n.key)
		}
		n = p
	}
}

// collect appends the subscriptions whose pattern matches tokens.
func (n *patternNode) collect(tokens []string, out []*Subscription) []*Subscription {
	if len(tokens) == 0 {
		return append(out, n.subs...)
	}
	if c := n.lit[tokens[0]]; c != nil {
		out = c.collect(tokens[1:], out)
	}
	if n.wild != nil {
		out = n.wild.collect(tokens[1:], out)
	}
	return out
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	h := &Hub{}
	m := map[string]*hubStream{}
	h.streams.Store(&m)
	return h
}

// lookup returns the stream's state, or nil.
func (h *Hub) lookup(stream string) *hubStream {
	return (*h.streams.Load())[stream]
}

// stream returns the stream's state, creating it if needed; nil once the
// hub is closed and the stream unknown.
func (h *Hub) stream(name string) *hubStream {
	if st := h.lookup(name); st != nil {
		return st
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.streams.Load()
	if st := old[name]; st != nil {
		return st
	}
	if h.closed {
		return nil
	}
	m := make(map[string]*hubStream, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	st := &hubStream{}
	m[name] = st
	h.streams.Store(&m)
	return st
}

// removeLocked removes s from the list if it is there. st.mu must be held.
func (st *hubStream) removeLocked(s *Subscription) {
	i := s.idx
	if i < 0 || i >= len(st.subs) || st.subs[i] != s {
		return
	}
	last := len(st.subs) - 1
	st.subs[i] = st.subs[last]
	st.subs[i].idx = i
	st.subs[last] = nil
	st.subs = st.subs[:last]
	s.idx = -1
	s.removeFromIndex()
}

// endAllLocked ends every subscription of the stream with err. st.mu must
// be held.
func (st *hubStream) endAllLocked(err error) {
	for i, s := range st.subs {
		s.idx = -1
		s.leaf = nil
		st.subs[i] = nil
		s.finish(err)
	}
	st.subs = st.subs[:0]
	st.index = patternNode{}
	st.unfiltered = patternNode{}
}

// Subscribe registers a live subscription to q.Stream. Its boundary is the
// stream's last delivered sequence, captured atomically with the
// registration: every later Deliver of that stream reaches it. Queue size
// and overflow policy come from opts (DefaultLiveQueueSize and
// CloseOnOverflow for zero values). A nil q.Filter matches every record
// of the stream. On a closed hub the subscription is returned already
// ended with ErrClosed.
func (h *Hub) Subscribe(q Query, opts SubscribeOptions) *Subscription {
	s := &Subscription{
		query:        q,
		filter:       q.Filter,
		q:            newQueue(opts.QueueSize, opts.Overflow),
		blockTimeout: opts.BlockTimeout,
		done:         make(chan struct{}),
		idx:          -1,
	}
	st := h.stream(q.Stream)
	if st == nil {
		s.finish(ErrClosed)
		return s
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	s.boundary = st.last
	if st.closed {
		s.finish(ErrClosed)
		return s
	}
	s.st = st
	s.idx = len(st.subs)
	st.subs = append(st.subs, s)
	if s.filter == nil {
		st.unfiltered.insert(nil, s)
	} else {
		st.index.insert(s.filter.Pattern, s)
	}
	return s
}

// blockedPush is a delivery to a BlockOnOverflow subscriber that has to
// wait for room.
type blockedPush struct {
	sub *Subscription
	t   ticket
}

// pending is the part of a delivery that waits: the BlockOnOverflow
// subscribers whose queues were full when the record was dispatched.
type pending struct {
	rec    *Record
	pushes []blockedPush
}

// wait completes the blocked pushes in subscriber order; each waits for
// its subscriber's room, or its end. If ctx ends first, or a subscriber's
// block timeout passes (counted from the start of the wait, so that the
// whole delivery waits no longer than the longest timeout), the
// subscribers still waiting are ended with ErrOverflow.
func (p pending) wait(ctx context.Context) {
	start := time.Now()
	for _, b := range p.pushes {
		bctx, cancel := ctx, context.CancelFunc(func() {})
		if d := b.sub.blockTimeout; d > 0 {
			bctx, cancel = context.WithDeadline(ctx, start.Add(d))
		}
		err := b.sub.q.wait(bctx, b.t, p.rec)
		cancel()
		if err != nil {
			if b.sub.finish(ErrOverflow) {
				b.sub.detach()
			}
		}
	}
}

// Deliver records rec as the last sequence of its stream (rec.Base()) and
// pushes it to every subscription of the stream whose query matches.
// Engines call it once per stored record, in ascending sequence order per
// stream and never concurrently for one stream; a record whose sequence
// is not above the stream's last is ignored (a replayed duplicate).
//
// Deliver never waits for CloseOnOverflow or DropOnOverflow subscribers:
// a full queue ends the subscription with ErrOverflow or counts a drop.
// For a BlockOnOverflow subscriber whose queue is full, Deliver waits
// after releasing the stream's lock, until the subscriber has room or
// ends; so an engine must not hold, while calling Deliver, a lock that a
// subscriber's reader may need (the in-memory engine splits the delivery
// and waits outside its own locks).
func (h *Hub) Deliver(rec *Record) {
	h.dispatch(rec).wait(context.Background())
}

// dispatch is the part of Deliver that does not wait: it must be called
// in sequence order per stream (for example under the engine's stream
// lock); the returned pending must then be waited for outside that lock.
func (h *Hub) dispatch(rec *Record) pending {
	st := h.stream(rec.Base())
	if st == nil {
		return pending{}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if rec.Seq <= st.last {
		return pending{}
	}
	st.last = rec.Seq
	if rec.LiveAt.IsZero() {
		rec.LiveAt = time.Now()
	}
	p := pending{rec: rec}
	cands := st.unfiltered.collect(nil, st.scratch[:0])
	cands = st.index.collect(rec.Tokens, cands)
	for _, s := range cands {
		if !s.match(rec) {
			continue
		}
		switch res, t := s.q.offer(rec); res {
		case offerOverflow:
			st.ended = append(st.ended, s)
		case offerWait:
			p.pushes = append(p.pushes, blockedPush{sub: s, t: t})
		}
	}
	// Remove the overflowed subscriptions after the walk, which must not
	// see the index change under it.
	for i, s := range st.ended {
		st.removeLocked(s)
		s.finish(ErrOverflow)
		st.ended[i] = nil
	}
	st.ended = st.ended[:0]
	clear(cands)
	st.scratch = cands[:0]
	return p
}

// SetLast sets a stream's last delivered sequence, for example from the
// backend after a restart, so that the next subscriptions get the right
// boundary and records at or below seq are not delivered.
func (h *Hub) SetLast(stream string, seq uint64) {
	st := h.stream(stream)
	if st == nil {
		return
	}
	st.mu.Lock()
	st.last = seq
	st.mu.Unlock()
}

// Last returns a stream's last delivered sequence (0 if none).
func (h *Hub) Last(stream string) uint64 {
	st := h.lookup(stream)
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.last
}

// Subscribers returns the number of live subscriptions of a stream.
func (h *Hub) Subscribers(stream string) int {
	st := h.lookup(stream)
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.subs)
}

// EndStream ends every subscription of a stream with err (ErrClosed if
// nil); for example ErrGap when the engine lost records it cannot
// recover. Later subscriptions to the stream work as usual.
func (h *Hub) EndStream(stream string, err error) {
	if err == nil {
		err = ErrClosed
	}
	st := h.lookup(stream)
	if st == nil {
		return
	}
	st.mu.Lock()
	st.endAllLocked(err)
	st.mu.Unlock()
}

// Close ends every subscription with ErrClosed; later subscriptions are
// returned already ended with ErrClosed, and deliveries reach nobody. It
// is idempotent.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	m := *h.streams.Load()
	h.mu.Unlock()
	for _, st := range m {
		st.mu.Lock()
		st.closed = true
		st.endAllLocked(ErrClosed)
		st.mu.Unlock()
	}
}
