package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/query"
	"github.com/herald-gateway/herald/stream"
)

// Subscription states.
const (
	subLive   int32 = iota // delivering
	subEnding              // its final frame is queued behind its events
	subEnded               // ended; its frames are gone
)

// subscription is one named subscription (or replay) of a session, one
// generation of its name. Its stream runs with the subscription as its
// sink (stream.Start: a goroutine runs it only while it has something to
// do).
type subscription struct {
	s         *Session
	name      string
	gen       uint64
	eventType string
	topic     string
	replay    bool
	dropping  bool
	cursor    bool // a start cursor: history_completed follows history
	// needsAuth: an anonymous client could not open it, so it ends when
	// the session's credentials expire.
	needsAuth bool
	cancel    context.CancelCauseFunc
	state     atomic.Int32
	// mu orders the subscribe reply with a concurrent unsubscribe.
	mu sync.Mutex

	// Set up before the stream runs, read by its goroutine only.
	reply jsontext.Value // the subscribe request's id
	// schema is the event type's schema (GET /api/v1/schema/{event_type})
	// as it was at subscribe time, for the reply only (dropped once it is
	// sent).
	schema json.RawMessage
	// viewKey and render render its records in its payload view, once
	// per record and view for every subscriber.
	viewKey   any
	render    func(*engine.Record) ([]byte, error)
	frameMax  int
	eventsMax int
	// overhead is the size of one of its history frames without events
	// (a live frame's is shorter: see frameOverhead).
	overhead int
	opened   chan error // the subscribe waits on it
	// wasOpened: Open ran (the reply went out); guarded by mu.
	wasOpened bool
	// uncounted: it no longer counts against max_subscriptions (the
	// client unsubscribed it, or its stream ended); guarded by s.mu.
	uncounted bool
	boundary  uint64

	// The frame being built (by the goroutine running the stream).
	buf         []byte
	n           int
	first, last uint64
	phase       stream.Phase
	dropped     uint64
	takeDropped func() uint64
	// batch, when the subscription asked for containers, collects each
	// burst of records into container frames (nil: events frames).
	batch *stream.Batcher
}

// live reports whether the subscription still delivers (its frames may
// be written).
func (sub *subscription) live(uint64) bool { return sub.state.Load() != subEnded }

// handed is called by the writer once a frame of the subscription went
// to the transport.
func (sub *subscription) handed(e queued) {
	if e.final {
		sub.state.Store(subEnded)
		sub.s.freeName(sub)
	}
}

// id renders a notification id of the subscription's event type.
func (sub *subscription) id(seq uint64) string {
	return sub.eventType + "@" + strconv.FormatUint(seq, 10)
}

// subscribe opens a subscription (replay false) or a bounded replay.
func (s *Session) subscribe(req *request, replay bool) {
	allowed := []string{"name", "event_type", "identifier", "where", "from_id", "from_date", "mode", "sample_rate", "sample_seed", "format", "batch"}
	invalid := CodeInvalidWatch
	if replay {
		allowed = []string{"name", "event_type", "identifier", "where", "from_id", "from_date", "to_id", "to_date", "sample_rate", "sample_seed", "format", "batch"}
		invalid = CodeInvalidReplay
	}
	if err := req.fields(allowed...); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	o, err := subscribeOptionsOf(req)
	if err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	s.open(req.id, o, replay, invalid)
}

// subscribeOptions are the fields of a subscribe, replay or CREATE
// SUBSCRIPTION besides the watch request.
type subscribeOptions struct {
	name       string
	body       []byte // the watch/replay request body
	dropping   bool
	sampleRate float64
	hasRate    bool
	seed       *uint64
	format     string
	// batch is the raw batch option (nil: none).
	batch json.RawMessage
	// unpinned, when not nil, refuses the subscription once the stream's
	// access is granted (a CREATE SUBSCRIPTION whose WHERE leaves a
	// required field without a value): a *query.StatementError.
	unpinned error
}

