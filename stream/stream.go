// Package stream runs watch and replay streams independently of the
// transport that carries them: Run joins the engine's live fan-out (or
// reads the stream's last sequence for a replay), fixes the replay/live
// boundary, pages history within the cursors and the historical cap,
// goes live, serves heartbeats and the maximum duration, applies the
// selection (WHERE predicate, sampling), and ends with an End that says
// why and where to resume. A transport implements Sink (SSE in package
// handlers, WebSocket sessions in package session) and only frames what
// the runner hands it.
//
// Prepare is the one way from a parsed watch or replay request to the
// Spec of its stream, which every transport calls, so that all of them
// check the same things in the same order; the access checks, which need
// package auth, are handed to it by the transport. It lives here rather
// than with either transport so that neither imports the other.
//
// It knows no transport, no HTTP status and no wire format: records are
// handed to the sink as they are, and the sink renders them.
package stream

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/tracing"
)

// Defaults of a stream's settings; the config file's defaults (package
// configs) are these values.
const (
	// DefaultReplayBatchSize is the stored records one history page
	// fetches when a Spec sets no page size.
	DefaultReplayBatchSize = 100
	// DefaultMaxLag is how long a watcher's oldest undelivered record may
	// wait before the stream ends with a lag error.
	DefaultMaxLag = 30 * time.Second
)

// Mode says whether a stream goes live.
type Mode uint8

// Modes.
const (
	// Watch streams live notifications, after history when the spec has a
	// start cursor, until something ends it.
	Watch Mode = iota
	// Replay streams history between the cursors and ends.
	Replay
)

// Op names the operation of a stream of mode m in request errors
// (notification.OpWatch or notification.OpReplay).
func (m Mode) Op() string {
	if m == Replay {
		return notification.OpReplay
	}
	return notification.OpWatch
}

// Phase says where a record handed to a sink comes from.
type Phase uint8

// Phases.
const (
	// History records were stored before the stream's boundary.
	History Phase = iota
	// Live records arrived after the stream joined the live fan-out.
	Live
)

// Predicate selects records (a compiled WHERE clause).
type Predicate interface {
	// Match reports whether rec is selected.
	Match(rec *engine.Record) bool
}

// Sampler keeps each selected record with some probability.
type Sampler interface {
	// Keep reports whether the next selected record is delivered.
	Keep() bool
}

// Spec is a validated stream request: what to read, from where to where,
// and the settings that bound it. The zero value of each setting means
// "none" (no cap, no heartbeat, no maximum duration, no lag limit).
type Spec struct {
	// Query is the stream and filter read.
	Query engine.Query
	// Mode is Watch or Replay.
	Mode Mode
	// Cursors bound the history; a replay needs a start cursor.
	Cursors Cursors
	// HistoryCap bounds the history records delivered; a stream with more
	// ends with HistoryLimit once the cap is delivered (0 = no cap).
	HistoryCap int
	// PageSize is the number of stored records fetched per history page
	// (DefaultReplayBatchSize when not positive).
	PageSize int
	// PageDelay is the pause between history pages.
	PageDelay time.Duration
	// Heartbeat is the interval of the sink's heartbeats (Watch only).
	Heartbeat time.Duration
	// MaxDuration ends a watch that has run that long (Watch only).
	MaxDuration time.Duration
	// MaxLag ends a live stream whose oldest undelivered record has waited
	// longer than it (Lagging, with that record as the resume point).
	MaxLag time.Duration
	// QueueSize, Overflow and BlockTimeout configure the live
	// subscription's queue (engine.SubscribeOptions).
	QueueSize    int
	Overflow     engine.OverflowPolicy
	BlockTimeout time.Duration
	// Where, when not nil, selects the records delivered (after the
	// query's filter), in history and live alike.
	Where Predicate
	// Sample, when not nil, thins the selected records.
	Sample Sampler
	// Format names the payload view the sink renders (the sink's
	// business; the runner only carries it).
	Format string
	// Observer, when not nil, is told what the stream does (metrics).
	Observer Observer
	// Tracer, when not nil, records a span per delivery burst (a history
	// page, or live records flushed together), linked to the creation
	// context of each notification it carries.
	Tracer *tracing.Tracer
	// Transport names the transport in those spans ("sse", "websocket").
	Transport string
}

