package engine

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// compactMinDead is the number of removed history slots a stream tolerates
// before it considers compacting its slot index.
const compactMinDead = 64

// MemoryOptions configure the in-memory engine.
type MemoryOptions struct {
	// MaxHistoryPerTopic bounds the records kept per exact subject (FIFO);
	// DefaultMaxHistoryPerTopic when <= 0.
	MaxHistoryPerTopic int
	// MaxTopics bounds the subjects kept across all streams; creating one
	// more evicts the subject whose newest record is the oldest.
	// DefaultMaxTopics when <= 0.
	MaxTopics int
	// MaxRecordBytes bounds one stored record (RecordBytes): a larger
	// notification is refused with a *TooLargeError and not stored.
	// DefaultMaxRecordBytes when <= 0.
	MaxRecordBytes int
	// Observer is told each backend operation; nil records nothing.
	Observer OpObserver
}

// Memory is the in-memory engine (Aviso's backends, docs/operations.md):
// process-local history lost on restart, with Aviso's per-subject and
// subject-count limits, and node-local live fan-out through a Hub. Unlike
// Aviso's single global counter, sequences are dense per stream (topic base):
// 1, 2, 3, … for each. Timestamps are the UTC store time, non-decreasing per
// stream.
//
// Each stream has its own lock, so publishes to different streams run in
// parallel; history reads take the stream's lock for one page at a time.
// Memory is safe for concurrent use. The zero value is not usable; call
// NewMemory.
type Memory struct {
	maxHistory int
	maxTopics  int
	maxRecord  int
	hub        *Hub
	obs        OpObserver
	closed     atomic.Bool
	// ord numbers stored records across streams, in store order; a
	// subject's recency is the ord of its newest record.
	ord atomic.Uint64

	mu      sync.RWMutex // guards streams
	streams map[string]*memStream

	// evMu guards lru and the heap fields of every memSubject. Lock order:
	// a stream's mu, then evMu; never a stream lock while holding evMu,
	// and never two stream locks at once.
	evMu sync.Mutex
	lru  subjectHeap

	// schemas is the registry of past payload schemas (SchemaStore).
	schemas schemaTable

	// pubPool recycles the memPub of publishes.
	pubPool sync.Pool
}

// Engine conformance.
var (
	_ Engine      = (*Memory)(nil)
	_ SchemaStore = (*Memory)(nil)
)

// NewMemory returns an empty in-memory engine.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.MaxHistoryPerTopic <= 0 {
		opts.MaxHistoryPerTopic = DefaultMaxHistoryPerTopic
	}
	if opts.MaxTopics <= 0 {
		opts.MaxTopics = DefaultMaxTopics
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if opts.Observer == nil {
		opts.Observer = NoOpObserver{}
	}
	m := &Memory{
		maxHistory: opts.MaxHistoryPerTopic,
		maxTopics:  opts.MaxTopics,
		maxRecord:  opts.MaxRecordBytes,
		hub:        NewHub(),
		obs:        opts.Observer,
		streams:    map[string]*memStream{},
	}
	m.pubPool.New = func() any { return &memPub{done: make(chan struct{}, 1)} }
	return m
}

// memStream is one stream's history: its sequence counter, the records in
// sequence order (slots), and its subjects.
type memStream struct {
	name string

	mu       sync.RWMutex
	seq      uint64
	lastTime time.Time
	// slots holds every record stored since the last compaction in
	// ascending sequence order; a removed record leaves its slot with a
	// nil rec (keeping seq and time, so that binary searches still work)
	// until a compaction drops the dead slots.
	slots    []slot
	dead     int
	subjects map[string]*memSubject

	// Publishes are combined: each queues itself in pubs, and whichever
	// publisher holds combineMu stores every queued one, several under
	// one hold of mu, and wakes the others. Concurrent publishers thus
	// wait on their own request, not in line for mu: a line handed the
	// lock to each waiter in turn, which on busy cores meant waiting for
	// every one of them to be scheduled (a convoy, the in-memory
	// notify's tail at high concurrency). Lock order: combineMu, then
	// mu; pubMu is never held with another lock.
	combineMu sync.Mutex
	pubMu     sync.Mutex
	pubs      []*memPub // guarded by pubMu
	spare     []*memPub // the other array of pubs; guarded by pubMu
}