// subscribeOptionsOf reads a subscribe or replay request.
func subscribeOptionsOf(req *request) (subscribeOptions, error) {
	var o subscribeOptions
	name, ok, err := req.str("name")
	if err != nil {
		return o, err
	}
	if !ok || name == "" {
		return o, errors.New(`the request needs a "name" (a non-empty string naming the subscription in this session)`)
	}
	o.name = name
	mode, ok, err := req.str("mode")
	switch {
	case err != nil:
		return o, err
	case !ok || mode == "blocking":
	case mode == "dropping":
		o.dropping = true
	default:
		return o, fmt.Errorf(`mode must be "blocking" (the default) or "dropping", got %q`, mode)
	}
	if v, ok := req.members["sample_rate"]; ok && v.Kind() != 'n' {
		if v.Kind() != '0' {
			return o, errors.New("sample_rate must be a number between 0 and 1")
		}
		r, err := strconv.ParseFloat(string(v), 64)
		if err != nil || r < 0 || r > 1 {
			return o, fmt.Errorf("sample_rate must be a number between 0 and 1, got %s", v)
		}
		o.sampleRate, o.hasRate = r, true
	}
	if v, ok := req.members["sample_seed"]; ok && v.Kind() != 'n' {
		seed, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return o, fmt.Errorf("sample_seed must be a non-negative integer, got %s", v)
		}
		o.seed = &seed
	}
	if f, ok, err := req.str("format"); err != nil {
		return o, err
	} else if ok {
		o.format = f
	}
	if v, ok := req.members["batch"]; ok && v.Kind() != 'n' {
		if v.Kind() != '{' {
			return o, errors.New(`batch must be an object with max_records and max_frame_bytes`)
		}
		o.batch = json.RawMessage(v)
	}
	o.body = requestBody(req.members, "event_type", "identifier", "where", "from_id", "from_date", "to_id", "to_date")
	return o, nil
}

