package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/session"
)

// endpoint names the labels and validation code of one endpoint family.
type endpoint struct {
	label string // "Invalid Watch Request"
	code  string // "INVALID_WATCH_REQUEST"
}

var (
	notifyEndpoint = endpoint{"Invalid Notification Request", session.CodeInvalidNotification}
	watchEndpoint  = endpoint{"Invalid Watch Request", session.CodeInvalidWatch}
	replayEndpoint = endpoint{"Invalid Replay Request", session.CodeInvalidReplay}
)

// writeRequestError answers a parse, event-type or validation error of a
// notify/watch/replay request with the right status, code and body.
func writeRequestError(w http.ResponseWriter, r *http.Request, ep endpoint, err error) {
	id := httperr.RequestID(r.Context())
	var be *notification.BusyError
	if errors.As(err, &be) {
		// Not judged: the client retries the same payload.
		w.Header().Set("Retry-After", "1")
		msg := be.Error()
		httperr.WriteJSON(w, http.StatusServiceUnavailable, httperr.ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: msg, RequestID: id})
		return
	}
	var ue *notification.UnknownEventTypeError
	if errors.As(err, &ue) {
		names := ue.Configured
		if names == nil {
			names = []string{}
		}
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.UnknownEventTypeBody{Code: "UNKNOWN_EVENT_TYPE", Error: "unknown_event_type", Message: ue.Error(), ConfiguredEventTypes: names, RequestID: id})
		return
	}
	code, msg, detail := requestError(ep, err)
	status := http.StatusBadRequest
	if code == codeTooLarge {
		status = http.StatusRequestEntityTooLarge
	}
	httperr.WriteJSON(w, status, httperr.ErrorBody{Code: code, Error: ep.label, Message: msg, Details: detail, RequestID: id})
}

// codeTooLarge is the error code of a request too large to take: a body
// over max_body_bytes, a batch over its count, and a notification whose
// stored record would exceed the backend's limit (HTTP 413).
const codeTooLarge = session.CodeTooLarge

// requestError classifies a parse, event-type or validation error of a
// request of endpoint ep: the API error code, the message and its
// innermost detail (session.ErrorCode: sessions answer with the same).
func requestError(ep endpoint, err error) (code, msg, detail string) {
	return session.ErrorCode(ep.code, err)
}

// validation wraps a message as a *notification.ValidationError.
func validation(msg string) error {
	return &notification.ValidationError{Message: msg, Detail: msg}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// observeCodecError tells the codec observer of a payload a codec
// refused, or could not take because its extension workers were busy. It
// sees the codec's name only, never payload values.
func (h *Handlers) observeCodecError(s *notification.Schema, err error) {
	if s == nil || s.Payload == nil || err == nil {
		return
	}
	var (
		pe *notification.PayloadError
		be *notification.BusyError
	)
	switch {
	case errors.As(err, &be):
		h.obs.CodecBusy(be.Codec)
	case errors.As(err, &pe):
		h.obs.CodecDecodeError(pe.Codec)
	}
}
