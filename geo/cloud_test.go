package geo

import (
	"encoding/json"
	"strings"
	"testing"
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

func TestParsePointCloud(t *testing.T) {
	for _, tc := range pointCloudCases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParsePointCloud(json.RawMessage(tc.raw), 3)
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

func FuzzParsePointCloud(f *testing.F) {
	for _, tc := range pointCloudCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		g, err := ParsePointCloud(raw, MaxPoints)
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
		back, err := ParsePointCloud(g.CanonicalJSON(), MaxPoints)
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
