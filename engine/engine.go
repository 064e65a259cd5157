// Package engine defines the notification engine: the Engine interface
// every backend implements, the stored Record, the Query a watcher or
// replay runs, the in-process live fan-out (Hub) with its per-subscriber
// queues and overflow policies, and the in-memory engine. It knows nothing
// about HTTP, SSE or CloudEvent wire formats; transports in package
// handlers drive it.
package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/notification"
)

// Defaults of the engines' options; the config file's defaults
// (package configs) are these values.
const (
	// DefaultLiveQueueSize is the live records a subscription may have
	// waiting when its options set no bound. It is large enough for a
	// watch to buffer live records while it replays a long history; the
	// memory it costs is proportional to the records actually waiting.
	DefaultLiveQueueSize = 4096
	// DefaultMaxHistoryPerTopic is the in-memory history kept per exact
	// subject: only the latest notification survives, as in Aviso.
	DefaultMaxHistoryPerTopic = 1
	// DefaultMaxTopics is the number of subjects the in-memory engine
	// tracks before it evicts the least recently published one.
	DefaultMaxTopics = 10000
)

// Errors returned by engines. Backends wrap them with context; callers test
// with errors.Is.
var (
	// ErrNotFound: the notification or stream does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable: the backend cannot be reached right now; the caller
	// may retry later (HTTP 503 with Retry-After).
	ErrUnavailable = errors.New("backend unavailable")
	// ErrClosed: the engine or subscription has been closed.
	ErrClosed = errors.New("closed")
	// ErrOverflow: a subscriber fell further behind than its queue allows
	// and was closed; it should reconnect from its last sequence.
	ErrOverflow = errors.New("subscriber queue overflow")
	// ErrInvalid: the engine refused a caller's request before sending it
	// anywhere (a name or subject the backend cannot carry); the message
	// says why (HTTP 400).
	ErrInvalid = errors.New("invalid request")
	// ErrGap: the live feed lost notifications it could not recover (for
	// example after a backend outage); the subscriber should reconnect
	// from its last sequence.
	ErrGap = errors.New("live feed gap")
)

// Record is a stored notification: the canonical notification plus the
// backend's sequence (dense per stream, from 1) and timestamp. Records are
// shared between subscribers and must be treated as read-only.
type Record struct {
	notification.Notification
	// Seq is the stream sequence, dense per event type.
	Seq uint64
	// Time is the backend timestamp of the stored notification.
	Time time.Time
	// LiveAt is when this instance's hub received the record for live
	// fan-out (zero for records read from history). Transports measure a
	// watcher's lag from it: unlike Time, it comes from this process's
	// clock, so a backend clock that differs does not count as lag.
	LiveAt time.Time

	// renders caches the record's renderings, one per view key; it is
	// replaced (never changed) under renderMu, so that readers need no
	// lock.
	renders  atomic.Pointer[[]rendering]
	renderMu sync.Mutex
}

// rendering is one cached rendering of a record.
type rendering struct {
	key  any
	data []byte
	err  error
}

// maxRenderings bounds the views cached per record; a record rendered in
// more views than that is rendered again for the others.
const maxRenderings = 8

// Rendered returns render(r), computed once per record and view key
// however many subscribers deliver it: transports encode each CloudEvent
// once per view (the schema it is rendered with, the payload format), not
// once per watcher. key must be comparable; records are shared, so the
// same key must always mean the same rendering.
func (r *Record) Rendered(key any, render func(*Record) ([]byte, error)) ([]byte, error) {
	if rs := r.renders.Load(); rs != nil {
		for i := range *rs {
			if (*rs)[i].key == key {
				return (*rs)[i].data, (*rs)[i].err
			}
		}
	}
	r.renderMu.Lock()
	defer r.renderMu.Unlock()
	var old []rendering
	if rs := r.renders.Load(); rs != nil {
		old = *rs
		for i := range old {
			if old[i].key == key {
				return old[i].data, old[i].err
			}
		}
	}
	data, err := render(r)
	if len(old) < maxRenderings {
		next := make([]rendering, len(old), len(old)+1)
		copy(next, old)
		next = append(next, rendering{key: key, data: data, err: err})
		r.renders.Store(&next)
	}
	return data, err
}

