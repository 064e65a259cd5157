package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
)

// batchWindow bounds the notifications of one PublishBatch that are sent
// and not yet acknowledged: enough to cover the round trip to a remote
// server many times over (windows of 64 to 1,024 measure alike on the
// embedded server, BenchmarkPublishBatchRatio), while bounding what one
// batch puts in a stream's ingest queue and what a lost connection
// leaves without an outcome.
const batchWindow = 256

// ErrNotSent marks the notifications of a batch that PublishBatch did not
// send because an earlier one had failed for good: they were not stored.
// The error wraps that failure's error as well (an outcome that could not
// be known becoming engine.ErrUnavailable: these were certainly not sent).
var ErrNotSent = errors.New("not sent: an earlier notification of the batch failed")

// Compile-time check: the engine stores batches with pipelined
// acknowledgements.
var _ engine.BatchPublisher = (*Engine)(nil)

// PublishBatch stores ns in order, pipelined: it sends up to batchWindow
// notifications before their acknowledgements come back, on the engine's
// own connection, and returns one result per notification, in order,
// once every notification has an outcome.
//
// Each notification travels exactly as Publish sends it (the same
// subject, payload and headers, its own Nats-Msg-Id), so it reads back
// the same through History and live feeds. The acknowledgements come
// back on one reply subscription per connection, addressed by batch
// round and index. One connection carries the batch in order and
// JetStream stores what arrives in arrival order, so the sequences of
// one stream increase in batch order.
//
// Failures follow Publish's rules, applied to the window. A notification
// the server did not receive or did not answer (no responders, no
// connection, no acknowledgement within Options.RequestTimeout, the
// connection lost while it was in flight) is sent again, with its
// Nats-Msg-Id, after the notifications ahead of it have an outcome and a
// backoff from Options.PublishRetryBase (at once when the connection is
// back); the server deduplicates a resend of one it did store and answers
// with the original sequence. Each notification has Options.PublishAttempts
// attempts within Options.PublishTimeout of its first; then a notification
// that was sent ends with an error wrapping engine.ErrUnknownOutcome
// (stored or not, nobody can tell), one that never reached the server
// with an error wrapping engine.ErrUnavailable. A notification is never
// sent again when a later one of its stream is already stored, as the
// resend could be stored after it; it then ends as if its attempts were
// spent. A stream deleted behind the engine's back is created again, as
// Publish does.
//
// The first notification that fails for good (the server refuses it, for
// example a full stream with discard new, which is not retried and not
// reported as ErrUnavailable although nats-server answers it with code
// 503; or its retries are spent; or it cannot be built: ErrTooLong,
// ErrInvalidName, engine.ErrTooLarge) stops the batch:
// nothing after it is sent any more, or sent again. Those already in
// flight keep their actual outcomes (a stored one its Seq, a lost one
// ErrUnknownOutcome); those not sent get an error wrapping ErrNotSent and
// the failure's error. This is the sequential engine.PublishAll's rule,
// but for the window.
//
// ctx bounds the whole batch: when it ends, the notifications in flight
// end with ErrUnknownOutcome and those not sent with ctx's error. When the
// server is out of reach from the start, every notification fails with
// an error wrapping engine.ErrUnavailable and nothing was sent.
//
// Like PublishSeq, it does not wait for this instance's live feeds to
// read the batch back: each stream's feed records the batch's highest
// sequence there, and a Subscribe made after PublishBatch returns waits
// for the feed to reach it, so that its boundary is at or above it.
//
// Why not nats-server's atomic batch publish (2.12, Nats-Batch-Id): it
// needs allow_atomic on every stream and a server of 2.12 or later, takes
// at most 1,000 messages and one stream per batch, stages the batch
// before committing it, stores the batch headers with every message (so
// that a batch would not be stored as Publish stores), and answers a
// resend of a committed batch with an error rather than the sequences.
// herald gets what it needs from plain publishes: exactly which
// notifications were stored, or that the outcome is unknown.
func (e *Engine) PublishBatch(ctx context.Context, ns []*notification.Notification) []engine.BatchResult {
	out := make([]engine.BatchResult, len(ns))
	if len(ns) == 0 {
		return out
	}
	if err := e.check(ctx, "publish batch"); err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	began := time.Now()
	b := &pubBatch{
		e:         e,
		ctx:       ctx,
		items:     make([]batchItem, len(ns)),
		out:       out,
		halt:      len(ns),
		delay:     e.opts.PublishRetryBase,
		wake:      make(chan struct{}, 1),
		maxStored: map[*streamState]int{},
		recreated: map[*streamState]bool{},
	}
	b.prepare(ns)
	b.run()
	b.finish()
	b.noteAcked()
	// Each notification is one publish whose caller waited for the batch.
	d := time.Since(began)
	for _, r := range out {
		e.opts.Observer.BackendOp(engine.OpPublish, d, r.Err)
	}
	return out
}

