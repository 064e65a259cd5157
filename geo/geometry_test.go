package geo

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// square is the closed ring 0..1 x 0..1 used across the tests.
var square = []Point{{0, 0}, {0, 1}, {1, 1}, {1, 0}, {0, 0}}

func TestNewPolygon(t *testing.T) {
	tests := []struct {
		name   string
		points []Point
		want   string // canonical JSON when valid
		bbox   BBox
		err    string
	}{
		{name: "square", points: square, want: "[[0.0,0.0],[0.0,1.0],[1.0,1.0],[1.0,0.0],[0.0,0.0]]", bbox: BBox{0, 0, 1, 1}},
		{name: "triangle with repeat", points: []Point{{52.5, 13.4}, {52.6, 13.5}, {52.5, 13.6}, {52.5, 13.4}},
			want: "[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]", bbox: BBox{52.5, 13.4, 52.6, 13.6}},
		{name: "range edges inclusive", points: []Point{{90, -180}, {89, -180}, {89, -179}, {90, -180}},
			want: "[[90.0,-180.0],[89.0,-180.0],[89.0,-179.0],[90.0,-180.0]]", bbox: BBox{89, -180, 90, -179}},
		{name: "degenerate ring is accepted", points: []Point{{1, 1}, {1, 1}, {1, 1}, {1, 1}},
			want: "[[1.0,1.0],[1.0,1.0],[1.0,1.0],[1.0,1.0]]", bbox: BBox{1, 1, 1, 1}},
		{name: "negative zero closes zero", points: []Point{{0, 0}, {0, 1}, {1, 1}, {math.Copysign(0, -1), 0}},
			want: "[[0.0,0.0],[0.0,1.0],[1.0,1.0],[-0.0,0.0]]", bbox: BBox{0, 0, 1, 1}},
		{name: "empty", points: nil,
			err: "must be a valid polygon: it has 0 [lat,lon] pair(s) but needs at least 4 (3 vertices plus the closing repeat of the first vertex)"},
		{name: "three pairs", points: []Point{{0, 0}, {0, 1}, {0, 0}},
			err: "must be a valid polygon: it has 3 [lat,lon] pair(s) but needs at least 4 (3 vertices plus the closing repeat of the first vertex)"},
		{name: "not closed", points: []Point{{0, 0}, {0, 1}, {1, 1}, {1, 0}},
			err: "must be a valid polygon: it is not closed, the last pair [1,0] differs from the first pair [0,0], so it is missing the closing point (repeat the first pair at the end)"},
		{name: "latitude too big", points: []Point{{0, 0}, {90.5, 1}, {1, 1}, {0, 0}},
			err: "must be a valid polygon: latitude 90.5 of the pair at index 1 is outside the valid range [-90, 90]"},
		{name: "longitude too small", points: []Point{{0, 0}, {0, 1}, {1, -180.5}, {0, 0}},
			err: "must be a valid polygon: longitude -180.5 of the pair at index 2 is outside the valid range [-180, 180]"},
		{name: "NaN latitude", points: []Point{{math.NaN(), 0}, {0, 1}, {1, 1}, {0, 0}},
			err: "must be a valid polygon: latitude of the pair at index 0 is not a finite number (NaN and infinities are not accepted)"},
		{name: "infinite longitude", points: []Point{{0, 0}, {0, math.Inf(1)}, {1, 1}, {0, 0}},
			err: "must be a valid polygon: longitude of the pair at index 1 is not a finite number (NaN and infinities are not accepted)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewPolygon(tc.points)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if g.Kind != PolygonGeometry || string(g.CanonicalJSON()) != tc.want || g.BBox != tc.bbox {
				t.Fatalf("got kind %d %s %+v, want %s %+v", g.Kind, g.CanonicalJSON(), g.BBox, tc.want, tc.bbox)
			}
		})
	}
}

