package handlers

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"herald/engine"
	"herald/notification"
)

// AdminDeleteResponse is the body of DELETE
// /api/v1/admin/notification/{notification_id} (reference §15).
type AdminDeleteResponse struct {
	Success        bool   `json:"success"`
	Message        string `json:"message"`
	NotificationID string `json:"notification_id"`
	RequestID      string `json:"request_id"`
}

// AdminWipeResponse is the body of the wipe endpoints.
type AdminWipeResponse struct {
	Success   bool   `json:"success"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// ParseNotificationID splits an admin notification id
// `<stream_or_event_type>@<sequence>`: trimmed, split at the first '@',
// both parts non-empty, the sequence a u64 greater than zero.
func ParseNotificationID(raw string) (stream string, seq uint64, err error) {
	id := strings.TrimSpace(raw)
	name, num, ok := strings.Cut(id, "@")
	switch {
	case !ok:
		return "", 0, errors.New("notification id must have the form <event_type>@<sequence>, e.g. mars@42")
	case name == "":
		return "", 0, errors.New("notification id has an empty event type or stream before '@'")
	case num == "":
		return "", 0, errors.New("notification id has an empty sequence after '@'")
	}
	seq, err = notification.ParseSequence(num)
	if err != nil {
		return "", 0, errors.New("notification id sequence: " + err.Error())
	}
	if seq == 0 {
		return "", 0, errors.New("notification id sequence must be greater than zero")
	}
	return name, seq, nil
}

// AdminDelete serves DELETE /api/v1/admin/notification/{notification_id}.
func (h *Handlers) AdminDelete(w http.ResponseWriter, r *http.Request) {
	raw := chi.URLParam(r, "notification_id")
	id := RequestID(r.Context())
	name, seq, err := ParseNotificationID(raw)
	if err != nil {
		WriteJSON(w, http.StatusBadRequest, AdminDeleteResponse{Message: err.Error(), NotificationID: raw, RequestID: id})
		return
	}
	stream := h.Registry().ResolveStream(name)
	err = h.eng.Delete(r.Context(), stream, seq)
	switch {
	case err == nil:
		WriteJSON(w, http.StatusOK, AdminDeleteResponse{Success: true, Message: "Notification deleted", NotificationID: raw, RequestID: id})
	case errors.Is(err, engine.ErrNotFound):
		WriteJSON(w, http.StatusNotFound, AdminDeleteResponse{Message: "Notification not found", NotificationID: raw, RequestID: id})
	default:
		h.log.Error("admin delete failed", "request_id", id, "notification_id", raw, "error", err)
		WriteJSON(w, http.StatusInternalServerError, AdminDeleteResponse{Message: "Failed to delete notification: backend error", NotificationID: raw, RequestID: id})
	}
}

// AdminWipeStream serves DELETE /api/v1/admin/wipe/stream with body
// {"stream_name": "..."}.
func (h *Handlers) AdminWipeStream(w http.ResponseWriter, r *http.Request) {
	id := RequestID(r.Context())
	body, err := h.readBody(w, r)
	if err != nil {
		h.writeBodyError(w, r, "Invalid Wipe Request", "INVALID_REQUEST_SHAPE", err)
		return
	}
	var req struct {
		StreamName *string `json:"stream_name"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.StreamName == nil || strings.TrimSpace(*req.StreamName) == "" {
		msg := `body must be a JSON object {"stream_name": "<STREAM>"}`
		if err != nil {
			msg += ": " + err.Error()
		}
		WriteJSON(w, http.StatusBadRequest, AdminWipeResponse{Message: msg, RequestID: id})
		return
	}
	name := *req.StreamName
	if err := h.eng.WipeStream(r.Context(), h.Registry().ResolveStream(name)); err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, engine.ErrNotFound) {
			status = http.StatusNotFound
		}
		h.log.Error("admin wipe stream failed", "request_id", id, "stream", name, "error", err)
		WriteJSON(w, status, AdminWipeResponse{Message: "Failed to wipe stream: " + name + ": " + err.Error(), RequestID: id})
		return
	}
	WriteJSON(w, http.StatusOK, AdminWipeResponse{Success: true, Message: "Successfully wiped stream: " + name, RequestID: id})
}

// AdminWipeAll serves DELETE /api/v1/admin/wipe/all.
func (h *Handlers) AdminWipeAll(w http.ResponseWriter, r *http.Request) {
	id := RequestID(r.Context())
	if err := h.eng.WipeAll(r.Context()); err != nil {
		h.log.Error("admin wipe all failed", "request_id", id, "error", err)
		WriteJSON(w, http.StatusInternalServerError, AdminWipeResponse{Message: "Failed to wipe all data: " + err.Error(), RequestID: id})
		return
	}
	WriteJSON(w, http.StatusOK, AdminWipeResponse{Success: true, Message: "Successfully wiped all data", RequestID: id})
}
