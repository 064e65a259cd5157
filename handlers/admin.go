package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	jsonv2 "github.com/go-json-experiment/json"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// AdminDeleteResponse is the body of DELETE
// /api/v1/admin/notification/{notification_id} (Aviso's admin endpoints,
// docs/api.md).
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
	raw := pathParam(r, "notification_id")
	id := httperr.RequestID(r.Context())
	name, seq, err := ParseNotificationID(raw)
	if err != nil {
		httperr.WriteJSON(w, http.StatusBadRequest, AdminDeleteResponse{Message: err.Error(), NotificationID: raw, RequestID: id})
		return
	}
	stream := h.Registry().ResolveStream(name)
	if err := checkStreamName(stream); err != nil {
		httperr.WriteJSON(w, http.StatusBadRequest, AdminDeleteResponse{Message: "notification id: " + err.Error(), NotificationID: raw, RequestID: id})
		return
	}
	err = h.eng.Delete(r.Context(), stream, seq)
	switch {
	case err == nil:
		httperr.WriteJSON(w, http.StatusOK, AdminDeleteResponse{Success: true, Message: "Notification deleted", NotificationID: raw, RequestID: id})
	case errors.Is(err, engine.ErrNotFound):
		httperr.WriteJSON(w, http.StatusNotFound, AdminDeleteResponse{Message: "Notification not found", NotificationID: raw, RequestID: id})
	case errors.Is(err, engine.ErrInvalid):
		httperr.WriteJSON(w, http.StatusBadRequest, AdminDeleteResponse{Message: "notification id: " + err.Error(), NotificationID: raw, RequestID: id})
	case errors.Is(err, engine.ErrUnavailable):
		w.Header().Set("Retry-After", "5")
		httperr.WriteJSON(w, http.StatusServiceUnavailable, AdminDeleteResponse{Message: "Failed to delete notification: the notification backend is unavailable; retry later", NotificationID: raw, RequestID: id})
	default:
		h.log.Error("admin delete failed", "request_id", id, "notification_id", raw, "error", err)
		httperr.WriteJSON(w, http.StatusInternalServerError, AdminDeleteResponse{Message: "Failed to delete notification: backend error", NotificationID: raw, RequestID: id})
	}
}

// AdminWipeStream serves DELETE /api/v1/admin/wipe/stream with body
// {"stream_name": "..."}.
func (h *Handlers) AdminWipeStream(w http.ResponseWriter, r *http.Request) {
	id := httperr.RequestID(r.Context())
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, "Invalid Wipe Request", "INVALID_REQUEST_SHAPE", err)
		return
	}
	var req struct {
		StreamName *string `json:"stream_name"`
	}
	// Keys are matched exactly (encoding/json would take "Stream_Name"),
	// unknown and repeated keys are refused.
	err = jsonv2.Unmarshal(body, &req, jsonv2.RejectUnknownMembers(true))
	if err != nil || req.StreamName == nil || strings.TrimSpace(*req.StreamName) == "" {
		msg := `body must be a JSON object {"stream_name": "<STREAM>"}`
		if err != nil {
			msg += ": " + httperr.JSONErrorText(err)
		}
		httperr.WriteJSON(w, http.StatusBadRequest, AdminWipeResponse{Message: msg, RequestID: id})
		return
	}
	// An event-type name (exact, else case-insensitive) is resolved to
	// its topic base, as aviso-server 0.13 does; any other name is the
	// stream key as given.
	name := *req.StreamName
	stream := h.Registry().ResolveStream(name)
	if err := checkStreamName(stream); err != nil {
		httperr.WriteJSON(w, http.StatusBadRequest, AdminWipeResponse{Message: "stream_name: " + err.Error(), RequestID: id})
		return
	}
	if err := h.eng.WipeStream(r.Context(), stream); err != nil {
		switch {
		case errors.Is(err, engine.ErrNotFound):
			msg := "Stream not found: " + name
			if names := h.Registry().Names(); len(names) > 0 {
				msg += ". Known event types: " + strings.Join(names, ", ")
			}
			httperr.WriteJSON(w, http.StatusNotFound, AdminWipeResponse{Message: msg, RequestID: id})
		case errors.Is(err, engine.ErrInvalid):
			httperr.WriteJSON(w, http.StatusBadRequest, AdminWipeResponse{Message: "stream_name: " + err.Error(), RequestID: id})
		case errors.Is(err, engine.ErrUnavailable):
			w.Header().Set("Retry-After", "5")
			httperr.WriteJSON(w, http.StatusServiceUnavailable, AdminWipeResponse{Message: "Failed to wipe stream: " + name + ": the notification backend is unavailable; retry later", RequestID: id})
		default:
			h.log.Error("admin wipe stream failed", "request_id", id, "stream", name, "error", err)
			httperr.WriteJSON(w, http.StatusInternalServerError, AdminWipeResponse{Message: "Failed to wipe stream: " + name + ": backend error", RequestID: id})
		}
		return
	}
	httperr.WriteJSON(w, http.StatusOK, AdminWipeResponse{Success: true, Message: "Successfully wiped stream: " + name, RequestID: id})
}