// Observer is told what one stream does, from the goroutine running it:
// Opened once the sink is open, Delivered for each record the sink took
// (live: from the live fan-out, else history), HistoryPage for each page
// read, and Ended once with the reason (Reason.String) of a stream that
// opened. It takes plain values so that the metrics need not import this
// package. Implementations must be cheap: Delivered is on the delivery
// path.
type Observer interface {
	Opened()
	Delivered(live bool)
	HistoryPage()
	Ended(reason string)
}

// noObserver is the Observer of a spec that has none.
type noObserver struct{}

func (noObserver) Opened()        {}
func (noObserver) Delivered(bool) {}
func (noObserver) HistoryPage()   {}
func (noObserver) Ended(string)   {}

// Opening is what a sink learns when the stream is set up.
type Opening struct {
	// Boundary is the last sequence stored when the stream joined: history
	// is at or below it, live above it.
	Boundary uint64
	// EndSeq, for a replay with an end cursor (to_id or to_date), is the
	// last sequence it can deliver: the boundary, lowered to to_id, or to
	// just before the first record stored after to_date. It is below the
	// first stored sequence (possibly 0) when the window is empty. Nil
	// without an end cursor.
	EndSeq *uint64
	// TakeDropped, for a watch, returns and resets the number of live
	// records its queue discarded (engine.DropOnOverflow); nil for a
	// replay.
	TakeDropped func() uint64
}

// Sink is a transport's side of a stream. Calls come from the goroutine
// running Run, in this order: Open once, then Records (with Flush after
// each page and each live burst), Heartbeats and at most one
// HistoryDone, in any interleaving the stream produces. An error from any
// call means the client is gone: Run returns at once with ClientGone.
// The final frame (the end) is the transport's, from Run's End.
type Sink interface {
	// Open starts the stream towards the client (for SSE: the response
	// headers and the opening event).
	Open(o Opening) error
	// Record queues one record; it may buffer it until Flush.
	Record(rec *engine.Record, ph Phase) error
	// Flush sends what is queued.
	Flush() error
	// Heartbeat tells the client the stream is alive.
	Heartbeat() error
	// HistoryDone reports that the history phase of a stream with a start
	// cursor is complete (also when it was empty): the next records are
	// live. It is not called when the history ends the stream otherwise.
	HistoryDone() error
}

// Deadliner is implemented by sinks whose writes can be bounded: before
// handing over a live record, Run tells the sink by when the output
// queued from then on must be out (the record's lag limit), so that a
// write blocked by a client that reads nothing gives up then.
type Deadliner interface {
	Due(t time.Time)
}

// Reason says why a stream ended.
type Reason uint8

// Reasons.
const (
	// ClientGone: the client went away, or a write to it failed. Nothing
	// more can be sent.
	ClientGone Reason = iota
	// SetupFailed: joining the live fan-out or reading the boundary failed
	// before the sink was opened (End.Err says why).
	SetupFailed
	// EndOfStream: a replay delivered everything within its cursors.
	EndOfStream
	// HistoryLimit: the historical cap was reached with more history left.
	HistoryLimit
	// HistoryFailed: a history page could not be read (End.Err).
	HistoryFailed
	// MaxDuration: the watch ran for Spec.MaxDuration.
	MaxDuration
	// Overflow: the live subscription's queue overflowed.
	Overflow
	// Lagging: the oldest undelivered live record waited longer than
	// Spec.MaxLag.
	Lagging
	// Gap: the backend lost live notifications it could not recover, or
	// the live feed was interrupted otherwise (End.Err).
	Gap
	// Shutdown: the server is shutting down.
	Shutdown
	// SchemaChanged: a reload changed the stream's event type.
	SchemaChanged
	// SchemaRemoved: a reload removed the stream's event type.
	SchemaRemoved
	// Unauthorized: the client's credentials expired or were revoked.
	Unauthorized
)

var reasonNames = [...]string{
	ClientGone: "client_gone", SetupFailed: "setup_failed", EndOfStream: "end_of_stream",
	HistoryLimit: "history_limit", HistoryFailed: "history_failed", MaxDuration: "max_duration",
	Overflow: "overflow", Lagging: "lagging", Gap: "gap", Shutdown: "server_shutdown",
	SchemaChanged: "schema_changed", SchemaRemoved: "schema_removed", Unauthorized: "unauthorized",
}

// String returns the reason's name (the session protocol's where it has
// one).
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// ReasonNames returns the names of every reason, in order.
func ReasonNames() []string { return append([]string(nil), reasonNames[:]...) }

