// Package sse is the Server-Sent Events transport of watch and replay
// streams: the writer that frames events (`event: <name>`, one JSON
// `data:` line, a blank line), the bodies of the control events, and the
// Sink that renders what stream.Run hands it and writes the stream's end
// as a connection-closing event with a reason the aviso client accepts.
//
// It must not know how a request became a stream (stream.Prepare) nor
// answer HTTP errors before the stream opens: package handlers does both.
package sse

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/stream"
)

// SSE event names (Aviso's Server-Sent Events, docs/api.md).
const (
	EventLive    = "live-notification"
	EventReplay  = "replay"
	EventControl = "replay-control"
	EventBeat    = "heartbeat"
	EventError   = "error"
	EventClosing = "connection-closing"
)

// DefaultWriteTimeout bounds one event write: a client that stops
// reading is dropped instead of holding a goroutine forever.
const DefaultWriteTimeout = 30 * time.Second

// writer writes Server-Sent Events: exactly `event: <name>`,
// `data: <one-line JSON>` and a blank line per event, flushed at once.
type writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     []byte
	now     func() time.Time
	timeout time.Duration
	// deadline, when set, is the latest time by which the queued output
	// must be written (the lag limit of the oldest live record in it);
	// it shortens the write timeout of the next write and is then reset.
	deadline time.Time
}

// minWriteTime is the shortest write deadline a lag limit may impose.
const minWriteTime = time.Second

// due records that the output queued from now on must be written by t;
// the earliest such time since the last write counts.
func (s *writer) due(t time.Time) {
	if s.deadline.IsZero() || t.Before(s.deadline) {
		s.deadline = t
	}
}

// writeDeadline is the deadline of the next write: the write timeout,
// shortened by a pending lag limit (but never below minWriteTime).
func (s *writer) writeDeadline() time.Time {
	d := s.now().Add(s.timeout)
	if !s.deadline.IsZero() && s.deadline.Before(d) {
		d = s.deadline
		if floor := time.Now().Add(minWriteTime); d.Before(floor) {
			d = floor
		}
	}
	return d
}

// startSSE writes the SSE response headers with status 200. anyOrigin
// adds Aviso's `Access-Control-Allow-Origin: *` (when package api does
// not manage CORS itself).
func startWriter(w http.ResponseWriter, now func() time.Time, timeout time.Duration, anyOrigin bool) *writer {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	if anyOrigin {
		h.Set("Access-Control-Allow-Origin", "*")
	}
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &writer{w: w, rc: http.NewResponseController(w), now: now, timeout: timeout}
	_ = s.rc.Flush()
	return s
}

// event writes one event whose data is already one line of JSON.
func (s *writer) event(name string, data []byte) error {
	if err := s.queue(name, data); err != nil {
		return err
	}
	return s.flush()
}

// sseBatchBytes is how much queued event text is written in one go.
const sseBatchBytes = 64 << 10

