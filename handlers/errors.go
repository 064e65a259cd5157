package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"herald/api/httperr"
	"herald/notification"
)

// endpoint names the labels and validation code of one endpoint family.
type endpoint struct {
	label string // "Invalid Watch Request"
	code  string // "INVALID_WATCH_REQUEST"
}

var (
	notifyEndpoint = endpoint{"Invalid Notification Request", "INVALID_NOTIFICATION_REQUEST"}
	watchEndpoint  = endpoint{"Invalid Watch Request", "INVALID_WATCH_REQUEST"}
	replayEndpoint = endpoint{"Invalid Replay Request", "INVALID_REPLAY_REQUEST"}
)

// writeRequestError answers a parse, event-type or validation error of a
// notify/watch/replay request with the right status, code and body.
func writeRequestError(w http.ResponseWriter, r *http.Request, ep endpoint, err error) {
	id := httperr.RequestID(r.Context())
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
	httperr.WriteJSON(w, http.StatusBadRequest, httperr.ErrorBody{Code: code, Error: ep.label, Message: msg, Details: detail, RequestID: id})
}

// requestError classifies a parse, event-type or validation error: the
// API error code, the message and its innermost detail. Every transport
// answers with these.
func requestError(ep endpoint, err error) (code, msg, detail string) {
	var (
		pe *notification.ParseError
		ue *notification.UnknownEventTypeError
		ve *notification.ValidationError
	)
	switch {
	case errors.As(err, &pe):
		return pe.Kind.Code(), pe.Error(), pe.Detail
	case errors.As(err, &ue):
		return "UNKNOWN_EVENT_TYPE", ue.Error(), ue.Error()
	case errors.As(err, &ve):
		return ep.code, ve.Message, ve.Detail
	}
	return ep.code, err.Error(), err.Error()
}

// validation wraps a message as a *notification.ValidationError.
func validation(msg string) error {
	return &notification.ValidationError{Message: msg, Detail: msg}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