// End is how and where a stream ended.
type End struct {
	// Reason says why.
	Reason Reason
	// ResumeFrom is the sequence a client continues from with nothing
	// lost: the one after the last delivered record, or the undelivered
	// record a lagging stream stopped at, or the start of what it had not
	// reached yet. 0 when the stream completed (EndOfStream) or nothing
	// can be said (SetupFailed, ClientGone).
	ResumeFrom uint64
	// Delivered reports whether any record was handed to the sink.
	Delivered bool
	// Err is the cause behind SetupFailed, HistoryFailed, Gap and
	// Overflow; nil otherwise.
	Err error
	// Message says why in words, for logs and for transports that show it.
	Message string
}

// Overflow is the error a sink returns when it cannot take what it is
// handed in time (a WebSocket session whose shared queue stayed full):
// the stream ends with Overflow, resuming from ResumeFrom (the first
// record the client did not get; 0: the one after the last record handed
// to the sink).
type OverflowError struct {
	ResumeFrom uint64
	Message    string
}

// Error implements error.
func (e *OverflowError) Error() string { return "sink overflow: " + e.Message }

// Stop is the cause with which a transport cancels a running stream's
// context to end it with a reason of its own (Shutdown, SchemaChanged,
// SchemaRemoved, Unauthorized); any other cancellation is ClientGone.
type Stop struct {
	Reason  Reason
	Message string
}

// Error implements error.
func (s *Stop) Error() string {
	if s.Message != "" {
		return "stream stopped: " + s.Reason.String() + ": " + s.Message
	}
	return "stream stopped: " + s.Reason.String()
}

// Run runs one stream until it ends and returns why. ctx bounds it: its
// cancellation with a *Stop cause ends the stream with that reason; any
// other cancellation means the client went away. Run calls sink only from
// its own goroutine. Run copies *spec when it starts, so the caller may
// change or reuse it afterwards.
//
// An idle watch waits in live, called from here rather than from the
// setup, so that the waiting goroutine's stack stays shallow: the garbage
// collector halves a goroutine's stack only while less than a quarter of
// it is in use, and a watcher spends its life waiting.
func Run(ctx context.Context, eng engine.Engine, spec *Spec, sink Sink) End {
	r := newRunner(ctx, eng, spec, sink)
	defer r.release()
	if end, live := r.setupApart(); !live {
		r.end = end
	} else {
		r.live()
	}
	r.ended()
	return r.end
}

// ended tells the observer how a stream that opened ended.
func (r *runner) ended() {
	if r.opened {
		r.obs.Ended(r.end.Reason.String())
	}
}

// open opens the sink and tells the observer.
func (r *runner) open(o Opening) error {
	if err := r.sink.Open(o); err != nil {
		return err
	}
	r.opened = true
	r.obs.Opened()
	return nil
}

// newRunner is kept out of Run so that the runner lives on the heap, not
// in Run's frame below the waiting live loop.
//
//go:noinline
func newRunner(ctx context.Context, eng engine.Engine, spec *Spec, sink Sink) *runner {
	r := &runner{ctx: ctx, eng: eng, spec: *spec, sink: sink, obs: spec.Observer}
	if spec.PageSize <= 0 {
		r.spec.PageSize = DefaultReplayBatchSize
	}
	if r.obs == nil {
		r.obs = noObserver{}
	}
	r.due, _ = sink.(Deadliner)
	return r
}

// runner is one running stream.
type runner struct {
	ctx  context.Context
	eng  engine.Engine
	spec Spec
	sink Sink
	due  Deadliner
	obs  Observer
	// opened reports that the sink was opened.
	opened bool

	sub      *engine.Subscription
	boundary uint64
	// endSeq is a replay's last deliverable sequence (resolveEnd), nil
	// without an end cursor.
	endSeq *uint64
	beat   <-chan time.Time
	maxDur <-chan time.Time
	// beatTicker and maxTimer drive beat and maxDur; release stops them.
	beatTicker *time.Ticker
	maxTimer   *time.Timer
	// lastSeq is the sequence of the last record handed to the sink;
	// delivered reports whether there was one.
	lastSeq   uint64
	delivered bool
	// liveSince is when the stream went live; pending reports records
	// given to the sink since its last Flush.
	liveSince time.Time
	pending   bool
	// end is the stream's end, set when setup or live returns.
	end End
	// burst is the span of the records given to the sink since its last
	// Flush (nil when none, or tracing is off), burstN their number.
	burst  trace.Span
	burstN int
	// idle is the state of a stream run by Start (nil for Run).
	idle *idleState
}