// RenderedViews returns how many views the record's renderings are
// cached for: the number of times Rendered rendered it (up to
// maxRenderings), whatever the number of subscribers it was delivered
// to. Benchmarks use it to check that a record is encoded once per view.
func (r *Record) RenderedViews() int {
	if rs := r.renders.Load(); rs != nil {
		return len(*rs)
	}
	return 0
}

// Query selects the notifications of one stream that a watcher or replay
// wants.
type Query struct {
	// Stream is the topic base the query reads.
	Stream string
	// Filter is the pattern, constraint and spatial matcher.
	Filter *notification.Filter
}

// Match reports whether rec passes the query. A nil Filter passes every
// record of the stream.
func (q *Query) Match(rec *Record) bool {
	if rec.Base() != q.Stream {
		return false
	}
	return q.Filter == nil || q.Filter.Match(rec.Tokens, rec.Geometry)
}

// Range bounds a history read. Sequences and times are inclusive.
type Range struct {
	// FromSeq is the first sequence wanted; 0 and 1 both mean the start.
	FromSeq uint64
	// FromTime, when non-zero, starts at the first record with
	// Time >= FromTime instead of FromSeq.
	FromTime time.Time
	// ToSeq is the last sequence that may be read: the boundary fixed when
	// the request subscribed (and any to_id end cursor). It always bounds
	// the read: 0 (an empty stream's boundary) reads nothing; use
	// math.MaxUint64 for no bound.
	ToSeq uint64
	// ToTime, when non-zero, ends the read after the last record with
	// Time <= ToTime.
	ToTime time.Time
}

// HistoryReader pages through stored records in ascending sequence order.
type HistoryReader interface {
	// Next fetches the next page of at most max stored records and returns
	// those that match the query (possibly none), and done = true once
	// nothing within the range remains.
	Next(ctx context.Context, max int) (recs []*Record, done bool, err error)
	// Close releases the reader's backend resources.
	Close()
}

// SubscribeOptions configure a live subscription.
type SubscribeOptions struct {
	// QueueSize bounds the records waiting for the subscriber (default
	// DefaultLiveQueueSize). Memory is spent only on records actually
	// waiting; above 32 the bound may be exceeded by the one record
	// being handed over to the subscription's channel.
	QueueSize int
	// Overflow says what happens when the queue is full.
	Overflow OverflowPolicy
	// BlockTimeout bounds, for BlockOnOverflow, how long a delivery waits
	// for room in this subscriber's queue; a subscriber still full then is
	// ended with ErrOverflow, so that it never holds the stream's
	// publishers longer. 0 waits as long as the publisher's context allows.
	BlockTimeout time.Duration
}

// Publisher stores notifications.
type Publisher interface {
	// Publish stores n durably and returns only once the backend has
	// accepted it, with the assigned sequence and timestamp. On error
	// nothing was stored (or, for an ambiguous backend failure, a retry
	// with the same notification is deduplicated).
	Publish(ctx context.Context, n *notification.Notification) (seq uint64, at time.Time, err error)
}

// Engine is a notification backend.
type Engine interface {
	Publisher
	// Subscribe joins the live fan-out for q. The returned subscription's
	// Boundary is the last sequence of q.Stream stored before it joined:
	// every record with a greater sequence that matches q is delivered on
	// the subscription, every record at or below it is history.
	Subscribe(ctx context.Context, q Query, opts SubscribeOptions) (*Subscription, error)
	// LastSeq returns the last sequence allocated in stream (0 if none).
	LastSeq(ctx context.Context, stream string) (uint64, error)
	// SeqAfter returns the first sequence of stream stored strictly after
	// t (0 if none): a replay's to_date ends just before it.
	SeqAfter(ctx context.Context, stream string, t time.Time) (uint64, error)
	// History opens a reader over the stored records of q.Stream within r
	// that match q.
	History(ctx context.Context, q Query, r Range) (HistoryReader, error)
	// Delete removes one stored notification; ErrNotFound if absent.
	Delete(ctx context.Context, stream string, seq uint64) error
	// WipeStream removes every notification of one stream, keeping its
	// configuration and sequence counter.
	WipeStream(ctx context.Context, stream string) error
	// WipeAll removes every notification of every stream this engine owns.
	WipeAll(ctx context.Context) error
	// Close stops the engine and ends every subscription with ErrClosed.
	Close() error
}
