package geo

import (
	"math"
	"math/big"
)

// Spatial predicates. Coordinates are latitude first everywhere in the API;
// the predicates work in the plane with x = longitude and y = latitude (no
// wrap-around at the antimeridian, as in aviso-server). Orientation tests
// are exact: a float64 evaluation with a proven error bound, falling back
// to exact rational arithmetic when the sign is uncertain, so collinear and
// touching cases are decided consistently. Degenerate rings (repeated
// vertices, zero-length edges, zero area, self-crossings) are handled
// without panicking; inside/outside uses the even-odd rule.

// IntersectsFilter returns the filter of a request polygon (the Aviso
// API's spatial filter). Against a polygon notification it passes when the two
// polygons intersect, touching boundaries included. Against a point-cloud
// notification it passes when any cloud point lies inside the polygon or
// on an edge or vertex. poly should come from ParsePolygon or NewPolygon;
// a nil or non-polygon poly matches nothing.
func IntersectsFilter(poly *Geometry) SpatialFilter {
	if poly == nil || poly.Kind != PolygonGeometry || len(poly.Points) == 0 {
		return neverFilter{}
	}
	return &intersectsFilter{ring: append([]Point(nil), poly.Points...), bbox: poly.BBox}
}

// ContainsPointFilter returns the filter of a request point (the Aviso
// API's point filter): it passes when the notification's polygon contains the point
// strictly; a point on an edge or a vertex does not pass. Point clouds and
// nil geometries never pass.
func ContainsPointFilter(p Point) SpatialFilter {
	return containsPointFilter{p: p}
}

// neverFilter matches nothing.
type neverFilter struct{}

// Match always reports false.
func (neverFilter) Match(*Geometry) bool { return false }

// intersectsFilter is IntersectsFilter's result.
type intersectsFilter struct {
	ring []Point
	bbox BBox
}

// Match applies the bounding-box prefilter, then the exact test.
func (f *intersectsFilter) Match(g *Geometry) bool {
	if g == nil || len(g.Points) == 0 || !bBoxesOverlap(f.bbox, g.BBox) {
		return false
	}
	switch g.Kind {
	case PolygonGeometry:
		return ringsIntersect(f.ring, f.bbox, g.Points)
	case PointCloudGeometry:
		for _, p := range g.Points {
			if bBoxHas(f.bbox, p) && locate(p, f.ring) != locOutside {
				return true
			}
		}
	}
	return false
}

// containsPointFilter is ContainsPointFilter's result.
type containsPointFilter struct {
	p Point
}

// Match reports strict containment in a polygon notification.
func (f containsPointFilter) Match(g *Geometry) bool {
	if g == nil || g.Kind != PolygonGeometry || !bBoxHas(g.BBox, f.p) {
		return false
	}
	return locate(f.p, g.Points) == locInside
}

// bBoxesOverlap reports whether two inclusive boxes share a point.
func bBoxesOverlap(a, b BBox) bool {
	return a.MinLat <= b.MaxLat && b.MinLat <= a.MaxLat && a.MinLon <= b.MaxLon && b.MinLon <= a.MaxLon
}

// bBoxHas reports whether p lies in the inclusive box.
func bBoxHas(b BBox, p Point) bool {
	return b.MinLat <= p.Lat && p.Lat <= b.MaxLat && b.MinLon <= p.Lon && p.Lon <= b.MaxLon
}

// ringsIntersect reports whether the areas bounded by rings a (with
// bounding box abox) and b share at least one point. Either a boundary of
// one meets a boundary of the other, or, when no boundaries meet, one ring
// lies entirely inside the other: a ring's boundary is connected, so
// without a crossing all of it is on one side of the other ring and
// testing one vertex decides.
func ringsIntersect(a []Point, abox BBox, b []Point) bool {
	na, nb := len(a), len(b)
	for j := 0; j < nb; j++ {
		q1, q2 := b[j], b[(j+1)%nb]
		// Edges of b outside a's box cannot meet a's edges.
		if !overlap(q1.Lat, q2.Lat, abox.MinLat, abox.MaxLat) || !overlap(q1.Lon, q2.Lon, abox.MinLon, abox.MaxLon) {
			continue
		}
		for i := 0; i < na; i++ {
			if segmentsIntersect(a[i], a[(i+1)%na], q1, q2) {
				return true
			}
		}
	}
	return locate(b[0], a) != locOutside || locate(a[0], b) != locOutside
}

// segmentsIntersect reports whether closed segments p1p2 and q1q2 share
// a point: a proper crossing, an endpoint on the other segment, collinear
// overlap or a shared endpoint. Zero-length segments are points.
func segmentsIntersect(p1, p2, q1, q2 Point) bool {
	if q1.Lon > q2.Lon {
		q1, q2 = q2, q1 // orientation signs below do not depend on the order
	}
	if !overlap(p1.Lon, p2.Lon, q1.Lon, q2.Lon) {
		return false
	}
	lo, hi := q1.Lat, q2.Lat
	if lo > hi {
		lo, hi = hi, lo
	}
	if !overlap(p1.Lat, p2.Lat, lo, hi) {
		return false
	}
	o1 := orient(p1, p2, q1)
	o2 := orient(p1, p2, q2)
	o3 := orient(q1, q2, p1)
	o4 := orient(q1, q2, p2)
	if o1*o2 < 0 && o3*o4 < 0 {
		return true
	}
	return (o1 == 0 && inSegmentBox(p1, p2, q1)) ||
		(o2 == 0 && inSegmentBox(p1, p2, q2)) ||
		(o3 == 0 && inSegmentBox(q1, q2, p1)) ||
		(o4 == 0 && inSegmentBox(q1, q2, p2))
}

