package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/herald-gateway/herald/engine"
)

// Live feed parameters.
const (
	// feedBatch is the number of messages a live feed asks for at once;
	// it asks for more when half have arrived.
	feedBatch = 512
	// feedExpires is the lifetime of one live pull request.
	feedExpires = 30 * time.Second
	// timeRing is the number of recent (sequence, time) pairs a feed
	// remembers for the publishes that ask after the feed has passed
	// their sequence.
	timeRing = 1024
	// maxReopenDelay bounds the pause between attempts to recreate a
	// feed's consumer.
	maxReopenDelay = 2 * time.Second
)

// feed is the live feed of one stream in one herald instance: a reader
// over the whole stream, started after the stream's last sequence when the
// feed starts, whose messages are rebuilt into records and handed to the
// hub in sequence order. It also tells Publish the stored time of the
// sequences it has seen.
//
// When the consumer must be recreated (a reconnection, missed heartbeats,
// a message lost on the way, the consumer deleted or moved) it is
// recreated from the sequence after the last one seen, so that every
// stored notification is delivered once, in order. If the first message
// after such a reset is not the next sequence, the notifications in
// between were removed from the stream while the feed was away (limits,
// purges or deletions during an outage); nobody in this instance saw them
// live, so every subscription of the stream is ended with engine.ErrGap
// and its client reconnects from its last sequence. Sequences skipped
// while the consumer runs without a reset are notifications removed
// before the feed read them (deletions, purges, or a newer notification on
// the same subject under max_messages_per_subject 1), which a JetStream
// consumer skips as well; they end nothing.
type feed struct {
	e    *Engine
	base string
	name string // stream name
	r    *reader

	kick     chan struct{} // the connection came back: recreate the consumer
	stopCh   chan struct{}
	stopOnce sync.Once
	done     chan struct{} // closed when run returns

	// acked is the highest sequence a publish of this instance was
	// acknowledged with (PublishSeq does not wait for the feed to read
	// it): Subscribe waits for the feed to reach it.
	acked atomic.Uint64

	mu      sync.Mutex
	last    uint64 // last sequence seen (delivered or skipped)
	times   [timeRing]stamp
	waiters map[uint64][]chan time.Time
}

// stamp is the stored time of one sequence.
type stamp struct {
	seq uint64
	at  time.Time
}

// startFeed creates the live consumer of a stream after sequence last,
// records last as the hub's boundary for the stream and starts the feed.
func (e *Engine) startFeed(ctx context.Context, st *streamState, last uint64) (*feed, error) {
	f := &feed{
		e:       e,
		base:    st.base,
		name:    st.name,
		r:       newReader(e, st.name, "", "live", feedBatch),
		kick:    make(chan struct{}, 1),
		stopCh:  make(chan struct{}),
		done:    make(chan struct{}),
		last:    last,
		waiters: map[uint64][]chan time.Time{},
	}
	if _, err := f.r.create(ctx, start{seq: last + 1}); err != nil {
		return nil, err
	}
	e.hub.SetLast(st.base, last)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		f.r.close()
		return nil, fmt.Errorf("live feed of stream %s: %w", st.name, engine.ErrClosed)
	}
	st.feed.Store(f)
	e.wg.Add(1)
	go f.run()
	return f, nil
}

// stop ends the feed; run returns soon after.
func (f *feed) stop() { f.stopOnce.Do(func() { close(f.stopCh) }) }

// ended reports whether the feed has stopped. A feed stops only when
// the engine closes: it outlives every outage, recreating its consumer
// when the connection is back.
func (f *feed) ended() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// reconnected asks the feed to recreate its consumer.
func (f *feed) reconnected() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// run reads the stream until the feed is stopped.
func (f *feed) run() {
	defer f.e.wg.Done()
	defer close(f.done)
	defer f.r.close()
	hb := f.e.opts.FeedHeartbeat
	idleFor := 3*hb + time.Second
	idle := time.NewTimer(idleFor)
	defer idle.Stop()
	reset := false // the consumer was recreated and has delivered nothing yet
	f.topUp()
	for {
		select {
		case <-f.stopCh:
			return
		case <-f.kick:
			if !f.reopen("the connection was re-established") {
				return
			}
			reset = true
		case <-idle.C:
			if !f.reopen("no heartbeat from the consumer") {
				return
			}
			reset = true
		case m := <-f.r.msgs:
			switch kind, left := classify(m); kind {
			case kindMsg:
				md, err := metadata(m)
				if err != nil {
					f.e.log.Warn("live feed: message without JetStream metadata", "stream", f.name, "subject", m.Subject, "error", err)
					break
				}
				if !f.r.accept(md) {
					if !f.reopen(fmt.Sprintf("consumer sequence %d after %d: a message was lost on the way", md.consumer, f.r.cseq)) {
						return
					}
					reset = true
					break
				}
				f.handle(m, md, reset)
				reset = false
			case kindHeartbeat:
			case kindExpired:
				f.r.pending = max(f.r.pending-left, 0)
			case kindNoMessages:
				f.r.pending = 0
			default:
				reason := statusError(m).Error()
				if kind == kindLost {
					reason = "the consumer is gone: " + reason
				}
				if !f.reopen(reason) {
					return
				}
				reset = true
			}
		}
		f.topUp()
		if !idle.Stop() {
			select {
			case <-idle.C:
			default:
			}
		}
		idle.Reset(idleFor)
	}
}

