package geo

import (
	"math"
	"testing"
)

// mkPoly builds a polygon from lat,lon,lat,lon,... values.
func mkPoly(t testing.TB, v ...float64) *Geometry {
	t.Helper()
	g, err := NewPolygon(pairs(v))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// mkCloud builds a point cloud from lat,lon,lat,lon,... values.
func mkCloud(t testing.TB, v ...float64) *Geometry {
	t.Helper()
	g, err := NewPointCloud(pairs(v), MaxPoints)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func pairs(v []float64) []Point {
	pts := make([]Point, len(v)/2)
	for i := range pts {
		pts[i] = Point{v[2*i], v[2*i+1]}
	}
	return pts
}

// box returns the closed ring of lat minLat..maxLat, lon minLon..maxLon.
func box(t testing.TB, minLat, minLon, maxLat, maxLon float64) *Geometry {
	return mkPoly(t, minLat, minLon, minLat, maxLon, maxLat, maxLon, maxLat, minLon, minLat, minLon)
}

func TestIntersectsFilterPolygons(t *testing.T) {
	req := box(t, 0, 0, 10, 10)
	// A triangle whose bounding box covers the lat+lon >= 16 corner
	// region without the triangle reaching it.
	tri := mkPoly(t, 0, 0, 10, 0, 0, 10, 0, 0)
	// A U: lat 0..10, lon 0..10 with the notch lat 3..10, lon 3..7 cut out.
	u := mkPoly(t, 0, 0, 0, 10, 10, 10, 10, 7, 3, 7, 3, 3, 10, 3, 10, 0, 0, 0)
	// A self-crossing bowtie: two triangles meeting at (5,5).
	bowtie := mkPoly(t, 0, 0, 10, 10, 0, 10, 10, 0, 0, 0)
	tests := []struct {
		name string
		req  *Geometry
		n    *Geometry
		want bool
	}{
		{"disjoint", req, box(t, 20, 20, 30, 30), false},
		{"disjoint with overlapping latitudes", req, box(t, 2, 11, 8, 12), false},
		{"overlapping", req, box(t, 5, 5, 15, 15), true},
		{"crossing without vertices inside", req, box(t, 4, -5, 6, 15), true},
		{"notification inside request", req, box(t, 2, 2, 4, 4), true},
		{"request inside notification", req, box(t, -5, -5, 15, 15), true},
		{"touching at a vertex", req, box(t, 10, 10, 20, 20), true},
		{"touching along an edge", req, box(t, 0, 10, 10, 20), true},
		{"partly shared edge", req, box(t, 5, -5, 15, 0), true},
		{"vertex touching an edge", req, mkPoly(t, 5, 10, 0, 15, 10, 15, 5, 10), true},
		{"near miss by a hair", req, mkPoly(t, 5, math.Nextafter(10, 11), 0, 15, 10, 15, 5, math.Nextafter(10, 11)), false},
		{"bounding boxes overlap, shapes do not", tri, box(t, 8, 8, 9, 9), false},
		{"bounding boxes overlap, touching the hypotenuse", tri, box(t, 5, 5, 9, 9), true},
		{"concave: inside the notch", u, box(t, 5, 4, 8, 6), false},
		{"concave: touching the notch wall", u, box(t, 5, 4, 8, 7), true},
		{"concave: across an arm", u, box(t, 5, 2, 8, 4), true},
		{"concave: notch bottom touched", u, box(t, 3, 4, 8, 6), true},
		{"self-crossing: disjoint", bowtie, box(t, 20, 20, 30, 30), false},
		{"self-crossing: in the empty wedge", bowtie, box(t, 0.5, 4, 2, 6), false},
		{"self-crossing: in a lobe", bowtie, box(t, 4, 1, 6, 2), true},
		{"self-crossing as notification", box(t, 4, 1, 6, 2), bowtie, true},
		{"repeated vertices", req, mkPoly(t, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 2, 2), true},
		{"zero-area notification inside", req, mkPoly(t, 5, 5, 5, 5, 5, 5, 5, 5), true},
		{"zero-area notification outside", req, mkPoly(t, 15, 5, 15, 5, 15, 5, 15, 5), false},
		{"zero-area notification on the boundary", req, mkPoly(t, 0, 5, 0, 5, 0, 5, 0, 5), true},
		{"segment-shaped notification crossing", req, mkPoly(t, 5, -5, 5, 15, 5, -5, 5, -5), true},
		{"zero-area request inside notification", mkPoly(t, 5, 5, 5, 5, 5, 5, 5, 5), req, true},
		{"nil notification", req, nil, false},
		{"empty notification", req, &Geometry{Kind: PolygonGeometry}, false},
		{"nil request", nil, req, false},
		{"point cloud as request", mkCloud(t, 5, 5), req, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IntersectsFilter(tc.req).Match(tc.n); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
			if tc.req != nil && tc.n != nil && tc.req.Kind == PolygonGeometry && tc.n.Kind == PolygonGeometry && len(tc.n.Points) > 0 {
				if got := IntersectsFilter(tc.n).Match(tc.req); got != tc.want {
					t.Fatalf("swapped Match = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestIntersectsFilterPointClouds(t *testing.T) {
	req := box(t, 0, 0, 10, 10)
	u := mkPoly(t, 0, 0, 0, 10, 10, 10, 10, 7, 3, 7, 3, 3, 10, 3, 10, 0, 0, 0)
	tests := []struct {
		name string
		req  *Geometry
		n    *Geometry
		want bool
	}{
		{"all points outside", req, mkCloud(t, 20, 20, -1, 5, 11, 11), false},
		{"hit point last", req, mkCloud(t, 20, 20, -1, 5, 5, 5), true},
		{"hit point first", req, mkCloud(t, 5, 5, 20, 20), true},
		{"point on a vertex", req, mkCloud(t, 10, 10), true},
		{"point on an edge", req, mkCloud(t, 5, 0), true},
		{"point just outside an edge", req, mkCloud(t, math.Nextafter(10, 11), 5), false},
		{"concave: point in the notch", u, mkCloud(t, 5, 5, 9, 4), false},
		{"concave: point on the notch wall", u, mkCloud(t, 5, 5, 6, 7), true},
		{"concave: point in an arm", u, mkCloud(t, 5, 5, 6, 8), true},
		{"duplicates", req, mkCloud(t, 20, 20, 20, 20, 20, 20), false},
		{"nil notification", req, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IntersectsFilter(tc.req).Match(tc.n); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestContainsPointFilter(t *testing.T) {
	sq := box(t, 0, 0, 10, 10)
	u := mkPoly(t, 0, 0, 0, 10, 10, 10, 10, 7, 3, 7, 3, 3, 10, 3, 10, 0, 0, 0)
	bowtie := mkPoly(t, 0, 0, 10, 10, 0, 10, 10, 0, 0, 0)
	third := 1.0 / 3
	diag := mkPoly(t, 0, 0, 0, 10, 10, 10, 0, 0) // region lat <= lon
	tests := []struct {
		name string
		p    Point
		n    *Geometry
		want bool
	}{
		{"inside", Point{5, 5}, sq, true},
		{"outside", Point{11, 5}, sq, false},
		{"on a vertex", Point{0, 0}, sq, false},
		{"on the closing vertex", Point{0, 0}, sq, false},
		{"on an edge", Point{0, 5}, sq, false},
		{"on the far edge", Point{10, 5}, sq, false},
		{"just inside", Point{math.Nextafter(10, 0), 5}, sq, true},
		{"level with a vertex, inside", Point{0.5, 10 - 1e-9}, sq, true},
		{"concave: in the notch", Point{5, 5}, u, false},
		{"concave: on the notch wall", Point{5, 7}, u, false},
		{"concave: in an arm", Point{5, 8}, u, true},
		{"concave: level with the notch bottom", Point{3, 1}, u, true},
		{"concave: level with the notch top, outside", Point{10, 5}, u, false},
		{"self-crossing: left lobe", Point{5, 2}, bowtie, true},
		{"self-crossing: right lobe", Point{5, 8}, bowtie, true},
		{"self-crossing: empty wedge", Point{2, 5}, bowtie, false},
		{"self-crossing: crossing point", Point{5, 5}, bowtie, false},
		{"exactly on a diagonal edge", Point{third, third}, diag, false},
		{"a hair inside a diagonal edge", Point{third, math.Nextafter(third, 1)}, diag, true},
		{"a hair outside a diagonal edge", Point{third, math.Nextafter(third, 0)}, diag, false},
		{"repeated vertices", Point{2, 7}, mkPoly(t, 0, 0, 0, 0, 0, 10, 10, 10, 10, 10, 0, 0), true},
		{"zero-area polygon", Point{5, 5}, mkPoly(t, 5, 5, 5, 5, 5, 5, 5, 5), false},
		{"segment-shaped polygon", Point{5, 5}, mkPoly(t, 5, 0, 5, 10, 5, 0, 5, 0), false},
		{"point cloud never contains", Point{5, 5}, mkCloud(t, 5, 5, 0, 0, 10, 10), false},
		{"nil geometry", Point{5, 5}, nil, false},
		{"empty polygon", Point{5, 5}, &Geometry{Kind: PolygonGeometry}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ContainsPointFilter(tc.p).Match(tc.n); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOrientExactNearCollinear(t *testing.T) {
	// Points within a few ulps of the line lat = lon, tested against a
	// far segment of that line: the sign must follow the exact position.
	a, b := Point{12, 12}, Point{24, 24}
	const ulp = 0x1p-53 // ulp of values in [0.5, 1)
	for j := range 16 {
		for k := range 16 {
			c := Point{Lat: 0.5 + float64(j)*ulp, Lon: 0.5 + float64(k)*ulp}
			want := 0
			if j > k {
				want = 1
			} else if j < k {
				want = -1
			}
			if got := orient(a, b, c); got != want {
				t.Fatalf("orient(%v, %v, %v) = %d, want %d", a, b, c, got, want)
			}
		}
	}
	// Tiny coordinates whose products underflow.
	tiny := []struct {
		a, b, c Point
		want    int
	}{
		{Point{0, 0}, Point{5e-324, 5e-324}, Point{1e-323, 1e-323}, 0},
		{Point{0, 0}, Point{0, 5e-324}, Point{5e-324, 0}, 1}, // north of an eastward segment: left
		{Point{0, 0}, Point{0, 5e-324}, Point{-5e-324, 0}, -1},
		{Point{0, 0}, Point{0, 0}, Point{1, 1}, 0},
	}
	for _, tc := range tiny {
		if got := orient(tc.a, tc.b, tc.c); got != tc.want {
			t.Errorf("orient(%v, %v, %v) = %d, want %d", tc.a, tc.b, tc.c, got, tc.want)
		}
	}
}

// gridRing turns bytes into a closed ring of small-grid points (lat and
// lon in -9..9, in steps of 0.5) so that the fuzzer finds many collinear,
// touching and degenerate configurations. Fewer than 3 vertices gives nil.
func gridRing(b []byte) []Point {
	var pts []Point
	for i := 0; i+1 < len(b) && len(pts) < 12; i += 2 {
		pts = append(pts, Point{float64(int(b[i])%37-18) / 2, float64(int(b[i+1])%37-18) / 2})
	}
	if len(pts) < 3 {
		return nil
	}
	return append(pts, pts[0])
}

func FuzzSpatialFilters(f *testing.F) {
	f.Add([]byte{18, 18, 18, 38, 38, 38, 38, 18}, []byte{38, 38, 38, 58, 58, 58, 58, 38}, byte(28), byte(28))
	f.Add([]byte{18, 18, 38, 38, 18, 38, 38, 18}, []byte{26, 20, 26, 22, 30, 22, 30, 20}, byte(28), byte(22))
	f.Add([]byte{18, 18, 18, 38, 38, 38, 38, 32, 24, 32, 24, 24, 38, 24, 38, 18}, []byte{28, 26, 28, 30, 34, 30, 34, 26}, byte(28), byte(32))
	f.Add([]byte{28, 28, 28, 28, 28, 28}, []byte{18, 18, 18, 18, 18, 38, 38, 38, 38, 38}, byte(18), byte(18))
	f.Add([]byte{18, 18, 18, 38, 38, 38}, []byte{18, 18, 18, 28, 18, 38}, byte(18), byte(28))
	f.Fuzz(func(t *testing.T, ra, rb []byte, plat, plon byte) {
		ringA, ringB := gridRing(ra), gridRing(rb)
		if ringA == nil || ringB == nil {
			return
		}
		a, err := NewPolygon(ringA)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewPolygon(ringB)
		if err != nil {
			t.Fatal(err)
		}
		ab, ba := IntersectsFilter(a).Match(b), IntersectsFilter(b).Match(a)
		if ab != ba {
			t.Fatalf("intersects is not symmetric: %v vs %v for %s and %s", ab, ba, a.CanonicalJSON(), b.CanonicalJSON())
		}
		for _, v := range b.Points {
			if locate(v, a.Points) != locOutside && !ab {
				t.Fatalf("vertex %v of %s is in or on %s, yet no intersection", v, b.CanonicalJSON(), a.CanonicalJSON())
			}
		}
		p := Point{float64(int(plat)%37-18) / 2, float64(int(plon)%37-18) / 2}
		cloud, err := NewPointCloud([]Point{p}, 1)
		if err != nil {
			t.Fatal(err)
		}
		hit := IntersectsFilter(a).Match(cloud)
		inside := ContainsPointFilter(p).Match(a)
		if inside && !hit {
			t.Fatalf("point %v strictly inside %s but not hit as a cloud point", p, a.CanonicalJSON())
		}
		for _, v := range a.Points {
			if v == p && (inside || !hit) {
				t.Fatalf("vertex %v of %s: contains %v, hit %v", p, a.CanonicalJSON(), inside, hit)
			}
		}
		// A point-shaped polygon behaves like the cloud point.
		pointPoly, err := NewPolygon([]Point{p, p, p, p})
		if err != nil {
			t.Fatal(err)
		}
		if got := IntersectsFilter(a).Match(pointPoly); got != hit {
			t.Fatalf("point polygon %v intersects %s = %v, cloud point = %v", p, a.CanonicalJSON(), got, hit)
		}
		// Moving everything by the same exact offset changes nothing.
		shift := func(g *Geometry) *Geometry {
			pts := make([]Point, len(g.Points))
			for i, q := range g.Points {
				pts[i] = Point{q.Lat + 40, q.Lon - 100}
			}
			s, err := NewPolygon(pts)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		if got := IntersectsFilter(shift(a)).Match(shift(b)); got != ab {
			t.Fatalf("shifted intersects = %v, want %v for %s and %s", got, ab, a.CanonicalJSON(), b.CanonicalJSON())
		}
	})
}

func BenchmarkIntersectsFilter(b *testing.B) {
	// A 64-vertex request circle against a 5-vertex notification box, and
	// against a 5000-point cloud (inside the request's bounding box) whose
	// only hit is the last point.
	ring := make([]Point, 0, 65)
	for i := range 64 {
		a := 2 * math.Pi * float64(i) / 64
		ring = append(ring, Point{50 + 5*math.Sin(a), 10 + 5*math.Cos(a)})
	}
	req := mkPoly(b, flatten(append(ring, ring[0]))...)
	notif := box(b, 48, 8, 52, 12)
	pts := make([]Point, 5000)
	for i := range pts {
		pts[i] = Point{45.5, 14}
	}
	pts[len(pts)-1] = Point{50, 10}
	cloud, err := NewPointCloud(pts, MaxPoints)
	if err != nil {
		b.Fatal(err)
	}
	f := IntersectsFilter(req)
	b.Run("polygon", func(b *testing.B) {
		for b.Loop() {
			if !f.Match(notif) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("cloud-5000", func(b *testing.B) {
		for b.Loop() {
			if !f.Match(cloud) {
				b.Fatal("no match")
			}
		}
	})
}

func flatten(pts []Point) []float64 {
	v := make([]float64, 0, 2*len(pts))
	for _, p := range pts {
		v = append(v, p.Lat, p.Lon)
	}
	return v
}