// requestBody builds the JSON body of an HTTP request from a frame's
// members, so that a frame is validated exactly as the HTTP API
// validates its body. A missing identifier is the empty one.
func requestBody(members map[string]jsontext.Value, keys ...string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	hasIdent := false
	for _, k := range keys {
		v, ok := members[k]
		if !ok {
			continue
		}
		if k == "identifier" {
			hasIdent = true
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.Write(v)
	}
	if !hasIdent {
		if !first {
			b.WriteByte(',')
		}
		b.WriteString(`"identifier":{}`)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// sampler keeps each selected record with probability rate.
type sampler struct {
	rate float64
	rng  *rand.Rand
}

// Keep implements stream.Sampler.
func (p *sampler) Keep() bool { return p.rate >= 1 || (p.rate > 0 && p.rng.Float64() < p.rate) }

// NewSampleSource returns the pseudo-random source of a subscription
// with sample_seed seed: the same seed draws the same sequence (PCG, the
// seed and its bitwise complement as its two words), so that a client
// can reproduce which notifications a sample kept.
func NewSampleSource(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, ^seed)) }

// open validates a subscription request and starts it; the reply is
// sent when its stream has joined the backend (or failed to).
func (s *Session) open(reqID jsontext.Value, o subscribeOptions, replay bool, invalid string) {
	fail := func(code, msg string) { s.send(s.replyError(reqID, code, msg)) }
	set := s.deps.Settings()
	mode := stream.Watch
	if replay {
		mode = stream.Replay
	}
	if len(o.name) > maxEchoBytes {
		fail("INVALID_REQUEST", fmt.Sprintf("the subscription name is %d bytes long; a name is at most %d bytes, since every frame of the subscription carries it", len(o.name), maxEchoBytes))
		return
	}
	s.mu.Lock()
	_, dup := s.subs[o.name]
	full := s.running >= s.set.Limits.MaxSubscriptions
	s.mu.Unlock()
	switch {
	case dup:
		fail("DUPLICATE_NAME", "the session already has a subscription named '"+o.name+"'; unsubscribe it first or choose another name")
		return
	case full:
		fail("LIMIT_EXCEEDED", fmt.Sprintf("max_subscriptions (%d): the session has that many subscriptions and replays running", s.set.Limits.MaxSubscriptions))
		return
	}
	req, err := notification.ParseRequest(o.body)
	if err != nil {
		code, msg, _ := ErrorCode(invalid, err)
		fail(code, msg)
		return
	}
	if o.format != "" {
		req.Format = &o.format
	}
	req.Batch = o.batch
	ident := s.identity.Load()
	p, err := stream.Prepare(set.Registry, req, mode, set.Streams, stream.Checks{
		Read: func(sc *notification.Schema) error {
			if denied := set.Policy.DecideStream(sc.Name, ident, auth.OpRead); denied != nil {
				return denied
			}
			if o.unpinned != nil {
				// After the access check, as subscribe's missing field.
				return o.unpinned
			}
			return nil
		},
		Destination: func(sc *notification.Schema, filter *notification.Filter) error {
			if set.Destinations == nil {
				return nil
			}
			if denied := set.Destinations(s.ctx, sc, filter, ident, s.id); denied != nil {
				return denied
			}
			return nil
		},
	})
	if err != nil {
		var (
			denied *auth.Error
			se     *query.StatementError
		)
		switch {
		case errors.As(err, &se):
			s.statementError(reqID, err, "INVALID_WATCH_REQUEST")
		case errors.As(err, &denied):
			fail(s.denial(denied))
		default:
			code, msg, _ := ErrorCode(invalid, err)
			fail(code, msg)
		}
		return
	}
	sc, spec := p.Schema, p.Spec
	spec.Heartbeat = 0 // the session pings instead
	spec.Observer = s.obs.Stream(sc, userOf(ident))
	spec.Tracer, spec.Transport = s.deps.Tracing.Tracer, "websocket"
	if o.hasRate && o.sampleRate < 1 {
		seed := rand.Uint64()
		if o.seed != nil {
			seed = *o.seed
		}
		spec.Sample = &sampler{rate: o.sampleRate, rng: NewSampleSource(seed)}
	}
	if o.dropping {
		spec.Overflow = engine.DropOnOverflow
	} else {
		spec.Overflow = engine.BlockOnOverflow
		spec.BlockTimeout = s.set.Limits.BlockingTimeout
	}
	// The reply carries the schema: a subscription whose reply would not
	// fit in a frame is refused before anything opens (with the largest
	// generation and boundary the reply can carry).
	schema := json.RawMessage(mustJSON(sc.Public()))
	topic := p.Topic()
	if f, ok := s.replyFits(reqID, openingFields(o.name, math.MaxUint64, topic, sc.Name+"@"+strconv.FormatUint(math.MaxUint64, 10), schema),
		"the subscribe reply (its name, topic and the event type's schema)", "raise session.max_frame_bytes"); !ok {
		s.send(f)
		return
	}
	s.mu.Lock()
	s.nextGen++
	sub := &subscription{
		s: s, name: o.name, gen: s.nextGen, eventType: sc.Name, topic: topic,
		replay: replay, dropping: o.dropping, cursor: spec.Cursors.HasStart(),
		reply: reqID, schema: schema,
		frameMax: s.set.Limits.MaxFrameBytes, eventsMax: s.set.Limits.MaxFrameEvents,
	}
	sub.viewKey, sub.render = p.Renderer(set.Registry)
	if p.Batch != nil {
		// A container frame carries the ids and the container: leave
		// room for the ids within the session's frame bound.
		sub.batch = stream.NewBatcher(p.BatchView, *p.Batch, sub.frameMax/2)
	}
	sub.overhead = len(sub.frameHeader(nil, stream.History)) + len("]}")
	opened := make(chan error, 1)
	sub.opened = opened
	sub.needsAuth = set.Policy.DecideStream(sc.Name, nil, auth.OpRead) != nil
	s.running++
	s.subsWG.Add(1)
	s.mu.Unlock()
	// One context, the set's: a shutdown or reload ends it with a Stop,
	// the session with its own cause (unsubscribe, expired credentials).
	ctx, cancel, leave := s.deps.Streams.JoinCancel(s.ctx, p.SetKey())
	sub.cancel = cancel
	s.deps.Counters.subs.Add(1)
	// No goroutine waits for an idle subscription (stream.Start).
	stream.Start(ctx, s.deps.Engine, &spec, sub, func(end stream.End) {
		s.finish(sub, end)
		s.deps.Counters.subs.Add(-1)
		leave()
		s.subsWG.Done()
	})
	if err := <-opened; err != nil {
		switch {
		case s.ctx.Err() != nil:
			// The client went away (or the server is shutting down)
			// while the subscription was set up: nobody to answer, and
			// nothing went wrong.
			s.log().Debug("subscription setup ended with the session", "name", o.name, "error", err)
		case errors.Is(err, engine.ErrUnavailable):
			fail("SERVICE_UNAVAILABLE", "the notification backend is unavailable; retry later")
		default:
			s.log().Error("subscription setup failed", "name", o.name, "error", err)
			fail("INTERNAL_ERROR", "the subscription could not be set up")
		}
	}
}

// Open sends the reply that opens the subscription.
func (sub *subscription) Open(o stream.Opening) error {
	s := sub.s
	sub.boundary = o.Boundary
	sub.takeDropped = o.TakeDropped
	sub.mu.Lock()
	defer sub.mu.Unlock()
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[string]*subscription{}
	}
	s.subs[sub.name] = sub
	delete(s.ended, sub.name)
	s.mu.Unlock()
	s.send(replyOK(sub.reply, openingFields(sub.name, sub.gen, sub.topic, sub.id(o.Boundary), sub.schema)))
	sub.schema, sub.reply = nil, nil
	sub.wasOpened = true
	sub.opened <- nil
	sub.opened = nil
	return nil
}