// memPub is one publish waiting to be stored by a combiner.
type memPub struct {
	rec  *Record
	key  string
	done chan struct{} // receives once the publish is stored (cap 1)
	// Set by the combiner.
	seq    uint64
	at     time.Time
	p      pending
	victim *memSubject
}

// maxCombined bounds the publishes stored under one hold of a stream's
// lock, so that history reads are not held back longer.
const maxCombined = 64

// slot is one position of a stream's sequence index.
type slot struct {
	seq uint64
	at  time.Time
	rec *Record // nil once removed
}

// memSubject is one exact subject's FIFO of records.
type memSubject struct {
	st  *memStream
	key string
	// recs holds the subject's records, oldest first; guarded by st.mu.
	recs []memEntry

	// newest is the ord of the newest record and hidx the position in
	// Memory.lru, -1 once evicted or removed; both guarded by Memory.evMu.
	newest uint64
	hidx   int
}

// memEntry is a stored record with its store order.
type memEntry struct {
	rec *Record
	ord uint64
}

// subjectHeap is a min-heap of subjects by the ord of their newest record:
// its root is the subject whose newest record is the oldest.
type subjectHeap []*memSubject

func (h subjectHeap) Len() int           { return len(h) }
func (h subjectHeap) Less(i, j int) bool { return h[i].newest < h[j].newest }
func (h subjectHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx = i
	h[j].hidx = j
}

func (h *subjectHeap) Push(x any) {
	s := x.(*memSubject)
	s.hidx = len(*h)
	*h = append(*h, s)
}

func (h *subjectHeap) Pop() any {
	old := *h
	n := len(old) - 1
	s := old[n]
	old[n] = nil
	s.hidx = -1
	*h = old[:n]
	return s
}

// lookup returns the named stream (exact name), or nil.
func (m *Memory) lookup(name string) *memStream {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.streams[name]
}