// topUp keeps a pull request outstanding for at least half a batch.
func (f *feed) topUp() {
	if f.r.name == "" || f.r.pending > feedBatch/2 {
		return
	}
	err := f.r.pull(pullRequest{Batch: feedBatch - f.r.pending, Expires: feedExpires, Heartbeat: f.e.opts.FeedHeartbeat})
	if err != nil && !f.e.closed.Load() {
		// Disconnected: the heartbeat timer or the reconnection recreates
		// the consumer.
		f.e.log.Debug("live feed: pull request not sent", "stream", f.name, "error", err)
	}
}

// reopen recreates the consumer after the last sequence seen, on the
// current connection, retrying until it succeeds however long the server
// is away; false when the feed is stopped meanwhile.
func (f *feed) reopen(reason string) bool {
	f.e.log.Info("live feed: recreating the stream consumer", "stream", f.name, "reason", reason)
	delay := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		select {
		case <-f.stopCh:
			return false
		default:
		}
		err := f.reopenOnce()
		if err == nil {
			if attempt > 1 {
				f.e.log.Info("live feed: stream consumer recreated", "stream", f.name, "attempts", attempt)
			}
			return true
		}
		if f.e.closed.Load() {
			return false
		}
		// While the connection is down the client library or the
		// supervisor reconnects (and logs it), and kicks the feed when
		// the connection is back (cancelling a request sent before);
		// only a failure on a live connection is the feed's own to
		// report.
		if !f.e.cur().nc.IsConnected() || errors.Is(err, context.Canceled) {
			f.e.log.Debug("live feed: cannot recreate the stream consumer while disconnected; retrying", "stream", f.name,
				"attempt", attempt, "error", err)
		} else if attempt == 1 || attempt%20 == 0 {
			f.e.log.Warn("live feed: cannot recreate the stream consumer; retrying", "stream", f.name,
				"server", f.e.where, "attempt", attempt, "error", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-f.stopCh:
			t.Stop()
			return false
		case <-f.kick:
			t.Stop()
		case <-t.C:
		}
		delay = min(2*delay, maxReopenDelay)
	}
}

// reopenOnce checks the stream and recreates the consumer. A stream whose
// last sequence is below the feed's has been rewound (deleted and created
// again, or restored without its last writes): the feed then ends the
// stream's subscriptions with engine.ErrGap and goes on from the stream's
// new end.
//
// Its requests give up when the connection is re-established meanwhile
// (a request sent just before a server restart is never answered): the
// kick that comes with the reconnection makes reopen try again at once.
func (f *feed) reopenOnce() error {
	f.r.drop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	back := f.e.nextReconnect()
	go func() {
		select {
		case <-back:
			cancel()
		case <-ctx.Done():
		}
	}()
	rctx, rcancel := f.e.requestContext(ctx)
	s, err := f.e.cur().js.Stream(rctx, f.name)
	rcancel()
	if err != nil {
		return err
	}
	end := s.CachedInfo().State.LastSeq
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	if end < last {
		f.e.log.Warn("live feed: the stream was rewound; ending its subscriptions so that clients reconnect",
			"stream", f.name, "last_seen", last, "stream_last", end)
		// The new boundary first, so that no subscription joins with the
		// old one; then end every subscription (those that joined in
		// between reconnect for nothing, which is harmless).
		f.rewind(end)
		f.e.hub.SetLast(f.base, end)
		f.e.opts.Observer.Gap(f.base)
		f.e.hub.EndStream(f.base, fmt.Errorf("jetstream: stream %s went back from sequence %d to %d: %w", f.name, last, end, engine.ErrGap))
		last = end
	}
	_, err = f.r.create(ctx, start{seq: last + 1})
	return err
}

