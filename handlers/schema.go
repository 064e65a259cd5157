package handlers

import (
	"net/http"

	"herald/api/httperr"
	"herald/notification"
)

// SchemaList serves GET /api/v1/schema (reference §16).
func (h *Handlers) SchemaList(w http.ResponseWriter, r *http.Request) {
	httperr.WriteJSON(w, http.StatusOK, schemaListBody(h.Registry()))
}

// schemaListBody is the body of GET /api/v1/schema.
func schemaListBody(reg *notification.Registry) map[string]any {
	names := reg.Names()
	schemas := make(map[string]any, len(names))
	for _, n := range names {
		s, _ := reg.Schema(n)
		schemas[n] = s.Public()
	}
	body := map[string]any{
		"status":        "success",
		"schema":        schemas,
		"event_types":   names,
		"total_schemas": len(names),
	}
	if len(names) == 0 {
		body["message"] = "No notification schema configured"
	}
	return body
}

// SchemaGet serves GET /api/v1/schema/{event_type} (reference §16).
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