// openingFields are the fields of the reply that opens a subscription.
func openingFields(name string, gen uint64, topic, boundary string, schema json.RawMessage) map[string]any {
	return map[string]any{"name": name, "generation": gen, "topic": topic, "boundary": boundary, "schema": schema}
}

// Record adds one CloudEvent to the frame being built, or, for a
// subscription that asked for containers, the record to the burst's
// container.
func (sub *subscription) Record(rec *engine.Record, ph stream.Phase) error {
	if sub.batch == nil {
		return sub.record(rec, ph)
	}
	if n, pending := sub.batch.Pending(); n > 0 && pending != ph {
		if err := sub.emitBatch(); err != nil {
			return err
		}
	}
	if sub.batch.Add(rec, ph) {
		return sub.emitBatch()
	}
	return nil
}

// emitBatch queues the waiting burst as container frames (and the
// records that travel on their own in events frames).
func (sub *subscription) emitBatch() error {
	if sub.batch == nil {
		return nil
	}
	n, ph := sub.batch.Pending()
	if n == 0 {
		return nil
	}
	for _, pc := range sub.batch.Take() {
		if pc.Container == nil {
			if err := sub.record(pc.Records[0], ph); err != nil {
				return err
			}
			continue
		}
		if err := sub.flushFrame(); err != nil {
			return err
		}
		v := sub.batch.View()
		b := []byte(`{"type":"batch","sub":`)
		b = jsonstr.Append(b, sub.name)
		b = append(b, `,"gen":`...)
		b = strconv.AppendUint(b, sub.gen, 10)
		b = append(b, `,"phase":"`...)
		b = append(b, ph.String()...)
		b = append(b, `","format":`...)
		b = jsonstr.Append(b, v.Name())
		b = append(b, `,"heraldformat":`...)
		b = jsonstr.Append(b, v.Format().String())
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(len(pc.Records)), 10)
		b = append(b, `,"ids":[`...)
		for i, r := range pc.Records {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, sub.id(r.Seq))
		}
		b = append(b, `],"payload":`...)
		b = append(b, pc.Container...)
		b = append(b, '}')
		f := queued{sub: sub, gen: sub.gen, data: b, first: pc.Records[0].Seq, last: pc.Records[len(pc.Records)-1].Seq}
		if len(b) > sub.frameMax {
			// The ids pushed it over: the records go one by one.
			for _, r := range pc.Records {
				if err := sub.record(r, ph); err != nil {
					return err
				}
			}
			continue
		}
		var err error
		if sub.dropping {
			err = sub.enqueueDropping(f, len(pc.Records))
		} else {
			err = sub.enqueue(f)
		}
		if err != nil {
			return err
		}
	}
	return sub.flushFrame()
}