// stream returns the named stream, creating it if needed.
func (m *Memory) stream(name string) *memStream {
	if st := m.lookup(name); st != nil {
		return st
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.streams[name]
	if st == nil {
		st = &memStream{name: name, subjects: map[string]*memSubject{}}
		m.streams[name] = st
	}
	return st
}

// matching returns the streams whose name equals name case-insensitively,
// the exact match first, then the others by name.
func (m *Memory) matching(name string) []*memStream {
	m.mu.RLock()
	var out []*memStream
	for k, st := range m.streams {
		if strings.EqualFold(k, name) {
			out = append(out, st)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b *memStream) int {
		if (a.name == name) != (b.name == name) {
			if a.name == name {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.name, b.name)
	})
	return out
}

// all returns every stream.
func (m *Memory) all() []*memStream {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*memStream, 0, len(m.streams))
	for _, st := range m.streams {
		out = append(out, st)
	}
	return out
}

// check returns the error of a call on a closed engine or with an ended
// context, wrapped with op.
func (m *Memory) check(ctx context.Context, op string) error {
	if m.closed.Load() {
		return fmt.Errorf("memory engine: %s: %w", op, ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory engine: %s: %w", op, err)
	}
	return nil
}

// Publish stores n under the next sequence of its stream (n.Base()) with
// the current UTC time, keeps the subject's FIFO and the subject count
// within their limits, and hands the record to the live subscribers. The
// record shares n's slices and maps: do not modify them afterwards. A
// notification whose record exceeds MaxRecordBytes is refused with a
// *TooLargeError and not stored.
//
// Publish never waits for CloseOnOverflow or DropOnOverflow subscribers.
// When a BlockOnOverflow subscriber's queue is full it waits, holding no
// lock, until that subscriber has room or ends; if ctx ends first, the
// subscriber is ended with ErrOverflow. Either way the record is stored
// and Publish succeeds.
func (m *Memory) Publish(ctx context.Context, n *notification.Notification) (_ uint64, _ time.Time, err error) {
	wall := time.Now()
	defer ObserveOp(m.obs, OpPublish, wall, &err)
	if err := m.check(ctx, "publish"); err != nil {
		return 0, time.Time{}, err
	}
	if n == nil || n.Base() == "" {
		return 0, time.Time{}, errors.New("memory engine: publish: notification has no topic base")
	}
	if err := m.CheckSize(n); err != nil {
		return 0, time.Time{}, fmt.Errorf("memory engine: publish: %w", err)
	}
	key := n.Subject
	if key == "" {
		key = topic.Encode(n.Tokens)
	}
	st := m.stream(n.Base())
	// The record is built, and the clock read (once, at the start),
	// before the stream's lock, which every publish of the stream takes:
	// under it the time is only kept from going back (the stream's times
	// never decrease), and the hub finds LiveAt set.
	rec := &Record{Notification: *n}
	rec.Subject = key
	rec.LiveAt = wall

	r := m.pubPool.Get().(*memPub)
	r.rec, r.key = rec, key
	st.pubMu.Lock()
	st.pubs = append(st.pubs, r)
	st.pubMu.Unlock()
	m.combine(st)
	<-r.done // stored by this goroutine or by the one combining
	seq, now, p, victim := r.seq, r.at, r.p, r.victim
	*r = memPub{done: r.done}
	m.pubPool.Put(r)

	if victim != nil {
		victim.st.mu.Lock()
		victim.st.purgeLocked(victim)
		victim.st.mu.Unlock()
	}
	p.wait(ctx)
	return seq, now, nil
}

// combine stores the stream's queued publishes while it can take
// combineMu and some remain. When another goroutine holds combineMu,
// that one stores them: a combiner looks at the queue again after
// releasing combineMu, so that no publish queued meanwhile is left
// behind.
func (m *Memory) combine(st *memStream) {
	for st.combineMu.TryLock() {
		for m.storeQueued(st) {
		}
		st.combineMu.Unlock()
		st.pubMu.Lock()
		left := len(st.pubs)
		st.pubMu.Unlock()
		if left == 0 {
			return
		}
	}
}

// storeQueued takes the queued publishes, stores them, at most
// maxCombined under one hold of st.mu, and wakes their publishers; it
// reports whether there were any. st.combineMu must be held.
func (m *Memory) storeQueued(st *memStream) bool {
	st.pubMu.Lock()
	batch := st.pubs
	if len(batch) == 0 {
		st.pubMu.Unlock()
		return false
	}
	st.pubs, st.spare = st.spare[:0], nil
	st.pubMu.Unlock()
	for chunk := range slices.Chunk(batch, maxCombined) {
		st.mu.Lock()
		for _, r := range chunk {
			m.storeLocked(st, r)
		}
		st.mu.Unlock()
		for _, r := range chunk {
			r.done <- struct{}{}
		}
	}
	// The array goes back for a later queue (the queue meanwhile has
	// the other one).
	clear(batch)
	st.pubMu.Lock()
	st.spare = batch[:0]
	st.pubMu.Unlock()
	return true
}

// storeLocked stores one publish: the next sequence of st and a time
// not before the stream's last, its subject's FIFO and the subject
// count within their limits, the record handed to the live
// subscribers. st.mu must be held.
func (m *Memory) storeLocked(st *memStream, r *memPub) {
	rec := r.rec
	seq := st.seq + 1
	now := rec.LiveAt.UTC()
	if now.Before(st.lastTime) {
		now = st.lastTime
	}
	rec.Seq, rec.Time = seq, now
	e := memEntry{rec: rec, ord: m.ord.Add(1)}
	subj, victim := m.trackLocked(st, r.key, e.ord)
	if old := subj.push(e, m.maxHistory); old != nil {
		st.removeSlotLocked(old.Seq)
	}
	st.slots = append(st.slots, slot{seq: seq, at: now, rec: rec})
	st.seq, st.lastTime = seq, now
	r.seq, r.at, r.victim = seq, now, victim
	r.p = m.hub.dispatch(rec)
}

// trackLocked returns the subject key of st with its newest record set to
// ord, creating it if needed. Creating a subject when maxTopics are
// tracked evicts the least recent one: a victim of st is purged here, a
// victim of another stream is returned for the caller to purge once it
// has released st.mu. st.mu must be held.
func (m *Memory) trackLocked(st *memStream, key string, ord uint64) (subj, victim *memSubject) {
	subj = st.subjects[key]
	m.evMu.Lock()
	if subj != nil && subj.hidx < 0 {
		// Evicted by another stream's publish that has not purged it yet.
		st.purgeLocked(subj)
		subj = nil
	}
	if subj == nil {
		if m.lru.Len() >= m.maxTopics {
			victim = heap.Pop(&m.lru).(*memSubject)
		}
		subj = &memSubject{st: st, key: key, newest: ord}
		heap.Push(&m.lru, subj)
		st.subjects[key] = subj
	} else {
		subj.newest = ord
		heap.Fix(&m.lru, subj.hidx)
	}
	m.evMu.Unlock()
	if victim != nil && victim.st == st {
		st.purgeLocked(victim)
		victim = nil
	}
	return subj, victim
}

// push appends e to the subject's FIFO and returns the record it pushed
// out, if the FIFO was full.
func (sj *memSubject) push(e memEntry, limit int) *Record {
	if len(sj.recs) < limit {
		sj.recs = append(sj.recs, e)
		return nil
	}
	old := sj.recs[0].rec
	if limit <= 32 {
		copy(sj.recs, sj.recs[1:])
		sj.recs[len(sj.recs)-1] = e
		return old
	}
	sj.recs[0] = memEntry{}
	sj.recs = append(sj.recs[1:], e)
	return old
}

// purgeLocked removes an evicted subject (already out of the eviction
// heap) and its records from st, unless it has already been replaced or
// removed. st.mu must be held.
func (st *memStream) purgeLocked(subj *memSubject) {
	if st.subjects[subj.key] != subj {
		return
	}
	for _, e := range subj.recs {
		st.removeSlotLocked(e.rec.Seq)
	}
	subj.recs = nil
	delete(st.subjects, subj.key)
}

// untrack takes subj out of the eviction heap if it is still there.
func (m *Memory) untrack(subj *memSubject) {
	m.evMu.Lock()
	if subj.hidx >= 0 {
		heap.Remove(&m.lru, subj.hidx)
	}
	m.evMu.Unlock()
}

// search returns the index of the first slot with sequence >= seq.
func (st *memStream) search(seq uint64) int {
	return sort.Search(len(st.slots), func(i int) bool { return st.slots[i].seq >= seq })
}

// removeSlotLocked marks the record with sequence seq as removed and
// compacts the index when dead slots outnumber live ones. It reports
// whether there was such a record. st.mu must be held.
func (st *memStream) removeSlotLocked(seq uint64) bool {
	i := st.search(seq)
	if i == len(st.slots) || st.slots[i].seq != seq || st.slots[i].rec == nil {
		return false
	}
	st.slots[i].rec = nil
	st.dead++
	if st.dead >= compactMinDead && 2*st.dead >= len(st.slots) {
		// In place: the index keeps its capacity, so that the publishes
		// after a compaction do not grow it again from the live count
		// (no reader keeps the slice across a release of st.mu).
		live := st.slots[:0]
		for _, s := range st.slots {
			if s.rec != nil {
				live = append(live, s)
			}
		}
		clear(st.slots[len(live):])
		st.slots, st.dead = live, 0
	}
	return true
}

// deleteLocked removes the record with sequence seq from the stream and
// its subject and reports whether it was stored. st.mu must be held.
func (st *memStream) deleteLocked(m *Memory, seq uint64) bool {
	i := st.search(seq)
	if i == len(st.slots) || st.slots[i].seq != seq || st.slots[i].rec == nil {
		return false
	}
	rec := st.slots[i].rec
	st.removeSlotLocked(seq)
	subj := st.subjects[rec.Subject]
	if subj == nil {
		return true
	}
	j, found := slices.BinarySearchFunc(subj.recs, seq, func(e memEntry, s uint64) int {
		return cmp.Compare(e.rec.Seq, s)
	})
	if !found {
		return true
	}
	newest := j == len(subj.recs)-1
	subj.recs = slices.Delete(subj.recs, j, j+1)
	switch {
	case len(subj.recs) == 0:
		m.untrack(subj)
		delete(st.subjects, subj.key)
	case newest:
		m.evMu.Lock()
		if subj.hidx >= 0 {
			subj.newest = subj.recs[len(subj.recs)-1].ord
			heap.Fix(&m.lru, subj.hidx)
		}
		m.evMu.Unlock()
	}
	return true
}

// wipeLocked removes every record and subject of the stream, keeping its
// sequence counter. st.mu must be held.
func (st *memStream) wipeLocked(m *Memory) {
	m.evMu.Lock()
	for _, subj := range st.subjects {
		if subj.hidx >= 0 {
			heap.Remove(&m.lru, subj.hidx)
		}
	}
	m.evMu.Unlock()
	st.subjects = map[string]*memSubject{}
	st.slots = nil
	st.dead = 0
}

// Subscribe joins the live fan-out of q.Stream; see Engine.Subscribe and
// Hub.Subscribe.
func (m *Memory) Subscribe(ctx context.Context, q Query, opts SubscribeOptions) (*Subscription, error) {
	if err := m.check(ctx, "subscribe"); err != nil {
		return nil, err
	}
	return m.hub.Subscribe(q, opts), nil
}

// LastSeq returns the last sequence allocated in the stream (exact name),
// 0 if it has none.
func (m *Memory) LastSeq(ctx context.Context, stream string) (uint64, error) {
	if err := m.check(ctx, "last sequence"); err != nil {
		return 0, err
	}
	st := m.lookup(stream)
	if st == nil {
		return 0, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.seq, nil
}

// SeqAfter returns the first sequence of the stream (exact name) stored
// strictly after t, 0 if none.
func (m *Memory) SeqAfter(ctx context.Context, stream string, t time.Time) (uint64, error) {
	if err := m.check(ctx, "sequence after a time"); err != nil {
		return 0, err
	}
	st := m.lookup(stream)
	if st == nil {
		return 0, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	i := sort.Search(len(st.slots), func(k int) bool { return st.slots[k].at.After(t) })
	if i == len(st.slots) {
		return 0, nil
	}
	return st.slots[i].seq, nil
}

// History opens a reader over the records of q.Stream within r that match
// q. The reader is consistent with concurrent publishes, deletions and
// evictions: it never returns a record above r.ToSeq, and records removed
// before it reaches them are simply not returned.
func (m *Memory) History(ctx context.Context, q Query, r Range) (HistoryReader, error) {
	if err := m.check(ctx, "history"); err != nil {
		return nil, err
	}
	pos := max(r.FromSeq, 1)
	if !r.FromTime.IsZero() {
		pos = 1 // FromTime replaces FromSeq
	}
	return &memReader{m: m, q: q, r: r, pos: pos}, nil
}

// memReader pages through a stream's slots by sequence position, taking
// the stream's lock once per page.
type memReader struct {
	m    *Memory
	q    Query
	r    Range
	pos  uint64 // next sequence to look at
	done bool
}

// Next implements HistoryReader: it examines at most limit stored records
// from its position and returns those that match.
func (rd *memReader) Next(ctx context.Context, limit int) (_ []*Record, _ bool, err error) {
	if rd.done {
		return nil, true, nil
	}
	defer ObserveOp(rd.m.obs, OpGetBatch, time.Now(), &err)
	if err := rd.m.check(ctx, "history"); err != nil {
		return nil, false, err
	}
	if limit <= 0 {
		return nil, false, fmt.Errorf("memory engine: history: page size %d, want > 0", limit)
	}
	st := rd.m.lookup(rd.q.Stream)
	if st == nil {
		rd.done = true
		return nil, true, nil
	}
	st.mu.RLock()
	defer st.mu.RUnlock()
	i := st.search(rd.pos)
	if from := rd.r.FromTime; !from.IsZero() {
		j := sort.Search(len(st.slots), func(k int) bool { return !st.slots[k].at.Before(from) })
		i = max(i, j)
	}
	var out []*Record
	scanned := 0
	for ; i < len(st.slots); i++ {
		s := &st.slots[i]
		if s.seq > rd.r.ToSeq || (!rd.r.ToTime.IsZero() && s.at.After(rd.r.ToTime)) {
			rd.done = true
			break
		}
		if s.rec == nil {
			continue
		}
		if scanned == limit {
			break
		}
		scanned++
		rd.pos = s.seq + 1
		if f := rd.q.Filter; f == nil || f.Match(s.rec.Tokens, s.rec.Geometry) {
			out = append(out, s.rec)
		}
	}
	if i == len(st.slots) {
		rd.done = true
	}
	return out, rd.done, nil
}

// Close implements HistoryReader.
func (rd *memReader) Close() { rd.done = true }

// Delete removes one stored record. The stream is matched
// case-insensitively, as Aviso's in-memory backend does (the exact name
// first); ErrNotFound if no such stream holds seq.
func (m *Memory) Delete(ctx context.Context, stream string, seq uint64) (err error) {
	defer ObserveOp(m.obs, OpDeleteMessage, time.Now(), &err)
	if err := m.check(ctx, "delete"); err != nil {
		return err
	}
	for _, st := range m.matching(stream) {
		st.mu.Lock()
		ok := st.deleteLocked(m, seq)
		st.mu.Unlock()
		if ok {
			return nil
		}
	}
	return fmt.Errorf("memory engine: delete %s@%d: %w", stream, seq, ErrNotFound)
}

// WipeStream removes every record of the streams whose name equals stream
// case-insensitively. ErrNotFound when none of them holds a subject (an
// unknown name, a stream never published to or already wiped), as
// aviso-server 0.13's in-memory backend answers. Sequence counters keep
// counting.
func (m *Memory) WipeStream(ctx context.Context, stream string) (err error) {
	defer ObserveOp(m.obs, OpWipeStream, time.Now(), &err)
	if err := m.check(ctx, "wipe stream"); err != nil {
		return err
	}
	wiped := false
	for _, st := range m.matching(stream) {
		st.mu.Lock()
		if len(st.subjects) > 0 {
			wiped = true
			st.wipeLocked(m)
		}
		st.mu.Unlock()
	}
	if !wiped {
		return fmt.Errorf("memory engine: wipe stream %q: it holds no notification: %w", stream, ErrNotFound)
	}
	return nil
}

// WipeAll removes every record of every stream. Sequence counters keep
// counting.
func (m *Memory) WipeAll(ctx context.Context) (err error) {
	defer ObserveOp(m.obs, OpWipeAll, time.Now(), &err)
	if err := m.check(ctx, "wipe all"); err != nil {
		return err
	}
	for _, st := range m.all() {
		st.mu.Lock()
		st.wipeLocked(m)
		st.mu.Unlock()
	}
	return nil
}

// Topics returns the number of subjects currently tracked (at most
// MaxTopics).
func (m *Memory) Topics() int {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	return m.lru.Len()
}

// Close ends every subscription with ErrClosed; later calls return
// ErrClosed. It is idempotent and always returns nil.
func (m *Memory) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.hub.Close()
	return nil
}