// itemState is where a notification of a batch stands.
type itemState uint8

const (
	unsent   itemState = iota // never sent
	inflight                  // sent in the current round, no answer yet
	retry                     // to be sent again
	done                      // out holds its outcome
)

// batchItem is one notification of a batch.
type batchItem struct {
	msg      *nats.Msg
	st       *streamState
	state    itemState
	sure     bool  // retry: no attempt can have reached the stream
	maybe    bool  // an attempt may have reached the stream
	cause    error // retry: why
	attempts int
	first    time.Time // first send attempt
	sent     time.Time // last send
}

// ackMsg is an answer to one publish of a batch.
type ackMsg struct {
	idx   int
	round uint64
	ack   pubAck
	err   error // nil: ack holds a valid acknowledgement
}

// muxKey is one round of a batch registered with a connection's
// reply subscription.
type muxKey struct {
	m   *replyMux
	key uint64
}

// pubBatch is one PublishBatch call in progress.
type pubBatch struct {
	e     *Engine
	ctx   context.Context
	items []batchItem
	out   []engine.BatchResult

	next      int   // first notification never sent
	halt      int   // first notification that failed for good (len: none)
	haltCause error // its error
	inflight  int

	// The current round: the connection, its reply subscription and
	// the round's key, the notifications it sent in order (head is the
	// first that may still be in flight), those it sends again first.
	round    uint64
	l        *link
	mux      *replyMux
	order    []int
	head     int
	resend   []int
	rc       int
	paused   bool            // a failure to retry: send nothing new
	lost     <-chan struct{} // closed when a connection is lost
	changed  <-chan struct{} // closed when the connection is back
	delay    time.Duration   // the next pause between rounds
	keys     []muxKey
	timer    *time.Timer
	timerSet bool
	reply    []byte

	maxStored map[*streamState]int  // last index stored, by stream
	recreated map[*streamState]bool // streams created again
	hurry     bool                  // a stream was created again: no pause
	progress  bool                  // something was stored since the last pause

	mu      sync.Mutex
	arrived []ackMsg
	spare   []ackMsg
	wake    chan struct{}
}

// prepare builds the messages; the first that cannot be built (or
// whose stream cannot be set up) fails for good and stops the batch.
func (b *pubBatch) prepare(ns []*notification.Notification) {
	e := b.e
	var (
		last   string
		lastSt *streamState
	)
	for i, n := range ns {
		if n == nil || n.Base() == "" {
			b.fail(i, fmt.Errorf("jetstream: publish batch: notification %d has no topic base", i))
			return
		}
		st := lastSt
		if n.Base() != last {
			var err error
			if st, err = e.ensure(b.ctx, n.Base()); err != nil {
				b.fail(i, e.wrapSetup(b.ctx, "publish batch: notification "+strconv.Itoa(i), err))
				return
			}
			last, lastSt = n.Base(), st
		}
		msg, err := message(n, st.name, e.eventTypeOf(st.base), nuid.Next())
		if err == nil {
			err = e.checkMsg(msg)
		}
		if err != nil {
			b.fail(i, fmt.Errorf("jetstream: publish batch: notification %d to stream %s: %w", i, st.name, err))
			return
		}
		b.items[i] = batchItem{msg: msg, st: st}
	}
}

// run sends the batch, round after round, until every notification
// before the first failure has an outcome.
func (b *pubBatch) run() {
	defer func() {
		for _, k := range b.keys {
			k.m.unregister(k.key)
		}
		if b.timer != nil {
			b.timer.Stop()
		}
	}()
	b.begin()
	for {
		b.pump()
		if !b.decide() {
			return
		}
		b.pause()
		b.begin()
	}
}

