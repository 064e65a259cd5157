package server

import (
	"errors"
	"net/http"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/handlers"
)

// AdminReload serves POST /api/v1/admin/reload: the configuration file
// is read again and applied; `?force=true` applies a breaking payload
// schema change. The body is optional: empty, or a JSON object with an
// optional boolean "force". A server started without a configuration
// file answers 501.
func (s *Server) AdminReload(w http.ResponseWriter, r *http.Request) {
	id := httperr.RequestID(r.Context())
	if s.opts.ConfigPath == "" {
		s.h.NoReload(w, r)
		return
	}
	force, ok := s.h.ReloadRequest(w, r)
	if !ok {
		return
	}
	rep, err := s.Reload(r.Context(), ReloadOptions{Force: force, Trigger: "admin request " + id})
	if err != nil {
		var re *ReloadError
		switch {
		case errors.As(err, &re) && re.Code == ReloadRefused:
			httperr.WriteJSON(w, http.StatusConflict, handlers.ReloadErrorBody{Status: "error", Code: re.Code, Message: re.Message, Refused: re.Refused, RequestID: id})
		case errors.As(err, &re):
			httperr.WriteJSON(w, http.StatusBadRequest, handlers.ReloadErrorBody{Status: "error", Code: re.Code, Message: re.Message, RequestID: id})
		case errors.Is(err, engine.ErrUnavailable):
			s.log.Warn("reload failed: the backend is unavailable", "request_id", id, "error", err)
			w.Header().Set("Retry-After", "5")
			httperr.WriteJSON(w, http.StatusServiceUnavailable, handlers.ReloadErrorBody{Status: "error", Code: "SERVICE_UNAVAILABLE",
				Message: "the notification backend is unavailable, so the streams of the new configuration cannot be set up; the running configuration is unchanged: retry later", RequestID: id})
		default:
			s.log.Error("reload failed", "request_id", id, "error", err)
			httperr.WriteJSON(w, http.StatusInternalServerError, handlers.ReloadErrorBody{Status: "error", Code: "INTERNAL_ERROR",
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
