package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"herald/engine"
	"herald/notification"
)

type streamMode uint8

const (
	modeWatch streamMode = iota
	modeReplay
)

// Watch serves POST /api/v1/watch: live notifications, optionally after
// history from a cursor, as Server-Sent Events.
func (h *Handlers) Watch(w http.ResponseWriter, r *http.Request) { h.serveStream(w, r, modeWatch) }

// Replay serves POST /api/v1/replay: history from a cursor, then the
// stream ends.
func (h *Handlers) Replay(w http.ResponseWriter, r *http.Request) { h.serveStream(w, r, modeReplay) }

// cursors are a request's validated start and end points.
type cursors struct {
	fromSeq  *uint64
	fromDate *time.Time
	toSeq    *uint64
	toDate   *time.Time
}

func (c *cursors) any() bool { return c.fromSeq != nil || c.fromDate != nil }

// parseCursors validates from_id/from_date (reference §4.2) and the replay
// end cursors to_id/to_date ([N] §21.14).
func parseCursors(req *notification.Request, mode streamMode) (*cursors, error) {
	c := &cursors{}
	if req.FromID != nil {
		s := strings.TrimSpace(*req.FromID)
		if s == "" {
			return nil, validation("from_id must not be empty: send the next sequence wanted as a decimal string, \"0\" for the beginning")
		}
		v, err := notification.ParseSequence(s)
		if err != nil {
			return nil, validation("invalid from_id: " + err.Error())
		}
		c.fromSeq = &v
	}
	if req.FromDate != nil {
		s := strings.TrimSpace(*req.FromDate)
		if s == "" {
			return nil, validation("from_date must not be empty")
		}
		t, err := notification.ParseDate(s)
		if err != nil {
			return nil, validation("invalid from_date: " + err.Error())
		}
		c.fromDate = &t
	}
	if c.fromSeq != nil && c.fromDate != nil {
		return nil, validation("from_id and from_date cannot be used together: send one start cursor")
	}
	if req.ToID != nil || req.ToDate != nil {
		if mode == modeWatch {
			return nil, validation("to_id and to_date are only accepted on /api/v1/replay: a watch has no end")
		}
		if req.ToID != nil && req.ToDate != nil {
			return nil, validation("to_id and to_date cannot be used together: send one end cursor")
		}
	}
	if req.ToID != nil {
		v, err := notification.ParseSequence(strings.TrimSpace(*req.ToID))
		if err != nil {
			return nil, validation("invalid to_id: " + err.Error())
		}
		if c.fromSeq != nil && v < *c.fromSeq {
			return nil, validation(fmt.Sprintf("to_id %d is before from_id %d", v, *c.fromSeq))
		}
		c.toSeq = &v
	}
	if req.ToDate != nil {
		t, err := notification.ParseDate(strings.TrimSpace(*req.ToDate))
		if err != nil {
			return nil, validation("invalid to_date: " + err.Error())
		}
		if c.fromDate != nil && t.Before(*c.fromDate) {
			return nil, validation("to_date is before from_date")
		}
		c.toDate = &t
	}
	if mode == modeReplay && !c.any() {
		return nil, validation("replay needs a start cursor: send from_id (\"0\" for the beginning) or from_date")
	}
	return c, nil
}

func (h *Handlers) serveStream(w http.ResponseWriter, r *http.Request, mode streamMode) {
	ep := watchEndpoint
	if mode == modeReplay {
		ep = replayEndpoint
	}
	body, err := h.readBody(w, r)
	if err != nil {
		h.writeBodyError(w, r, ep.label, ep.code, err)
		return
	}
	reg := h.Registry()
	req, err := notification.ParseRequest(body)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	s, err := reg.Lookup(req.EventType)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	if !h.authorizeStream(w, r, s, OpRead) {
		return
	}
	if err := s.CheckSpatial(req.Identifier); err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	cur, err := parseCursors(req, mode)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	filter, err := s.Filter(req.Identifier)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	if !h.checkECPDS(w, r, s, filter) {
		return
	}
	q := engine.Query{Stream: s.Base, Filter: filter}
	st := &stream{
		h:       h,
		ctx:     r.Context(),
		mode:    mode,
		reqID:   RequestID(r.Context()),
		topic:   filter.Pattern.Display(),
		cap:     s.MaxHistorical,
		cursors: cur,
		render: func(rec *engine.Record) ([]byte, error) {
			return reg.CloudEvent(&rec.Notification, rec.Seq, rec.Time)
		},
	}
	var boundary uint64
	if mode == modeWatch {
		sub, err := h.eng.Subscribe(r.Context(), q, engine.SubscribeOptions{QueueSize: h.watch.LiveQueueSize})
		if err != nil {
			h.writeSetupError(w, r, ep, st.topic, err)
			return
		}
		defer sub.Close()
		st.sub = sub
		boundary = sub.Boundary()
	} else {
		boundary, err = h.eng.LastSeq(r.Context(), s.Base)
		if err != nil {
			h.writeSetupError(w, r, ep, st.topic, err)
			return
		}
	}
	st.query = q
	st.boundary = boundary
	h.capSendBuffer(r)
	h.streams.Add(1)
	defer h.streams.Add(-1)
	st.sse = startSSE(w, h.now, h.writeTimeout, !h.corsManaged)
	st.run()
}