// begin starts a round on the current connection.
func (b *pubBatch) begin() {
	b.round = b.e.batches.Add(1)
	b.lost = b.e.nextDisconnect()
	b.changed = b.e.nextReconnect()
	b.l = b.e.cur()
	b.mux = nil
	b.order = b.order[:0]
	b.head = 0
	b.rc = 0
	b.paused = false
}

// stopped reports whether the caller's context or the engine has ended.
func (b *pubBatch) stopped() bool { return b.ctx.Err() != nil || b.e.ctx.Err() != nil }

// pump sends and collects acknowledgements until nothing is in flight
// and either everything is sent or a failure waits for a retry.
func (b *pubBatch) pump() {
	for {
		b.take()
		if !b.paused {
			b.send()
		}
		if b.inflight == 0 && (b.paused || !b.more()) {
			return
		}
		var tc <-chan time.Time
		if b.timerSet {
			tc = b.timer.C
		}
		select {
		case <-b.wake:
		case <-tc:
			b.timerSet = false
			b.expire()
		case <-b.lost:
			b.take()
			b.lose(errors.New("connection lost"))
		case <-b.ctx.Done():
			b.take()
			b.lose(b.ctx.Err())
		case <-b.e.ctx.Done():
			b.take()
			b.lose(engine.ErrClosed)
		}
	}
}

// more reports whether the round has notifications left to send.
func (b *pubBatch) more() bool { return b.rc < len(b.resend) || b.next < b.halt }

// send sends what the window allows: the round's resends first, then
// the next notifications.
func (b *pubBatch) send() {
	if !b.more() || b.inflight >= batchWindow {
		return
	}
	if b.stopped() {
		b.paused = true
		return
	}
	now := time.Now()
	for b.inflight < batchWindow {
		var i int
		switch {
		case b.rc < len(b.resend):
			i = b.resend[b.rc]
			b.rc++
			if b.items[i].state != retry {
				continue // an earlier round's acknowledgement came meanwhile
			}
		case b.next < b.halt:
			i = b.next
			b.next++
		default:
			return
		}
		it := &b.items[i]
		if it.first.IsZero() {
			it.first = now
		}
		it.attempts++
		err := b.sendOne(i)
		if err != nil {
			if retryable(err) {
				it.state, it.sure, it.cause = retry, !it.maybe, err
				b.paused = true
			} else {
				b.fail(i, b.e.fail(b.ctx, b.what(i), err))
			}
			return
		}
		it.state, it.sent = inflight, now
		b.inflight++
		b.order = append(b.order, i)
		if !b.timerSet {
			if b.timer == nil {
				b.timer = time.NewTimer(b.e.opts.RequestTimeout)
			} else {
				b.timer.Reset(b.e.opts.RequestTimeout)
			}
			b.timerSet = true
		}
	}
}

// sendOne publishes notification i with its reply subject in the round.
func (b *pubBatch) sendOne(i int) error {
	if b.mux == nil {
		m, err := b.e.replyMuxOf(b.l)
		if err != nil {
			return err
		}
		m.register(b.round, b)
		b.keys = append(b.keys, muxKey{m, b.round})
		b.mux = m
	}
	r := append(b.reply[:0], b.mux.prefix...)
	r = strconv.AppendUint(r, b.round, 36)
	r = append(r, '.')
	r = strconv.AppendUint(r, uint64(i), 36)
	b.reply = r
	msg := b.items[i].msg
	msg.Reply = string(r)
	return b.l.nc.PublishMsg(msg)
}

