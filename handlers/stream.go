package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"herald/api/httperr"
	"herald/auth"
	"herald/engine"
	"herald/notification"
	"herald/stream"
)

// Watch serves POST /api/v1/watch: live notifications, optionally after
// history from a cursor, as Server-Sent Events.
func (h *Handlers) Watch(w http.ResponseWriter, r *http.Request) { h.serveStream(w, r, stream.Watch) }

// Replay serves POST /api/v1/replay: history from a cursor, then the
// stream ends.
func (h *Handlers) Replay(w http.ResponseWriter, r *http.Request) { h.serveStream(w, r, stream.Replay) }

func (h *Handlers) serveStream(w http.ResponseWriter, r *http.Request, mode stream.Mode) {
	ep := watchEndpoint
	if mode == stream.Replay {
		ep = replayEndpoint
	}
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, ep.label, ep.code, err)
		return
	}
	reg := set.Registry
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
	if !h.authorizeStream(w, r, set, s, auth.OpRead) {
		return
	}
	if err := s.CheckSpatial(req.Identifier); err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	cur, err := stream.ParseCursors(stream.CursorsOf(req), mode)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	filter, err := s.Filter(req.Identifier, mode.Op())
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	var where stream.Predicate
	if req.Where != nil {
		wh, err := s.CompileWhere(*req.Where)
		if err != nil {
			writeRequestError(w, r, ep, validation(err.Error()))
			return
		}
		where = wherePredicate{wh}
	}
	format := ""
	if req.Format != nil {
		format = *req.Format
	}
	view, err := s.View(format)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	if !h.checkECPDS(w, r, set, s, filter) {
		return
	}
	spec := streamSpec(set.Watch, mode, engine.Query{Stream: s.Base, Filter: filter}, cur, s.MaxHistorical)
	spec.Where = where
	route := RouteWatch
	if mode == stream.Replay {
		route = RouteReplay
	}
	obs := h.obs.Stream(StreamLabels{Transport: TransportSSE, Route: route, EventType: eventTypeLabel(s), User: streamUser(auth.IdentityFrom(r.Context()))})
	spec.Observer = obs
	spec.Format = format
	key, render := recordView(reg, view)
	sink := &sseSink{
		h: h, w: w, watch: set.Watch, cors: !set.CORSManaged, mode: mode, cursors: cur, cap: s.MaxHistorical, obs: obs,
		reqID:  httperr.RequestID(r.Context()),
		topic:  filter.Pattern.Display(),
		view:   key,
		render: render,
	}
	capSendBuffer(r, set.Watch.SendBufferBytes, h.log)
	ctx, leave := h.running.Join(r.Context(), streamKey(s.Name, view))
	defer leave()
	end := stream.Run(ctx, h.eng, &spec, sink)
	if sink.sse != nil {
		defer h.streams.Add(-1)
	}
	sink.end(r, ep, end)
}

// streamSpec builds the runner's spec of a watch or replay from the
// watch settings.
func streamSpec(ws WatchSettings, mode stream.Mode, q engine.Query, cur stream.Cursors, cap int) stream.Spec {
	spec := stream.Spec{
		Query:      q,
		Mode:       mode,
		Cursors:    cur,
		HistoryCap: cap,
		PageSize:   ws.ReplayBatchSize,
		PageDelay:  ws.ReplayBatchDelay,
		MaxLag:     ws.MaxLag,
		QueueSize:  ws.LiveQueueSize,
	}
	if mode == stream.Watch {
		spec.Heartbeat = ws.Heartbeat
		spec.MaxDuration = ws.MaxDuration
	}
	return spec
}

func (h *Handlers) writeSetupError(w http.ResponseWriter, r *http.Request, ep endpoint, topic string, err error) {
	id := httperr.RequestID(r.Context())
	if errors.Is(err, engine.ErrInvalid) {
		writeRequestError(w, r, ep, validation(err.Error()))
		return
	}
	if errors.Is(err, engine.ErrUnavailable) {
		w.Header().Set("Retry-After", "5")
		msg := "the notification backend is unavailable; retry later"
		httperr.WriteJSON(w, http.StatusServiceUnavailable, httperr.ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: msg, Topic: &topic, RequestID: id})
		return
	}
	h.log.Error("stream setup failed", "request_id", id, "topic", topic, "error", err)
	httperr.WriteJSON(w, http.StatusInternalServerError, httperr.ErrorBody{Code: "SSE_STREAM_INITIALIZATION_FAILED", Error: "SSE stream creation failed",
		Message: "the stream could not be set up", Details: "subscription setup failed", Topic: &topic, RequestID: id})
}

