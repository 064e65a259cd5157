package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/trace"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/stream"
	"github.com/herald-gateway/herald/tracing"
)

// This file is the producers of a session: credit, whole-batch
// validation before anything is stored, pipelined batches with one
// terminal reply per batch in order, suspension while the backend is
// unavailable.
//
// Atomicity: a batch is validated as a whole first, so `not_admitted`
// stores nothing. Once admitted its notifications are published with
// pipelined asynchronous publishes where the engine supports them
// (engine.BatchPublisher); nats-server's atomic batch publish (2.12)
// would also make a backend failure part-way all-or-nothing, but it needs
// every stream to allow atomic publishes, caps a batch at 1,000 messages
// and commits through one server-side staging step per batch, and herald
// already reports exactly which notifications were stored (`failed`
// with their ids) or that it cannot know (`unknown`); so herald uses
// plain asynchronous publishes.

// producerPipeline bounds the batches of one producer being published at
// once; batches beyond it wait (and close_producer refuses them).
const producerPipeline = 4

// producers are the producers of one session.
type producers struct {
	s       *Session
	mu      sync.Mutex
	m       map[string]*producer
	bytes   int64 // unanswered batch bytes
	suspend bool  // the backend is unavailable
	wg      sync.WaitGroup
}

// producer is one open producer.
type producer struct {
	p         *producers
	name      string
	eventType string
	schema    *notification.Schema
	credit    int
	maxBatch  int
	ctx       context.Context // ends when a reload ends the producer
	leave     func()

	mu       sync.Mutex
	inflight int      // batches awaiting their outcome
	waiting  []*batch // admitted, not yet publishing
	active   int      // batches publishing
	// tail is closed once the last terminal reply queued so far has been
	// sent: every reply about the producer waits for the one before it,
	// so that replies come in the order the batches were sent.
	tail chan struct{}
	// ended: the producer takes no more batches (ended by the server, or
	// closed); endReason is why the server ended it, whose
	// producer_ended frame is sent once every earlier reply is (gone
	// then set: the name is free).
	ended     bool
	endReason string
	gone      bool
}

// batch is one admitted publish.
type batch struct {
	id    jsontext.Value
	ns    []*notification.Notification
	sizes []int // each element's size, for its publish span
	// parent is the publish frame's trace context (invalid when none).
	parent trace.SpanContext
	size   int64
	prev   chan struct{} // closed when the previous batch has replied
	done   chan struct{} // closed when this one has replied
	start  chan struct{} // closed when it may publish
}

func (p *producers) init(s *Session) { p.s = s }

