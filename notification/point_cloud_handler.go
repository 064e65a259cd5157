package notification

import (
	"encoding/json"
	"errors"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/geo"
)

// PointCloudHandler is the handler of the reserved point_cloud identifier: an
// ordered list of [lat,lon] points sent by publishers and stored as spatial
// metadata, never in the subject (Aviso's identifier handlers,
// docs/configuration.md). It is immutable and safe for concurrent use.
type PointCloudHandler struct {
	maxPoints int
}

// NewPointCloudHandler returns a point-cloud handler accepting at most
// *maxPoints points; nil means the default, geo.MaxPoints. The limit
// must be between 1 and geo.MaxPoints.
func NewPointCloudHandler(maxPoints *int) (*PointCloudHandler, error) {
	n := geo.MaxPoints
	if maxPoints != nil {
		n = *maxPoints
	}
	if err := geo.CheckMaxPoints(n); err != nil {
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

// geo.Geometry validates a raw JSON identifier value as a point cloud: a
// non-empty JSON array of [lat,lon] pairs, each exactly two finite JSON
// numbers in range. There is no string form. The point count is checked
// first (at most MaxPoints), then each point, then the size of the
// canonical JSON (at most geo.MaxPointCloudJSONBytes).
func (h *PointCloudHandler) Geometry(raw json.RawMessage) (*geo.Geometry, error) {
	return geo.ParsePointCloud(raw, h.maxPoints)
}