// traceRecord adds rec, just given to the sink, to the burst's span
// (op tracing.OpReceive for history, OpProcess for live), starting it
// with the burst's first record.
func (r *runner) traceRecord(rec *engine.Record, op string) {
	tr := r.spec.Tracer
	if tr == nil {
		return
	}
	if r.burst == nil {
		r.burst = tr.StartDelivery(r.ctx, op, r.spec.Query.Stream, r.spec.Transport)
	}
	r.burstN++
	if rec.TraceParent != "" && r.burst.IsRecording() {
		tr.Link(r.burst, rec.TraceParent, rec.TraceState, rec.EventType+"@"+strconv.FormatUint(rec.Seq, 10))
	}
}

// traceFlush ends the burst's span once the sink flushed it (err: the
// flush failed).
func (r *runner) traceFlush(err error) {
	if r.burst == nil {
		return
	}
	tracing.Delivered(r.burst, r.burstN, err)
	r.burst, r.burstN = nil, 0
}

// release stops the stream's timers and closes its live subscription,
// and ends a burst's span the stream's end interrupted.
func (r *runner) release() {
	r.traceFlush(r.end.Err)
	if r.beatTicker != nil {
		r.beatTicker.Stop()
	}
	if r.maxTimer != nil {
		r.maxTimer.Stop()
	}
	if r.sub != nil {
		r.sub.Close()
	}
}

// setupApart runs setup in a goroutine of its own and waits for it. The
// setup's calls (the engine's subscription, the sink's opening, the
// history) go deeper than the waiting loop ever does, and a stack that
// grew to 16 kB is halved only while less than a quarter of it is in use:
// run in Run's goroutine, they would leave every idle HTTP watcher with a
// 16 kB stack below the router's frames. The sink is still called by one
// goroutine at a time, in order. A panic or runtime.Goexit in the setup
// is carried over to Run's goroutine, where the server's recovery sees it.
func (r *runner) setupApart() (End, bool) {
	var (
		end      End
		live     bool
		returned bool
		panicked bool
		value    any
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if !returned {
				if value = recover(); value != nil {
					panicked = true
				}
			}
		}()
		end, live = r.setup()
		returned = true
	}()
	<-done
	switch {
	case panicked:
		panic(value)
	case !returned:
		runtime.Goexit()
	}
	return end, live
}

// setup opens the stream and delivers its history. It returns the end of
// a stream that ended there, or live true when the stream goes on live.
func (r *runner) setup() (End, bool) {
	if stop := r.stopped(); stop != nil {
		// Ended before it began (a shutdown under way): open and end at
		// once, as a stream already running would.
		if err := r.open(Opening{}); err != nil {
			return r.sinkFailed(err), false
		}
		return r.stopEnd(stop), false
	}
	if r.spec.Mode == Watch {
		sub, err := r.eng.Subscribe(r.ctx, r.spec.Query, engine.SubscribeOptions{QueueSize: r.spec.QueueSize, Overflow: r.spec.Overflow, BlockTimeout: r.spec.BlockTimeout})
		if err != nil {
			return r.setupFailed(err), false
		}
		r.sub, r.boundary = sub, sub.Boundary()
		if d := r.spec.MaxDuration; d > 0 {
			r.maxTimer = time.NewTimer(d)
			r.maxDur = r.maxTimer.C
			if r.idle != nil {
				r.idle.maxAt = time.Now().Add(d)
			}
		}
	} else {
		last, err := r.eng.LastSeq(r.ctx, r.spec.Query.Stream)
		if err != nil {
			return r.setupFailed(err), false
		}
		r.boundary = last
		if err := r.resolveEnd(); err != nil {
			return r.setupFailed(err), false
		}
	}
	open := Opening{Boundary: r.boundary, EndSeq: r.endSeq}
	if r.sub != nil {
		open.TakeDropped = r.sub.TakeDropped
	}
	if err := r.open(open); err != nil {
		return r.sinkFailed(err), false
	}
	if r.spec.Mode == Watch && r.spec.Heartbeat > 0 {
		if err := r.sink.Heartbeat(); err != nil {
			return r.sinkFailed(err), false
		}
		r.beatTicker = time.NewTicker(r.spec.Heartbeat)
		r.beat = r.beatTicker.C
	}
	if r.spec.Cursors.HasStart() {
		if end, ok := r.history(); !ok {
			return end, false
		}
		if err := r.sink.HistoryDone(); err != nil {
			return r.sinkFailed(err), false
		}
		if r.spec.Mode == Replay {
			return End{Reason: EndOfStream, Delivered: r.delivered}, false
		}
	}
	return End{}, true
}

