package handlers

import (
	"context"
	"net/http"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/session"
)

// SchemaList serves GET /api/v1/schema (Aviso's schema endpoints, docs/api.md).
func (h *Handlers) SchemaList(w http.ResponseWriter, r *http.Request) {
	httperr.WriteJSON(w, http.StatusOK, session.SchemaList(h.Registry()))
}

// SchemaGet serves GET /api/v1/schema/{event_type} (Aviso's schema
// endpoints, docs/api.md). For an event type with a typed payload the
// answer also lists, under payload_schema_versions, every payload schema
// version its records were written under (the registry of past schemas).
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
	body := map[string]any{"status": "success", "event_type": name, "schema": s.Public()}
	if s.Payload != nil {
		body["payload_schema_versions"] = h.payloadSchemas(r.Context(), s)
	}
	httperr.WriteJSON(w, http.StatusOK, body)
}

// PayloadSchemaVersion is one entry of payload_schema_versions in the answer of
// GET /api/v1/schema/{event_type}.
type PayloadSchemaVersion struct {
	// Fingerprint is the fingerprint stored records carry.
	Fingerprint string `json:"fingerprint"`
	// Codec is the payload codec when the schema became current.
	Codec string `json:"codec"`
	// Schema is the canonical CREATE SCHEMA text.
	Schema string `json:"schema"`
	// FirstSeq and LastSeq bound the sequences written under the schema:
	// from the first sequence after it first became current to the last
	// before another one did (the stream's last, for the current
	// schema); both null when no record was written under it.
	FirstSeq *uint64 `json:"first_seq"`
	LastSeq  *uint64 `json:"last_seq"`
	// Current marks the event type's schema in force.
	Current bool `json:"current"`
}

// payloadSchemas lists the payload schema versions of typed event type
// s, in the order they became current: those the engine's registry of
// past schemas keeps, and the current one. The schema endpoint answers
// even when the backend does not (clients read it before they watch): a
// backend failure is logged and only the current version is listed,
// without sequences.
func (h *Handlers) payloadSchemas(ctx context.Context, s *notification.Schema) []PayloadSchemaVersion {
	var vs []engine.SchemaVersion
	if ss, ok := h.eng.(engine.SchemaStore); ok {
		all, err := ss.SchemaVersions(ctx)
		if err != nil {
			h.log.Error("the registry of past payload schemas could not be read; only the current schema is listed", "event_type", s.Name, "error", err)
		}
		for _, v := range all {
			if v.EventType == s.Name {
				vs = append(vs, v)
			}
		}
	}
	last, err := h.eng.LastSeq(ctx, s.Base)
	if err != nil {
		h.log.Error("the last sequence of a stream could not be read; payload schema versions are listed without sequences", "event_type", s.Name, "error", err)
		vs, last = nil, 0
	}
	cur := s.Payload.Fingerprint().ID64
	found := false
	for _, v := range vs {
		found = found || v.Fingerprint == cur
	}
	if !found {
		vs = append(vs, engine.SchemaVersion{EventType: s.Name, Fingerprint: cur, Codec: s.Payload.Codec(),
			Schema: types.CreateSchema(s.Payload.Schema()), FirstSeq: last + 1, ActiveSeq: last + 1})
	}
	out := make([]PayloadSchemaVersion, len(vs))
	for i, v := range vs {
		end := last
		if i+1 < len(vs) {
			end = vs[i+1].ActiveSeq - 1
		}
		out[i] = PayloadSchemaVersion{Fingerprint: v.Fingerprint, Codec: v.Codec, Schema: v.Schema, Current: v.Fingerprint == cur}
		if end >= v.FirstSeq && v.FirstSeq > 0 {
			first := v.FirstSeq
			out[i].FirstSeq, out[i].LastSeq = &first, &end
		}
	}
	return out
}