// record adds one record's CloudEvent to the frame being built.
func (sub *subscription) record(rec *engine.Record, ph stream.Phase) error {
	if sub.n > 0 && ph != sub.phase {
		if err := sub.flushFrame(); err != nil {
			return err
		}
	}
	sub.phase = ph
	data, err := rec.Rendered(sub.viewKey, sub.render)
	if err != nil || len(data)+sub.frameOverhead(ph) > sub.frameMax {
		if err := sub.flushFrame(); err != nil {
			return err
		}
		reason := "too_large"
		if err != nil {
			reason = "unrenderable"
			sub.s.log().Error("CloudEvent creation failed", "sequence", rec.Seq, "error", err)
		}
		f := mustJSON(map[string]any{"type": "skipped", "sub": sub.name, "gen": sub.gen, "ids": []string{sub.id(rec.Seq)}, "reason": reason})
		return sub.enqueue(queued{sub: sub, gen: sub.gen, data: f})
	}
	if sub.n > 0 && len(sub.buf)+1+len(data)+2 > sub.frameMax {
		if err := sub.flushFrame(); err != nil {
			return err
		}
	}
	if sub.n == 0 {
		sub.buf = sub.frameHeader(sub.buf[:0], ph)
		sub.first = rec.Seq
	} else {
		sub.buf = append(sub.buf, ',')
	}
	sub.buf = append(sub.buf, data...)
	sub.n++
	sub.last = rec.Seq
	if sub.n >= sub.eventsMax {
		return sub.flushFrame()
	}
	return nil
}

// frameOverhead is the size of an events frame of phase ph without its
// events: its header and the closing "]}".
func (sub *subscription) frameOverhead(ph stream.Phase) int {
	if ph == stream.History {
		return sub.overhead
	}
	return sub.overhead - len("history") + len("live")
}

// frameHeader appends the start of an events frame of phase ph.
func (sub *subscription) frameHeader(b []byte, ph stream.Phase) []byte {
	b = append(b, `{"type":"events","sub":`...)
	b = jsonstr.Append(b, sub.name)
	b = append(b, `,"gen":`...)
	b = strconv.AppendUint(b, sub.gen, 10)
	if ph == stream.History {
		return append(b, `,"phase":"history","events":[`...)
	}
	return append(b, `,"phase":"live","events":[`...)
}

// Flush queues the frame being built (and the burst's containers).
func (sub *subscription) Flush() error {
	if err := sub.emitBatch(); err != nil {
		return err
	}
	return sub.flushFrame()
}

// Heartbeat does nothing: the session pings its client.
func (sub *subscription) Heartbeat() error { return nil }

// HistoryDone queues history_completed behind the history frames (not
// for replays, which end with subscription_ended instead).
func (sub *subscription) HistoryDone() error {
	if err := sub.emitBatch(); err != nil {
		return err
	}
	if err := sub.flushFrame(); err != nil || sub.replay {
		return err
	}
	f := mustJSON(map[string]any{"type": "history_completed", "sub": sub.name, "gen": sub.gen, "last_id": sub.id(sub.boundary)})
	return sub.enqueue(queued{sub: sub, gen: sub.gen, data: f})
}

// flushFrame queues the frame being built, if any.
func (sub *subscription) flushFrame() error {
	if sub.n == 0 {
		return nil
	}
	sub.buf = append(sub.buf, "]}"...)
	f := queued{sub: sub, gen: sub.gen, data: bytes.Clone(sub.buf), first: sub.first, last: sub.last}
	n := sub.n
	sub.n, sub.first, sub.last = 0, 0, 0
	if cap(sub.buf) > 1<<20 {
		sub.buf = nil
	}
	if sub.dropping {
		return sub.enqueueDropping(f, n)
	}
	return sub.enqueue(f)
}

