package sse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/stream"
)

// Options are what a Sink needs of the request and of the server.
type Options struct {
	// Now is the clock of the events' timestamps; nil means time.Now.
	Now func() time.Time
	// WriteTimeout bounds one write (DefaultWriteTimeout when 0).
	WriteTimeout time.Duration
	// AnyOrigin adds Aviso's `Access-Control-Allow-Origin: *` (when no
	// CORS middleware manages the headers).
	AnyOrigin bool
	// Log receives the stream's end and rendering failures; nil discards.
	Log *slog.Logger
	// Cursors, PageSize and MaxDuration describe the stream in its opening
	// event; HistoryCap is the historical cap of
	// notification_replay_limit_reached.
	Cursors     stream.Cursors
	PageSize    int
	MaxDuration time.Duration
	HistoryCap  int
	// RequestID, Topic and EventType label the events.
	RequestID, Topic, EventType string
	// View keys the cached rendering of a record; Render renders it.
	View   any
	Render func(*engine.Record) ([]byte, error)
	// Observer counts events and error events; nil counts nothing.
	Observer Observer
	// Batch, when the request asked for containers, collects each burst of
	// records into container frames; nil sends one event per record.
	Batch *stream.Batcher
	// OnOpen is called once when the stream opens (its headers are
	// written); nil calls nothing.
	OnOpen func()
}

// Observer counts what a Sink sends.
type Observer interface {
	// EventSent counts one record sent (alone or in a container).
	EventSent()
	// StreamError counts one error event.
	StreamError()
}

// Sink is the SSE transport of one watch or replay, a stream.Sink: it
// renders what the runner hands it as Server-Sent Events (Aviso's
// Server-Sent Events, docs/api.md) and writes the stream's end as
// connection-closing. It is used by one goroutine.
type Sink struct {
	w   http.ResponseWriter
	o   Options
	log *slog.Logger
	sse *writer // nil until Open
}

// NewSink returns the sink of a stream answered on w.
func NewSink(w http.ResponseWriter, o Options) *Sink {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sink{w: w, o: o, log: log}
}

// Opened reports whether the stream opened: its headers and first event
// were written. Before that the request may still be answered with a
// JSON error.
func (s *Sink) Opened() bool { return s.sse != nil }

// Open starts the event stream: the headers and the opening event,
// replay_started for a stream with a start cursor, else
// connection_established.
func (s *Sink) Open(o stream.Opening) error {
	s.sse = startWriter(s.w, s.o.Now, s.o.WriteTimeout, s.o.AnyOrigin)
	if s.o.OnOpen != nil {
		s.o.OnOpen()
	}
	now := s.o.Now()
	if s.o.Cursors.HasStart() {
		ev := replayStarted{Type: "replay_started", Topic: s.o.Topic, FromSequence: s.o.Cursors.FromSeq,
			EndSequence: o.EndSeq, BatchSize: s.o.PageSize, Timestamp: sseTime(now), RequestID: s.o.RequestID}
		if s.o.Cursors.FromDate != nil {
			d := sseTime(*s.o.Cursors.FromDate)
			ev.FromDate = &d
		}
		if s.o.Cursors.ToDate != nil {
			d := sseTime(*s.o.Cursors.ToDate)
			ev.ToDate = &d
		}
		return s.sse.json(EventControl, ev)
	}
	return s.sse.json(EventLive, connectionEstablished{Type: "connection_established", Topic: s.o.Topic,
		Timestamp: sseTime(now), ConnectionWillCloseInSeconds: int(s.o.MaxDuration / time.Second), RequestID: s.o.RequestID})
}

// Record queues one CloudEvent, rendered once per record however many
// watchers share it; a record that cannot be rendered is reported with an
// error event and the stream goes on. A stream that asked for containers
// collects the record into the burst's container instead.
func (s *Sink) Record(rec *engine.Record, ph stream.Phase) error {
	if s.o.Batch == nil {
		return s.record(rec, ph)
	}
	if n, pending := s.o.Batch.Pending(); n > 0 && pending != ph {
		if err := s.emitBatch(); err != nil {
			return err
		}
	}
	if s.o.Batch.Add(rec, ph) {
		return s.emitBatch()
	}
	return nil
}

// record queues one record's CloudEvent.
func (s *Sink) record(rec *engine.Record, ph stream.Phase) error {
	data, err := rec.Rendered(s.o.View, s.o.Render)
	if err != nil {
		s.log.Error("CloudEvent creation failed", "request_id", s.o.RequestID, "sequence", rec.Seq, "error", err)
		seq := rec.Seq
		s.streamError()
		return s.sse.json(EventError, streamError{Error: "CloudEvent creation failed", Message: err.Error(), Topic: s.o.Topic, Sequence: &seq, RequestID: s.o.RequestID})
	}
	name := EventLive
	if ph == stream.History {
		name = EventReplay
	}
	if s.o.Observer != nil {
		s.o.Observer.EventSent()
	}
	return s.sse.queue(name, data)
}

// streamError counts an error event sent into the stream.
func (s *Sink) streamError() {
	if s.o.Observer != nil {
		s.o.Observer.StreamError()
	}
}

