// Package geo owns the geometry of notifications: points, polygons and
// point clouds, their parsing from the API's JSON and text forms with the
// validation rules and messages of the Aviso API, their canonical JSON
// (coordinates written as floats, as aviso-server writes them), the
// backend metadata that stores them, and the spatial filters of watch and
// replay (a polygon intersecting, a point inside). It imports no other
// herald package.
package geo

// MaxPoints is the largest number of points a point cloud may have: the
// default and the upper limit of a PointCloudHandler's max_points.
const MaxPoints = 10000

// Point is a coordinate, latitude first as everywhere in the API.
type Point struct {
	Lat, Lon float64
}

// BBox is an inclusive latitude/longitude bounding box.
type BBox struct {
	MinLat, MinLon, MaxLat, MaxLon float64
}

// GeometryKind tells what a Geometry's points mean.
type GeometryKind uint8

// Geometry kinds.
const (
	// PolygonGeometry is a closed ring: the first point equals the last.
	PolygonGeometry GeometryKind = iota + 1
	// PointCloudGeometry is an ordered list of points.
	PointCloudGeometry
)

// Geometry is the spatial metadata of a notification.
type Geometry struct {
	Kind   GeometryKind
	Points []Point
	BBox   BBox
}

// SpatialFilter decides whether a notification's geometry passes a
// watch/replay spatial filter. A nil geometry never passes.
type SpatialFilter interface {
	Match(g *Geometry) bool
}