// enqueue queues a frame of a BLOCKING subscription (and the other frames
// of every subscription), waiting for room at most blocking_timeout_ms;
// beyond it the subscription ends with overflow, resuming from the
// frame's first event.
func (sub *subscription) enqueue(f queued) error {
	s := sub.s
	if s.q.push(s.ctx, f, s.set.Limits.BlockingTimeout) {
		return nil
	}
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return &stream.OverflowError{ResumeFrom: f.first,
		Message: fmt.Sprintf("the session queue stayed full for %s: the client reads too slowly", s.set.Limits.BlockingTimeout)}
}

// enqueueDropping queues a frame of a DROPPING subscription, or discards
// and counts its n events when the frame does not fit in the session
// queue (by frames or by bytes, as for a BLOCKING one); the count goes
// out in a dropped frame before the next events frame.
func (sub *subscription) enqueueDropping(f queued, n int) error {
	s := sub.s
	if sub.takeDropped != nil {
		if n := sub.takeDropped(); n > 0 {
			sub.dropped += n
			s.obs.DroppedRows(int(n))
		}
	}
	if s.q.full(len(f.data)) {
		sub.dropped += uint64(n)
		s.deps.Counters.drops.Add(uint64(n))
		s.obs.DroppedRows(n)
		return nil
	}
	if sub.dropped > 0 {
		// Under mu, so that an unsubscribe's reply is never followed by it.
		sub.mu.Lock()
		if sub.state.Load() == subEnded {
			sub.mu.Unlock()
			return nil
		}
		s.send(mustJSON(map[string]any{"type": "dropped", "sub": sub.name, "gen": sub.gen, "count": sub.dropped}))
		sub.mu.Unlock()
		sub.dropped = 0
	}
	if ok, _ := s.q.tryPush(f, false); !ok {
		sub.dropped += uint64(n)
		s.deps.Counters.drops.Add(uint64(n))
		s.obs.DroppedRows(n)
	}
	return nil
}

// protocolReason is the subscription_ended reason of an end.
func protocolReason(r stream.Reason) string {
	switch r {
	case stream.Overflow, stream.Lagging:
		return "overflow"
	case stream.Gap, stream.HistoryFailed:
		return "gap"
	case stream.HistoryLimit:
		return "history_limit"
	case stream.MaxDuration:
		return "max_duration"
	case stream.Shutdown:
		return "server_shutdown"
	case stream.SchemaChanged:
		return "schema_changed"
	case stream.SchemaRemoved:
		return "schema_removed"
	case stream.Unauthorized:
		return "unauthorized"
	}
	return "end_of_stream"
}

// finish sends the end of a subscription whose stream returned.
func (s *Session) finish(sub *subscription, end stream.End) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if !sub.wasOpened {
		// The reply was never sent: the subscribe answers the failure.
		err := end.Err
		if err == nil {
			err = errors.New("the stream ended before it opened: " + end.Reason.String())
		}
		sub.opened <- err
		s.mu.Lock()
		s.uncount(sub)
		s.mu.Unlock()
		return
	}
	state := sub.state.Load()
	if state == subEnded || end.Reason == stream.ClientGone {
		// Deleted by the client, or the session is gone: nothing to say.
		sub.state.Store(subEnded)
		s.forget(sub, false)
		return
	}
	frame := map[string]any{"type": "subscription_ended", "sub": sub.name, "gen": sub.gen, "reason": protocolReason(end.Reason)}
	if msg := endMessage(end); msg != "" {
		frame["message"] = msg
	}
	switch end.Reason {
	case stream.EndOfStream, stream.HistoryLimit, stream.MaxDuration:
		// A normal end follows the subscription's frames.
		if end.Reason != stream.EndOfStream && end.ResumeFrom > 0 {
			frame["resume_from_id"] = sub.id(end.ResumeFrom)
		}
		_ = sub.flushFrame()
		sub.state.Store(subEnding)
		// It stops counting against max_subscriptions before its final
		// frame can be written: a client that reads the frame may open
		// another subscription at once.
		s.forget(sub, true)
		s.q.tryPush(queued{sub: sub, gen: sub.gen, data: mustJSON(frame), final: true}, true)
		return
	}
	// Any other end overtakes the subscription's queued frames, which are
	// dropped: the resume id covers them and the frame being built.
	sub.state.Store(subEnded)
	resume := end.ResumeFrom
	if first := s.q.purge(sub); first != 0 && (resume == 0 || first < resume) {
		resume = first
	}
	if sub.n > 0 && (resume == 0 || sub.first < resume) {
		resume = sub.first
	}
	sub.n = 0
	if resume > 0 {
		frame["resume_from_id"] = sub.id(resume)
	}
	s.forget(sub, false)
	s.send(mustJSON(frame))
}