func TestNewPolygonCopiesPoints(t *testing.T) {
	pts := append([]Point(nil), square...)
	g, err := NewPolygon(pts)
	if err != nil {
		t.Fatal(err)
	}
	pts[1] = Point{5, 5}
	if g.Points[1] != (Point{0, 1}) {
		t.Fatalf("geometry aliases the caller's slice: %v", g.Points)
	}
}

// pointOfLen returns a point whose [lat,lon] text is exactly n bytes
// long, 5 <= n <= 37.
func pointOfLen(t *testing.T, n int) Point {
	t.Helper()
	num := func(k int) float64 { // a number whose JSON text has k bytes, 1 <= k <= 17
		s := "1"
		switch {
		case k == 2:
			s = "11"
		case k >= 3:
			s = "1." + strings.Repeat("1", k-2)
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	latLen := min(17, n-4)
	p := Point{num(latLen), num(n - 3 - latLen)}
	if got := len(p.CanonicalJSON()); got != n {
		t.Fatalf("pointOfLen(%d) made %s (%d bytes)", n, p.CanonicalJSON(), got)
	}
	return p
}

// cloudOfLen returns points whose canonical cloud JSON is exactly n bytes.
func cloudOfLen(t *testing.T, n int) []Point {
	t.Helper()
	// len = 1 + sum(len(point)+1)
	rest := n - 1
	var pts []Point
	for rest > 38+6 {
		pts = append(pts, pointOfLen(t, 37))
		rest -= 38
	}
	if rest > 38 {
		pts = append(pts, pointOfLen(t, 5))
		rest -= 6
	}
	pts = append(pts, pointOfLen(t, rest-1))
	return pts
}

func TestNewPointCloud(t *testing.T) {
	atLimit := cloudOfLen(t, MaxPointCloudJSONBytes)
	overLimit := cloudOfLen(t, MaxPointCloudJSONBytes+1)
	many := make([]Point, 3)
	tests := []struct {
		name      string
		points    []Point
		maxPoints int
		want      string
		bbox      BBox
		err       string
	}{
		{name: "one point", points: []Point{{52.55, 13.5}}, maxPoints: 1, want: "[[52.55,13.5]]", bbox: BBox{52.55, 13.5, 52.55, 13.5}},
		{name: "duplicates and order kept", points: []Point{{1, 2}, {1, 2}, {-3, 4}}, maxPoints: 10,
			want: "[[1.0,2.0],[1.0,2.0],[-3.0,4.0]]", bbox: BBox{-3, 2, 1, 4}},
		{name: "empty", points: nil, maxPoints: 10,
			err: "point cloud must contain at least one point"},
		{name: "count checked before points", points: []Point{{99, 0}, {0, 0}, {0, 0}}, maxPoints: 2,
			err: "point cloud contains 3 points, maximum is 2"},
		{name: "exact count limit", points: many, maxPoints: 3, want: "[[0.0,0.0],[0.0,0.0],[0.0,0.0]]"},
		{name: "bad point", points: []Point{{0, 0}, {-91, 0}}, maxPoints: 10,
			err: "must be a valid point cloud: latitude -91 of the pair at index 1 is outside the valid range [-90, 90]"},
		{name: "max points zero", points: many, maxPoints: 0, err: "max_points must be between 1 and 10000, got 0"},
		{name: "max points too big", points: many, maxPoints: 10001, err: "max_points must be between 1 and 10000, got 10001"},
		{name: "size over limit", points: overLimit, maxPoints: 10000,
			err: "point cloud canonical JSON is 61441 bytes, maximum is 61440 bytes (send fewer points or fewer decimal digits)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewPointCloud(tc.points, tc.maxPoints)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if g.Kind != PointCloudGeometry || string(g.CanonicalJSON()) != tc.want || g.BBox != tc.bbox {
				t.Fatalf("got kind %d %s %+v, want %s %+v", g.Kind, g.CanonicalJSON(), g.BBox, tc.want, tc.bbox)
			}
		})
	}
	t.Run("size at limit is accepted", func(t *testing.T) {
		g, err := NewPointCloud(atLimit, MaxPoints)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(g.CanonicalJSON()); n != MaxPointCloudJSONBytes {
			t.Fatalf("canonical length %d, want %d", n, MaxPointCloudJSONBytes)
		}
	})
}

