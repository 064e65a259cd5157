package geo

import (
	"errors"
	"fmt"
)

// ParsePointCloud parses and validates a JSON point-cloud array of at
// most maxPoints points (1..MaxPoints): a non-empty JSON array of
// [lat,lon] pairs, each exactly two finite JSON numbers in range; there
// is no string form. The point count is checked first, then each point,
// then the size of the canonical JSON (at most MaxPointCloudJSONBytes).
func ParsePointCloud(raw []byte, maxPoints int) (*Geometry, error) {
	if err := CheckMaxPoints(maxPoints); err != nil {
		return nil, err
	}
	t := trimJSON(raw)
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
			"send a JSON array of [lat,lon] pairs such as [[52.55,13.5],[52.6,13.4]]", kindName(t[0]))
	}
	elems, err := jSONArray(t)
	if err != nil {
		return nil, fmt.Errorf("must be a valid point cloud: the array is %w", err)
	}
	if err := checkCloudCount(len(elems), maxPoints); err != nil {
		return nil, err
	}
	points, err := jSONPairs(elems)
	if err != nil {
		return nil, fmt.Errorf("must be a valid point cloud: %w", err)
	}
	return NewPointCloud(points, maxPoints)
}
