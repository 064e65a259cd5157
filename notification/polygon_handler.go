package notification

import (
	"encoding/json"
	"fmt"
	"strings"

	"herald/configs"
)

// geoPolygonForms lists the polygon input forms for error messages.
const geoPolygonForms = "send a JSON array of [lat,lon] pairs such as " +
	"[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]], a string holding such an array, " +
	`or a string "lat,lon,lat,lon,..." with optional outer parentheses`

// PolygonHandler is the handler of the reserved polygon identifier: a
// closed ring, latitude first, stored as spatial metadata (reference §7,
// §9). It is stateless and safe for concurrent use.
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
	g, err := geoPolygonFromText(value)
	if err != nil {
		return "", err
	}
	return string(g.CanonicalJSON()), nil
}

// Describe returns no handler-specific keys: an empty map.
func (h *PolygonHandler) Describe() map[string]any { return map[string]any{} }

// Geometry validates a raw JSON identifier value as a polygon; see
// ParsePolygon for the accepted forms.
func (h *PolygonHandler) Geometry(raw json.RawMessage) (*Geometry, error) {
	return ParsePolygon(raw)
}

// ParsePolygon validates a raw JSON value as a closed polygon, latitude
// first, for notify and for the request-side polygon filter of watch and
// replay. Accepted: a JSON array of [lat,lon] pairs, each exactly two
// finite JSON numbers; a JSON string holding such an array (its text
// starts with '[' after trimming whitespace); a JSON string
// "lat,lon,lat,lon,..." with optional single outer parentheses and
// whitespace around numbers and parentheses. Rejected: flat numeric
// arrays, objects (GeoJSON included), null, booleans, numbers and empty
// values. The ring rules are those of NewPolygon. The error says what is
// wrong without naming the field.
func ParsePolygon(raw json.RawMessage) (*Geometry, error) {
	t := geoTrimJSON(raw)
	if len(t) == 0 {
		return nil, fmt.Errorf("must be a valid polygon: the value is empty; %s", geoPolygonForms)
	}
	switch t[0] {
	case '[':
		return geoPolygonFromJSONArray(t)
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, fmt.Errorf("must be a valid polygon: the value is not a valid JSON string (%v)", err)
		}
		return geoPolygonFromText(s)
	case '{':
		return nil, fmt.Errorf("must be a valid polygon: objects (GeoJSON included) are not accepted; %s", geoPolygonForms)
	default:
		return nil, fmt.Errorf("must be a valid polygon: the value is %s; %s", geoKindName(t[0]), geoPolygonForms)
	}
}

// geoPolygonFromText parses the string forms of a polygon: JSON array
// text or the comma-separated legacy form.
func geoPolygonFromText(s string) (*Geometry, error) {
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "[") {
		return geoPolygonFromJSONArray([]byte(trimmed))
	}
	parts, err := geoCommaValues(trimmed, "polygon")
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: %w", err)
	}
	points, err := geoCommaPoints(parts, "polygon")
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: %w", err)
	}
	return NewPolygon(points)
}

// geoPolygonFromJSONArray parses JSON text that starts with '['.
func geoPolygonFromJSONArray(b []byte) (*Geometry, error) {
	elems, err := geoJSONArray(b)
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: the array is %w", err)
	}
	points, err := geoJSONPairs(elems)
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: %w", err)
	}
	return NewPolygon(points)
}