// sseSink is the SSE transport of one watch or replay: it renders what
// the runner hands it as Server-Sent Events (reference §5) and writes the
// stream's end as connection-closing.
type sseSink struct {
	h       *Handlers
	w       http.ResponseWriter
	watch   WatchSettings
	cors    bool // add Aviso's Access-Control-Allow-Origin: *
	mode    stream.Mode
	cursors stream.Cursors
	cap     int // the historical cap, for notification_replay_limit_reached
	reqID   string
	topic   string
	// view keys the cached rendering of a record (the schema it is
	// rendered with: the registry); render renders it.
	view   any
	render func(*engine.Record) ([]byte, error)
	// obs counts the events and error events (nil: not observed).
	obs StreamObserver

	sse *sseWriter // nil until Open
}

// Open starts the event stream: the headers and the opening event,
// replay_started for a stream with a start cursor, else
// connection_established.
func (s *sseSink) Open(o stream.Opening) error {
	h := s.h
	s.sse = startSSE(s.w, h.now, h.writeTimeout, s.cors)
	h.streams.Add(1)
	now := h.now()
	if s.cursors.HasStart() {
		ev := replayStarted{Type: "replay_started", Topic: s.topic, FromSequence: s.cursors.FromSeq,
			EndSequence: o.EndSeq, BatchSize: s.watch.ReplayBatchSize, Timestamp: sseTime(now), RequestID: s.reqID}
		if s.cursors.FromDate != nil {
			d := sseTime(*s.cursors.FromDate)
			ev.FromDate = &d
		}
		if s.cursors.ToDate != nil {
			d := sseTime(*s.cursors.ToDate)
			ev.ToDate = &d
		}
		return s.sse.json(EventControl, ev)
	}
	return s.sse.json(EventLive, connectionEstablished{Type: "connection_established", Topic: s.topic,
		Timestamp: sseTime(now), ConnectionWillCloseInSeconds: int(s.watch.MaxDuration / time.Second), RequestID: s.reqID})
}

// Record queues one CloudEvent, rendered once per record however many
// watchers share it; a record that cannot be rendered is reported with an
// error event and the stream goes on.
func (s *sseSink) Record(rec *engine.Record, ph stream.Phase) error {
	data, err := rec.Rendered(s.view, s.render)
	if err != nil {
		s.h.log.Error("CloudEvent creation failed", "request_id", s.reqID, "sequence", rec.Seq, "error", err)
		seq := rec.Seq
		s.streamError()
		return s.sse.json(EventError, streamError{Error: "CloudEvent creation failed", Message: err.Error(), Topic: s.topic, Sequence: &seq, RequestID: s.reqID})
	}
	name := EventLive
	if ph == stream.History {
		name = EventReplay
	}
	if s.obs != nil {
		s.obs.EventSent()
	}
	return s.sse.queue(name, data)
}

// streamError counts an error event sent into the stream.
func (s *sseSink) streamError() {
	if s.obs != nil {
		s.obs.StreamError()
	}
}

// Flush sends the queued events.
func (s *sseSink) Flush() error { return s.sse.flush() }

// Heartbeat writes a heartbeat event.
func (s *sseSink) Heartbeat() error {
	return s.sse.json(EventBeat, heartbeat{Timestamp: sseTime(s.h.now()), Topic: s.topic})
}

// HistoryDone writes replay_completed.
func (s *sseSink) HistoryDone() error {
	return s.sse.json(EventControl, replayCompleted{Type: "replay_completed", Topic: s.topic, Timestamp: sseTime(s.h.now())})
}

// Due bounds the next writes by a live record's lag limit.
func (s *sseSink) Due(t time.Time) { s.sse.due(t) }