// Flush sends the queued events (and the burst's containers).
func (s *Sink) Flush() error {
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
func (s *Sink) emitBatch() error {
	if s.o.Batch == nil {
		return nil
	}
	n, ph := s.o.Batch.Pending()
	if n == 0 {
		return nil
	}
	for _, pc := range s.o.Batch.Take() {
		if pc.Container == nil {
			if err := s.record(pc.Records[0], ph); err != nil {
				return err
			}
			continue
		}
		f := batchFrame{Type: "batch", Phase: ph.String(), Topic: s.o.Topic, Format: s.o.Batch.View().Name(),
			HeraldFormat: s.o.Batch.View().Format().String(), Count: len(pc.Records), IDs: make([]string, len(pc.Records)), Payload: pc.Container}
		for i, r := range pc.Records {
			f.IDs[i] = s.o.EventType + "@" + strconv.FormatUint(r.Seq, 10)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as CloudEvents: '<' stays '<'
		if err := enc.Encode(f); err != nil {
			return err
		}
		b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
		if s.o.Observer != nil {
			for range pc.Records {
				s.o.Observer.EventSent()
			}
		}
		if err := s.sse.queue(EventBatch, b); err != nil {
			return err
		}
	}
	return nil
}

// Heartbeat writes a heartbeat event.
func (s *Sink) Heartbeat() error {
	return s.sse.json(EventBeat, heartbeat{Timestamp: sseTime(s.o.Now()), Topic: s.o.Topic})
}

// HistoryDone writes replay_completed.
func (s *Sink) HistoryDone() error {
	if err := s.emitBatch(); err != nil {
		return err
	}
	return s.sse.json(EventControl, replayCompleted{Type: "replay_completed", Topic: s.o.Topic, Timestamp: sseTime(s.o.Now())})
}

// Due bounds the next writes by a live record's lag limit.
func (s *Sink) Due(t time.Time) { s.sse.due(t) }

// End writes the stream's end: the closing events of the reason. A
// stream that never opened gets nothing (the caller answers it).
func (s *Sink) End(end stream.End) {
	if s.sse == nil {
		return
	}
	if end.Reason != stream.ClientGone && end.Reason != stream.SetupFailed && s.emitBatch() != nil {
		return
	}
	switch end.Reason {
	case stream.ClientGone, stream.SetupFailed:
		if end.Err != nil {
			s.log.Debug("stream ended: the client went away", "request_id", s.o.RequestID, "topic", s.o.Topic, "error", end.Err)
		}
	case stream.EndOfStream:
		s.closing(ReasonEndOfStream, nil)
	case stream.HistoryLimit:
		cap := s.o.HistoryCap
		msg := fmt.Sprintf("Historical replay limited to %d messages. Additional historical messages may be available but were not retrieved.", cap)
		if s.sse.json(EventControl, replayLimitReached{Type: "notification_replay_limit_reached", Topic: s.o.Topic,
			MaxAllowed: cap, Message: msg, Timestamp: sseTime(s.o.Now())}) != nil {
			return
		}
		s.closing(ReasonEndOfStream, nil)
	case stream.HistoryFailed:
		if errors.Is(end.Err, engine.ErrUnavailable) {
			// The backend is gone for now: end so that the client
			// reconnects (and is answered 503 with Retry-After until it
			// is back), never with an `error` event, which ends the aviso
			// client's listener for good.
			s.log.Warn("history fetch failed: the backend is unavailable; the client should reconnect from the resume id", "request_id", s.o.RequestID,
				"topic", s.o.Topic, "error", end.Err, "resume_from_id", end.ResumeFrom)
			s.causeClosing(end)
			return
		}
		// Any other failed read ends as aviso-server ends it: an error
		// event, then connection-closing, no replay_completed.
		s.log.Error("history fetch failed", "request_id", s.o.RequestID, "topic", s.o.Topic, "error", end.Err)
		s.streamError()
		if s.sse.json(EventError, streamError{Error: "stream_processing_failed", Message: end.Message, Topic: s.o.Topic, RequestID: s.o.RequestID}) != nil {
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
		s.log.Warn("watch closed; the client should reconnect from the resume id", "request_id", s.o.RequestID,
			"topic", s.o.Topic, "cause", end.Reason.String(), "reason", end.Message, "resume_from_id", end.ResumeFrom)
		s.causeClosing(end)
	default: // SchemaChanged, SchemaRemoved
		s.causeClosing(end)
	}
}

// causeClosing ends the stream for one of herald's own causes with a
// reason the aviso client accepts, the cause and the resume id.
func (s *Sink) causeClosing(end stream.End) {
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
	_ = s.sse.json(EventClosing, connectionClosing{Reason: ce.reason, Cause: end.Reason.String(), Timestamp: sseTime(s.o.Now()),
		Message: ce.message, Topic: s.o.Topic, ResumeFromID: resume, RequestID: s.o.RequestID})
}

// closing writes the final connection-closing event of one of aviso's
// own ends, with its fixed message.
func (s *Sink) closing(reason string, resume *string) {
	_ = s.sse.json(EventClosing, connectionClosing{Reason: reason, Timestamp: sseTime(s.o.Now()),
		Message: closeMessages[reason], Topic: s.o.Topic, ResumeFromID: resume, RequestID: s.o.RequestID})
}

// resumeID renders a resume sequence (nil for none).
func resumeID(seq uint64) *string {
	if seq == 0 {
		return nil
	}
	v := strconv.FormatUint(seq, 10)
	return &v
}
