package notification

import (
	"encoding/json"
	"fmt"
	"strings"
)

// geoPointForms lists the point input forms for error messages.
const geoPointForms = `send [lat,lon] such as [52.55,13.5], a string holding such an array, ` +
	`or a string "lat,lon" or "(lat,lon)"`

// ParsePoint validates the reserved point identifier of watch and replay
// (reference §7, point): a JSON array [lat,lon] of two finite JSON
// numbers, a JSON string holding such an array, or a JSON string "lat,lon"
// or "(lat,lon)" with whitespace tolerated around the numbers and the
// parentheses. Exactly two values, latitude in [-90, 90], longitude in
// [-180, 180]. The error says what is wrong without naming the field.
func ParsePoint(raw json.RawMessage) (Point, error) {
	t := geoTrimJSON(raw)
	if len(t) == 0 {
		return Point{}, fmt.Errorf("must be a valid point: the value is empty; %s", geoPointForms)
	}
	switch t[0] {
	case '[':
		return geoPointFromJSONArray(t)
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return Point{}, fmt.Errorf("must be a valid point: the value is not a valid JSON string (%v)", err)
		}
		return geoPointFromText(s)
	case '{':
		return Point{}, fmt.Errorf("must be a valid point: objects (GeoJSON included) are not accepted; %s", geoPointForms)
	default:
		return Point{}, fmt.Errorf("must be a valid point: the value is %s; %s", geoKindName(t[0]), geoPointForms)
	}
}

// geoPointFromText parses the string forms of a point.
func geoPointFromText(s string) (Point, error) {
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "[") {
		return geoPointFromJSONArray([]byte(trimmed))
	}
	parts, err := geoCommaValues(trimmed, "point")
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	if len(parts) != 2 {
		return Point{}, fmt.Errorf("must be a valid point: it needs exactly two values lat,lon, got %d", len(parts))
	}
	lat, ok := geoParseDecimal(parts[0])
	if !ok {
		return Point{}, fmt.Errorf("must be a valid point: could not parse latitude %q as a number", parts[0])
	}
	lon, ok := geoParseDecimal(parts[1])
	if !ok {
		return Point{}, fmt.Errorf("must be a valid point: could not parse longitude %q as a number", parts[1])
	}
	return geoCheckedPoint(Point{Lat: lat, Lon: lon})
}

// geoPointFromJSONArray parses JSON text that starts with '['.
func geoPointFromJSONArray(b []byte) (Point, error) {
	elems, err := geoJSONArray(b)
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: the array is %w", err)
	}
	if len(elems) != 2 {
		return Point{}, fmt.Errorf("must be a valid point: [lat,lon] needs exactly two numbers, got %d element(s)", len(elems))
	}
	lat, err := geoJSONNumber(elems[0], "latitude", "")
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	lon, err := geoJSONNumber(elems[1], "longitude", "")
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	return geoCheckedPoint(Point{Lat: lat, Lon: lon})
}

// geoCheckedPoint range-checks a parsed point.
func geoCheckedPoint(p Point) (Point, error) {
	if err := geoCheckPoint(p, -1); err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	return p, nil
}

// CanonicalJSON returns the point as [lat,lon], numbers formatted as
// encoding/json formats a float64 (as Geometry.CanonicalJSON).
func (p Point) CanonicalJSON() []byte {
	return p.geoAppendJSON(make([]byte, 0, 48))
}
