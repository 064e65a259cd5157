package handlers

import (
	"bytes"
	"encoding/json"
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
	ident := auth.IdentityFrom(r.Context())
	p, err := stream.Prepare(reg, req, mode, set.Watch.limits(), stream.Checks{
		Read: func(sc *notification.Schema) error {
			if denied := set.Auth.DecideStream(sc.Name, ident, auth.OpRead); denied != nil {
				return denied
			}
			return nil
		},
		Destination: func(sc *notification.Schema, filter *notification.Filter) error {
			if e := h.decideECPDS(r.Context(), set, sc, filter, ident, httperr.RequestID(r.Context())); e != nil {
				return e
			}
			return nil
		},
	})
	if err != nil {
		h.writePrepareError(w, r, set, ep, err)
		return
	}
	s, spec := p.Schema, p.Spec
	route := RouteWatch
	if mode == stream.Replay {
		route = RouteReplay
	}
	obs := h.obs.Stream(StreamLabels{Transport: TransportSSE, Route: route, EventType: eventTypeLabel(s), User: streamUser(ident)})
	spec.Observer = obs
	spec.Tracer, spec.Transport = h.trace.Tracer, TransportSSE
	key, render := p.Renderer(reg)
	sink := &sseSink{
		h: h, w: w, watch: set.Watch, cors: !set.CORSManaged, mode: mode, cursors: spec.Cursors, cap: s.MaxHistorical, obs: obs,
		reqID:  httperr.RequestID(r.Context()),
		topic:  p.Topic(),
		view:   key,
		render: render,
		event:  s.Name,
	}
	if p.Batch != nil {
		sink.batch = stream.NewBatcher(p.BatchView, *p.Batch, DefaultBatchFrameBytes)
	}
	capSendBuffer(r, set.Watch.SendBufferBytes, h.log)
	ctx, leave := h.running.Join(r.Context(), p.SetKey())
	defer leave()
	end := stream.Run(ctx, h.eng, &spec, sink)
	if sink.sse != nil {
		defer h.streams.Add(-1)
	}
	sink.end(r, ep, end)
}

// limits are the bounds of every stream the watch settings set.
func (ws WatchSettings) limits() stream.Limits {
	return stream.Limits{Heartbeat: ws.Heartbeat, MaxDuration: ws.MaxDuration, PageSize: ws.ReplayBatchSize,
		PageDelay: ws.ReplayBatchDelay, QueueSize: ws.LiveQueueSize, MaxLag: ws.MaxLag}
}

// writePrepareError answers a watch or replay request that
// stream.Prepare refused: a denied access or destination as package auth
// answers it, anything else as a request error of the endpoint.
func (h *Handlers) writePrepareError(w http.ResponseWriter, r *http.Request, set *Settings, ep endpoint, err error) {
	var (
		refused *ecpdsRefusal
		denied  *auth.Error
	)
	switch {
	case errors.As(err, &refused) && refused.internal:
		auth.WriteInternalError(w, r, refused.denied.Message)
	case errors.As(err, &denied):
		auth.WriteError(w, r, set.Auth.Direct, denied)
	default:
		writeRequestError(w, r, ep, err)
	}
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

// sseSink is the SSE transport of one watch or replay: it renders what the
// runner hands it as Server-Sent Events (Aviso's Server-Sent Events,
// docs/api.md) and writes the stream's end as connection-closing.
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
	// batch, when the request asked for containers, collects each burst
	// of records into container frames (nil: one event per record).
	batch *stream.Batcher
	// event is the event type, for the ids of container frames.
	event string

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
// error event and the stream goes on. A stream that asked for containers
// collects the record into the burst's container instead.
func (s *sseSink) Record(rec *engine.Record, ph stream.Phase) error {
	if s.batch == nil {
		return s.record(rec, ph)
	}
	if n, pending := s.batch.Pending(); n > 0 && pending != ph {
		if err := s.emitBatch(); err != nil {
			return err
		}
	}
	if s.batch.Add(rec, ph) {
		return s.emitBatch()
	}
	return nil
}

// record queues one record's CloudEvent.
func (s *sseSink) record(rec *engine.Record, ph stream.Phase) error {
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

// Flush sends the queued events (and the burst's containers).
func (s *sseSink) Flush() error {
	if err := s.emitBatch(); err != nil {
		return err
	}
	return s.sse.flush()
}

// DefaultBatchFrameBytes bounds the container of one SSE batch event
// when the request's batch option leaves max_frame_bytes out.
const DefaultBatchFrameBytes = 1 << 20

// EventBatch is the SSE event of a container frame (herald).
const EventBatch = "batch"

// batchFrame is the data of a batch event (SSE) or frame (WebSocket,
// with the subscription's name and generation): the ids of the records
// the container holds, in order, and the container as the JSON value a
// payload of the format travels as (JSON as it is, text as a string,
// binary as base64).
type batchFrame struct {
	Type         string          `json:"type"`
	Phase        string          `json:"phase"`
	Topic        string          `json:"topic"`
	Format       string          `json:"format"`
	HeraldFormat string          `json:"heraldformat"`
	Count        int             `json:"count"`
	IDs          []string        `json:"ids"`
	Payload      json.RawMessage `json:"payload"`
}

// emitBatch queues the waiting burst as container events (and the
// records that travel on their own as their CloudEvents).
func (s *sseSink) emitBatch() error {
	if s.batch == nil {
		return nil
	}
	n, ph := s.batch.Pending()
	if n == 0 {
		return nil
	}
	for _, pc := range s.batch.Take() {
		if pc.Container == nil {
			if err := s.record(pc.Records[0], ph); err != nil {
				return err
			}
			continue
		}
		f := batchFrame{Type: "batch", Phase: ph.String(), Topic: s.topic, Format: s.batch.View().Name(),
			HeraldFormat: s.batch.View().Format().String(), Count: len(pc.Records), IDs: make([]string, len(pc.Records)), Payload: pc.Container}
		for i, r := range pc.Records {
			f.IDs[i] = s.event + "@" + strconv.FormatUint(r.Seq, 10)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as CloudEvents: '<' stays '<'
		if err := enc.Encode(f); err != nil {
			return err
		}
		b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
		if s.obs != nil {
			for range pc.Records {
				s.obs.EventSent()
			}
		}
		if err := s.sse.queue(EventBatch, b); err != nil {
			return err
		}
	}
	return nil
}

// Heartbeat writes a heartbeat event.
func (s *sseSink) Heartbeat() error {
	return s.sse.json(EventBeat, heartbeat{Timestamp: sseTime(s.h.now()), Topic: s.topic})
}

// HistoryDone writes replay_completed.
func (s *sseSink) HistoryDone() error {
	if err := s.emitBatch(); err != nil {
		return err
	}
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
	if end.Reason != stream.ClientGone && end.Reason != stream.SetupFailed && s.emitBatch() != nil {
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