// resolveEnd fixes the last sequence of a replay with an end cursor,
// against the boundary just read.
func (r *runner) resolveEnd() error {
	c := r.spec.Cursors
	if c.ToSeq == nil && c.ToDate == nil {
		return nil
	}
	end := r.boundary
	if c.ToSeq != nil {
		end = min(end, *c.ToSeq)
	}
	if c.ToDate != nil {
		after, err := r.eng.SeqAfter(r.ctx, r.spec.Query.Stream, *c.ToDate)
		if err != nil {
			return err
		}
		if after != 0 {
			end = min(end, after-1)
		}
	}
	r.endSeq = &end
	return nil
}

// sinkFailed is the end of a stream whose sink failed: an overflow the
// sink reports, else the client is gone.
func (r *runner) sinkFailed(err error) End {
	var o *OverflowError
	if errors.As(err, &o) {
		resume := o.ResumeFrom
		if resume == 0 {
			resume = r.next()
		}
		return End{Reason: Overflow, ResumeFrom: resume, Delivered: r.delivered, Err: err, Message: o.Message}
	}
	return End{Reason: ClientGone}
}

// setupFailed is the end of a stream whose setup failed: a stop that
// caused it wins.
func (r *runner) setupFailed(err error) End {
	if stop := r.stopped(); stop != nil {
		if err := r.open(Opening{}); err != nil {
			return r.sinkFailed(err)
		}
		return r.stopEnd(stop)
	}
	if r.ctx.Err() != nil {
		return End{Reason: ClientGone, Err: err}
	}
	return End{Reason: SetupFailed, Err: err, Message: "the stream could not be set up"}
}

// stopped returns the Stop that ended ctx, or nil.
func (r *runner) stopped() *Stop {
	if r.ctx.Err() == nil {
		return nil
	}
	var s *Stop
	if errors.As(context.Cause(r.ctx), &s) {
		return s
	}
	return nil
}

// ctxEnd is the end of a stream whose context ended.
func (r *runner) ctxEnd() End {
	if stop := r.stopped(); stop != nil {
		return r.stopEnd(stop)
	}
	return End{Reason: ClientGone}
}

// stopEnd is the end for a Stop, resuming after what was delivered.
func (r *runner) stopEnd(s *Stop) End {
	return End{Reason: s.Reason, ResumeFrom: r.next(), Delivered: r.delivered, Message: s.Message}
}

// next is the sequence the client needs next.
func (r *runner) next() uint64 {
	switch {
	case r.delivered:
		return r.lastSeq + 1
	case r.spec.Cursors.FromSeq != nil:
		return max(*r.spec.Cursors.FromSeq, 1)
	case r.spec.Cursors.FromDate != nil:
		return 0 // a date cursor: the client resumes with its date
	default:
		return r.boundary + 1
	}
}

// maxDurationEnd ends the stream for its maximum duration, unless a stop,
// which takes precedence, is also pending.
func (r *runner) maxDurationEnd() End {
	if stop := r.stopped(); stop != nil {
		return r.stopEnd(stop)
	}
	return End{Reason: MaxDuration, ResumeFrom: r.next(), Delivered: r.delivered, Message: "the stream reached its maximum duration"}
}

// interrupted checks, without blocking, whether the stream must end now
// and sends due heartbeats; ok is false with the end when it must.
func (r *runner) interrupted() (End, bool) {
	for {
		select {
		case <-r.ctx.Done():
			return r.ctxEnd(), false
		default:
		}
		select {
		case <-r.maxDur:
			return r.maxDurationEnd(), false
		case <-r.beat:
			if err := r.sink.Heartbeat(); err != nil {
				return r.sinkFailed(err), false
			}
			continue
		default:
		}
		return End{}, true
	}
}

