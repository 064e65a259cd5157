package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/jsonplain"
	"github.com/herald-gateway/herald/notification"
)

// NotifyResponse is the body of a successful notify (Aviso's notify,
// docs/api.md), plus herald's notification_id: the stored notification's
// CloudEvent id (`<event_type>@<sequence>`), as the session's notify reply
// carries it.
type NotifyResponse struct {
	Status         string `json:"status"`
	RequestID      string `json:"request_id"`
	ProcessedAt    string `json:"processed_at"`
	NotificationID string `json:"notification_id"`
}

// Notify serves POST /api/v1/notification: parse, validate and
// canonicalise, then store; 200 means the backend acknowledged it.
func (h *Handlers) Notify(w http.ResponseWriter, r *http.Request) {
	obs := h.observeNotify(&w)
	defer obs.done()
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, notifyEndpoint.label, notifyEndpoint.code, err)
		return
	}
	reg := set.Registry
	req, err := notification.ParseNotifyRequest(body)
	if err != nil {
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	s, err := reg.Lookup(req.EventType)
	if err != nil {
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	obs.setSchema(s)
	if err := req.CheckNoEnd("/notification"); err != nil {
		// Refused before `point` and before authorisation, as aviso-server
		// does (Aviso's notify, docs/api.md step 0).
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	if _, ok := req.Identifier[notification.FieldPoint]; ok {
		// `point` is refused before authorisation (Aviso's notify, docs/api.md
		// step 1); Schema.Notify checks it first and owns the message.
		_, err := s.Notify(req.Identifier, req.Payload)
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	if !h.authorizeStream(w, r, set, s, auth.OpWrite) {
		return
	}
	n, err := h.buildNotification(r.Context(), s, req)
	if err != nil {
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	ctx, span := h.trace.Start(r.Context(), n, len(body))
	seq, err := h.trace.PublishSeq(ctx, h.eng, n)
	h.trace.Done(span, s.Name, seq, err)
	if err != nil {
		h.writeStorageError(w, r, err)
		return
	}
	writeNotified(w, httperr.RequestID(r.Context()), h.now(), s.Name, seq)
}

// processedAtLayout is the layout of a notify response's processed_at.
const processedAtLayout = "2006-01-02T15:04:05Z"

// writeNotified writes the 200 of a stored notify: the NotifyResponse
// that httperr.WriteJSON writes, byte for byte, built without reflection
// when no string in it needs escaping (a request id or event type with
// other bytes goes through encoding/json).
func writeNotified(w http.ResponseWriter, requestID string, at time.Time, eventType string, seq uint64) {
	b, ok := appendNotified(make([]byte, 0, 160), requestID, at, eventType, seq)
	if !ok {
		httperr.WriteJSON(w, http.StatusOK, NotifyResponse{
			Status:         "success",
			RequestID:      requestID,
			ProcessedAt:    at.UTC().Format(processedAtLayout),
			NotificationID: eventType + "@" + strconv.FormatUint(seq, 10),
		})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// appendNotified appends the NotifyResponse of a stored notify as
// encoding/json writes it, with WriteJSON's newline; false when the
// request id or the event type has a byte that encoding/json escapes.
func appendNotified(b []byte, requestID string, at time.Time, eventType string, seq uint64) ([]byte, bool) {
	if !jsonplain.String(requestID) || !jsonplain.String(eventType) {
		return b, false
	}
	b = append(b, `{"status":"success","request_id":"`...)
	b = append(b, requestID...)
	b = append(b, `","processed_at":"`...)
	b = at.UTC().AppendFormat(b, processedAtLayout)
	b = append(b, `","notification_id":"`...)
	b = append(b, eventType...)
	b = append(b, '@')
	b = strconv.AppendUint(b, seq, 10)
	return append(b, "\"}\n"...), true
}

// buildNotification validates a parsed notify request against its schema
// and builds the notification to store: the validation that Notify and
// NotifyBatch share.
func (h *Handlers) buildNotification(ctx context.Context, s *notification.Schema, req *notification.Request) (*notification.Notification, error) {
	n, err := s.NotifyContext(ctx, req.Identifier, req.Payload)
	if err != nil {
		h.observeCodecError(s, err)
		return nil, err
	}
	// A typed payload can grow past the backend's limit on one record
	// once decoded (a short number becomes an 8-byte float): refused as
	// too large, before anything is stored.
	if err := engine.CheckSize(h.eng, n); err != nil {
		return nil, err
	}
	return n, nil
}

func (h *Handlers) writeStorageError(w http.ResponseWriter, r *http.Request, err error) {
	id := httperr.RequestID(r.Context())
	if errors.Is(err, engine.ErrUnavailable) {
		w.Header().Set("Retry-After", "5")
		msg := "the notification backend is unavailable; nothing was stored, retry later"
		httperr.WriteJSON(w, http.StatusServiceUnavailable, httperr.ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: msg, RequestID: id})
		return
	}
	var te *engine.TooLargeError
	if errors.As(err, &te) {
		msg := te.Error()
		httperr.WriteJSON(w, http.StatusRequestEntityTooLarge, httperr.ErrorBody{Code: codeTooLarge, Error: notifyEndpoint.label, Message: msg, Details: msg, RequestID: id})
		return
	}
	if errors.Is(err, engine.ErrInvalid) {
		msg := err.Error()
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.ErrorBody{Code: notifyEndpoint.code, Error: notifyEndpoint.label, Message: msg, Details: msg, RequestID: id})
		return
	}
	h.log.Error("notification storage failed", "request_id", id, "error", err)
	httperr.WriteJSON(w, http.StatusInternalServerError, httperr.ErrorBody{Code: "NOTIFICATION_STORAGE_FAILED", Error: "Notification Storage Failed",
		Message: "storing the notification failed; it was not stored", Details: "backend write failed", RequestID: id})
}
