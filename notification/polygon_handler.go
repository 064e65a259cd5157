package notification

import (
	"encoding/json"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/geo"
)

// PolygonHandler is the handler of the reserved polygon identifier: a closed
// ring, latitude first, stored as spatial metadata (Aviso's identifier
// handlers, docs/configuration.md). It is stateless and safe for concurrent
// use.
type PolygonHandler struct{}

// NewPolygonHandler returns the polygon handler; it has no settings.
func NewPolygonHandler() *PolygonHandler { return &PolygonHandler{} }

// Type returns configs.HandlerPolygon, "PolygonHandler".
func (h *PolygonHandler) Type() string { return configs.HandlerPolygon }

// Canonical parses a polygon given as text, either a JSON array of
// [lat,lon] pairs or the comma-separated form "(lat,lon,...)" with or
// without the outer parentheses, and returns the canonical JSON array
// text. It is used only when a schema routes the polygon in key_order.
func (h *PolygonHandler) Canonical(value string) (string, error) {
	g, err := geo.PolygonFromText(value)
	if err != nil {
		return "", err
	}
	return string(g.CanonicalJSON()), nil
}

// Describe returns no handler-specific keys: an empty map.
func (h *PolygonHandler) Describe() map[string]any { return map[string]any{} }

// geo.Geometry validates a raw JSON identifier value as a polygon; see
// geo.ParsePolygon for the accepted forms.
func (h *PolygonHandler) Geometry(raw json.RawMessage) (*geo.Geometry, error) {
	return geo.ParsePolygon(raw)
}
