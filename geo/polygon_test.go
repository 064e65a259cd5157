package geo

import (
	"encoding/json"
	"strings"
	"testing"
)

const wantPolygonForms = `send a JSON array of [lat,lon] pairs such as [[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]], ` +
	`a string holding such an array, or a string "lat,lon,lat,lon,..." with optional outer parentheses`

// polygonCases are shared by ParsePolygon and the fuzz seed corpus.
var polygonCases = []struct {
	name string
	raw  string
	want string // canonical JSON when valid
	err  string
}{
	{name: "json array", raw: `[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.4,13.5],[52.5,13.4]]`,
		want: `[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.4,13.5],[52.5,13.4]]`},
	{name: "json array with whitespace and number forms", raw: ` [ [ 52.50 , 13.4e0 ] ,[52.6,13.5],[5.26E1,13.6],[52.50,1.34e1] ] `,
		want: `[[52.5,13.4],[52.6,13.5],[52.6,13.6],[52.5,13.4]]`},
	{name: "string holding json array", raw: `"  [[0,0],[0,1],[1,1],[0,0]] "`, want: `[[0.0,0.0],[0.0,1.0],[1.0,1.0],[0.0,0.0]]`},
	{name: "legacy string with parentheses", raw: `"(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5,52.5,13.4)"`,
		want: `[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.4,13.5],[52.5,13.4]]`},
	{name: "legacy string with spaces", raw: `" ( 52.5 , 13.4 , 52.6 , 13.5 , 52.5 , 13.6 , 52.5 , 13.4 ) "`,
		want: `[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.5,13.4]]`},
	{name: "legacy string without parentheses", raw: `"50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0"`,
		want: `[[50.0,10.0],[52.0,10.0],[52.0,12.0],[50.0,12.0],[50.0,10.0]]`},
	{name: "legacy string rust number forms", raw: `"+1.,.5,1e0,5e-1,2,2,1,0.5"`, want: `[[1.0,0.5],[1.0,0.5],[2.0,2.0],[1.0,0.5]]`},
	{name: "tiny numbers", raw: `[[1e-7,0],[0,1],[1,1],[1e-7,0]]`, want: `[[1e-7,0.0],[0.0,1.0],[1.0,1.0],[1e-7,0.0]]`},
	{name: "range boundaries", raw: `"(90.0,-180.0,89.0,-180.0,89.0,-179.0,90.0,-180.0)"`, want: `[[90.0,-180.0],[89.0,-180.0],[89.0,-179.0],[90.0,-180.0]]`},

	{name: "missing closing parenthesis", raw: `"(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0"`,
		err: "must be a valid polygon: polygon coordinate string has an opening '(' but is missing the closing ')'"},
	{name: "missing opening parenthesis", raw: `"50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)"`,
		err: "must be a valid polygon: polygon coordinate string has a closing ')' but is missing the opening '('"},
	{name: "nested parentheses", raw: `"(50.0,10.0),52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)"`,
		err: "must be a valid polygon: polygon coordinate string must have at most one outer pair of parentheses; nested or extra '(' or ')' are not allowed"},
	{name: "double parentheses", raw: `"((0,0,0,1,1,1,0,0))"`,
		err: "must be a valid polygon: polygon coordinate string must have at most one outer pair of parentheses; nested or extra '(' or ')' are not allowed"},
	{name: "unclosed ring", raw: `"(52.5,13.4,52.6,13.5,52.5,13.6,52.4,13.5)"`,
		err: "must be a valid polygon: it is not closed, the last pair [52.4,13.5] differs from the first pair [52.5,13.4], so it is missing the closing point (repeat the first pair at the end)"},
	{name: "unclosed json ring", raw: `[[0,0],[0,1],[1,1],[1,0]]`,
		err: "must be a valid polygon: it is not closed, the last pair [1,0] differs from the first pair [0,0], so it is missing the closing point (repeat the first pair at the end)"},
	{name: "too few pairs", raw: `"(52.5,13.4,52.6,13.5)"`,
		err: "must be a valid polygon: it has 2 [lat,lon] pair(s) but needs at least 4 (3 vertices plus the closing repeat of the first vertex)"},
	{name: "empty json array", raw: `[]`,
		err: "must be a valid polygon: it has 0 [lat,lon] pair(s) but needs at least 4 (3 vertices plus the closing repeat of the first vertex)"},
	{name: "empty parentheses", raw: `"()"`, err: "must be a valid polygon: polygon coordinate string is empty between the parentheses"},
	{name: "empty string", raw: `""`, err: "must be a valid polygon: polygon coordinate string is empty"},
	{name: "blank string", raw: `" \t "`, err: "must be a valid polygon: polygon coordinate string is empty"},
	{name: "odd count", raw: `"(52.5,13.4,52.6)"`, err: "must be a valid polygon: polygon coordinates must be lat,lon pairs, got an odd number of values (3)"},
	{name: "empty value", raw: `"0,0,,1,1,1,0,0"`, err: `must be a valid polygon: could not parse latitude "" of the pair at index 1 as a number`},
	{name: "bad latitude", raw: `"(invalid,13.4,52.6,13.5,52.5,13.4,invalid,13.4)"`,
		err: `must be a valid polygon: could not parse latitude "invalid" of the pair at index 0 as a number`},
	{name: "bad longitude", raw: `"(52.5,invalid,52.6,13.5,52.5,13.4,52.5,invalid)"`,
		err: `must be a valid polygon: could not parse longitude "invalid" of the pair at index 0 as a number`},
	{name: "hex float refused", raw: `"0x1p1,0,0,1,1,1,0x1p1,0"`, err: `must be a valid polygon: could not parse latitude "0x1p1" of the pair at index 0 as a number`},
	{name: "NaN in string", raw: `"(NaN,10.0,50.0,10.0,50.0,11.0,NaN,10.0)"`,
		err: "must be a valid polygon: latitude of the pair at index 0 is not a finite number (NaN and infinities are not accepted)"},
	{name: "inf in string", raw: `"(50,-inf,50.0,10.0,50.0,11.0,50,-inf)"`,
		err: "must be a valid polygon: longitude of the pair at index 0 is not a finite number (NaN and infinities are not accepted)"},
	{name: "latitude above 90", raw: `"(91.0,10.0,50.0,10.0,50.0,11.0,91.0,10.0)"`,
		err: "must be a valid polygon: latitude 91 of the pair at index 0 is outside the valid range [-90, 90]"},
	{name: "longitude below -180", raw: `[[50,10],[50,-180.5],[51,11],[50,10]]`,
		err: "must be a valid polygon: longitude -180.5 of the pair at index 1 is outside the valid range [-180, 180]"},
	{name: "huge number", raw: `[[50,10],[50,1e999],[51,11],[50,10]]`,
		err: "must be a valid polygon: longitude of the pair at index 1 is not a finite number: 1e999"},
	{name: "flat numeric array", raw: `[0,0,0,1,1,1,0,0]`,
		err: "must be a valid polygon: expected an array of [lat,lon] pairs such as [[52.5,13.4],[52.6,13.5],...]; element 0 is a bare number (flat numeric arrays are not accepted)"},
	{name: "flat array in string", raw: `"[0,0,0,1,1,1,0,0]"`,
		err: "must be a valid polygon: expected an array of [lat,lon] pairs such as [[52.5,13.4],[52.6,13.5],...]; element 0 is a bare number (flat numeric arrays are not accepted)"},
	{name: "pair with three numbers", raw: `[[0,0],[0,1,2],[1,1],[0,0]]`,
		err: "must be a valid polygon: each coordinate must be a [lat,lon] array of exactly two numbers; the array of the pair at index 1 has 3 element(s)"},
	{name: "pair with one number", raw: `[[0,0],[0,1],[1],[0,0]]`,
		err: "must be a valid polygon: each coordinate must be a [lat,lon] array of exactly two numbers; the array of the pair at index 2 has 1 element(s)"},
	{name: "string in pair", raw: `[[0,0],["0",1],[1,1],[0,0]]`,
		err: "must be a valid polygon: latitude of the pair at index 1 must be a JSON number, got a string"},
	{name: "null in pair", raw: `[[0,0],[0,null],[1,1],[0,0]]`,
		err: "must be a valid polygon: longitude of the pair at index 1 must be a JSON number, got null"},
	{name: "object as pair", raw: `[[0,0],{"lat":0,"lon":1},[1,1],[0,0]]`,
		err: "must be a valid polygon: each coordinate must be a [lat,lon] array of two numbers; the value of the pair at index 1 is an object"},
	{name: "deeper nesting", raw: `[[[0,0],1],[0,1],[1,1],[0,0]]`,
		err: "must be a valid polygon: latitude of the pair at index 0 must be a JSON number, got an array"},
	{name: "broken json array", raw: `[[0,0],[0,1],[1,1],[0,0]`,
		err: "must be a valid polygon: the array is not valid JSON (unexpected end of JSON input at byte 24)"},
	{name: "broken json in string", raw: `"[[0,0],[0,1]"`,
		err: "must be a valid polygon: the array is not valid JSON (unexpected end of JSON input at byte 12)"},
	{name: "geojson object", raw: `{"type":"Polygon","coordinates":[[[13.4,52.5],[13.5,52.6],[13.6,52.5],[13.4,52.5]]]}`,
		err: "must be a valid polygon: objects (GeoJSON included) are not accepted; " + wantPolygonForms},
	{name: "null", raw: `null`, err: "must be a valid polygon: the value is null; " + wantPolygonForms},
	{name: "bool", raw: `true`, err: "must be a valid polygon: the value is a boolean; " + wantPolygonForms},
	{name: "number", raw: `52.5`, err: "must be a valid polygon: the value is a number; " + wantPolygonForms},
	{name: "empty raw", raw: ``, err: "must be a valid polygon: the value is empty; " + wantPolygonForms},
	{name: "bad string escape", raw: `"\q"`, err: "must be a valid polygon: the value is not a valid JSON string (invalid character 'q' in string escape code)"},
}

