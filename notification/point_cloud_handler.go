package notification

import (
	"encoding/json"
	"errors"
	"fmt"

	"herald/configs"
)

// PointCloudHandler is the handler of the reserved point_cloud identifier:
// an ordered list of [lat,lon] points sent by publishers and stored as
// spatial metadata, never in the subject (reference §7, §9.2). It is
// immutable and safe for concurrent use.
type PointCloudHandler struct {
	maxPoints int
}

// NewPointCloudHandler returns a point-cloud handler accepting at most
// *maxPoints points; nil means the default, configs.DefaultMaxPoints. The limit
// must be between 1 and configs.DefaultMaxPoints.
func NewPointCloudHandler(maxPoints *int) (*PointCloudHandler, error) {
	n := configs.DefaultMaxPoints
	if maxPoints != nil {
		n = *maxPoints
	}
	if err := geoCheckMaxPoints(n); err != nil {
		return nil, err
	}
	return &PointCloudHandler{maxPoints: n}, nil
}

// MaxPoints returns the configured point limit.
func (h *PointCloudHandler) MaxPoints() int { return h.maxPoints }

// Type returns configs.HandlerPointCloud, "PointCloudHandler".
func (h *PointCloudHandler) Type() string { return configs.HandlerPointCloud }

// Canonical always fails: a point cloud has no string form and is never a
// subject token.
func (h *PointCloudHandler) Canonical(string) (string, error) {
	return "", errors.New("must be a valid point cloud: point clouds have no string form and are never " +
		"part of the subject; publishers send a JSON array of [lat,lon] pairs such as [[52.55,13.5]]")
}

// Describe returns {"max_points": n}.
func (h *PointCloudHandler) Describe() map[string]any {
	return map[string]any{"max_points": h.maxPoints}
}

// Geometry validates a raw JSON identifier value as a point cloud: a
// non-empty JSON array of [lat,lon] pairs, each exactly two finite JSON
// numbers in range. There is no string form. The point count is checked
// first (at most MaxPoints), then each point, then the size of the
// canonical JSON (at most MaxPointCloudJSONBytes).
func (h *PointCloudHandler) Geometry(raw json.RawMessage) (*Geometry, error) {
	return geoPointCloudFromJSON(raw, h.maxPoints)
}

// geoPointCloudFromJSON parses and validates a JSON point-cloud array.
func geoPointCloudFromJSON(raw []byte, maxPoints int) (*Geometry, error) {
	if err := geoCheckMaxPoints(maxPoints); err != nil {
		return nil, err
	}
	t := geoTrimJSON(raw)
	if len(t) == 0 {
		return nil, errors.New("must be a valid point cloud: the value is empty; send a non-empty JSON array of [lat,lon] pairs")
	}
	switch t[0] {
	case '[':
	case '"':
		return nil, errors.New("must be a valid point cloud: point clouds have no string form; " +
			"send a JSON array of [lat,lon] pairs such as [[52.55,13.5],[52.6,13.4]]")
	case '{':
		return nil, errors.New("must be a valid point cloud: objects (GeoJSON included) are not accepted; " +
			"send a JSON array of [lat,lon] pairs such as [[52.55,13.5],[52.6,13.4]]")
	default:
		return nil, fmt.Errorf("must be a valid point cloud: the value is %s; "+
			"send a JSON array of [lat,lon] pairs such as [[52.55,13.5],[52.6,13.4]]", geoKindName(t[0]))
	}
	elems, err := geoJSONArray(t)
	if err != nil {
		return nil, fmt.Errorf("must be a valid point cloud: the array is %w", err)
	}
	if err := geoCheckCloudCount(len(elems), maxPoints); err != nil {
		return nil, err
	}
	points, err := geoJSONPairs(elems)
	if err != nil {
		return nil, fmt.Errorf("must be a valid point cloud: %w", err)
	}
	return NewPointCloud(points, maxPoints)
}