// queue adds one event to the pending output without flushing it to the
// client; flush (or event) sends everything queued. Replays queue a
// whole fetched page and flush once: one write instead of one per event.
func (s *writer) queue(name string, data []byte) error {
	s.buf = append(s.buf, "event: "...)
	s.buf = append(s.buf, name...)
	s.buf = append(s.buf, "\ndata: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
	if len(s.buf) >= sseBatchBytes {
		return s.write()
	}
	return nil
}

// write hands the queued text to the response writer.
func (s *writer) write() error {
	if len(s.buf) == 0 {
		return nil
	}
	_ = s.rc.SetWriteDeadline(s.writeDeadline())
	_, err := s.w.Write(s.buf)
	if cap(s.buf) > 4*sseBatchBytes {
		s.buf = nil // do not keep a large page's buffer for a quiet stream
	} else {
		s.buf = s.buf[:0]
	}
	return err
}

// flush sends everything queued to the client now.
func (s *writer) flush() error {
	if err := s.write(); err != nil {
		return err
	}
	_ = s.rc.SetWriteDeadline(s.writeDeadline())
	err := s.rc.Flush()
	s.deadline = time.Time{}
	return err
}

// json writes one event whose data is v encoded as JSON.
func (s *writer) json(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.event(name, b)
}

// sseTime formats a control-event timestamp: second-precision UTC.
func sseTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// Control-event bodies (Aviso's Server-Sent Events, docs/api.md).
type (
	connectionEstablished struct {
		Type                         string `json:"type"`
		Topic                        string `json:"topic"`
		Timestamp                    string `json:"timestamp"`
		ConnectionWillCloseInSeconds int    `json:"connection_will_close_in_seconds"`
		RequestID                    string `json:"request_id"`
	}
	replayStarted struct {
		Type         string  `json:"type"`
		Topic        string  `json:"topic"`
		FromSequence *uint64 `json:"from_sequence"`
		FromDate     *string `json:"from_date"`
		// EndSequence and ToDate describe a replay's end cursor (aviso
		// 0.13): the last sequence it can deliver and the to_date asked
		// for; null without one, and always null on a watch.
		EndSequence *uint64 `json:"end_sequence"`
		ToDate      *string `json:"to_date"`
		BatchSize   int     `json:"batch_size"`
		Timestamp   string  `json:"timestamp"`
		RequestID   string  `json:"request_id"`
	}
	replayCompleted struct {
		Type      string `json:"type"`
		Topic     string `json:"topic"`
		Timestamp string `json:"timestamp"`
	}
	replayLimitReached struct {
		Type       string `json:"type"`
		Topic      string `json:"topic"`
		MaxAllowed int    `json:"max_allowed"`
		Message    string `json:"message"`
		Timestamp  string `json:"timestamp"`
	}
	heartbeat struct {
		Timestamp string `json:"timestamp"`
		Topic     string `json:"topic"`
	}
	streamError struct {
		Error     string  `json:"error"`
		Message   string  `json:"message"`
		Topic     string  `json:"topic"`
		Sequence  *uint64 `json:"sequence,omitempty"`
		RequestID string  `json:"request_id"`
	}
	connectionClosing struct {
		Reason string `json:"reason"`
		// Cause (herald) is the precise reason of a stream herald ends for
		// a cause of its own (a reload, a watcher that fell behind, a lost
		// live feed): Reason is then one the aviso client accepts, so that
		// it reconnects by itself. Absent for aviso's own ends.
		Cause     string `json:"cause,omitempty"`
		Timestamp string `json:"timestamp"`
		Message   string `json:"message"`
		Topic     string `json:"topic"`
		// ResumeFromID (herald) is set when a live watch is closed because
		// it fell behind or lost its live feed: the from_id that continues
		// it with no gap.
		ResumeFromID *string `json:"resume_from_id,omitempty"`
		RequestID    string  `json:"request_id"`
	}
)

// Close reasons and their fixed messages (Aviso's Server-Sent Events,
// docs/api.md). These three are the only reasons the aviso client accepts in
// connection-closing: any other ends its listener for good.
const (
	ReasonEndOfStream = "end_of_stream"
	ReasonMaxDuration = "max_duration_reached"
	ReasonShutdown    = "server_shutdown"
)

var closeMessages = map[string]string{
	ReasonEndOfStream: "Stream completed",
	ReasonMaxDuration: "Connection reached maximum duration",
	ReasonShutdown:    "Server is shutting down gracefully",
}

// sseEnd is how an SSE stream ends for one of herald's own causes: an
// accepted reason (so the aviso client reconnects and resumes by itself),
// the cause (stream.Reason's name) and its message.
type sseEnd struct {
	reason  string
	message string
}

// causeEnds maps herald's stream ends that have no aviso reason of their
// own onto an accepted one. Every one reconnects the aviso client at once
// (end_of_stream before replay_completed, or on a watch, reconnects) with
// from_id = last received + 1; resume_from_id says the same for other
// clients.
var causeEnds = map[stream.Reason]sseEnd{
	stream.SchemaChanged: {ReasonEndOfStream, "The event type's schema changed; reconnect from resume_from_id to continue under the new schema"},
	stream.SchemaRemoved: {ReasonEndOfStream, "The event type was removed from the configuration"},
	stream.Lagging:       {ReasonEndOfStream, "The watcher fell behind the live notifications; reconnect from resume_from_id to continue"},
	stream.Overflow:      {ReasonEndOfStream, "The watcher fell behind the live notifications; reconnect from resume_from_id to continue"},
	stream.Gap:           {ReasonEndOfStream, "The live feed of this watch was interrupted; reconnect from resume_from_id to continue"},
	stream.HistoryFailed: {ReasonEndOfStream, "The notification backend is unavailable; reconnect later from resume_from_id"},
}

// connKey carries a request's connection in its context.
type connKey struct{}

// ConnContext is meant for http.Server.ConnContext: it puts each
// connection into its requests' contexts, so that a stream handler can
// bound the connection's kernel send buffer
// (watch_endpoint.stream_send_buffer_bytes). Without it streams keep the
// operating system's buffer.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// writeBufferSetter is a connection whose kernel send buffer can be set
// (*net.TCPConn, *net.UnixConn).
type writeBufferSetter interface {
	SetWriteBuffer(bytes int) error
}

// CapSendBuffer sets the socket send buffer of a stream's connection to
// the configured size. The kernel's auto-tuned buffer grows to megabytes
// for a client that does not read; a fixed one bounds what such a client
// holds in kernel memory, and max_lag_sec then ends it.
func CapSendBuffer(r *http.Request, n int, log *slog.Logger) {
	if n <= 0 {
		return
	}
	c, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return
	}
	if runtime.GOOS == "linux" {
		// Linux doubles the value asked for (the other half pays for its
		// bookkeeping), fills about 3/4 of the result with data, and may
		// let the last segment being built run past it by up to one
		// segment (64 KiB with segmentation offload): ask for a quarter,
		// so that what a client leaves unread stays within the
		// configured size.
		n = max(n/4, 1)
	}
	if ws, ok := c.(writeBufferSetter); ok {
		if err := ws.SetWriteBuffer(n); err != nil {
			log.Debug("stream send buffer not set", "request_id", httperr.RequestID(r.Context()), "error", err)
		}
	}
}