// AdminWipeAll serves DELETE /api/v1/admin/wipe/all.
func (h *Handlers) AdminWipeAll(w http.ResponseWriter, r *http.Request) {
	id := httperr.RequestID(r.Context())
	if err := h.eng.WipeAll(r.Context()); err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			w.Header().Set("Retry-After", "5")
			httperr.WriteJSON(w, http.StatusServiceUnavailable, AdminWipeResponse{Message: "Failed to wipe all data: the notification backend is unavailable; retry later", RequestID: id})
			return
		}
		h.log.Error("admin wipe all failed", "request_id", id, "error", err)
		httperr.WriteJSON(w, http.StatusInternalServerError, AdminWipeResponse{Message: "Failed to wipe all data: backend error", RequestID: id})
		return
	}
	httperr.WriteJSON(w, http.StatusOK, AdminWipeResponse{Success: true, Message: "Successfully wiped all data", RequestID: id})
}

// checkStreamName refuses a stream key that no herald stream can have: a
// stream is named after a topic base, so anything else (wildcards, dots,
// path separators, whitespace, or more than topic.MaxBaseBytes bytes) is
// a client's mistake, answered before the backend is asked.
func checkStreamName(name string) error {
	if topic.ValidBase(name) {
		return nil
	}
	shown := name
	if len(shown) > 64 {
		shown = strings.ToValidUTF8(shown[:64], "") + "…"
	}
	return fmt.Errorf("%q (%d bytes) is not a valid stream or event type name: it must match %s", shown, len(name), topic.BaseRule)
}

// pathParam returns a route parameter percent-decoded: the router matches
// on the escaped path, so a client that encodes a segment (JavaScript's
// encodeURIComponent turns '@' into %40) gets the value it meant, as with
// aviso-server. A segment that is not valid percent-encoding is kept as
// sent.
func pathParam(r *http.Request, name string) string {
	raw := chi.URLParam(r, name)
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

// ReloadErrorBody is the body of a refused or failed reload
// (POST /api/v1/admin/reload).
type ReloadErrorBody struct {
	Status    string   `json:"status"`
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	Refused   []string `json:"refused,omitempty"`
	RequestID string   `json:"request_id"`
}

// ReloadRequest reads and checks the request of POST
// /api/v1/admin/reload: the body is optional (empty, or a JSON object
// with an optional boolean "force"), and `?force=true` forces too. On a
// bad request it answers it and returns false. The reload itself is
// package server's.
func (h *Handlers) ReloadRequest(w http.ResponseWriter, r *http.Request) (force, ok bool) {
	id := httperr.RequestID(r.Context())
	body, ok := h.ReadBody(w, r, "Invalid Reload Request", "INVALID_REQUEST_SHAPE")
	if !ok {
		return false, false
	}
	var req struct {
		Force *bool `json:"force"`
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := jsonv2.Unmarshal(body, &req, jsonv2.RejectUnknownMembers(true)); err != nil {
			msg := `the body is optional; when sent it must be a JSON object {"force": true|false}: ` + httperr.JSONErrorText(err)
			httperr.WriteJSON(w, http.StatusBadRequest, ReloadErrorBody{Status: "error", Code: "INVALID_REQUEST_SHAPE", Message: msg, RequestID: id})
			return false, false
		}
	}
	force = req.Force != nil && *req.Force
	if q := r.URL.Query().Get("force"); q != "" {
		v, err := strconv.ParseBool(q)
		if err != nil {
			httperr.WriteJSON(w, http.StatusBadRequest, ReloadErrorBody{Status: "error", Code: "INVALID_REQUEST_SHAPE",
				Message: "query parameter force must be true or false, got " + strconv.Quote(q), RequestID: id})
			return false, false
		}
		force = force || v
	}
	return force, true
}

// NoReload answers POST /api/v1/admin/reload on a server started without
// a configuration file to reload: 501, once the request is checked.
func (h *Handlers) NoReload(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.ReloadRequest(w, r); !ok {
		return
	}
	httperr.WriteJSON(w, http.StatusNotImplemented, ReloadErrorBody{Status: "error", Code: "NOT_IMPLEMENTED",
		Message: "this server was started without a configuration file to reload", RequestID: httperr.RequestID(r.Context())})
}
