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
// by its subscriptions. It is bounded twice: by frames
// (session_queue_frames) and by the bytes of those frames
// (session_queue_bytes); a frame fits while both stay within their
// bound, and an empty queue takes any one frame (a frame is at most
// max_frame_bytes), so a queue holds at most session_queue_bytes plus
// one frame. Frames of a subscription that ended or was deleted are
// removed from it at once.
type eventQueue struct {
	mu     sync.Mutex
	frames []queued
	// bytes is the sum of the lengths of the queued frames.
	bytes int
	// maxFrames and maxBytes are the queue's bounds.
	maxFrames, maxBytes int
	// kick starts the session's writer once a frame is queued.
	kick func()
	// roomCh is closed each time frames leave, waking every waiting
	// pusher; it exists only while a pusher waits.
	roomCh chan struct{}
}

func (q *eventQueue) init(maxFrames, maxBytes int, kick func()) {
	q.maxFrames, q.maxBytes = maxFrames, maxBytes
	q.kick = kick
}

// fits reports whether a frame of n bytes may be queued now; q.mu is
// held.
func (q *eventQueue) fits(n int) bool {
	return len(q.frames) == 0 || len(q.frames) < q.maxFrames && q.bytes+n <= q.maxBytes
}

// full reports whether a frame of n bytes would not fit now (the test
// of a DROPPING subscription, which discards rather than waits).
func (q *eventQueue) full(n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.fits(n)
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
	if !force && !q.fits(len(f.data)) {
		if q.roomCh == nil {
			q.roomCh = make(chan struct{})
		}
		room := q.roomCh
		q.mu.Unlock()
		return false, room
	}
	q.frames = append(q.frames, f)
	q.bytes += len(f.data)
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
		q.bytes -= len(f.data)
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
			q.bytes -= len(f.data)
			if f.first != 0 && (first == 0 || f.first < first) {
				first = f.first
			}
			continue
		}
		kept = append(kept, f)
	}
	clear(q.frames[len(kept):])
	if q.frames = kept; len(kept) == 0 {
		q.frames = nil // an idle queue holds no buffer
	}
	q.room()
	return first
}

// length returns the number of queued frames and their bytes.
func (q *eventQueue) length() (frames, bytes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames), q.bytes
}
