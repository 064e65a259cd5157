package notification

import "github.com/herald-gateway/herald/codec/types"

// Public returns the schema as the schema API shows it (Aviso's schema
// endpoints, docs/api.md): payload ({"required": bool}, or nil without a
// payload block; for a typed payload also its codec, the codec's wire format
// and media type, the internal schema as SHOW CREATE text, its fingerprint and
// the formats a watcher may ask for) and every identifier field with its type,
// required flag, handler keys (unset optional keys as nil) and description
// when configured. Topic, storage policy, auth and the replay cap stay hidden.
func (s *Schema) Public() map[string]any {
	ident := make(map[string]any, len(s.Fields))
	for _, f := range s.Fields {
		m := map[string]any{"type": f.Handler.Type(), "required": f.Required}
		for k, v := range f.Handler.Describe() {
			m[k] = v
		}
		if f.Description != nil {
			m["description"] = *f.Description
		}
		ident[f.Name] = m
	}
	var payload any
	if s.payloadDeclared {
		payload = map[string]any{"required": s.PayloadRequired}
	}
	if p := s.Payload; p != nil {
		payload = map[string]any{
			"required":    true,
			"codec":       p.Codec(),
			"format":      p.Format().String(),
			"media_type":  p.MediaType(),
			"schema":      types.CreateSchema(p.Schema()),
			"fingerprint": p.Fingerprint().ID64,
			"formats":     p.Formats(),
		}
	}
	return map[string]any{"payload": payload, "identifier": ident}
}