// wait pauses for d while serving heartbeats and interrupts.
func (r *runner) wait(d time.Duration) (End, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return r.ctxEnd(), false
		case <-r.maxDur:
			return r.maxDurationEnd(), false
		case <-r.beat:
			if err := r.sink.Heartbeat(); err != nil {
				return r.sinkFailed(err), false
			}
		case <-t.C:
			return End{}, true
		}
	}
}

// selected applies the spec's WHERE predicate and sampling.
func (r *runner) selected(rec *engine.Record) bool {
	if r.spec.Where != nil && !r.spec.Where.Match(rec) {
		return false
	}
	return r.spec.Sample == nil || r.spec.Sample.Keep()
}

// historyRange is the stored range the history phase reads.
func (r *runner) historyRange() engine.Range {
	c := r.spec.Cursors
	rng := engine.Range{ToSeq: r.boundary}
	if r.endSeq != nil {
		rng.ToSeq = min(rng.ToSeq, *r.endSeq)
	}
	if c.FromSeq != nil {
		rng.FromSeq = *c.FromSeq
	}
	if c.FromDate != nil {
		rng.FromTime = *c.FromDate
	}
	if c.ToSeq != nil && *c.ToSeq < rng.ToSeq {
		rng.ToSeq = *c.ToSeq
	}
	if c.ToDate != nil {
		rng.ToTime = *c.ToDate
	}
	return rng
}

// history delivers the stored records within the cursors and the
// boundary, with the historical cap and its lookahead: the stream ends
// with HistoryLimit only when a record beyond the cap exists. ok reports
// that the history is complete and the stream goes on.
func (r *runner) history() (End, bool) {
	rng := r.historyRange()
	if rng.FromSeq > rng.ToSeq {
		return End{}, true
	}
	reader, err := r.eng.History(r.ctx, r.spec.Query, rng)
	if err != nil {
		return r.historyFailed(err), false
	}
	defer reader.Close()
	delivered := 0
	capped := r.spec.HistoryCap > 0
	for {
		if end, ok := r.interrupted(); !ok {
			return end, false
		}
		recs, done, err := reader.Next(r.ctx, r.spec.PageSize)
		if err != nil {
			return r.historyFailed(err), false
		}
		r.obs.HistoryPage()
		for _, rec := range recs {
			if !r.selected(rec) {
				continue
			}
			if capped && delivered == r.spec.HistoryCap {
				err := r.sink.Flush()
				r.traceFlush(err)
				if err != nil {
					return r.sinkFailed(err), false
				}
				return End{Reason: HistoryLimit, ResumeFrom: rec.Seq, Delivered: r.delivered,
					Message: fmt.Sprintf("the historical cap of %d notifications was reached", r.spec.HistoryCap)}, false
			}
			if err := r.sink.Record(rec, History); err != nil {
				return r.sinkFailed(err), false
			}
			r.traceRecord(rec, tracing.OpReceive)
			r.obs.Delivered(false)
			r.lastSeq, r.delivered = rec.Seq, true
			delivered++
		}
		err = r.sink.Flush()
		r.traceFlush(err)
		if err != nil {
			return r.sinkFailed(err), false
		}
		if done {
			return End{}, true
		}
		if d := r.spec.PageDelay; d > 0 {
			if end, ok := r.wait(d); !ok {
				return end, false
			}
		}
	}
}

// historyFailed is the end of a stream whose history could not be read:
// a stop or the client's departure explain it first.
func (r *runner) historyFailed(err error) End {
	if r.ctx.Err() != nil {
		end := r.ctxEnd()
		end.Err = err
		return end
	}
	msg := "fetching stored notifications failed"
	if errors.Is(err, engine.ErrUnavailable) {
		msg = "the notification backend is unavailable; reconnect later from the last received sequence"
	}
	return End{Reason: HistoryFailed, ResumeFrom: r.next(), Delivered: r.delivered, Err: err, Message: msg}
}