// deliver hands an answer over from the reply subscription.
func (b *pubBatch) deliver(a ackMsg) {
	b.mu.Lock()
	b.arrived = append(b.arrived, a)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take applies the answers that have arrived.
func (b *pubBatch) take() {
	b.mu.Lock()
	got := b.arrived
	b.arrived = b.spare[:0]
	b.mu.Unlock()
	for _, a := range got {
		b.apply(a)
	}
	b.spare = got[:0]
}

// apply applies one answer.
func (b *pubBatch) apply(a ackMsg) {
	if a.idx < 0 || a.idx >= len(b.items) {
		return
	}
	it := &b.items[a.idx]
	if it.state != inflight && it.state != retry {
		return
	}
	if a.round != b.round || it.state != inflight {
		// An answer of an earlier round: an acknowledgement is as good
		// as the one the resend will get; a failure says nothing of the
		// resend.
		if a.err != nil {
			return
		}
	}
	if it.state == inflight {
		b.inflight--
	}
	switch {
	case a.err == nil:
		if a.ack.Stream != it.st.name {
			b.fail(a.idx, fmt.Errorf("jetstream: publish batch: notification %d (%s): stored in stream %s, want %s", a.idx, it.msg.Subject, a.ack.Stream, it.st.name))
			return
		}
		if a.ack.Duplicate {
			b.e.log.Debug("publish retry deduplicated", "subject", it.msg.Subject, "sequence", a.ack.Seq)
		}
		it.state = done
		b.out[a.idx] = engine.BatchResult{Seq: a.ack.Seq}
		b.progress = true
		if a.idx > b.maxStored[it.st] {
			b.maxStored[it.st] = a.idx
		}
	case retryable(a.err) && !limitRefusal(a.err):
		// No responders or JetStream unavailable: this attempt reached
		// no stream.
		it.state, it.sure, it.cause = retry, !it.maybe, a.err
		b.paused = true
	case limitRefusal(a.err):
		b.fail(a.idx, fmt.Errorf("jetstream: %s: refused: %w", b.what(a.idx), a.err))
	default:
		b.fail(a.idx, b.e.fail(b.ctx, b.what(a.idx), a.err))
	}
}

// expire marks the notifications whose acknowledgement is overdue.
func (b *pubBatch) expire() {
	now := time.Now()
	for ; b.head < len(b.order); b.head++ {
		it := &b.items[b.order[b.head]]
		if it.state != inflight {
			continue
		}
		if left := it.sent.Add(b.e.opts.RequestTimeout).Sub(now); left > 0 {
			b.timer.Reset(left)
			b.timerSet = true
			return
		}
		it.state, it.sure, it.maybe = retry, false, true
		it.cause = fmt.Errorf("no acknowledgement within %s: %w", b.e.opts.RequestTimeout, nats.ErrTimeout)
		b.inflight--
		b.paused = true
	}
}

// lose marks everything in flight as lost: sent, no answer to come.
func (b *pubBatch) lose(cause error) {
	for _, i := range b.order[b.head:] {
		if it := &b.items[i]; it.state == inflight {
			it.state, it.sure, it.maybe, it.cause = retry, false, true, cause
		}
	}
	b.head = len(b.order)
	b.inflight = 0
	b.paused = true
}

// decide settles the notifications to retry that may not be sent again
// and lists the others for the next round; it reports whether there is
// anything left to send.
func (b *pubBatch) decide() bool {
	b.resend = b.resend[:0]
	stop := b.stopped()
	now := time.Now()
	fresh := map[*streamState]bool{} // created again in this pass
	for i := 0; i < b.next; i++ {
		it := &b.items[i]
		if it.state != retry {
			continue
		}
		switch {
		case i > b.halt:
			if it.sure {
				b.out[i].Err = b.notSent(i)
			} else {
				b.out[i].Err = b.unknown(i)
			}
			it.state = done
		case stop:
			b.giveUp(i)
		case b.maxStored[it.st] > i:
			// A later notification of its stream is stored: a resend
			// could be stored after it.
			b.giveUp(i)
		case it.attempts >= b.e.opts.PublishAttempts || now.Sub(it.first)+b.delay >= b.e.opts.PublishTimeout:
			if errors.Is(it.cause, nats.ErrNoResponders) && (fresh[it.st] || !b.recreated[it.st] && b.e.recreateMissing(b.ctx, it.st)) {
				// The stream was deleted: created again, the
				// notification gets new attempts.
				b.recreated[it.st], fresh[it.st] = true, true
				b.hurry = true
				it.attempts, it.first = 0, now
				b.resend = append(b.resend, i)
				continue
			}
			b.giveUp(i)
		default:
			b.resend = append(b.resend, i)
		}
	}
	if len(b.resend) > 0 {
		b.e.log.Debug("publish batch: sending again", "notifications", len(b.resend), "first", b.resend[0],
			"retry_in", b.delay.String(), "error", b.items[b.resend[0]].cause)
	}
	return len(b.resend) > 0 || (b.next < b.halt && !stop)
}

// pause waits before the next round after a failure: Options'
// backoff, cut short when the connection is back or the batch ends.
func (b *pubBatch) pause() {
	if !b.paused {
		return
	}
	if b.hurry {
		b.hurry = false
		return
	}
	if b.progress {
		// A new failure, not the same one lasting: start the backoff
		// again.
		b.delay, b.progress = b.e.opts.PublishRetryBase, false
	}
	t := time.NewTimer(b.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.changed:
	case <-b.ctx.Done():
	case <-b.e.ctx.Done():
	}
	b.delay *= 2
}

// giveUp ends notification i, whose retries are over, and stops the
// batch there.
func (b *pubBatch) giveUp(i int) {
	it := &b.items[i]
	if it.sure {
		cause := it.cause
		if b.e.closed.Load() {
			cause = engine.ErrClosed
		}
		b.fail(i, b.e.fail(b.ctx, fmt.Sprintf("%s after %d attempt(s)", b.what(i), it.attempts), cause))
		return
	}
	b.fail(i, b.unknown(i))
}

// fail ends notification i with err and stops the batch there.
func (b *pubBatch) fail(i int, err error) {
	b.items[i].state = done
	b.out[i] = engine.BatchResult{Err: err}
	if i < b.halt {
		b.halt, b.haltCause = i, err
	}
}

// finish gives the notifications that were not sent their error.
func (b *pubBatch) finish() {
	for i := range b.items {
		switch b.items[i].state {
		case unsent:
			b.out[i].Err = b.notSent(i)
		case inflight, retry: // cannot happen: run settles them
			b.out[i].Err = b.unknown(i)
		}
	}
}

// what names notification i for an error message.
func (b *pubBatch) what(i int) string {
	it := &b.items[i]
	return fmt.Sprintf("publish batch: notification %d: %s to stream %s on %s", i, it.msg.Subject, it.st.name, b.e.where)
}

// unknown is the error of notification i sent without an answer.
func (b *pubBatch) unknown(i int) error {
	it := &b.items[i]
	var extra error
	switch {
	case b.e.closed.Load():
		extra = engine.ErrClosed
	case b.ctx.Err() != nil:
		extra = b.ctx.Err()
	}
	msg := fmt.Sprintf("jetstream: %s: sent but not acknowledged, %d attempt(s) (last: %v)", b.what(i), it.attempts, clarify(it.cause))
	if extra != nil {
		return fmt.Errorf("%s: %w (%w)", msg, engine.ErrUnknownOutcome, extra)
	}
	return fmt.Errorf("%s: %w", msg, engine.ErrUnknownOutcome)
}

// notSent is the error of notification i, not sent because the batch
// stopped at an earlier failure.
func (b *pubBatch) notSent(i int) error {
	cause := b.haltCause
	unknown := errors.Is(cause, engine.ErrUnknownOutcome)
	switch {
	case cause != nil && !unknown:
	case b.e.closed.Load():
		cause = engine.ErrClosed
	case b.ctx.Err() != nil:
		cause = b.ctx.Err()
	case unknown:
		// The connection failed: this one certainly was not sent.
		cause = asUnavailable(errors.New(strings.TrimPrefix(cause.Error(), "jetstream: ")))
	default:
		cause = errors.New("the batch stopped")
	}
	return fmt.Errorf("jetstream: publish batch: notification %d %w (notification %d): %w", i, ErrNotSent, b.halt, cause)
}

// noteAcked tells the live feed of each stream the batch's highest
// sequence stored there.
func (b *pubBatch) noteAcked() {
	var (
		st   *streamState
		last uint64
	)
	for i, r := range b.out {
		if r.Err != nil {
			continue
		}
		if it := b.items[i].st; it != st {
			if f := stFeed(st); f != nil {
				f.noteAcked(last)
			}
			st, last = it, 0
		}
		last = max(last, r.Seq)
	}
	if f := stFeed(st); f != nil {
		f.noteAcked(last)
	}
}

// stFeed returns the live feed of st, nil for none.
func stFeed(st *streamState) *feed {
	if st == nil {
		return nil
	}
	return st.feed.Load()
}

// limitRefusal reports whether err is a stream refusing a notification
// because a limit is reached with discard new. nats-server answers it
// with code 503 (err_code 10077, the code of store failures), which
// retryable takes for a server that is temporarily unable to serve; a
// batch does not retry it and does not report the backend unavailable.
func limitRefusal(err error) bool {
	var api *jetstream.APIError
	if !errors.As(err, &api) || api.ErrorCode != 10077 {
		return false
	}
	for _, limit := range []string{"maximum messages exceeded", "maximum bytes exceeded", "maximum messages per subject exceeded"} {
		if strings.Contains(api.Description, limit) {
			return true
		}
	}
	return false
}

// replyMux is the subscription of one connection on which the
// acknowledgements of PublishBatch arrive: reply subjects are
// <inbox>.<round>.<index>, in base 36.
type replyMux struct {
	prefix string
	mu     sync.RWMutex
	rounds map[uint64]*pubBatch
}

// replyMuxOf returns the reply subscription of l, subscribing on first
// use.
func (e *Engine) replyMuxOf(l *link) (*replyMux, error) {
	l.muxMu.Lock()
	defer l.muxMu.Unlock()
	if l.mux != nil {
		return l.mux, nil
	}
	m := &replyMux{prefix: l.nc.NewInbox() + ".", rounds: map[uint64]*pubBatch{}}
	if _, err := l.nc.Subscribe(m.prefix+"*.*", m.handle); err != nil {
		return nil, err
	}
	l.mux = m
	return m, nil
}

func (m *replyMux) register(round uint64, b *pubBatch) {
	m.mu.Lock()
	m.rounds[round] = b
	m.mu.Unlock()
}

func (m *replyMux) unregister(round uint64) {
	m.mu.Lock()
	delete(m.rounds, round)
	m.mu.Unlock()
}

// handle routes one acknowledgement to its batch.
func (m *replyMux) handle(msg *nats.Msg) {
	rest, ok := strings.CutPrefix(msg.Subject, m.prefix)
	if !ok {
		return
	}
	r, x, ok := strings.Cut(rest, ".")
	if !ok {
		return
	}
	round, err1 := strconv.ParseUint(r, 36, 64)
	idx, err2 := strconv.ParseUint(x, 36, 32)
	if err1 != nil || err2 != nil {
		return
	}
	m.mu.RLock()
	b := m.rounds[round]
	m.mu.RUnlock()
	if b == nil {
		return
	}
	a := ackMsg{idx: int(idx), round: round}
	a.ack, a.err = decodeAck(msg)
	b.deliver(a)
}

// decodeAck reads a publish acknowledgement; a "no responders" status
// is nats.ErrNoResponders, as for a request.
func decodeAck(msg *nats.Msg) (pubAck, error) {
	var ack pubAck
	if len(msg.Data) == 0 && msg.Header.Get("Status") == "503" {
		return ack, nats.ErrNoResponders
	}
	if ack, ok := parseAck(msg.Data); ok {
		return ack, nil
	}
	if err := json.Unmarshal(msg.Data, &ack); err != nil {
		return ack, fmt.Errorf("invalid publish acknowledgement %q: %w", msg.Data, err)
	}
	if ack.Error != nil {
		return ack, ack.Error
	}
	if ack.Stream == "" {
		return ack, fmt.Errorf("invalid publish acknowledgement %q", msg.Data)
	}
	return ack, nil
}

// parseAck reads the usual acknowledgement, {"stream":"<name>","seq":<n>}
// optionally followed by ,"duplicate":true, without reflection
// (encoding/json takes some 1.2 µs and 6 allocations per
// acknowledgement); ok is false for anything else, which decodeAck then
// hands to encoding/json.
func parseAck(b []byte) (ack pubAck, ok bool) {
	const (
		head = `{"stream":"`
		seq  = `,"seq":`
		dup  = `,"duplicate":true`
	)
	rest, found := bytes.CutPrefix(b, []byte(head))
	if !found {
		return ack, false
	}
	q := bytes.IndexByte(rest, '"')
	if q <= 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return ack, false
	}
	name := rest[:q]
	if rest, found = bytes.CutPrefix(rest[q+1:], []byte(seq)); !found {
		return ack, false
	}
	var v uint64
	n := 0
	for ; n < len(rest) && rest[n] >= '0' && rest[n] <= '9'; n++ {
		v = v*10 + uint64(rest[n]-'0')
	}
	if n == 0 || n > 19 || n > 1 && rest[0] == '0' { // 19 digits cannot overflow
		return ack, false
	}
	rest = rest[n:]
	if r, found := bytes.CutPrefix(rest, []byte(dup)); found {
		ack.Duplicate, rest = true, r
	}
	if len(rest) != 1 || rest[0] != '}' {
		return pubAck{}, false
	}
	ack.Stream, ack.Seq = string(name), v
	return ack, true
}