func TestCanonicalNumberFormat(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{52.5, "52.5"}, {13, "13"}, {-0.5, "-0.5"}, {1e-7, "1e-7"}, {-1e-7, "-1e-7"},
		{0.000001, "0.000001"}, {0.0000012, "0.0000012"}, {9.99e-7, "9.99e-7"}, {1.5e-10, "1.5e-10"},
		{5e-324, "5e-324"}, {math.Copysign(0, -1), "-0"}, {0, "0"}, {180, "180"}, {-89.12345678901234, "-89.12345678901234"},
		{0.1, "0.1"}, {1e20, "100000000000000000000"}, {1e21, "1e+21"}, {123456789e-15, "1.23456789e-7"},
	}
	for _, tc := range tests {
		got := format(tc.v)
		std, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want || got != string(std) {
			t.Errorf("format(%v) = %q, want %q (encoding/json: %s)", tc.v, got, tc.want, std)
		}
	}
}

func TestGeometryCanonicalJSONNil(t *testing.T) {
	var g *Geometry
	if got := string(g.CanonicalJSON()); got != "null" {
		t.Fatalf("nil CanonicalJSON = %q", got)
	}
	if m := g.Metadata(); m != nil {
		t.Fatalf("nil Metadata = %v", m)
	}
}

func TestMetadata(t *testing.T) {
	poly, err := NewPolygon([]Point{{52.5, 13.4}, {52.6, 13.5}, {52.5, 13.6}, {52.4, 13.5}, {52.5, 13.4}})
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := NewPointCloud([]Point{{1e-7, -0.5}, {-3, 4}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		g    *Geometry
		want map[string]string
	}{
		{"polygon", poly, map[string]string{
			"spatial_bbox":     "52.4,13.4,52.6,13.6",
			"spatial_geometry": "[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.4,13.5],[52.5,13.4]]",
		}},
		{"point cloud", cloud, map[string]string{
			"spatial_bbox":        "-3,-0.5,1e-7,4",
			"spatial_point_cloud": "[[1e-7,-0.5],[-3.0,4.0]]",
		}},
		{"unknown kind", &Geometry{Kind: 9, Points: square}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.g.Metadata()
			if len(got) != len(tc.want) {
				t.Fatalf("Metadata() = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("Metadata()[%q] = %q, want %q", k, got[k], v)
				}
			}
			if tc.want == nil {
				return
			}
			back, err := GeometryFromMetadata(func(k string) string { return got[k] })
			if err != nil {
				t.Fatalf("GeometryFromMetadata: %v", err)
			}
			assertSameGeometry(t, back, tc.g)
		})
	}
}

// assertSameGeometry compares kind, bounding box and points bit for bit.
func assertSameGeometry(t *testing.T, got, want *Geometry) {
	t.Helper()
	if got == nil || got.Kind != want.Kind || got.BBox != want.BBox || len(got.Points) != len(want.Points) {
		t.Fatalf("geometry = %+v, want %+v", got, want)
	}
	for i := range want.Points {
		g, w := got.Points[i], want.Points[i]
		if math.Float64bits(g.Lat) != math.Float64bits(w.Lat) || math.Float64bits(g.Lon) != math.Float64bits(w.Lon) {
			t.Fatalf("point %d = %v, want %v", i, g, w)
		}
	}
}

