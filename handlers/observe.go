package handlers

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/stream"
)

// Observer is told what the handlers do, for metrics (package metrics
// implements it; Options.Observer, nil records nothing). Every method
// must be cheap and safe for concurrent use.
type Observer interface {
	NotifyObserver
	StreamObservers
	SessionObserver
	ECPDSObserver
	CodecObserver
}

// Transports, as the metrics label them.
const (
	TransportHTTP      = "http"
	TransportSSE       = "sse"
	TransportWebSocket = "websocket"
)

// Stream routes, as the metrics label them (the routes' patterns).
const (
	RouteWatch   = "/api/v1/watch"
	RouteReplay  = "/api/v1/replay"
	RouteSession = "/api/v1/session"
)

// EventTypeUnknown labels a notification refused before its event type
// was known (unparsable, or an event type that is not configured);
// EventTypeGeneric one of a schema-less event type (non-strict mode).
const (
	EventTypeUnknown = "unknown"
	EventTypeGeneric = "generic"
)

// NotifyObserver is told the outcome of notifications.
type NotifyObserver interface {
	// Notified: n notifications of eventType, through transport
	// (TransportHTTP or TransportWebSocket), were accepted (code "") or
	// refused with the API error code. d is the time from the request's
	// start to the outcome (0: not measured, as for a producer batch).
	Notified(transport, eventType, code string, n int, d time.Duration)
}

// StreamLabels name one stream for the metrics.
type StreamLabels struct {
	// Transport is TransportSSE or TransportWebSocket.
	Transport string
	// Route is RouteWatch, RouteReplay or RouteSession.
	Route string
	// EventType is the stream's event type (a configured name, or
	// EventTypeGeneric).
	EventType string
	// User is the authenticated user ("" when anonymous).
	User string
}

// StreamObservers hands out the observer of each stream.
type StreamObservers interface {
	// Stream returns the observer of one stream about to run.
	Stream(l StreamLabels) StreamObserver
}

// StreamObserver is told what one stream does: what the runner reports
// (stream.Observer), and for SSE each notification event written and
// each error event sent into the stream.
type StreamObserver interface {
	stream.Observer
	EventSent()
	StreamError()
}

// SessionObserver is told about WebSocket sessions.
type SessionObserver interface {
	// SessionOpened and SessionClosed bracket one session.
	SessionOpened()
	SessionClosed()
	// DroppedRows: a DROPPING subscription discarded n events.
	DroppedRows(n int)
}

// ECPDSObserver is told each ECPDS access decision.
type ECPDSObserver interface {
	ECPDSDecision(outcome string)
}

// CodecObserver is told the failures of typed payloads: a payload that
// the named codec could not decode, and a payload refused because the
// codec was busy (BUSY).
type CodecObserver interface {
	CodecDecodeError(codec string)
	CodecBusy(codec string)
}

// NoObserver is the Observer that records nothing.
type NoObserver struct{}

// Notified implements NotifyObserver.
func (NoObserver) Notified(string, string, string, int, time.Duration) {}

// Stream implements StreamObservers.
func (NoObserver) Stream(StreamLabels) StreamObserver { return noStream{} }

// SessionOpened implements SessionObserver.
func (NoObserver) SessionOpened() {}

// SessionClosed implements SessionObserver.
func (NoObserver) SessionClosed() {}

// DroppedRows implements SessionObserver.
func (NoObserver) DroppedRows(int) {}

// ECPDSDecision implements ECPDSObserver.
func (NoObserver) ECPDSDecision(string) {}

// CodecDecodeError implements CodecObserver.
func (NoObserver) CodecDecodeError(string) {}

// CodecBusy implements CodecObserver.
func (NoObserver) CodecBusy(string) {}

// noStream is the StreamObserver of NoObserver.
type noStream struct{}

func (noStream) Opened()        {}
func (noStream) Delivered(bool) {}
func (noStream) HistoryPage()   {}
func (noStream) Ended(string)   {}
func (noStream) EventSent()     {}
func (noStream) StreamError()   {}

// eventTypeLabel is the metrics label of a schema (nil: not known).
func eventTypeLabel(s *notification.Schema) string {
	if s == nil {
		return EventTypeUnknown
	}
	if s.Generic {
		return EventTypeGeneric
	}
	return s.Name
}

// streamUser is the user of a stream request ("" when anonymous).
func streamUser(id *auth.Identity) string {
	if id == nil {
		return ""
	}
	return id.Username
}

// notifyRecorder records the outcome of one HTTP notify: it reads the
// API error code from the JSON body of a refusal, and the handler sets
// the event type once it is known.
type notifyRecorder struct {
	http.ResponseWriter
	h      *Handlers
	start  time.Time
	schema *notification.Schema
	// n is the number of notifications the request stores (1; more for
	// a payload that unfolds).
	n      int
	status int
	code   string
}

// observeNotify wraps *w with the recorder of a notify when metrics are
// on; done records the outcome (call it deferred). It returns nil when
// nothing is observed.
func (h *Handlers) observeNotify(w *http.ResponseWriter) *notifyRecorder {
	if !h.observing {
		return nil
	}
	rec := &notifyRecorder{ResponseWriter: *w, h: h, start: time.Now(), n: 1}
	*w = rec
	return rec
}

// setSchema records the event type of the request.
func (rec *notifyRecorder) setSchema(s *notification.Schema) {
	if rec != nil {
		rec.schema = s
	}
}

// done reports the outcome.
func (rec *notifyRecorder) done() {
	if rec == nil {
		return
	}
	if rec.status == 0 || rec.status == http.StatusOK {
		rec.h.obs.Notified(TransportHTTP, eventTypeLabel(rec.schema), "", rec.n, time.Since(rec.start))
		return
	}
	code := rec.code
	if code == "" {
		code = http.StatusText(rec.status)
	}
	rec.h.obs.Notified(TransportHTTP, eventTypeLabel(rec.schema), code, rec.n, time.Since(rec.start))
}

// WriteHeader records the status.
func (rec *notifyRecorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

// Write reads the error code of a refusal's body.
func (rec *notifyRecorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status != http.StatusOK && rec.code == "" {
		var body struct {
			Code string `json:"code"`
		}
		if json.Unmarshal(b, &body) == nil {
			rec.code = body.Code
		}
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap returns the underlying writer (http.ResponseController).
func (rec *notifyRecorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// sessionObserver is the session.Observer of the handlers' observer.
type sessionObserver struct{ Observer }

// Notified implements session.Observer.
func (o sessionObserver) Notified(sc *notification.Schema, code string, n int, d time.Duration) {
	o.Observer.Notified(TransportWebSocket, eventTypeLabel(sc), code, n, d)
}

// Stream implements session.Observer.
func (o sessionObserver) Stream(sc *notification.Schema, user string) stream.Observer {
	return o.Observer.Stream(StreamLabels{Transport: TransportWebSocket, Route: RouteSession, EventType: eventTypeLabel(sc), User: user})
}
