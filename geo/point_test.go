package geo

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

const wantPointForms = `send [lat,lon] such as [52.55,13.5], a string holding such an array, or a string "lat,lon" or "(lat,lon)"`

var pointCases = []struct {
	name string
	raw  string
	want string // canonical JSON when valid
	err  string
}{
	{name: "json array", raw: `[52.55,13.5]`, want: `[52.55,13.5]`},
	{name: "json array with spaces", raw: ` [ 52.550 , 13.50 ] `, want: `[52.55,13.5]`},
	{name: "string holding array", raw: `" [52.55, 13.5] "`, want: `[52.55,13.5]`},
	{name: "comma string", raw: `"52.55,13.50"`, want: `[52.55,13.5]`},
	{name: "comma string with parentheses and spaces", raw: `" ( 52.55 , 13.5 ) "`, want: `[52.55,13.5]`},
	{name: "range boundaries", raw: `"-90,180"`, want: `[-90.0,180.0]`},
	{name: "tiny", raw: `[1e-7,-0]`, want: `[1e-7,-0.0]`},
	{name: "one value", raw: `[52.55]`, err: "must be a valid point: [lat,lon] needs exactly two numbers, got 1 element(s)"},
	{name: "three values", raw: `[1,2,3]`, err: "must be a valid point: [lat,lon] needs exactly two numbers, got 3 element(s)"},
	{name: "nested pair", raw: `[[1,2]]`, err: "must be a valid point: [lat,lon] needs exactly two numbers, got 1 element(s)"},
	{name: "string value in array", raw: `["1",2]`, err: "must be a valid point: latitude must be a JSON number, got a string"},
	{name: "huge value in array", raw: `[1,-1e400]`, err: "must be a valid point: longitude is not a finite number: -1e400"},
	{name: "three values in string", raw: `"1,2,3"`, err: "must be a valid point: it needs exactly two values lat,lon, got 3"},
	{name: "one value in string", raw: `"(1)"`, err: "must be a valid point: it needs exactly two values lat,lon, got 1"},
	{name: "missing closing parenthesis", raw: `"(1,2"`, err: "must be a valid point: point coordinate string has an opening '(' but is missing the closing ')'"},
	{name: "missing opening parenthesis", raw: `"1,2)"`, err: "must be a valid point: point coordinate string has a closing ')' but is missing the opening '('"},
	{name: "nested parentheses", raw: `"((1,2))"`, err: "must be a valid point: point coordinate string must have at most one outer pair of parentheses; nested or extra '(' or ')' are not allowed"},
	{name: "empty string", raw: `""`, err: "must be a valid point: point coordinate string is empty"},
	{name: "bad latitude", raw: `"x,1"`, err: `must be a valid point: could not parse latitude "x" as a number`},
	{name: "bad longitude", raw: `"1,1.2.3"`, err: `must be a valid point: could not parse longitude "1.2.3" as a number`},
	{name: "NaN", raw: `"nan,1"`, err: "must be a valid point: latitude is not a finite number (NaN and infinities are not accepted)"},
	{name: "latitude out of range", raw: `[91,0]`, err: "must be a valid point: latitude 91 is outside the valid range [-90, 90]"},
	{name: "longitude out of range", raw: `"0,-181"`, err: "must be a valid point: longitude -181 is outside the valid range [-180, 180]"},
	{name: "broken json in string", raw: `"[1,2"`, err: "must be a valid point: the array is not valid JSON (unexpected end of JSON input at byte 4)"},
	{name: "geojson", raw: `{"type":"Point","coordinates":[13.5,52.55]}`, err: "must be a valid point: objects (GeoJSON included) are not accepted; " + wantPointForms},
	{name: "null", raw: `null`, err: "must be a valid point: the value is null; " + wantPointForms},
	{name: "number", raw: `52`, err: "must be a valid point: the value is a number; " + wantPointForms},
	{name: "bool", raw: `false`, err: "must be a valid point: the value is a boolean; " + wantPointForms},
	{name: "empty", raw: ``, err: "must be a valid point: the value is empty; " + wantPointForms},
}

func TestParsePoint(t *testing.T) {
	for _, tc := range pointCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePoint(json.RawMessage(tc.raw))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := string(p.CanonicalJSON()); got != tc.want {
				t.Fatalf("CanonicalJSON = %s, want %s", got, tc.want)
			}
		})
	}
}

func FuzzParsePoint(f *testing.F) {
	for _, tc := range pointCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ParsePoint(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "must be a valid point: ") {
				t.Fatalf("error without the point prefix: %v", err)
			}
			return
		}
		if err := checkPoint(p, -1); err != nil {
			t.Fatalf("accepted an invalid point: %v", err)
		}
		canon := p.CanonicalJSON()
		back, err := ParsePoint(canon)
		if err != nil || math.Float64bits(back.Lat) != math.Float64bits(p.Lat) || math.Float64bits(back.Lon) != math.Float64bits(p.Lon) {
			t.Fatalf("canonical %s parses back as %v, %v; want %v", canon, back, err, p)
		}
		var arr []float64
		if err := json.Unmarshal(canon, &arr); err != nil || len(arr) != 2 {
			t.Fatalf("canonical %s is not a JSON pair: %v", canon, err)
		}
	})
}
