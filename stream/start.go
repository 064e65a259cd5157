package stream

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/engine"
)

// Start runs one stream as Run does, but returns at once and calls done
// with the stream's end, once, when it is over. While the stream is live
// and has nothing to deliver, no goroutine waits for it: the engine's
// subscription, the end of ctx and the maximum duration each start one
// when there is something to do, which runs until nothing is left and
// ends. An idle subscription of a session thus costs no goroutine (a
// goroutine's stack is 4 kB or more). The sink is called by one
// goroutine at a time, in order, as with Run; done is called from the
// goroutine that ends the stream, after the last call to the sink.
//
// A stream with heartbeats (spec.Heartbeat > 0) keeps a goroutine
// waiting, as with Run.
func Start(ctx context.Context, eng engine.Engine, spec *Spec, sink Sink, done func(End)) {
	r := newRunner(ctx, eng, spec, sink)
	r.idle = &idleState{done: done}
	// The goroutine that sets the stream up holds the right to run it
	// (wakes > 0) until it has delivered what is waiting.
	r.idle.wakes.Store(1)
	go r.startIdle()
}

// idleState is the state of a stream run by Start.
type idleState struct {
	done func(End)
	// wakes counts the wake-ups since the running goroutine last looked;
	// a goroutine runs the stream while it is above 0, and ended holds it
	// there for good.
	wakes atomic.Int64
	// maxAt is when the maximum duration ends (zero: none); maxFired is
	// set once it has, by maxTimer's callback.
	maxAt    time.Time
	maxFired atomic.Bool
	maxTimer *time.Timer
	// stopCtx unregisters the wake-up on the end of ctx.
	stopCtx func() bool
}

// ended is the wake count of a stream that is over: no wake-up reaches 0
// from it again, so none starts a goroutine.
const ended = math.MaxInt64 / 2

// startIdle sets the stream up and, if it goes on live, delivers what is
// waiting and leaves the stream to its wake-ups.
func (r *runner) startIdle() {
	end, live := r.setup()
	if !live {
		r.end = end
		r.finishIdle()
		return
	}
	if r.beat != nil {
		r.live()
		r.finishIdle()
		return
	}
	st := r.idle
	if r.maxTimer != nil {
		// The live phase waits on a callback rather than the channel.
		if !r.maxTimer.Stop() {
			st.maxFired.Store(true)
		} else {
			st.maxTimer = time.AfterFunc(time.Until(st.maxAt), func() {
				st.maxFired.Store(true)
				r.wake()
			})
		}
		r.maxTimer, r.maxDur = nil, nil
	}
	r.liveSince = time.Now()
	st.stopCtx = context.AfterFunc(r.ctx, r.wake)
	r.sub.SetWake(r.wake)
	r.drain()
}

// wake tells the stream that something may be ready: a record, its
// subscription's end, the end of its context or of its duration. It
// starts a goroutine to run the stream unless one runs.
func (r *runner) wake() {
	if r.idle.wakes.Add(1) == 1 {
		go r.drain()
	}
}

// drain delivers what is ready and returns once nothing is, or ends the
// stream. A wake-up that comes while it runs makes it look again, so
// that none is lost between its last look and its return.
func (r *runner) drain() {
	st := r.idle
	for {
		n := st.wakes.Load()
		if !r.step() {
			st.wakes.Store(ended)
			r.finishIdle()
			return
		}
		if st.wakes.CompareAndSwap(n, 0) {
			return
		}
	}
}

// step handles, without waiting, everything that is ready: the end of
// the context or of the maximum duration first, then the records queued
// (a burst flushes as in live), then the subscription's end. It reports
// whether the stream goes on; when it does not, r.end holds its end.
func (r *runner) step() bool {
	c := r.sub.C()
	for {
		if r.ctx.Err() != nil {
			return r.liveEnd(liveCanceled, nil)
		}
		if r.idle.maxFired.Load() {
			return r.liveEnd(liveMaxDuration, nil)
		}
		select {
		case rec := <-c:
			if !r.liveEnd(liveRec, rec) {
				return false
			}
			continue
		default:
		}
		select {
		case <-r.sub.Done():
			return r.liveEnd(liveSubEnded, nil)
		default:
		}
		return true
	}
}

// finishIdle ends a stream run by Start: its timers and wake-ups are
// stopped, its subscription closed, and done is called.
func (r *runner) finishIdle() {
	st := r.idle
	if st.stopCtx != nil {
		st.stopCtx()
	}
	if st.maxTimer != nil {
		st.maxTimer.Stop()
	}
	if r.sub != nil {
		r.sub.SetWake(nil)
	}
	r.release()
	r.ended()
	st.done(r.end)
}