// endMessage is the human-readable message of an end.
func endMessage(end stream.End) string {
	switch end.Reason {
	case stream.EndOfStream:
		return "Stream completed"
	case stream.Shutdown:
		return "Server is shutting down gracefully"
	case stream.SchemaChanged:
		return "The event type's schema changed; resubscribe from resume_from_id to continue under the new schema"
	case stream.SchemaRemoved:
		return "The event type was removed from the configuration"
	}
	return end.Message
}

// forget takes an ended subscription off the session's list; when
// pending, its name stays taken until its final frame is written.
func (s *Session) forget(sub *subscription, pending bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uncount(sub)
	if s.subs[sub.name] == sub && !pending {
		delete(s.subs, sub.name)
		s.endedName(sub.name)
	}
}

// uncount stops counting sub against max_subscriptions (once); s.mu is
// held.
func (s *Session) uncount(sub *subscription) {
	if !sub.uncounted {
		sub.uncounted = true
		s.running--
	}
}

// endedName records that the server ended the subscription named name;
// s.mu is held.
func (s *Session) endedName(name string) {
	if s.ended == nil {
		s.ended = map[string]bool{}
	}
	s.ended[name] = true
}

// freeName frees the name of a subscription whose final frame was
// written.
func (s *Session) freeName(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs[sub.name] == sub {
		delete(s.subs, sub.name)
		s.endedName(sub.name)
	}
}

// unsubscribe stops a subscription at once and discards its queued
// frames; nothing about that generation follows the reply.
func (s *Session) unsubscribe(req *request) {
	if err := req.fields("name"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	name, ok, err := req.str("name")
	if err != nil || !ok {
		s.send(s.replyError(req.id, "INVALID_REQUEST", `unsubscribe needs a "name" (a string)`))
		return
	}
	s.mu.Lock()
	sub := s.subs[name]
	wasEnded := s.ended[name]
	if sub == nil {
		delete(s.ended, name)
	}
	s.mu.Unlock()
	switch {
	case sub == nil && wasEnded:
		s.send(replyOK(req.id, map[string]any{"name": name}))
		return
	case sub == nil:
		s.send(s.replyError(req.id, "UNKNOWN_SUBSCRIPTION", "the session has no subscription named '"+name+"'"))
		return
	}
	sub.mu.Lock()
	gen := sub.gen
	sub.state.Store(subEnded)
	sub.cancel(errors.New("unsubscribed"))
	s.q.purge(sub)
	s.mu.Lock()
	if s.subs[name] == sub {
		delete(s.subs, name)
	}
	// Stopped: its place is free for the next subscribe, although its
	// stream may take a moment to return.
	s.uncount(sub)
	s.mu.Unlock()
	sub.mu.Unlock()
	s.send(replyOK(req.id, map[string]any{"name": name, "generation": gen}))
}

// endSubscriptions waits for the subscriptions of a closing session to
// end (their contexts end with the session's).
func (s *Session) endSubscriptions() {
	s.subsWG.Wait()
}

// userOf is the user of an identity ("" when anonymous).
func userOf(id *auth.Identity) string {
	if id == nil {
		return ""
	}
	return id.Username
}