// fromText parses a JSON string value's text with PolygonFromText (other
// values with ParsePolygon): the two forms must agree.
func fromText(raw json.RawMessage) (*Geometry, error) {
	var s string
	if t := trimJSON(raw); len(t) > 0 && t[0] == '"' && json.Unmarshal(t, &s) == nil {
		return PolygonFromText(s)
	}
	return ParsePolygon(raw)
}

func TestParsePolygon(t *testing.T) {
	for _, tc := range polygonCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, parse := range []func(json.RawMessage) (*Geometry, error){ParsePolygon, fromText} {
				g, err := parse(json.RawMessage(tc.raw))
				if tc.err != "" {
					if err == nil || err.Error() != tc.err {
						t.Fatalf("error = %v, want %q", err, tc.err)
					}
					if g != nil {
						t.Fatalf("geometry %+v returned with an error", g)
					}
					continue
				}
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if g.Kind != PolygonGeometry || string(g.CanonicalJSON()) != tc.want {
					t.Fatalf("got kind %d %s, want %s", g.Kind, g.CanonicalJSON(), tc.want)
				}
			}
		})
	}
}

func TestPolygonErrorsMatchReferenceWording(t *testing.T) {
	// aviso-server's API tests look for these phrases.
	_, err := ParsePolygon(json.RawMessage(`"(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0"`))
	if err == nil || !strings.Contains(err.Error(), "must be a valid polygon") || !strings.Contains(err.Error(), "missing the closing") {
		t.Fatalf("unbalanced parenthesis: %v", err)
	}
	_, err = ParsePolygon(json.RawMessage(`[[0,0],[0,1],[1,1],[1,0]]`))
	if err == nil || !strings.Contains(err.Error(), "missing the closing") {
		t.Fatalf("unclosed ring: %v", err)
	}
	_, err = ParsePolygon(json.RawMessage(`"(50.0,10.0),52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)"`))
	if err == nil || !strings.Contains(err.Error(), "nested") || strings.Contains(err.Error(), "Invalid longitude") {
		t.Fatalf("nested parentheses: %v", err)
	}
}

