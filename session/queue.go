package session

import (
	"context"
	"sync"
	"time"
)

// queued is one frame in a session's events queue: an events frame (or
// a history_completed, skipped or subscription_ended frame that must stay
// behind its subscription's events) with what it carries.
type queued struct {
	sub  *subscription
	gen  uint64
	data []byte
	// first and last are the sequences of the events it carries (0 for
	// other frames); final marks a subscription's last frame.
	first, last uint64
	final       bool
}

// eventQueue is a session's one outbound queue of events frames, shared
// by its subscriptions (session_queue_frames). Frames of a subscription
// that ended or was deleted are removed from it at once.
type eventQueue struct {
	mu     sync.Mutex
	frames []queued
	size   int
	// kick starts the session's writer once a frame is queued.
	kick func()
	// roomCh is closed each time frames leave, waking every waiting
	// pusher; it exists only while a pusher waits.
	roomCh chan struct{}
}

func (q *eventQueue) init(size int, kick func()) {
	q.size = size
	q.kick = kick
}

// tryPush queues f if there is room (or force is set: a final frame may
// always be queued, so that an end is never lost to a full queue). It
// reports false, and the channel that signals room, when full. A frame
// of a subscription that is no longer live is discarded (true).
func (q *eventQueue) tryPush(f queued, force bool) (bool, <-chan struct{}) {
	q.mu.Lock()
	if f.sub != nil && !f.sub.live(f.gen) {
		q.mu.Unlock()
		return true, nil
	}
	if len(q.frames) >= q.size && !force {
		if q.roomCh == nil {
			q.roomCh = make(chan struct{})
		}
		room := q.roomCh
		q.mu.Unlock()
		return false, room
	}
	q.frames = append(q.frames, f)
	q.mu.Unlock()
	q.kick()
	return true, nil
}

// room wakes the pushers waiting for room; q.mu is held.
func (q *eventQueue) room() {
	if q.roomCh != nil {
		close(q.roomCh)
		q.roomCh = nil
	}
}

// push queues f, waiting for room at most wait (0: not at all) or until
// ctx ends; it reports whether f was queued (or discarded as stale).
func (q *eventQueue) push(ctx context.Context, f queued, wait time.Duration) bool {
	ok, room := q.tryPush(f, false)
	if ok || wait <= 0 {
		return ok
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-room:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
		if ok, room = q.tryPush(f, false); ok {
			return true
		}
	}
}

// pop takes the oldest frame.
func (q *eventQueue) pop() (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.frames) > 0 {
		f := q.frames[0]
		q.frames[0] = queued{}
		if q.frames = q.frames[1:]; len(q.frames) == 0 {
			q.frames = nil // an idle queue holds no buffer
		}
		q.room()
		if f.sub != nil && !f.sub.live(f.gen) && !f.final {
			continue
		}
		return f, true
	}
	return queued{}, false
}

// purge removes the queued frames of one subscription generation and
// returns the first sequence they carried (0 if none carried events).
func (q *eventQueue) purge(sub *subscription) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	var first uint64
	kept := q.frames[:0]
	for _, f := range q.frames {
		if f.sub == sub {
			if f.first != 0 && (first == 0 || f.first < first) {
				first = f.first
			}
			continue
		}
		kept = append(kept, f)
	}
	clear(q.frames[len(kept):])
	q.frames = kept
	q.room()
	return first
}

// length returns the number of queued frames.
func (q *eventQueue) length() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames)
}
