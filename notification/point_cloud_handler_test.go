package notification

import (
	"encoding/json"
	"testing"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/geo"
)

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
	// The handler applies geo.ParsePointCloud with its own limit (the
	// limits themselves are tested in package geo).
	h, err := NewPointCloudHandler(new(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Geometry(json.RawMessage(`[[1,2],[3,4]]`)); err != nil {
		t.Fatalf("2 points: %v", err)
	}
	if _, err := h.Geometry(json.RawMessage(`[[1,2],[3,4],[5,6]]`)); err == nil || err.Error() != "point cloud contains 3 points, maximum is 2" {
		t.Fatalf("3 points: %v", err)
	}
}

// TestMaxPointsAgree: the config's default max_points is geometry's hard
// limit.
func TestMaxPointsAgree(t *testing.T) {
	if configs.DefaultMaxPoints != geo.MaxPoints {
		t.Fatalf("configs.DefaultMaxPoints %d, geo.MaxPoints %d", configs.DefaultMaxPoints, geo.MaxPoints)
	}
}
