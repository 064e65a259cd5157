package handlers

import (
	"net/http"

	"herald/api/httperr"
	"herald/session"
)

// SchemaList serves GET /api/v1/schema (Aviso's schema endpoints, docs/api.md).
func (h *Handlers) SchemaList(w http.ResponseWriter, r *http.Request) {
	httperr.WriteJSON(w, http.StatusOK, session.SchemaList(h.Registry()))
}

// SchemaGet serves GET /api/v1/schema/{event_type} (Aviso's schema endpoints,
// docs/api.md).
func (h *Handlers) SchemaGet(w http.ResponseWriter, r *http.Request) {
	reg := h.Registry()
	name := pathParam(r, "event_type")
	names := reg.Names()
	s, ok := reg.Schema(name)
	if !ok {
		msg := "Event type '" + name + "' not found"
		if len(names) == 0 {
			msg = "No notification schema configured"
		}
		httperr.WriteJSON(w, http.StatusNotFound, map[string]any{
			"status": "error", "message": msg, "available_types": names,
			"request_id": httperr.RequestID(r.Context()),
		})
		return
	}
	httperr.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "success", "event_type": name, "schema": s.Public(),
	})
}