func TestGeometryFromMetadata(t *testing.T) {
	tests := []struct {
		name string
		meta map[string]string
		want string // canonical JSON, "" for a nil geometry
		kind GeometryKind
		bbox BBox
		err  string
	}{
		{name: "no spatial keys", meta: map[string]string{"other": "x"}},
		{name: "canonical polygon", meta: map[string]string{"spatial_bbox": "0,0,1,1", "spatial_geometry": "[[0,0],[0,1],[1,1],[0,0]]"},
			want: "[[0.0,0.0],[0.0,1.0],[1.0,1.0],[0.0,0.0]]", kind: PolygonGeometry, bbox: BBox{0, 0, 1, 1}},
		{name: "aviso 0.7 polygon string", meta: map[string]string{
			"spatial_bbox":     "50,10,52,12",
			"spatial_geometry": "(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)"},
			want: "[[50.0,10.0],[52.0,10.0],[52.0,12.0],[50.0,12.0],[50.0,10.0]]", kind: PolygonGeometry, bbox: BBox{50, 10, 52, 12}},
		{name: "aviso 0.7 polygon string without parentheses or bbox", meta: map[string]string{
			"spatial_geometry": " 50 , 10 ,52,10,52,12,50,10"},
			want: "[[50.0,10.0],[52.0,10.0],[52.0,12.0],[50.0,10.0]]", kind: PolygonGeometry, bbox: BBox{50, 10, 52, 12}},
		{name: "bbox is recomputed, not trusted", meta: map[string]string{"spatial_bbox": "(-5,-5,5,5)", "spatial_geometry": "[[0,0],[0,1],[1,1],[0,0]]"},
			want: "[[0.0,0.0],[0.0,1.0],[1.0,1.0],[0.0,0.0]]", kind: PolygonGeometry, bbox: BBox{0, 0, 1, 1}},
		{name: "point cloud", meta: map[string]string{"spatial_bbox": "1,2,1,2", "spatial_point_cloud": "[[1,2],[1,2]]"},
			want: "[[1.0,2.0],[1.0,2.0]]", kind: PointCloudGeometry, bbox: BBox{1, 2, 1, 2}},
		{name: "bbox alone", meta: map[string]string{"spatial_bbox": "0,0,1,1"},
			err: "metadata holds spatial_bbox but neither spatial_geometry nor spatial_point_cloud"},
		{name: "both geometries", meta: map[string]string{"spatial_geometry": "[[0,0],[0,1],[1,1],[0,0]]", "spatial_point_cloud": "[[1,2]]"},
			err: "metadata holds both spatial_geometry and spatial_point_cloud; a notification has at most one geometry"},
		{name: "bbox with three numbers", meta: map[string]string{"spatial_bbox": "0,0,1", "spatial_geometry": "[[0,0],[0,1],[1,1],[0,0]]"},
			err: `metadata spatial_bbox: must be four numbers min_lat,min_lon,max_lat,max_lon, got 3 value(s) in "0,0,1"`},
		{name: "bbox not a number", meta: map[string]string{"spatial_bbox": "0,0,1,x", "spatial_geometry": "[[0,0],[0,1],[1,1],[0,0]]"},
			err: `metadata spatial_bbox: could not parse "x" as a number in "0,0,1,x"`},
		{name: "bbox not finite", meta: map[string]string{"spatial_bbox": "0,0,1,inf", "spatial_geometry": "[[0,0],[0,1],[1,1],[0,0]]"},
			err: `metadata spatial_bbox: "inf" is not a finite number in "0,0,1,inf"`},
		{name: "unclosed stored polygon", meta: map[string]string{"spatial_geometry": "(0,0,0,1,1,1,1,0)"},
			err: "metadata spatial_geometry: must be a valid polygon: it is not closed, the last pair [1,0] differs from the first pair [0,0], so it is missing the closing point (repeat the first pair at the end)"},
		{name: "point cloud as string", meta: map[string]string{"spatial_point_cloud": `"[[1,2]]"`},
			err: "metadata spatial_point_cloud: must be a valid point cloud: point clouds have no string form; send a JSON array of [lat,lon] pairs such as [[52.55,13.5],[52.6,13.4]]"},
		{name: "point cloud out of range", meta: map[string]string{"spatial_point_cloud": `[[1,2],[1,181]]`},
			err: "metadata spatial_point_cloud: must be a valid point cloud: longitude 181 of the pair at index 1 is outside the valid range [-180, 180]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := GeometryFromMetadata(func(k string) string { return tc.meta[k] })
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.want == "" {
				if g != nil {
					t.Fatalf("geometry = %+v, want nil", g)
				}
				return
			}
			if g == nil || g.Kind != tc.kind || string(g.CanonicalJSON()) != tc.want || g.BBox != tc.bbox {
				t.Fatalf("geometry = %+v, want %s kind %d bbox %+v", g, tc.want, tc.kind, tc.bbox)
			}
		})
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5", 5, true}, {"5.", 5, true}, {".5", 0.5, true}, {"+2.5", 2.5, true}, {"-0", math.Copysign(0, -1), true},
		{"1e3", 1000, true}, {"1E-3", 0.001, true}, {"1e+3", 1000, true}, {"007.50", 7.5, true},
		{"1e400", math.Inf(1), true}, {"-inf", math.Inf(-1), true}, {"Infinity", math.Inf(1), true},
		{"", 0, false}, {".", 0, false}, {"+", 0, false}, {"e3", 0, false}, {"1e", 0, false}, {"1e+", 0, false},
		{"0x1p3", 0, false}, {"1_000", 0, false}, {"1 0", 0, false}, {"--1", 0, false}, {"1.2.3", 0, false},
		{"infinit", 0, false}, {"١", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseDecimal(tc.in)
		if ok != tc.ok || (ok && math.Float64bits(got) != math.Float64bits(tc.want)) {
			t.Errorf("parseDecimal(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if v, ok := parseDecimal("NaN"); !ok || !math.IsNaN(v) {
		t.Errorf("parseDecimal(NaN) = %v, %v", v, ok)
	}
}

func FuzzGeometryFromMetadata(f *testing.F) {
	f.Add("0,0,1,1", "[[0,0],[0,1],[1,1],[0,0]]", "")
	f.Add("", "(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)", "")
	f.Add("1,2,1,2", "", "[[1,2],[1,2]]")
	f.Add("0,0,1", "", "")
	f.Add("", "", "")
	f.Add("x", "(", "[")
	f.Add("1,2,3,4", "[[0,0],[0,1],[1,1],[0,0]]", "[[1,2]]")
	f.Fuzz(func(t *testing.T, bbox, poly, cloud string) {
		meta := map[string]string{MetadataSpatialBBox: bbox, MetadataSpatialGeometry: poly, MetadataSpatialPointCloud: cloud}
		g, err := GeometryFromMetadata(func(k string) string { return meta[k] })
		if err != nil {
			if g != nil {
				t.Fatalf("geometry %+v returned with error %v", g, err)
			}
			return
		}
		if g == nil {
			if bbox != "" || poly != "" || cloud != "" {
				t.Fatalf("nil geometry without error for %q %q %q", bbox, poly, cloud)
			}
			return
		}
		checkGeometryInvariants(t, g)
		m := g.Metadata()
		back, err := GeometryFromMetadata(func(k string) string { return m[k] })
		if err != nil {
			t.Fatalf("round trip of %v: %v", m, err)
		}
		assertSameGeometry(t, back, g)
	})
}

// checkGeometryInvariants checks what every constructed geometry holds.
func checkGeometryInvariants(t *testing.T, g *Geometry) {
	t.Helper()
	if len(g.Points) == 0 {
		t.Fatalf("empty geometry %+v", g)
	}
	for i, p := range g.Points {
		if err := checkPoint(p, i); err != nil {
			t.Fatalf("invalid point in geometry: %v", err)
		}
		if !bBoxHas(g.BBox, p) {
			t.Fatalf("point %v outside bbox %+v", p, g.BBox)
		}
	}
	switch g.Kind {
	case PolygonGeometry:
		first, last := g.Points[0], g.Points[len(g.Points)-1]
		if len(g.Points) < 4 || first != last {
			t.Fatalf("polygon not closed or too short: %v", g.Points)
		}
	case PointCloudGeometry:
		if len(g.Points) > MaxPoints || len(g.CanonicalJSON()) > MaxPointCloudJSONBytes {
			t.Fatalf("point cloud over limits: %d points, %d bytes", len(g.Points), len(g.CanonicalJSON()))
		}
	default:
		t.Fatalf("unknown kind %d", g.Kind)
	}
	if !json.Valid(g.CanonicalJSON()) {
		t.Fatalf("canonical JSON is not JSON: %s", g.CanonicalJSON())
	}
}

// TestCanonicalFloat checks the canonical coordinate spelling against what
// aviso-server 0.13 (Rust's serde_json, the ryu crate) writes for the same
// f64: always a fraction or an exponent, the shortest round-trip digits.
func TestCanonicalFloat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{13, "13.0"}, {52.5, "52.5"}, {-0.5, "-0.5"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{-180, "-180.0"}, {90, "90.0"}, {1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {0.0001, "0.0001"},
		{0.00001, "0.00001"}, {0.000001, "1e-6"}, {0.00000123, "1.23e-6"}, {1e15, "1000000000000000.0"},
		{1e16, "1e16"}, {1.5e16, "1.5e16"}, {123.456, "123.456"}, {-89.12345678901234, "-89.12345678901234"},
		{0.1, "0.1"}, {1234567890123456, "1234567890123456.0"}, {12345678901234567, "1.2345678901234568e16"},
	} {
		if got := string(appendJSONFloat(nil, tc.v)); got != tc.want {
			t.Errorf("appendJSONFloat(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestParsePointCloudLimits(t *testing.T) {
	parse := func(raw json.RawMessage) (*Geometry, error) { return ParsePointCloud(raw, MaxPoints) }
	cloudJSON := func(pts []Point) json.RawMessage { return appendPoints(nil, pts) }
	// 10000 points pass the count (and then exceed the size: each point
	// is at least [0.0,0.0], 10 bytes with its comma, as in aviso-server
	// 0.13); 10001 are refused on the count, which is checked first.
	pts := make([]Point, MaxPoints+1)
	if _, err := parse(cloudJSON(pts[:MaxPoints])); err == nil ||
		err.Error() != "point cloud canonical JSON is 100001 bytes, maximum is 61440 bytes (send fewer points or fewer decimal digits)" {
		t.Fatalf("10000 points: %v", err)
	}
	_, err := parse(cloudJSON(pts))
	if err == nil || err.Error() != "point cloud contains 10001 points, maximum is 10000" {
		t.Fatalf("10001 points: %v", err)
	}
	// The canonical size limit is inclusive and measured on the canonical
	// form, not on the input text.
	at := cloudOfLen(t, MaxPointCloudJSONBytes)
	padded := strings.ReplaceAll(string(cloudJSON(at)), ",", " , ")
	g, err := parse(json.RawMessage(padded))
	if err != nil || len(g.CanonicalJSON()) != MaxPointCloudJSONBytes {
		t.Fatalf("cloud of exactly %d canonical bytes: %v", MaxPointCloudJSONBytes, err)
	}
	over := cloudOfLen(t, MaxPointCloudJSONBytes+1)
	_, err = parse(cloudJSON(over))
	want := "point cloud canonical JSON is 61441 bytes, maximum is 61440 bytes (send fewer points or fewer decimal digits)"
	if err == nil || err.Error() != want {
		t.Fatalf("oversized cloud: %v", err)
	}
	// aviso-server's documented example: 5000 long points exceed the size limit.
	long := make([]Point, 5000)
	for i := range long {
		long[i] = Point{-89.12345678901234, -179.12345678901235}
	}
	if _, err := parse(cloudJSON(long)); err == nil || !strings.Contains(err.Error(), "canonical JSON is 205001 bytes") {
		t.Fatalf("5000 long points: %v", err)
	}
}