// overlap reports whether the closed interval spanned by x and y, in
// either order, meets [lo, hi] (lo <= hi).
func overlap(x, y, lo, hi float64) bool {
	if x > y {
		x, y = y, x
	}
	return x <= hi && lo <= y
}

// inSegmentBox reports whether c, known to be collinear with a and b,
// lies on the closed segment ab.
func inSegmentBox(a, b, c Point) bool {
	return between(c.Lon, a.Lon, b.Lon) && between(c.Lat, a.Lat, b.Lat)
}

// between reports whether v lies in the closed interval spanned by x
// and y, in either order.
func between(v, x, y float64) bool {
	if x > y {
		x, y = y, x
	}
	return x <= v && v <= y
}

// location is where a point lies relative to a ring.
type location uint8

const (
	locOutside location = iota
	locBoundary
	locInside
)

// locate places p relative to the ring (its last point normally equals
// the first; an open ring is closed implicitly). Boundary first, then the
// even-odd crossing rule with a half-open test on latitudes, the side of
// each crossing being decided by an exact orientation.
func locate(p Point, ring []Point) location {
	n := len(ring)
	inside := false
	for i := 0; i < n; i++ {
		a, b := ring[i], ring[(i+1)%n]
		if (a.Lat > p.Lat && b.Lat > p.Lat) || (a.Lat < p.Lat && b.Lat < p.Lat) {
			continue // entirely above or below p: neither touches nor crosses
		}
		if inSegmentBox(a, b, p) && orient(a, b, p) == 0 {
			return locBoundary
		}
		if (a.Lat > p.Lat) != (b.Lat > p.Lat) {
			// The edge crosses the horizontal line through p; count it
			// when the crossing lies east of p, that is when p is left
			// of an upward edge or right of a downward one. p is not on
			// the edge, so the orientation is not zero.
			o := orient(a, b, p)
			if (b.Lat > a.Lat && o > 0) || (b.Lat < a.Lat && o < 0) {
				inside = !inside
			}
		}
	}
	if inside {
		return locInside
	}
	return locOutside
}

// cCWErrBound is Shewchuk's error bound for the float64 evaluation of
// the 2D orientation determinant: (3 + 16ε)ε with ε = 2⁻⁵³.
var cCWErrBound = (3 + 16*0x1p-53) * 0x1p-53

// minSafeDet is the magnitude below which the float64 determinant may
// have lost precision to underflow; such cases are decided exactly. The
// bound used above it also gets an absolute term covering the rounding of
// products that underflowed to subnormals.
const minSafeDet = 0x1p-900

// orient returns +1 when c lies to the left of the directed line a→b
// (counter-clockwise turn, x = longitude, y = latitude), -1 when to the
// right and 0 when the three points are collinear. The sign is exact.
func orient(a, b, c Point) int {
	l1, l2 := a.Lon-c.Lon, b.Lat-c.Lat
	r1, r2 := a.Lat-c.Lat, b.Lon-c.Lon
	// A float64 difference is zero exactly when its operands are equal
	// and otherwise has the sign of the exact difference, so when one
	// product has a zero factor the sign of the determinant is known
	// exactly (axis-parallel edges, shared coordinates).
	if leftZero, rightZero := l1 == 0 || l2 == 0, r1 == 0 || r2 == 0; leftZero || rightZero {
		switch {
		case leftZero && rightZero:
			return 0
		case leftZero:
			return -sign(r1) * sign(r2)
		default:
			return sign(l1) * sign(l2)
		}
	}
	detLeft := l1 * l2
	detRight := r1 * r2
	det := detLeft - detRight
	detSum := math.Abs(detLeft) + math.Abs(detRight)
	if detSum >= minSafeDet {
		bound := cCWErrBound*detSum + 0x1p-1000
		if det > bound {
			return 1
		}
		if -det > bound {
			return -1
		}
	}
	return orientExact(a, b, c)
}

// sign returns the sign of a non-NaN float: -1, 0 or +1.
func sign(f float64) int {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return 0
}

// orientExact evaluates the orientation determinant in exact rational
// arithmetic; every float64 converts to a rational exactly.
func orientExact(a, b, c Point) int {
	r := func(f float64) *big.Rat { return new(big.Rat).SetFloat64(f) }
	sub := func(x, y float64) *big.Rat { return new(big.Rat).Sub(r(x), r(y)) }
	left := new(big.Rat).Mul(sub(a.Lon, c.Lon), sub(b.Lat, c.Lat))
	right := new(big.Rat).Mul(sub(a.Lat, c.Lat), sub(b.Lon, c.Lon))
	return left.Cmp(right)
}