// open opens a producer for an event type.
func (p *producers) open(req *request) {
	s := p.s
	if err := req.fields("producer", "event_type"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	name, ok1, err1 := req.str("producer")
	et, ok2, err2 := req.str("event_type")
	if err := errors.Join(err1, err2); err != nil || !ok1 || !ok2 || name == "" {
		s.send(s.replyError(req.id, "INVALID_REQUEST", `open_producer needs "producer" (a name) and "event_type" (strings)`))
		return
	}
	if len(name) > maxEchoBytes {
		s.send(s.replyError(req.id, "INVALID_REQUEST", fmt.Sprintf("the producer name is %d bytes long; a name is at most %d bytes, since every frame about the producer carries it", len(name), maxEchoBytes)))
		return
	}
	set := s.deps.Settings()
	sc, err := set.Registry.Lookup(et)
	if err != nil {
		code, msg, _ := ErrorCode(CodeInvalidNotification, err)
		s.send(s.replyError(req.id, code, msg))
		return
	}
	if denied := set.Policy.DecideStream(sc.Name, s.identity.Load(), auth.OpWrite); denied != nil {
		code, msg := s.denial(denied)
		s.send(s.replyError(req.id, code, msg))
		return
	}
	// The terminal reply of a full batch lists its ids: it must fit in a
	// frame (startup validation checks it for the configured event types
	// and limits; a session keeps the limits it opened with across
	// reloads).
	if need := configs.BatchReplyBytes(s.set.Limits.ProducerMaxBatch, sc.Name); need > s.frameMax() {
		s.send(s.replyError(req.id, "LIMIT_EXCEEDED", fmt.Sprintf("the reply to a full batch (producer_max_batch, %d ids of '%s') could be %d bytes, above max_frame_bytes (%d)",
			s.set.Limits.ProducerMaxBatch, sc.Name, need, s.frameMax())))
		return
	}
	p.mu.Lock()
	_, dup := p.m[name]
	full := len(p.m) >= s.set.Limits.MaxProducers
	p.mu.Unlock()
	switch {
	case dup:
		s.send(s.replyError(req.id, "DUPLICATE_NAME", "the session already has a producer named '"+name+"'"))
		return
	case full:
		s.send(s.replyError(req.id, "LIMIT_EXCEEDED", fmt.Sprintf("max_producers (%d): the session has that many producers", s.set.Limits.MaxProducers)))
		return
	}
	ctx, leave := s.deps.Streams.Join(s.ctx, sc.Name)
	pr := &producer{p: p, name: name, eventType: sc.Name, schema: sc, credit: s.set.Limits.ProducerCredit,
		maxBatch: s.set.Limits.ProducerMaxBatch, ctx: ctx, leave: leave, tail: closedChan()}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]*producer{}
	}
	p.m[name] = pr
	p.mu.Unlock()
	context.AfterFunc(ctx, pr.watch)
	s.send(replyOK(req.id, map[string]any{"producer": name, "event_type": sc.Name, "credit": pr.credit, "max_batch": pr.maxBatch}))
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// watch ends the producer when a reload changes or removes its event
// type (called once its context has ended).
func (pr *producer) watch() {
	var st *stream.Stop
	if !errors.As(context.Cause(pr.ctx), &st) {
		return
	}
	reason := ""
	switch st.Reason {
	case stream.SchemaChanged:
		reason = "schema_changed"
	case stream.SchemaRemoved:
		reason = "schema_removed"
	default:
		return // shutdown: the session closes its producers
	}
	pr.end(reason)
}

// end ends the producer: batches already admitted still get their
// outcome, and producer_ended follows every reply about the producer,
// including those to batches sent before the client could read it.
func (pr *producer) end(reason string) {
	pr.mu.Lock()
	if pr.ended {
		pr.mu.Unlock()
		return
	}
	pr.ended, pr.endReason = true, reason
	prev, done := pr.chainLocked()
	pr.mu.Unlock()
	pr.leave()
	pr.after(prev, done, func() { pr.sendEnded(done) })
}

// sendEnded sends producer_ended and frees the name, once it is the
// last reply queued about the producer (mine is its place in the
// chain); else it queues itself again behind the replies queued
// meanwhile.
func (pr *producer) sendEnded(mine chan struct{}) {
	p := pr.p
	pr.mu.Lock()
	if pr.tail != mine {
		prev, done := pr.chainLocked()
		pr.mu.Unlock()
		pr.after(prev, done, func() { pr.sendEnded(done) })
		return
	}
	pr.gone = true
	// Sent under mu: a batch that finds the producer gone is answered
	// after this frame.
	p.s.send(mustJSON(map[string]any{"type": "producer_ended", "producer": pr.name, "reason": pr.endReason}))
	pr.mu.Unlock()
	p.mu.Lock()
	if p.m[pr.name] == pr {
		delete(p.m, pr.name)
	}
	p.mu.Unlock()
}

// chainLocked takes the next place in the order of the producer's
// replies: prev is closed once every reply queued before it was sent,
// and the caller closes done once its own is (after does). pr.mu is
// held.
func (pr *producer) chainLocked() (prev, done chan struct{}) {
	prev, done = pr.tail, make(chan struct{})
	pr.tail = done
	return prev, done
}

