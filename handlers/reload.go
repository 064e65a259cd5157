package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"herald/api/httperr"
	"herald/engine"
)

// Reloader re-reads the configuration the process started with and
// applies it (package server implements it).
type Reloader interface {
	Reload(ctx context.Context, opts ReloadOptions) (*ReloadReport, error)
}

// ReloadOptions qualify one reload.
type ReloadOptions struct {
	// Force applies a reload that a compatibility rule would refuse (a
	// breaking payload schema change).
	Force bool
	// Trigger says what asked for the reload ("SIGHUP", "admin request"),
	// for the logs.
	Trigger string
}

// ReloadReport is what a reload changed. Each list is sorted and never
// nil, so that it encodes as [].
type ReloadReport struct {
	// Fingerprint identifies the configuration now in force; Previous the
	// one before.
	Fingerprint string `json:"fingerprint"`
	Previous    string `json:"previous_fingerprint"`
	// Added, Removed and Changed are event types; Changed are those whose
	// base, key order, identifier handlers or payload rules changed (their
	// open streams ended with schema_changed).
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
	// StorageReconciled are event types whose storage policy changed and
	// whose stream was reconciled.
	StorageReconciled []string `json:"storage_reconciled"`
	// Settings are the other settings that changed (config key paths).
	Settings []string `json:"settings_changed"`
	// PayloadSchemas are the event types whose payload schema (the
	// internal schema of their payload codec) changed, each with the
	// verdict it was judged by.
	PayloadSchemas []PayloadChange `json:"payload_schemas"`
	// StreamsEnded counts the open watch and replay streams ended.
	StreamsEnded int `json:"streams_ended"`
}

// PayloadChange is the verdict on one event type's payload schema change
// in a reload: whether records stored under the previous schema can be
// read under the new one (the backward verdict of spec 002 by field
// name). A compatible change applies and ends only the event type's
// streams that asked for a format; a breaking one is refused unless the
// reload is forced, and when forced ends all its streams.
type PayloadChange struct {
	EventType string `json:"event_type"`
	// Codec and PreviousCodec name the payload codec now and before (""
	// for none).
	Codec         string `json:"codec"`
	PreviousCodec string `json:"previous_codec"`
	// Fingerprint and PreviousFingerprint are the 64-bit fingerprints of
	// the internal schemas ("" for none); stored records carry the one
	// they were written under.
	Fingerprint         string `json:"fingerprint"`
	PreviousFingerprint string `json:"previous_fingerprint"`
	// Compatible is the verdict; Breaks its reasons when breaking (never
	// nil).
	Compatible bool     `json:"compatible"`
	Breaks     []string `json:"breaks"`
	// Forced is true for a breaking change applied by a forced reload.
	Forced bool `json:"forced"`
}

// ReloadError is a reload that changed nothing.
type ReloadError struct {
	// Code is ReloadInvalid or ReloadRefused.
	Code string
	// Message says what was wrong, with the messages startup gives.
	Message string
	// Refused lists the settings that cannot change while herald runs,
	// or the breaking steps of a payload schema change, one an item.
	Refused []string
}

// Reload error codes.
const (
	// ReloadInvalid: the new configuration does not load or validate.
	ReloadInvalid = "CONFIG_INVALID"
	// ReloadRefused: the new configuration changes settings that need a
	// restart, or a payload schema incompatibly (without force).
	ReloadRefused = "RELOAD_REFUSED"
)

// Error implements error.
func (e *ReloadError) Error() string { return e.Message }

// reloadErrorBody is the body of a failed reload.
type reloadErrorBody struct {
	Status    string   `json:"status"`
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	Refused   []string `json:"refused,omitempty"`
	RequestID string   `json:"request_id"`
}

// AdminReload serves POST /api/v1/admin/reload: the configuration file
// is read again and applied; `?force=true` applies a breaking payload
// schema change. The body is optional: empty, or a JSON object with an
// optional boolean "force".
func (h *Handlers) AdminReload(w http.ResponseWriter, r *http.Request) {
	id := httperr.RequestID(r.Context())
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, "Invalid Reload Request", "INVALID_REQUEST_SHAPE", err)
		return
	}
	var req struct {
		Force *bool `json:"force"`
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := jsonv2.Unmarshal(body, &req, jsonv2.RejectUnknownMembers(true)); err != nil {
			msg := `the body is optional; when sent it must be a JSON object {"force": true|false}: ` + httperr.JSONErrorText(err)
			httperr.WriteJSON(w, http.StatusBadRequest, reloadErrorBody{Status: "error", Code: "INVALID_REQUEST_SHAPE", Message: msg, RequestID: id})
			return
		}
	}
	force := req.Force != nil && *req.Force
	if q := r.URL.Query().Get("force"); q != "" {
		v, err := strconv.ParseBool(q)
		if err != nil {
			httperr.WriteJSON(w, http.StatusBadRequest, reloadErrorBody{Status: "error", Code: "INVALID_REQUEST_SHAPE",
				Message: "query parameter force must be true or false, got " + strconv.Quote(q), RequestID: id})
			return
		}
		force = force || v
	}
	if h.reloader == nil {
		httperr.WriteJSON(w, http.StatusNotImplemented, reloadErrorBody{Status: "error", Code: "NOT_IMPLEMENTED",
			Message: "this server was started without a configuration file to reload", RequestID: id})
		return
	}
	rep, err := h.reloader.Reload(r.Context(), ReloadOptions{Force: force, Trigger: "admin request " + id})
	if err != nil {
		var re *ReloadError
		switch {
		case errors.As(err, &re) && re.Code == ReloadRefused:
			httperr.WriteJSON(w, http.StatusConflict, reloadErrorBody{Status: "error", Code: re.Code, Message: re.Message, Refused: re.Refused, RequestID: id})
		case errors.As(err, &re):
			httperr.WriteJSON(w, http.StatusBadRequest, reloadErrorBody{Status: "error", Code: re.Code, Message: re.Message, RequestID: id})
		case errors.Is(err, engine.ErrUnavailable):
			h.log.Warn("reload failed: the backend is unavailable", "request_id", id, "error", err)
			w.Header().Set("Retry-After", "5")
			httperr.WriteJSON(w, http.StatusServiceUnavailable, reloadErrorBody{Status: "error", Code: "SERVICE_UNAVAILABLE",
				Message: "the notification backend is unavailable, so the streams of the new configuration cannot be set up; the running configuration is unchanged: retry later", RequestID: id})
		default:
			h.log.Error("reload failed", "request_id", id, "error", err)
			httperr.WriteJSON(w, http.StatusInternalServerError, reloadErrorBody{Status: "error", Code: "INTERNAL_ERROR",
				Message: "the reload failed; the running configuration is unchanged", RequestID: id})
		}
		return
	}
	httperr.WriteJSON(w, http.StatusOK, struct {
		Status  string `json:"status"`
		Message string `json:"message"`
		*ReloadReport
		RequestID string `json:"request_id"`
	}{"success", "configuration reloaded", rep, id})
}