func (h *Handlers) writeSetupError(w http.ResponseWriter, r *http.Request, ep endpoint, topic string, err error) {
	id := RequestID(r.Context())
	if errors.Is(err, engine.ErrUnavailable) {
		w.Header().Set("Retry-After", "5")
		msg := "the notification backend is unavailable; retry later"
		WriteJSON(w, http.StatusServiceUnavailable, ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: msg, Topic: &topic, RequestID: id})
		return
	}
	h.log.Error("stream setup failed", "request_id", id, "topic", topic, "error", err)
	WriteJSON(w, http.StatusInternalServerError, ErrorBody{Code: "SSE_STREAM_INITIALIZATION_FAILED", Error: "SSE stream creation failed",
		Message: "the stream could not be set up", Details: "subscription setup failed", Topic: &topic, RequestID: id})
}

// stream is one open SSE response.
type stream struct {
	h        *Handlers
	ctx      context.Context
	mode     streamMode
	sse      *sseWriter
	reqID    string
	topic    string
	cap      int
	cursors  *cursors
	query    engine.Query
	boundary uint64
	sub      *engine.Subscription
	render   func(*engine.Record) ([]byte, error)

	beat    <-chan time.Time
	maxDur  <-chan time.Time
	lastSeq uint64
	// liveSince is when the stream went live: a live record's lag counts
	// from its arrival or from then, whichever is later, so that the
	// records a watch buffers while it replays history are not lag.
	liveSince time.Time
}

// outcome says how a phase of a stream ended.
type outcome uint8

const (
	outDone outcome = iota
	outLimit
	outBatchError
	outClosed // a connection-closing was written (shutdown, max duration)
	outGone   // the client went away or a write failed
)

func (st *stream) run() {
	h := st.h
	if st.mode == modeWatch {
		if d := h.watch.ConnectionMaxDurationSec; d > 0 {
			t := time.NewTimer(time.Duration(d) * time.Second)
			defer t.Stop()
			st.maxDur = t.C
		}
	}
	now := h.now()
	var err error
	if st.cursors.any() {
		ev := replayStarted{Type: "replay_started", Topic: st.topic, FromSequence: st.cursors.fromSeq,
			BatchSize: h.watch.ReplayBatchSize, Timestamp: sseTime(now), RequestID: st.reqID}
		if st.cursors.fromDate != nil {
			d := sseTime(*st.cursors.fromDate)
			ev.FromDate = &d
		}
		err = st.sse.json(EventControl, ev)
	} else {
		err = st.sse.json(EventLive, connectionEstablished{Type: "connection_established", Topic: st.topic,
			Timestamp: sseTime(now), ConnectionWillCloseInSeconds: h.watch.ConnectionMaxDurationSec, RequestID: st.reqID})
	}
	if err != nil {
		return
	}
	if st.mode == modeWatch && h.watch.SSEHeartbeatIntervalSec > 0 {
		if st.heartbeat() != nil {
			return
		}
		t := time.NewTicker(time.Duration(h.watch.SSEHeartbeatIntervalSec) * time.Second)
		defer t.Stop()
		st.beat = t.C
	}
	if st.cursors.any() {
		switch st.history() {
		case outDone:
			if st.sse.json(EventControl, replayCompleted{Type: "replay_completed", Topic: st.topic, Timestamp: sseTime(h.now())}) != nil {
				return
			}
			if st.mode == modeReplay {
				st.closing(ReasonEndOfStream)
				return
			}
		case outLimit:
			msg := fmt.Sprintf("Historical replay limited to %d messages. Additional historical messages may be available but were not retrieved.", st.cap)
			if st.sse.json(EventControl, replayLimitReached{Type: "notification_replay_limit_reached", Topic: st.topic,
				MaxAllowed: st.cap, Message: msg, Timestamp: sseTime(h.now())}) != nil {
				return
			}
			st.closing(ReasonEndOfStream)
			return
		case outBatchError:
			st.closing(ReasonEndOfStream)
			return
		default:
			return
		}
	}
	st.live()
}