// after runs send once prev is closed, then closes done: in the
// caller's goroutine when prev is closed already, otherwise in a
// goroutine of its own.
func (pr *producer) after(prev, done chan struct{}, send func()) {
	select {
	case <-prev:
		send()
		close(done)
		return
	default:
	}
	pr.p.wg.Add(1)
	go func() {
		defer pr.p.wg.Done()
		defer close(done)
		<-prev
		send()
	}()
}

// inOrder sends a terminal reply once the replies queued before it are
// sent.
func (pr *producer) inOrder(frame []byte) {
	pr.mu.Lock()
	prev, done := pr.chainLocked()
	pr.mu.Unlock()
	s := pr.p.s
	pr.after(prev, done, func() { s.send(frame) })
}

// publish validates a batch and hands it to its producer.
func (p *producers) publish(req *request) {
	s := p.s
	if err := req.fields("producer", "batch", tracing.TraceParent, tracing.TraceState); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	tctx, err := s.traceContext(req)
	if err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	name, ok, err := req.str("producer")
	if err != nil || !ok {
		s.send(s.replyError(req.id, "INVALID_REQUEST", `publish needs "producer" (a string)`))
		return
	}
	p.mu.Lock()
	pr := p.m[name]
	p.mu.Unlock()
	if pr == nil {
		s.send(s.replyError(req.id, "UNKNOWN_PRODUCER", "the session has no producer named '"+name+"'"))
		return
	}
	// Every terminal reply below waits for the replies to the batches
	// sent before (inOrder, or the batch's own place in the chain).
	pr.mu.Lock()
	switch {
	case pr.gone:
		pr.mu.Unlock()
		s.send(s.replyError(req.id, "UNKNOWN_PRODUCER", "the session has no producer named '"+name+"'"))
		return
	case pr.ended:
		// producer_ended is on its way, behind this reply.
		reason := pr.endReason
		pr.mu.Unlock()
		pr.inOrder(s.replyError(req.id, "UNKNOWN_PRODUCER", "producer '"+name+"' has ended ("+reason+"); nothing was stored"))
		return
	}
	over := pr.inflight >= pr.credit
	if !over {
		pr.inflight++ // the credit is taken now: the batch awaits its outcome
	}
	pr.mu.Unlock()
	if over {
		pr.inOrder(s.replyError(req.id, "CREDIT_EXCEEDED", fmt.Sprintf("producer '%s' already has %d batches awaiting their outcome (its credit)", name, pr.credit)))
		pr.end("protocol_violation")
		return
	}
	notAdmitted := func(code, msg string, errs []map[string]any) {
		pr.release(0)
		fields := map[string]any{"outcome": "not_admitted"}
		if errs != nil {
			fields["errors"] = errs
		}
		pr.inOrder(s.replyErrorWith(req.id, code, msg, fields))
	}
	raw, ok := req.members["batch"]
	if !ok || raw.Kind() != '[' {
		notAdmitted("INVALID_REQUEST", `publish needs "batch": an array of {"identifier": …, "payload": …}`, nil)
		return
	}
	size := int64(len(raw))
	p.mu.Lock()
	tooBig := p.bytes+size > s.set.Limits.MaxProducerBytes
	suspended := p.suspend
	if !tooBig && !suspended {
		p.bytes += size
	}
	p.mu.Unlock()
	switch {
	case suspended:
		notAdmitted("SERVICE_UNAVAILABLE", "the notification backend is unavailable; the producer is suspended until it returns", nil)
		return
	case tooBig:
		notAdmitted("LIMIT_EXCEEDED", fmt.Sprintf("max_producer_bytes (%d): the session's unanswered batches would exceed it", s.set.Limits.MaxProducerBytes), nil)
		return
	}
	ns, sizes, errs, msg := pr.validate(raw)
	if msg != "" || len(errs) > 0 {
		pr.release(size)
		code := CodeInvalidNotification
		if msg == "" {
			msg = fmt.Sprintf("%d of the batch's notifications are invalid; nothing was stored", len(errs))
			if allTooLarge(errs) {
				code = CodeTooLarge
				msg = fmt.Sprintf("%d of the batch's notifications are too large to store; nothing was stored", len(errs))
			}
		}
		pr.inOrder(s.notAdmitted(req.id, code, msg, errs))
		return
	}
	pr.mu.Lock()
	b := &batch{id: req.id, ns: ns, sizes: sizes, parent: trace.SpanContextFromContext(tctx), size: size, start: make(chan struct{})}
	b.prev, b.done = pr.chainLocked()
	pr.waiting = append(pr.waiting, b)
	pr.startLocked()
	pr.mu.Unlock()
	p.wg.Add(1)
	go pr.run(b)
}