func FuzzPolygonGeometry(f *testing.F) {
	for _, tc := range polygonCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		g, err := ParsePolygon(raw)
		if err != nil {
			if g != nil {
				t.Fatalf("geometry with error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "must be a valid polygon: ") {
				t.Fatalf("error without the polygon prefix: %v", err)
			}
			return
		}
		checkGeometryInvariants(t, g)
		if g.Kind != PolygonGeometry {
			t.Fatalf("kind %d", g.Kind)
		}
		canon := g.CanonicalJSON()
		back, err := ParsePolygon(canon)
		if err != nil {
			t.Fatalf("canonical %s does not parse back: %v", canon, err)
		}
		assertSameGeometry(t, back, g)
		again, err := PolygonFromText(string(canon))
		if err != nil || string(again.CanonicalJSON()) != string(canon) {
			t.Fatalf("PolygonFromText(%s) = %v, %v", canon, again, err)
		}
		m := g.Metadata()
		back, err = GeometryFromMetadata(func(k string) string { return m[k] })
		if err != nil {
			t.Fatalf("metadata %v does not parse back: %v", m, err)
		}
		assertSameGeometry(t, back, g)
		// Every polygon intersects itself; a vertex is on the boundary.
		if !IntersectsFilter(g).Match(g) {
			t.Fatalf("polygon %s does not intersect itself", canon)
		}
		if ContainsPointFilter(g.Points[1]).Match(g) {
			t.Fatalf("polygon %s strictly contains its vertex %v", canon, g.Points[1])
		}
	})
}