// interrupted checks, without blocking, whether the stream must end now
// (client gone, shutdown, max duration) and sends due heartbeats. It
// returns outDone when the stream may continue.
func (st *stream) interrupted() outcome {
	for {
		select {
		case <-st.ctx.Done():
			return outGone
		case <-st.h.shutdown:
			return st.closing(ReasonShutdown)
		default:
		}
		select {
		case <-st.maxDur:
			return st.closingMax()
		case <-st.beat:
			if st.heartbeat() != nil {
				return outGone
			}
			continue
		default:
		}
		return outDone
	}
}

// wait blocks for d while serving heartbeats and interrupts.
func (st *stream) wait(d time.Duration) outcome {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-st.ctx.Done():
			return outGone
		case <-st.h.shutdown:
			return st.closing(ReasonShutdown)
		case <-st.maxDur:
			return st.closingMax()
		case <-st.beat:
			if st.heartbeat() != nil {
				return outGone
			}
		case <-t.C:
			return outDone
		}
	}
}

// history delivers the stored notifications within the cursors and the
// boundary, with the historical cap and its lookahead (reference §5.4).
func (st *stream) history() outcome {
	h := st.h
	rng := engine.Range{ToSeq: st.boundary}
	if st.cursors.fromSeq != nil {
		rng.FromSeq = *st.cursors.fromSeq
	}
	if st.cursors.fromDate != nil {
		rng.FromTime = *st.cursors.fromDate
	}
	if st.cursors.toSeq != nil && *st.cursors.toSeq < rng.ToSeq {
		rng.ToSeq = *st.cursors.toSeq
	}
	if st.cursors.toDate != nil {
		rng.ToTime = *st.cursors.toDate
	}
	if rng.FromSeq > rng.ToSeq {
		return outDone
	}
	reader, err := h.eng.History(st.ctx, st.query, rng)
	if err != nil {
		return st.batchError(err)
	}
	defer reader.Close()
	delivered := 0
	delay := time.Duration(h.watch.ReplayBatchDelayMs) * time.Millisecond
	for {
		if o := st.interrupted(); o != outDone {
			return o
		}
		recs, done, err := reader.Next(st.ctx, h.watch.ReplayBatchSize)
		if err != nil {
			if st.ctx.Err() != nil {
				return outGone
			}
			return st.batchError(err)
		}
		for _, rec := range recs {
			data, err := rec.Rendered(st.render)
			if err != nil {
				if st.renderError(rec, err) != nil {
					return outGone
				}
				continue
			}
			if delivered == st.cap {
				if st.sse.flush() != nil {
					return outGone
				}
				return outLimit
			}
			if st.sse.queue(EventReplay, data) != nil {
				return outGone
			}
			st.lastSeq = rec.Seq
			delivered++
		}
		if st.sse.flush() != nil {
			return outGone
		}
		if done {
			return outDone
		}
		if delay > 0 {
			if o := st.wait(delay); o != outDone {
				return o
			}
		}
	}
}

// live delivers live notifications until the stream ends.
func (st *stream) live() {
	st.liveSince = time.Now()
	maxLag := time.Duration(st.h.watch.MaxLagSec) * time.Second
	for {
		select {
		case <-st.ctx.Done():
			return
		case <-st.h.shutdown:
			st.closing(ReasonShutdown)
			return
		default:
		}
		select {
		case <-st.ctx.Done():
			return
		case <-st.h.shutdown:
			st.closing(ReasonShutdown)
			return
		case <-st.maxDur:
			st.closingMax()
			return
		case <-st.beat:
			if st.heartbeat() != nil {
				return
			}
		case rec := <-st.sub.C():
			since := rec.LiveAt
			if since.Before(st.liveSince) {
				since = st.liveSince
			}
			if maxLag > 0 && time.Since(since) > maxLag {
				st.lagging(rec, maxLag)
				return
			}
			data, err := rec.Rendered(st.render)
			if err != nil {
				if st.renderError(rec, err) != nil {
					return
				}
				continue
			}
			if maxLag > 0 {
				// A write that blocks past the oldest queued record's
				// lag limit means a client that does not read: give up
				// on it then rather than after the write timeout.
				st.sse.due(since.Add(maxLag))
			}
			// Flush when nothing else is waiting: a burst goes out in
			// one write, a single notification at once.
			if st.sse.queue(EventLive, data) != nil {
				return
			}
			if len(st.sub.C()) == 0 && st.sse.flush() != nil {
				return
			}
			st.lastSeq = rec.Seq
		case <-st.sub.Done():
			st.subscriptionEnded(st.sub.Err())
			return
		}
	}
}