// live delivers live records until the stream ends.
func (r *runner) live() {
	r.liveSince = time.Now()
	c := r.sub.C()
	for {
		select {
		case <-r.ctx.Done():
			r.liveEnd(liveCanceled, nil)
			return
		default:
		}
		var why liveEvent
		var rec *engine.Record
		select {
		case <-r.ctx.Done():
			why = liveCanceled
		case <-r.maxDur:
			why = liveMaxDuration
		case <-r.beat:
			why = liveBeat
		case rec = <-c:
			why = liveRec
		case <-r.sub.Done():
			why = liveSubEnded
		}
		if !r.liveEnd(why, rec) {
			return
		}
		// A burst: the records the channel already holds are taken
		// without a select each, at most a channel's worth before the
		// select again sees the end of the stream's duration or a
		// heartbeat (cancellation is checked before each).
		for n := cap(c); why == liveRec && n > 0 && len(c) > 0 && r.ctx.Err() == nil; n-- {
			if !r.liveEnd(liveRec, <-c) {
				return
			}
		}
	}
}

// liveEvent is what woke the live loop.
type liveEvent uint8

const (
	liveCanceled liveEvent = iota
	liveMaxDuration
	liveBeat
	liveRec
	liveSubEnded
)

// liveEnd handles what woke the live loop. It reports whether the stream
// goes on; when it does not, r.end holds its end. It is apart from the
// loop so that the loop's frame, on the stack of a waiting stream, holds
// no End (see Run).
//
//go:noinline
func (r *runner) liveEnd(why liveEvent, rec *engine.Record) bool {
	switch why {
	case liveCanceled:
		r.end = r.ctxEnd()
	case liveMaxDuration:
		r.end = r.maxDurationEnd()
	case liveBeat:
		if err := r.sink.Heartbeat(); err != nil {
			r.end = r.sinkFailed(err)
		} else {
			return true
		}
	case liveRec:
		end, ok := r.liveRecord(rec, len(r.sub.C()))
		if ok {
			return true
		}
		r.end = end
	default:
		r.end = r.subscriptionEnded(r.sub.Err())
	}
	return false
}

// liveRecord hands one live record to the sink, and flushes when nothing
// else waits (queued is what the channel held after it). It is apart from
// live's loop to keep the waiting frame small (see Run).
func (r *runner) liveRecord(rec *engine.Record, queued int) (End, bool) {
	// The lag of a record counts from its arrival, or from when the
	// stream went live for those it buffered during history.
	since := rec.LiveAt
	if since.Before(r.liveSince) {
		since = r.liveSince
	}
	maxLag := r.spec.MaxLag
	if maxLag > 0 && time.Since(since) > maxLag {
		return End{Reason: Lagging, ResumeFrom: rec.Seq, Delivered: r.delivered,
			Message: fmt.Sprintf("the client did not read for %s: its oldest undelivered notification waited longer than that", maxLag)}, false
	}
	if r.selected(rec) {
		if maxLag > 0 && r.due != nil {
			r.due.Due(since.Add(maxLag))
		}
		if err := r.sink.Record(rec, Live); err != nil {
			return r.sinkFailed(err), false
		}
		r.traceRecord(rec, tracing.OpProcess)
		r.obs.Delivered(true)
		r.lastSeq, r.delivered, r.pending = rec.Seq, true, true
	}
	// Flush when nothing else is waiting: a burst goes out in one write,
	// a single notification at once, also when the burst ends with
	// records the predicate or the sample leaves out. The channel holds
	// only a few records; the subscription's spill buffer may hold more
	// of the same burst.
	if r.pending && queued == 0 && r.sub.Len() == 0 {
		err := r.sink.Flush()
		r.traceFlush(err)
		if err != nil {
			return r.sinkFailed(err), false
		}
		r.pending = false
	}
	return End{}, true
}

// subscriptionEnded maps the engine's end of the live subscription.
func (r *runner) subscriptionEnded(err error) End {
	if stop := r.stopped(); stop != nil {
		return r.stopEnd(stop)
	}
	end := End{ResumeFrom: r.next(), Delivered: r.delivered, Err: err}
	switch {
	case errors.Is(err, engine.ErrClosed):
		end.Reason, end.Message = Shutdown, "the backend closed"
	case errors.Is(err, engine.ErrOverflow):
		end.Reason = Overflow
		end.Message = fmt.Sprintf("the watcher fell more than %d notifications behind", r.queueSize())
	case errors.Is(err, engine.ErrGap):
		end.Reason, end.Message = Gap, "the live feed lost its connection to the backend"
	default:
		end.Reason, end.Message = Gap, "the live feed of this watch was interrupted"
	}
	return end
}

// queueSize is the live queue bound in force.
func (r *runner) queueSize() int {
	if r.spec.QueueSize > 0 {
		return r.spec.QueueSize
	}
	return engine.DefaultLiveQueueSize
}
