package notification

import (
	"encoding/json"
	"strings"
	"testing"

	"herald/configs"
)

const cloudHint = "send a JSON array of [lat,lon] pairs such as [[52.55,13.5],[52.6,13.4]]"

var pointCloudCases = []struct {
	name string
	raw  string
	want string // canonical JSON when valid
	err  string
}{
	{name: "one point", raw: `[[52.55,13.5]]`, want: `[[52.55,13.5]]`},
	{name: "duplicates and order kept", raw: ` [ [1.0, 2.0], [1, 2], [-3.0, 4.0] ] `, want: `[[1.0,2.0],[1.0,2.0],[-3.0,4.0]]`},
	{name: "at the point limit", raw: `[[0,0],[0,0],[0,0]]`, want: `[[0.0,0.0],[0.0,0.0],[0.0,0.0]]`},
	{name: "over the point limit before bad points", raw: `[[0,0],[0,0],[0,0],"x"]`,
		err: "point cloud contains 4 points, maximum is 3"},
	{name: "empty array", raw: `[]`, err: "point cloud must contain at least one point"},
	{name: "string form", raw: `"[[1,2]]"`, err: "must be a valid point cloud: point clouds have no string form; " + cloudHint},
	{name: "comma string", raw: `"1,2,3,4"`, err: "must be a valid point cloud: point clouds have no string form; " + cloudHint},
	{name: "flat array", raw: `[1,2]`,
		err: "must be a valid point cloud: expected an array of [lat,lon] pairs such as [[52.5,13.4],[52.6,13.5],...]; element 0 is a bare number (flat numeric arrays are not accepted)"},
	{name: "short pair", raw: `[[1.0]]`,
		err: "must be a valid point cloud: each coordinate must be a [lat,lon] array of exactly two numbers; the array of the pair at index 0 has 1 element(s)"},
	{name: "long pair", raw: `[[1,2],[1.0,2.0,3.0]]`,
		err: "must be a valid point cloud: each coordinate must be a [lat,lon] array of exactly two numbers; the array of the pair at index 1 has 3 element(s)"},
	{name: "string coordinate", raw: `[["1",2]]`, err: "must be a valid point cloud: latitude of the pair at index 0 must be a JSON number, got a string"},
	{name: "latitude out of range", raw: `[[91.0,0.0]]`,
		err: "must be a valid point cloud: latitude 91 of the pair at index 0 is outside the valid range [-90, 90]"},
	{name: "longitude out of range", raw: `[[0,0],[0.0,181.0]]`,
		err: "must be a valid point cloud: longitude 181 of the pair at index 1 is outside the valid range [-180, 180]"},
	{name: "broken json", raw: `[[0,0],`, err: "must be a valid point cloud: the array is not valid JSON (unexpected end of JSON input at byte 7)"},
	{name: "geojson", raw: `{"type":"MultiPoint"}`, err: "must be a valid point cloud: objects (GeoJSON included) are not accepted; " + cloudHint},
	{name: "null", raw: `null`, err: "must be a valid point cloud: the value is null; " + cloudHint},
	{name: "number", raw: `1`, err: "must be a valid point cloud: the value is a number; " + cloudHint},
	{name: "empty", raw: ``, err: "must be a valid point cloud: the value is empty; send a non-empty JSON array of [lat,lon] pairs"},
}

func TestPointCloudHandlerGeometry(t *testing.T) {
	three := 3
	h, err := NewPointCloudHandler(&three)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range pointCloudCases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := h.Geometry(json.RawMessage(tc.raw))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if g.Kind != PointCloudGeometry || string(g.CanonicalJSON()) != tc.want {
				t.Fatalf("got kind %d %s, want %s", g.Kind, g.CanonicalJSON(), tc.want)
			}
		})
	}
}

func TestNewPointCloudHandler(t *testing.T) {
	intp := func(n int) *int { return &n }
	tests := []struct {
		name string
		max  *int
		want int
		err  string
	}{
		{name: "default", max: nil, want: 10000},
		{name: "one", max: intp(1), want: 1},
		{name: "hard limit", max: intp(10000), want: 10000},
		{name: "zero", max: intp(0), err: "max_points must be between 1 and 10000, got 0"},
		{name: "negative", max: intp(-5), err: "max_points must be between 1 and 10000, got -5"},
		{name: "above hard limit", max: intp(10001), err: "max_points must be between 1 and 10000, got 10001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewPointCloudHandler(tc.max)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || h != nil {
					t.Fatalf("got %v, %v; want error %q", h, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.MaxPoints() != tc.want || h.Type() != "PointCloudHandler" {
				t.Fatalf("MaxPoints %d Type %q", h.MaxPoints(), h.Type())
			}
			d := h.Describe()
			if len(d) != 1 || d["max_points"] != tc.want {
				t.Fatalf("Describe() = %#v", d)
			}
			var _ Handler = h
		})
	}
}

