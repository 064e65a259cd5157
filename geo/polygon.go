package geo

import (
	"encoding/json"
	"fmt"
	"strings"
)

// polygonForms lists the polygon input forms for error messages.
const polygonForms = "send a JSON array of [lat,lon] pairs such as " +
	"[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]], a string holding such an array, " +
	`or a string "lat,lon,lat,lon,..." with optional outer parentheses`

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
	t := trimJSON(raw)
	if len(t) == 0 {
		return nil, fmt.Errorf("must be a valid polygon: the value is empty; %s", polygonForms)
	}
	switch t[0] {
	case '[':
		return polygonFromJSONArray(t)
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, fmt.Errorf("must be a valid polygon: the value is not a valid JSON string (%v)", err)
		}
		return PolygonFromText(s)
	case '{':
		return nil, fmt.Errorf("must be a valid polygon: objects (GeoJSON included) are not accepted; %s", polygonForms)
	default:
		return nil, fmt.Errorf("must be a valid polygon: the value is %s; %s", kindName(t[0]), polygonForms)
	}
}

// PolygonFromText parses the string forms of a polygon: JSON array
// text or the comma-separated legacy form.
func PolygonFromText(s string) (*Geometry, error) {
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "[") {
		return polygonFromJSONArray([]byte(trimmed))
	}
	parts, err := commaValues(trimmed, "polygon")
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: %w", err)
	}
	points, err := commaPoints(parts, "polygon")
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: %w", err)
	}
	return NewPolygon(points)
}

// polygonFromJSONArray parses JSON text that starts with '['.
func polygonFromJSONArray(b []byte) (*Geometry, error) {
	elems, err := jSONArray(b)
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: the array is %w", err)
	}
	points, err := jSONPairs(elems)
	if err != nil {
		return nil, fmt.Errorf("must be a valid polygon: %w", err)
	}
	return NewPolygon(points)
}
