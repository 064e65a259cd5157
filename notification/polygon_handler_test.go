package notification

import "testing"

func TestPolygonHandler(t *testing.T) {
	h := NewPolygonHandler()
	if h.Type() != "PolygonHandler" {
		t.Fatalf("Type() = %q", h.Type())
	}
	if d := h.Describe(); d == nil || len(d) != 0 {
		t.Fatalf("Describe() = %#v, want an empty map", d)
	}
	var _ Handler = h
	tests := []struct {
		in, want, err string
	}{
		{in: "(52.5,13.4,52.6,13.5,52.5,13.6,52.5,13.4)", want: "[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]"},
		{in: " 0, 0, 0, 1, 1, 1, 0, 0 ", want: "[[0.0,0.0],[0.0,1.0],[1.0,1.0],[0.0,0.0]]"},
		{in: " [[0,0],[0,1.50],[1,1],[0,0]]", want: "[[0.0,0.0],[0.0,1.5],[1.0,1.0],[0.0,0.0]]"},
		{in: "(0,0,0,1,1,1,0,0", err: "must be a valid polygon: polygon coordinate string has an opening '(' but is missing the closing ')'"},
		{in: "[0,0,0,1]", err: "must be a valid polygon: expected an array of [lat,lon] pairs such as [[52.5,13.4],[52.6,13.5],...]; element 0 is a bare number (flat numeric arrays are not accepted)"},
		{in: "", err: "must be a valid polygon: polygon coordinate string is empty"},
	}
	for _, tc := range tests {
		got, err := h.Canonical(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Canonical(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