func TestPointCloudHandlerCanonicalRefuses(t *testing.T) {
	h, err := NewPointCloudHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"", "[[1,2]]", "1,2"} {
		got, err := h.Canonical(in)
		want := "must be a valid point cloud: point clouds have no string form and are never part of the subject; " +
			"publishers send a JSON array of [lat,lon] pairs such as [[52.55,13.5]]"
		if got != "" || err == nil || err.Error() != want {
			t.Fatalf("Canonical(%q) = %q, %v", in, got, err)
		}
	}
}

func TestPointCloudHandlerLimits(t *testing.T) {
	h, err := NewPointCloudHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	cloudJSON := func(pts []Point) json.RawMessage { return geoAppendPoints(nil, pts) }
	// 10000 points pass the count (and then exceed the size: each point
	// is at least [0.0,0.0], 10 bytes with its comma, as in aviso-server
	// 0.13); 10001 are refused on the count, which is checked first.
	pts := make([]Point, configs.DefaultMaxPoints+1)
	if _, err := h.Geometry(cloudJSON(pts[:configs.DefaultMaxPoints])); err == nil ||
		err.Error() != "point cloud canonical JSON is 100001 bytes, maximum is 61440 bytes (send fewer points or fewer decimal digits)" {
		t.Fatalf("10000 points: %v", err)
	}
	_, err = h.Geometry(cloudJSON(pts))
	if err == nil || err.Error() != "point cloud contains 10001 points, maximum is 10000" {
		t.Fatalf("10001 points: %v", err)
	}
	// The canonical size limit is inclusive and measured on the canonical
	// form, not on the input text.
	at := cloudOfLen(t, MaxPointCloudJSONBytes)
	padded := strings.ReplaceAll(string(cloudJSON(at)), ",", " , ")
	g, err := h.Geometry(json.RawMessage(padded))
	if err != nil || len(g.CanonicalJSON()) != MaxPointCloudJSONBytes {
		t.Fatalf("cloud of exactly %d canonical bytes: %v", MaxPointCloudJSONBytes, err)
	}
	over := cloudOfLen(t, MaxPointCloudJSONBytes+1)
	_, err = h.Geometry(cloudJSON(over))
	want := "point cloud canonical JSON is 61441 bytes, maximum is 61440 bytes (send fewer points or fewer decimal digits)"
	if err == nil || err.Error() != want {
		t.Fatalf("oversized cloud: %v", err)
	}
	// The reference's example: 5000 long points exceed the size limit.
	long := make([]Point, 5000)
	for i := range long {
		long[i] = Point{-89.12345678901234, -179.12345678901235}
	}
	if _, err := h.Geometry(cloudJSON(long)); err == nil || !strings.Contains(err.Error(), "canonical JSON is 205001 bytes") {
		t.Fatalf("5000 long points: %v", err)
	}
}

func FuzzPointCloudGeometry(f *testing.F) {
	for _, tc := range pointCloudCases {
		f.Add([]byte(tc.raw))
	}
	h, err := NewPointCloudHandler(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		g, err := h.Geometry(raw)
		if err != nil {
			if g != nil {
				t.Fatalf("geometry with error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "must be a valid point cloud: ") && !strings.HasPrefix(err.Error(), "point cloud ") {
				t.Fatalf("error without the point cloud prefix: %v", err)
			}
			return
		}
		checkGeometryInvariants(t, g)
		if g.Kind != PointCloudGeometry {
			t.Fatalf("kind %d", g.Kind)
		}
		back, err := h.Geometry(g.CanonicalJSON())
		if err != nil {
			t.Fatalf("canonical %s does not parse back: %v", g.CanonicalJSON(), err)
		}
		assertSameGeometry(t, back, g)
		m := g.Metadata()
		back, err = GeometryFromMetadata(func(k string) string { return m[k] })
		if err != nil {
			t.Fatalf("metadata %v does not parse back: %v", m, err)
		}
		assertSameGeometry(t, back, g)
	})
}