// notAdmitted is the reply of a batch refused by validation: errs by
// index, as many of the first ones as fit in max_frame_bytes, with
// errors_truncated counting those left out (at least the first is kept,
// its message shortened if it alone does not fit).
func (s *Session) notAdmitted(id jsontext.Value, code, msg string, errs []batchError) []byte {
	fields := map[string]any{"outcome": "not_admitted"}
	if len(errs) == 0 {
		return s.replyErrorWith(id, code, msg, fields)
	}
	fields["errors"] = errs
	if f := failedReply(id, code, msg, fields); len(f) <= s.frameMax() {
		return f
	}
	// The reply without its errors but with the largest count, then each
	// error as it is encoded in the list.
	fields["errors"] = []batchError{}
	fields["errors_truncated"] = len(errs)
	room := s.frameMax() - len(failedReply(id, code, msg, fields))
	kept := 0
	for _, e := range errs {
		n := len(mustJSON(e))
		if kept > 0 {
			n++ // the comma
		}
		if n > room {
			break
		}
		room -= n
		kept++
	}
	if kept == 0 {
		// The first error alone is too long (its message quotes the
		// request): it is kept with a shortened message.
		first := errs[0]
		if len(errs) == 1 {
			delete(fields, "errors_truncated")
		} else {
			fields["errors_truncated"] = len(errs) - 1
		}
		return FitMessage(first.Message, s.frameMax(), func(m string) []byte {
			first.Message = m
			fields["errors"] = []batchError{first}
			return failedReply(id, code, msg, fields)
		})
	}
	fields["errors"] = errs[:kept]
	fields["errors_truncated"] = len(errs) - kept
	return failedReply(id, code, msg, fields)
}

// allTooLarge reports whether every refusal of a batch is one of a
// notification too large to store.
func allTooLarge(errs []batchError) bool {
	for _, e := range errs {
		if e.Code != CodeTooLarge {
			return false
		}
	}
	return len(errs) > 0
}

