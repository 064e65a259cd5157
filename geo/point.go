package geo

import (
	"encoding/json"
	"fmt"
	"strings"
)

// pointForms lists the point input forms for error messages.
const pointForms = `send [lat,lon] such as [52.55,13.5], a string holding such an array, ` +
	`or a string "lat,lon" or "(lat,lon)"`

// ParsePoint validates the reserved point identifier of watch and replay
// (the watch and replay point filter): a JSON array [lat,lon] of two finite JSON
// numbers, a JSON string holding such an array, or a JSON string "lat,lon"
// or "(lat,lon)" with whitespace tolerated around the numbers and the
// parentheses. Exactly two values, latitude in [-90, 90], longitude in
// [-180, 180]. The error says what is wrong without naming the field.
func ParsePoint(raw json.RawMessage) (Point, error) {
	t := trimJSON(raw)
	if len(t) == 0 {
		return Point{}, fmt.Errorf("must be a valid point: the value is empty; %s", pointForms)
	}
	switch t[0] {
	case '[':
		return pointFromJSONArray(t)
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return Point{}, fmt.Errorf("must be a valid point: the value is not a valid JSON string (%v)", err)
		}
		return pointFromText(s)
	case '{':
		return Point{}, fmt.Errorf("must be a valid point: objects (GeoJSON included) are not accepted; %s", pointForms)
	default:
		return Point{}, fmt.Errorf("must be a valid point: the value is %s; %s", kindName(t[0]), pointForms)
	}
}

// pointFromText parses the string forms of a point.
func pointFromText(s string) (Point, error) {
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "[") {
		return pointFromJSONArray([]byte(trimmed))
	}
	parts, err := commaValues(trimmed, "point")
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	if len(parts) != 2 {
		return Point{}, fmt.Errorf("must be a valid point: it needs exactly two values lat,lon, got %d", len(parts))
	}
	lat, ok := parseDecimal(parts[0])
	if !ok {
		return Point{}, fmt.Errorf("must be a valid point: could not parse latitude %q as a number", parts[0])
	}
	lon, ok := parseDecimal(parts[1])
	if !ok {
		return Point{}, fmt.Errorf("must be a valid point: could not parse longitude %q as a number", parts[1])
	}
	return checkedPoint(Point{Lat: lat, Lon: lon})
}

// pointFromJSONArray parses JSON text that starts with '['.
func pointFromJSONArray(b []byte) (Point, error) {
	elems, err := jSONArray(b)
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: the array is %w", err)
	}
	if len(elems) != 2 {
		return Point{}, fmt.Errorf("must be a valid point: [lat,lon] needs exactly two numbers, got %d element(s)", len(elems))
	}
	lat, err := jSONNumber(elems[0], "latitude", "")
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	lon, err := jSONNumber(elems[1], "longitude", "")
	if err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	return checkedPoint(Point{Lat: lat, Lon: lon})
}

// checkedPoint range-checks a parsed point.
func checkedPoint(p Point) (Point, error) {
	if err := checkPoint(p, -1); err != nil {
		return Point{}, fmt.Errorf("must be a valid point: %w", err)
	}
	return p, nil
}

// CanonicalJSON returns the point as [lat,lon], numbers formatted as
// encoding/json formats a float64 (as Geometry.CanonicalJSON).
func (p Point) CanonicalJSON() []byte {
	return p.appendJSON(make([]byte, 0, 48))
}