// end writes the stream's end: a JSON error if the stream never opened,
// else the closing events of the reason.
func (s *sseSink) end(r *http.Request, ep endpoint, end stream.End) {
	h := s.h
	if s.sse == nil {
		if end.Reason == stream.SetupFailed {
			h.writeSetupError(s.w, r, ep, s.topic, end.Err)
		}
		return
	}
	switch end.Reason {
	case stream.ClientGone, stream.SetupFailed:
		if end.Err != nil {
			h.log.Debug("stream ended: the client went away", "request_id", s.reqID, "topic", s.topic, "error", end.Err)
		}
	case stream.EndOfStream:
		s.closing(ReasonEndOfStream, nil)
	case stream.HistoryLimit:
		cap := s.cap
		msg := fmt.Sprintf("Historical replay limited to %d messages. Additional historical messages may be available but were not retrieved.", cap)
		if s.sse.json(EventControl, replayLimitReached{Type: "notification_replay_limit_reached", Topic: s.topic,
			MaxAllowed: cap, Message: msg, Timestamp: sseTime(h.now())}) != nil {
			return
		}
		s.closing(ReasonEndOfStream, nil)
	case stream.HistoryFailed:
		if errors.Is(end.Err, engine.ErrUnavailable) {
			// The backend is gone for now: end so that the client
			// reconnects (and is answered 503 with Retry-After until it
			// is back), never with an `error` event, which ends the aviso
			// client's listener for good.
			h.log.Warn("history fetch failed: the backend is unavailable; the client should reconnect from the resume id", "request_id", s.reqID,
				"topic", s.topic, "error", end.Err, "resume_from_id", end.ResumeFrom)
			s.causeClosing(end)
			return
		}
		// Any other failed read ends as aviso-server ends it: an error
		// event, then connection-closing, no replay_completed.
		h.log.Error("history fetch failed", "request_id", s.reqID, "topic", s.topic, "error", end.Err)
		s.streamError()
		if s.sse.json(EventError, streamError{Error: "stream_processing_failed", Message: end.Message, Topic: s.topic, RequestID: s.reqID}) != nil {
			return
		}
		s.closing(ReasonEndOfStream, nil)
	case stream.MaxDuration:
		s.closing(ReasonMaxDuration, nil)
	case stream.Shutdown:
		s.closing(ReasonShutdown, nil)
	case stream.Lagging, stream.Overflow, stream.Gap:
		// The watcher must reconnect from its resume point: end_of_stream
		// (with its cause and resume_from_id), never an `error` event,
		// since the aviso client ends a listener for good on any `error`
		// while on end_of_stream it reconnects by itself with from_id =
		// last + 1, so it goes on with no gap and no duplicate.
		h.log.Warn("watch closed; the client should reconnect from the resume id", "request_id", s.reqID,
			"topic", s.topic, "cause", end.Reason.String(), "reason", end.Message, "resume_from_id", end.ResumeFrom)
		s.causeClosing(end)
	default: // SchemaChanged, SchemaRemoved
		s.causeClosing(end)
	}
}

// causeClosing ends the stream for one of herald's own causes with a
// reason the aviso client accepts, the cause and the resume id.
func (s *sseSink) causeClosing(end stream.End) {
	ce, ok := causeEnds[end.Reason]
	if !ok {
		ce = sseEnd{ReasonEndOfStream, closeMessages[ReasonEndOfStream]}
	}
	var resume *string
	switch end.Reason {
	case stream.SchemaRemoved:
		// Nothing to resume: the event type is gone.
	case stream.Overflow, stream.Gap:
		if end.Delivered {
			resume = resumeID(end.ResumeFrom)
		}
	default:
		resume = resumeID(end.ResumeFrom)
	}
	_ = s.sse.json(EventClosing, connectionClosing{Reason: ce.reason, Cause: end.Reason.String(), Timestamp: sseTime(s.h.now()),
		Message: ce.message, Topic: s.topic, ResumeFromID: resume, RequestID: s.reqID})
}

// closing writes the final connection-closing event of one of aviso's
// own ends, with its fixed message.
func (s *sseSink) closing(reason string, resume *string) {
	_ = s.sse.json(EventClosing, connectionClosing{Reason: reason, Timestamp: sseTime(s.h.now()),
		Message: closeMessages[reason], Topic: s.topic, ResumeFromID: resume, RequestID: s.reqID})
}

// resumeID renders a resume sequence (nil for none).
func resumeID(seq uint64) *string {
	if seq == 0 {
		return nil
	}
	v := strconv.FormatUint(seq, 10)
	return &v
}

// wherePredicate applies a compiled WHERE clause to records.
type wherePredicate struct{ w *notification.Where }

// Match implements stream.Predicate.
func (p wherePredicate) Match(rec *engine.Record) bool { return p.w.Match(&rec.Notification) }

// viewKey keys the cached rendering of a record: the registry it is
// rendered with and the payload view. A record is rendered once per
// view, however many watchers share it.
type viewKey struct {
	reg  *notification.Registry
	view *notification.View
}

// recordView returns the cache key and the renderer of records in view
// (nil: the default view) with reg.
func recordView(reg *notification.Registry, view *notification.View) (any, func(*engine.Record) ([]byte, error)) {
	if view == nil {
		return reg, func(rec *engine.Record) ([]byte, error) {
			return reg.CloudEvent(&rec.Notification, rec.Seq, rec.Time)
		}
	}
	return viewKey{reg: reg, view: view}, func(rec *engine.Record) ([]byte, error) {
		return reg.CloudEventView(&rec.Notification, rec.Seq, rec.Time, view)
	}
}

// formatSuffix marks the streams that asked for a payload format in the
// running set: a reload that changes an event type's payload schema
// compatibly ends those (schema_changed) and keeps the others.
const formatSuffix = "\x00format"

// streamKey is the name a stream of eventType in view joins the running
// set under.
func streamKey(eventType string, view *notification.View) string {
	if view == nil {
		return eventType
	}
	return eventType + formatSuffix
}