// batchError is why one notification of a batch was refused.
type batchError struct {
	Index   int    `json:"index"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// release returns a batch's credit and bytes.
func (pr *producer) release(size int64) {
	pr.mu.Lock()
	pr.inflight--
	pr.mu.Unlock()
	p := pr.p
	p.mu.Lock()
	p.bytes -= size
	p.mu.Unlock()
}

// validate checks every notification of a batch before anything is
// stored: the notifications with the size of each element, or the
// errors by index.
func (pr *producer) validate(raw jsontext.Value) ([]*notification.Notification, []int, []batchError, string) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, nil, "batch: " + err.Error()
	}
	var ns []*notification.Notification
	var sizes []int
	var errs []batchError
	i := 0
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, nil, nil, fmt.Sprintf("batch[%d]: %v", i, err)
		}
		// The decoder's value is valid only until its next read: the
		// element is taken from raw itself, which the request owns.
		end := int(dec.InputOffset())
		v = raw[end-len(v) : end]
		if i >= pr.maxBatch {
			return nil, nil, nil, fmt.Sprintf("producer_max_batch (%d): the batch has more notifications", pr.maxBatch)
		}
		n, code, msg := pr.one(v)
		if code != "" {
			errs = append(errs, batchError{Index: i, Code: code, Message: msg})
		} else {
			ns = append(ns, n)
			sizes = append(sizes, len(v))
		}
		i++
	}
	if i == 0 {
		return nil, nil, nil, "the batch is empty"
	}
	return ns, sizes, errs, ""
}

// one validates one element of a batch. v aliases the request's batch,
// which the request owns, so the notification may keep parts of it.
func (pr *producer) one(v jsontext.Value) (*notification.Notification, string, string) {
	if v.Kind() != '{' {
		return nil, "INVALID_REQUEST", `each element is an object {"identifier": …, "payload": …}`
	}
	req, err := notification.ParseNotifyElement(v, pr.eventType)
	var ke *notification.ElementKeyError
	if errors.As(err, &ke) {
		return nil, "INVALID_REQUEST", ke.Error()
	}
	if err != nil {
		code, msg, _ := ErrorCode(CodeInvalidNotification, err)
		return nil, code, msg
	}
	n, err := pr.schema.Notify(req.Identifier, req.Payload)
	if err == nil {
		err = engine.CheckSize(pr.p.s.deps.Engine, n)
	}
	if err != nil {
		code, msg, _ := ErrorCode(CodeInvalidNotification, err)
		return nil, code, msg
	}
	return n, "", ""
}

// startLocked lets waiting batches publish while the pipeline has room.
func (pr *producer) startLocked() {
	for pr.active < producerPipeline && len(pr.waiting) > 0 {
		b := pr.waiting[0]
		pr.waiting = pr.waiting[1:]
		pr.active++
		close(b.start)
	}
}

// publishTimeout bounds one batch's publishes.
const publishTimeout = 30 * time.Second

// run publishes one batch and sends its terminal reply after the
// previous batch's.
func (pr *producer) run(b *batch) {
	p := pr.p
	s := p.s
	defer p.wg.Done()
	defer close(b.done)
	<-b.start
	var results []engine.BatchResult
	refused := b.ns == nil
	if !refused {
		// In flight: the batch completes even if the session goes away.
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		if b.parent.IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, b.parent)
		}
		results = s.deps.Tracing.PublishEach(ctx, s.deps.Engine, b.ns, func(i int) int { return b.sizes[i] })
		cancel()
	}
	pr.mu.Lock()
	pr.active--
	pr.startLocked()
	pr.mu.Unlock()
	<-b.prev
	pr.release(b.size)
	if refused {
		s.send(s.replyErrorWith(b.id, "INVALID_REQUEST", "the producer was closed before this batch was sent; nothing was stored",
			map[string]any{"outcome": "not_admitted"}))
		return
	}
	ids := []string{}
	var failure error
	unknown := false
	for _, r := range results {
		switch {
		case r.Err == nil:
			ids = append(ids, pr.eventType+"@"+strconv.FormatUint(r.Seq, 10))
		case errors.Is(r.Err, engine.ErrUnknownOutcome):
			unknown = true
			failure = r.Err
		default:
			if failure == nil {
				failure = r.Err
			}
		}
	}
	if len(ids) > 0 {
		s.obs.Notified(pr.schema, "", len(ids), 0)
	}
	switch {
	case failure == nil:
		s.send(replyOK(b.id, map[string]any{"outcome": "completed", "ids": ids}))
	case unknown:
		s.obs.Notified(pr.schema, "SERVICE_UNAVAILABLE", len(results)-len(ids), 0)
		p.suspendAll()
		s.send(s.replyErrorWith(b.id, "SERVICE_UNAVAILABLE", "the backend connection was lost after the batch was sent; which notifications were stored cannot be known",
			map[string]any{"outcome": "unknown", "ids": ids}))
	default:
		code, msg := "NOTIFICATION_STORAGE_FAILED", "the backend refused part of the batch; ids lists what was stored, the rest was not"
		if errors.Is(failure, engine.ErrTooLarge) {
			code, msg, _ = ErrorCode(CodeInvalidNotification, failure)
			msg += "; ids lists what was stored, the rest was not"
		}
		if errors.Is(failure, engine.ErrUnavailable) {
			code = "SERVICE_UNAVAILABLE"
			p.suspendAll()
		}
		s.obs.Notified(pr.schema, code, len(results)-len(ids), 0)
		s.send(s.replyErrorWith(b.id, code, msg, map[string]any{"outcome": "failed", "ids": ids}))
	}
}

// suspendAll suspends the session's producers while the backend is
// unavailable and resumes them when it answers again.
func (p *producers) suspendAll() {
	p.mu.Lock()
	if p.suspend {
		p.mu.Unlock()
		return
	}
	p.suspend = true
	names := make([]string, 0, len(p.m))
	for n := range p.m {
		names = append(names, n)
	}
	p.mu.Unlock()
	s := p.s
	for _, n := range names {
		s.send(mustJSON(map[string]any{"type": "producer_suspended", "producer": n}))
	}
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
			}
			if !backendReady(s.ctx, s.deps.Engine) {
				continue
			}
			p.mu.Lock()
			p.suspend = false
			names = names[:0]
			for n := range p.m {
				names = append(names, n)
			}
			p.mu.Unlock()
			for _, n := range names {
				s.send(mustJSON(map[string]any{"type": "producer_resumed", "producer": n}))
			}
			return
		}
	}()
}

// readiness is implemented by engines that depend on something that can
// be down (the JetStream engine's NATS connection).
type readiness interface {
	Ready(ctx context.Context) error
}

// backendReady reports whether the engine answers (engines without a
// notion of readiness always do).
func backendReady(ctx context.Context, eng engine.Engine) bool {
	rd, ok := eng.(readiness)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return rd.Ready(ctx) == nil
}

// close refuses the producer's batches not yet sent, waits for those in
// flight, then replies.
func (p *producers) close(req *request) {
	s := p.s
	if err := req.fields("producer"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	name, ok, err := req.str("producer")
	if err != nil || !ok {
		s.send(s.replyError(req.id, "INVALID_REQUEST", `close_producer needs "producer" (a string)`))
		return
	}
	p.mu.Lock()
	pr := p.m[name]
	if pr != nil {
		delete(p.m, name)
	}
	p.mu.Unlock()
	if pr == nil {
		s.send(s.replyError(req.id, "UNKNOWN_PRODUCER", "the session has no producer named '"+name+"'"))
		return
	}
	tail := pr.shut()
	select {
	case <-tail:
	case <-s.ctx.Done():
	}
	s.send(replyOK(req.id, map[string]any{"producer": name}))
}

// shut refuses the waiting batches and returns the channel closed once
// the last batch has replied.
func (pr *producer) shut() <-chan struct{} {
	pr.mu.Lock()
	pr.ended = true
	for _, b := range pr.waiting {
		b.ns = nil // refused when its turn comes
		close(b.start)
	}
	pr.waiting = nil
	tail := pr.tail
	pr.mu.Unlock()
	pr.leave()
	return tail
}

// closeAll ends the producers of a closing session. On a shutdown the
// batches in flight are waited for (within the grace period the server
// gives); otherwise they complete with nobody to answer.
func (p *producers) closeAll(shutdown bool) {
	p.mu.Lock()
	all := make([]*producer, 0, len(p.m))
	for _, pr := range p.m {
		all = append(all, pr)
	}
	p.m = nil
	p.mu.Unlock()
	for _, pr := range all {
		pr.shut()
	}
	if shutdown {
		p.wg.Wait()
	}
}