// handle delivers one stored message to the hub, after ending the
// stream's subscriptions with engine.ErrGap if it follows a reset and
// sequences are missing before it.
func (f *feed) handle(m *nats.Msg, md meta, afterReset bool) {
	seq, last := md.stream, f.last // only this goroutine writes f.last
	if seq <= last {
		return
	}
	if afterReset && seq > last+1 {
		f.e.log.Warn("live feed: notifications were removed from the stream while its feed was reconnecting; ending its subscriptions so that clients reconnect from their last sequence",
			"stream", f.name, "first_missing", last+1, "last_missing", seq-1)
		// The boundary past the gap first, as for a rewind: a
		// subscription that joins between the end and the delivery below
		// starts after the missing notifications, not before them (it
		// would receive seq next without any sign of the gap).
		f.e.hub.SetLast(f.base, seq-1)
		f.e.opts.Observer.Gap(f.base)
		f.e.hub.EndStream(f.base, fmt.Errorf("jetstream: stream %s: notifications %d to %d were removed while the live feed was reconnecting: %w",
			f.name, last+1, seq-1, engine.ErrGap))
	}
	rec, err := record(m.Subject, m.Header, m.Data, seq, md.at, f.e.eventTypeOf(f.base))
	if err != nil {
		f.e.log.Warn("live feed: undecodable notification skipped", "stream", f.name, "sequence", seq, "subject", m.Subject, "error", err)
		f.advance(seq, time.Time{}, false)
		return
	}
	f.e.hub.Deliver(rec)
	f.advance(seq, rec.Time, true)
}

// rewind forgets what the feed saw after seq and releases the waiters.
func (f *feed) rewind(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = seq
	f.times = [timeRing]stamp{}
	// The acknowledged sequences above seq are gone with the old stream.
	for a := f.acked.Load(); a > seq && !f.acked.CompareAndSwap(a, seq); a = f.acked.Load() {
	}
	for s, ws := range f.waiters {
		for _, ch := range ws {
			ch <- time.Time{}
		}
		delete(f.waiters, s)
	}
}

// advance records that the feed has seen seq (stored at at when ok) and
// wakes the publishers waiting for it or for a sequence it skipped.
func (f *feed) advance(seq uint64, at time.Time, ok bool) {
	if !ok {
		at = time.Time{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.last
	f.last = seq
	if ok {
		f.times[seq%timeRing] = stamp{seq: seq, at: at}
	}
	if len(f.waiters) == 0 {
		return
	}
	if seq == prev+1 {
		if ws, found := f.waiters[seq]; found {
			for _, ch := range ws {
				ch <- at
			}
			delete(f.waiters, seq)
		}
		return
	}
	for s, ws := range f.waiters {
		if s > seq {
			continue
		}
		v := at
		if s != seq {
			v = time.Time{}
		}
		for _, ch := range ws {
			ch <- v
		}
		delete(f.waiters, s)
	}
}

// timeOf waits until the feed has seen seq and returns its stored time;
// false if the feed skipped it, forgot it, or stopped, or if ctx ended or
// deadline passed first.
// Since the feed hands each record to the hub before it records its
// time, a Publish that waited here returns after its notification
// reached this instance's subscribers and became the stream's boundary.
func (f *feed) timeOf(ctx context.Context, seq uint64, deadline time.Time) (time.Time, bool) {
	f.mu.Lock()
	if seq <= f.last {
		s := f.times[seq%timeRing]
		f.mu.Unlock()
		return s.at, s.seq == seq && !s.at.IsZero()
	}
	ch := make(chan time.Time, 1)
	f.waiters[seq] = append(f.waiters[seq], ch)
	f.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case at := <-ch:
		return at, !at.IsZero()
	case <-ctx.Done():
	case <-t.C:
	case <-f.done:
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := f.waiters[seq]
	for i, c := range ws {
		if c == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(f.waiters, seq)
	} else {
		f.waiters[seq] = ws
	}
	select {
	case at := <-ch:
		return at, !at.IsZero()
	default:
		return time.Time{}, false
	}
}

// noteAcked records that a publish was acknowledged with seq.
func (f *feed) noteAcked(seq uint64) {
	for a := f.acked.Load(); a < seq && !f.acked.CompareAndSwap(a, seq); a = f.acked.Load() {
	}
}

// caughtUp waits until the feed has read every sequence acknowledged so
// far (handing it to the hub, which makes it the stream's boundary), or
// until ctx ends, deadline passes or the feed stops.
func (f *feed) caughtUp(ctx context.Context, deadline time.Time) {
	want := f.acked.Load()
	f.mu.Lock()
	seen := want <= f.last
	f.mu.Unlock()
	if !seen {
		f.timeOf(ctx, want, deadline)
	}
}