func (st *stream) subscriptionEnded(err error) {
	if errors.Is(err, engine.ErrClosed) {
		st.closing(ReasonShutdown)
		return
	}
	// The watcher must reconnect from its last sequence. That is said with
	// connection-closing end_of_stream (and resume_from_id) only, never
	// with an `error` event: the aviso client ends a listener for good on
	// any `error` event, while on end_of_stream it reconnects by itself
	// with from_id = last + 1, so it goes on with no gap and no duplicate.
	resume := strconv.FormatUint(st.lastSeq+1, 10)
	why := "the live feed of this watch was interrupted"
	switch {
	case errors.Is(err, engine.ErrOverflow):
		why = fmt.Sprintf("the watcher fell more than %d notifications behind", st.h.watch.LiveQueueSize)
	case errors.Is(err, engine.ErrGap):
		why = "the live feed lost its connection to the backend"
	}
	st.h.log.Warn("watch closed; the client should reconnect from its last sequence", "request_id", st.reqID,
		"topic", st.topic, "reason", why, "resume_from_id", resume)
	ev := connectionClosing{Reason: ReasonEndOfStream, Timestamp: sseTime(st.h.now()),
		Message: closeMessages[ReasonEndOfStream], Topic: st.topic, RequestID: st.reqID}
	if st.lastSeq > 0 {
		ev.ResumeFromID = &resume
	}
	_ = st.sse.json(EventClosing, ev)
}

// lagging ends a live watch whose oldest undelivered notification, rec,
// has waited longer than maxLag: connection-closing end_of_stream with
// resume_from_id = rec's sequence, so that the client, reconnecting from
// it, loses nothing.
func (st *stream) lagging(rec *engine.Record, maxLag time.Duration) {
	resume := strconv.FormatUint(rec.Seq, 10)
	st.h.log.Warn("watch closed: the client is not reading; it should reconnect from the resume id", "request_id", st.reqID,
		"topic", st.topic, "max_lag", maxLag.String(), "resume_from_id", resume, "queued", st.sub.Len()+1)
	_ = st.sse.json(EventClosing, connectionClosing{Reason: ReasonEndOfStream, Timestamp: sseTime(st.h.now()),
		Message: closeMessages[ReasonEndOfStream], Topic: st.topic, ResumeFromID: &resume, RequestID: st.reqID})
}

func (st *stream) batchError(err error) outcome {
	if st.ctx.Err() != nil {
		// The client went away while history was read: not an error.
		st.h.log.Debug("history fetch ended: the client went away", "request_id", st.reqID, "topic", st.topic, "error", err)
		return outGone
	}
	st.h.log.Error("history fetch failed", "request_id", st.reqID, "topic", st.topic, "error", err)
	msg := "fetching stored notifications failed"
	if errors.Is(err, engine.ErrUnavailable) {
		msg = "the notification backend is unavailable; reconnect later from the last received sequence"
	}
	if st.sse.json(EventError, streamError{Error: "stream_processing_failed", Message: msg, Topic: st.topic, RequestID: st.reqID}) != nil {
		return outGone
	}
	return outBatchError
}

func (st *stream) renderError(rec *engine.Record, err error) error {
	st.h.log.Error("CloudEvent creation failed", "request_id", st.reqID, "sequence", rec.Seq, "error", err)
	seq := rec.Seq
	return st.sse.json(EventError, streamError{Error: "CloudEvent creation failed", Message: err.Error(), Topic: st.topic, Sequence: &seq, RequestID: st.reqID})
}

func (st *stream) heartbeat() error {
	return st.sse.json(EventBeat, heartbeat{Timestamp: sseTime(st.h.now()), Topic: st.topic})
}

// closingMax ends the stream for max duration unless a shutdown, which
// takes precedence, is also pending.
func (st *stream) closingMax() outcome {
	select {
	case <-st.h.shutdown:
		return st.closing(ReasonShutdown)
	default:
		return st.closing(ReasonMaxDuration)
	}
}

// closing writes the final connection-closing event.
func (st *stream) closing(reason string) outcome {
	_ = st.sse.json(EventClosing, connectionClosing{Reason: reason, Timestamp: sseTime(st.h.now()),
		Message: closeMessages[reason], Topic: st.topic, RequestID: st.reqID})
	return outClosed
}
