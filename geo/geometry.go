package geo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxPointCloudJSONBytes is the largest canonical point-cloud JSON
// accepted (60 KiB, inclusive), so that the cloud fits in backend metadata
// next to the other headers. The limit on the number of points, the default
// and hard upper limit of a PointCloudHandler's max_points,
// is MaxPoints.
const MaxPointCloudJSONBytes = 61440

// Backend metadata keys carrying a notification's geometry, the keys
// aviso-server writes too, so that each reads the other's streams.
const (
	// MetadataSpatialBBox holds "min_lat,min_lon,max_lat,max_lon".
	MetadataSpatialBBox = "spatial_bbox"
	// MetadataSpatialGeometry holds a polygon: canonical JSON
	// [[lat,lon],...], or the legacy "(lat,lon,...)" string written by
	// Aviso 0.7.
	MetadataSpatialGeometry = "spatial_geometry"
	// MetadataSpatialPointCloud holds a point cloud as canonical JSON.
	MetadataSpatialPointCloud = "spatial_point_cloud"
)

// minPolygonPairs is the smallest ring: three vertices plus the closing
// repeat of the first.
const minPolygonPairs = 4

// NewPolygon validates a closed ring given latitude first and returns its
// geometry with the bounding box computed. Every point must be finite with
// latitude in [-90, 90] and longitude in [-180, 180]; there must be at
// least 4 points including the closing repeat, and the last point must
// equal the first exactly. Vertex uniqueness, area and self-intersection
// are not checked (as in aviso-server). The points are copied.
func NewPolygon(points []Point) (*Geometry, error) {
	for i, p := range points {
		if err := checkPoint(p, i); err != nil {
			return nil, fmt.Errorf("must be a valid polygon: %w", err)
		}
	}
	if len(points) < minPolygonPairs {
		return nil, fmt.Errorf("must be a valid polygon: it has %d [lat,lon] pair(s) but needs at least %d "+
			"(3 vertices plus the closing repeat of the first vertex)", len(points), minPolygonPairs)
	}
	first, last := points[0], points[len(points)-1]
	if first.Lat != last.Lat || first.Lon != last.Lon {
		return nil, fmt.Errorf("must be a valid polygon: it is not closed, the last pair %s differs "+
			"from the first pair %s, so it is missing the closing point (repeat the first pair at the end)",
			last.text(), first.text())
	}
	pts := append([]Point(nil), points...)
	return &Geometry{Kind: PolygonGeometry, Points: pts, BBox: bBoxOf(pts)}, nil
}

// NewPointCloud validates an ordered point cloud and returns its geometry
// with the bounding box computed. It needs 1..maxPoints points (maxPoints
// itself must be in 1..MaxPoints), each finite and in range, and
// a canonical JSON form of at most MaxPointCloudJSONBytes bytes. The point
// count is checked before anything else about the points. Duplicates are
// kept and the order is preserved; no closing repeat is needed. The points
// are copied.
func NewPointCloud(points []Point, maxPoints int) (*Geometry, error) {
	if err := CheckMaxPoints(maxPoints); err != nil {
		return nil, err
	}
	if err := checkCloudCount(len(points), maxPoints); err != nil {
		return nil, err
	}
	for i, p := range points {
		if err := checkPoint(p, i); err != nil {
			return nil, fmt.Errorf("must be a valid point cloud: %w", err)
		}
	}
	g := &Geometry{Kind: PointCloudGeometry, Points: append([]Point(nil), points...)}
	if n := canonicalLen(g.Points); n > MaxPointCloudJSONBytes {
		return nil, fmt.Errorf("point cloud canonical JSON is %d bytes, maximum is %d bytes "+
			"(send fewer points or fewer decimal digits)", n, MaxPointCloudJSONBytes)
	}
	g.BBox = bBoxOf(g.Points)
	return g, nil
}

// CheckMaxPoints validates a max_points setting: 1..MaxPoints.
func CheckMaxPoints(maxPoints int) error {
	if maxPoints < 1 || maxPoints > MaxPoints {
		return fmt.Errorf("max_points must be between 1 and %d, got %d", MaxPoints, maxPoints)
	}
	return nil
}

// checkCloudCount validates a point cloud's size against its limit.
func checkCloudCount(n, maxPoints int) error {
	if n == 0 {
		return errors.New("point cloud must contain at least one point")
	}
	if n > maxPoints {
		return fmt.Errorf("point cloud contains %d points, maximum is %d", n, maxPoints)
	}
	return nil
}

// checkPoint validates one coordinate; index < 0 means a lone point.
func checkPoint(p Point, index int) error {
	where := ""
	if index >= 0 {
		where = fmt.Sprintf(" of the pair at index %d", index)
	}
	if math.IsNaN(p.Lat) || math.IsInf(p.Lat, 0) {
		return fmt.Errorf("latitude%s is not a finite number (NaN and infinities are not accepted)", where)
	}
	if math.IsNaN(p.Lon) || math.IsInf(p.Lon, 0) {
		return fmt.Errorf("longitude%s is not a finite number (NaN and infinities are not accepted)", where)
	}
	if p.Lat < -90 || p.Lat > 90 {
		return fmt.Errorf("latitude %s%s is outside the valid range [-90, 90]", format(p.Lat), where)
	}
	if p.Lon < -180 || p.Lon > 180 {
		return fmt.Errorf("longitude %s%s is outside the valid range [-180, 180]", format(p.Lon), where)
	}
	return nil
}

// bBoxOf returns the inclusive bounding box of non-empty points.
func bBoxOf(points []Point) BBox {
	if len(points) == 0 {
		return BBox{}
	}
	b := BBox{MinLat: points[0].Lat, MinLon: points[0].Lon, MaxLat: points[0].Lat, MaxLon: points[0].Lon}
	for _, p := range points[1:] {
		b.MinLat = math.Min(b.MinLat, p.Lat)
		b.MaxLat = math.Max(b.MaxLat, p.Lat)
		b.MinLon = math.Min(b.MinLon, p.Lon)
		b.MaxLon = math.Max(b.MaxLon, p.Lon)
	}
	return b
}

// CanonicalJSON returns the points as [[lat,lon],...] with every number
// written as a float the way aviso-server 0.13 writes it (Rust's
// serde_json: shortest round-trip digits, always with a fraction or an
// exponent: 52.5, 13.0, -0.5, 1e-7). This text is what CloudEvents carry,
// what is stored as metadata and, for a routed polygon, the subject token.
// A nil geometry gives "null".
func (g *Geometry) CanonicalJSON() []byte {
	if g == nil {
		return []byte("null")
	}
	b := make([]byte, 0, canonicalLen(g.Points))
	return appendPoints(b, g.Points)
}

// appendPoints appends [[lat,lon],...].
func appendPoints(b []byte, points []Point) []byte {
	b = append(b, '[')
	for i, p := range points {
		if i > 0 {
			b = append(b, ',')
		}
		b = p.appendJSON(b)
	}
	return append(b, ']')
}

// canonicalLen is len(appendPoints(nil, points)) without building it.
func canonicalLen(points []Point) int {
	var scratch [32]byte
	n := 2 + len(points)*3 // outer brackets, inner brackets and the comma of each pair
	if len(points) > 1 {
		n += len(points) - 1 // commas between pairs
	}
	for _, p := range points {
		n += len(appendJSONFloat(scratch[:0], p.Lat)) + len(appendJSONFloat(scratch[:0], p.Lon))
	}
	return n
}

// appendFloat formats f exactly as encoding/json formats a float64:
// shortest round-trip digits, plain notation except below 1e-6 and from
// 1e21 on, where it uses an exponent without zero padding (1e-7).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// strconv writes e-07; encoding/json writes e-7.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONFloat formats f as Rust's serde_json writes a finite f64
// (the ryu crate's format64): the shortest round-trip digits d1…dn with
// decimal exponent k (value = 0.d1…dn × 10^k), written as
//
//   - an integer with ".0" when there is no fractional digit and k <= 16
//     (13.0, 1e16 as 10000000000000000.0);
//   - digits around a decimal point when 0 < k <= 16 (52.5);
//   - "0." and zeros when -5 < k <= 0 (0.001234);
//   - otherwise d1[.d2…dn]e<k-1> (1e-7, 1.5e-7, 1e17).
//
// Zero is 0.0 (-0.0 keeps its sign).
func appendJSONFloat(b []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	var scratch [32]byte
	e := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64) // [-]d[.ddd]e±XX
	if e[0] == '-' {
		b = append(b, '-')
		e = e[1:]
	}
	mark := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	var digits [24]byte
	nd := 0
	for _, c := range e[:mark] {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	d := digits[:nd]
	k := exp + 1 // position of the decimal point after the first k digits
	switch {
	case nd <= k && k <= 16:
		b = append(b, d...)
		for i := nd; i < k; i++ {
			b = append(b, '0')
		}
		return append(b, ".0"...)
	case 0 < k && k <= 16:
		b = append(b, d[:k]...)
		b = append(b, '.')
		return append(b, d[k:]...)
	case -5 < k && k <= 0:
		b = append(b, "0."...)
		for i := k; i < 0; i++ {
			b = append(b, '0')
		}
		return append(b, d...)
	}
	b = append(b, d[0])
	if nd > 1 {
		b = append(b, '.')
		b = append(b, d[1:]...)
	}
	b = append(b, 'e')
	return strconv.AppendInt(b, int64(k-1), 10)
}

// format is appendFloat as a string.
func format(f float64) string {
	var scratch [32]byte
	return string(appendFloat(scratch[:0], f))
}

// text renders a point as [lat,lon] for messages.
func (p Point) text() string {
	return "[" + format(p.Lat) + "," + format(p.Lon) + "]"
}

// appendJSON appends [lat,lon] in the canonical float form.
func (p Point) appendJSON(b []byte) []byte {
	b = append(b, '[')
	b = appendJSONFloat(b, p.Lat)
	b = append(b, ',')
	b = appendJSONFloat(b, p.Lon)
	return append(b, ']')
}

// Metadata returns the backend metadata of the geometry:
// spatial_bbox as "min_lat,min_lon,max_lat,max_lon" (numbers in the same
// shortest form as CanonicalJSON), plus spatial_geometry holding the
// canonical polygon JSON, or spatial_point_cloud holding the canonical
// cloud JSON. A nil geometry or an unknown kind gives nil.
func (g *Geometry) Metadata() map[string]string {
	if g == nil {
		return nil
	}
	var key string
	switch g.Kind {
	case PolygonGeometry:
		key = MetadataSpatialGeometry
	case PointCloudGeometry:
		key = MetadataSpatialPointCloud
	default:
		return nil
	}
	bbox := make([]byte, 0, 64)
	bbox = appendFloat(bbox, g.BBox.MinLat)
	bbox = append(bbox, ',')
	bbox = appendFloat(bbox, g.BBox.MinLon)
	bbox = append(bbox, ',')
	bbox = appendFloat(bbox, g.BBox.MaxLat)
	bbox = append(bbox, ',')
	bbox = appendFloat(bbox, g.BBox.MaxLon)
	return map[string]string{
		MetadataSpatialBBox: string(bbox),
		key:                 string(g.CanonicalJSON()),
	}
}

// GeometryFromMetadata rebuilds a geometry from backend metadata written
// by Metadata, or by Aviso: spatial_geometry may hold canonical JSON or
// the legacy polygon string "(lat,lon,...)" of Aviso 0.7. get returns ""
// for an absent key. It returns nil, nil when none of the three spatial
// keys is present. The geometry is validated again; its bounding box is
// recomputed from the points (spatial_bbox, when present, must be four
// numbers but is otherwise not trusted). A point cloud is read with the
// largest limit, MaxPoints.
func GeometryFromMetadata(get func(key string) string) (*Geometry, error) {
	poly := get(MetadataSpatialGeometry)
	cloud := get(MetadataSpatialPointCloud)
	bbox := get(MetadataSpatialBBox)
	if poly == "" && cloud == "" && bbox == "" {
		return nil, nil
	}
	if poly != "" && cloud != "" {
		return nil, fmt.Errorf("metadata holds both %s and %s; a notification has at most one geometry",
			MetadataSpatialGeometry, MetadataSpatialPointCloud)
	}
	if poly == "" && cloud == "" {
		return nil, fmt.Errorf("metadata holds %s but neither %s nor %s",
			MetadataSpatialBBox, MetadataSpatialGeometry, MetadataSpatialPointCloud)
	}
	if bbox != "" {
		if err := checkBBoxText(bbox); err != nil {
			return nil, fmt.Errorf("metadata %s: %w", MetadataSpatialBBox, err)
		}
	}
	var (
		g   *Geometry
		err error
	)
	if poly != "" {
		g, err = PolygonFromText(poly)
		if err != nil {
			return nil, fmt.Errorf("metadata %s: %w", MetadataSpatialGeometry, err)
		}
		return g, nil
	}
	g, err = ParsePointCloud([]byte(cloud), MaxPoints)
	if err != nil {
		return nil, fmt.Errorf("metadata %s: %w", MetadataSpatialPointCloud, err)
	}
	return g, nil
}

// checkBBoxText checks "min_lat,min_lon,max_lat,max_lon", optionally in
// parentheses (aviso-server's reader trims them).
func checkBBoxText(s string) error {
	inner := strings.TrimSpace(s)
	inner = strings.TrimPrefix(inner, "(")
	inner = strings.TrimSuffix(inner, ")")
	parts := strings.Split(inner, ",")
	if len(parts) != 4 {
		return fmt.Errorf("must be four numbers min_lat,min_lon,max_lat,max_lon, got %d value(s) in %q", len(parts), s)
	}
	for _, part := range parts {
		v, ok := parseDecimal(strings.TrimSpace(part))
		if !ok {
			return fmt.Errorf("could not parse %q as a number in %q", strings.TrimSpace(part), s)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%q is not a finite number in %q", strings.TrimSpace(part), s)
		}
	}
	return nil
}

// --- parsing shared by polygons, points and point clouds ---

// trimJSON trims JSON whitespace.
func trimJSON(b []byte) []byte {
	return bytes.Trim(b, " \t\r\n")
}

// kindName names the JSON value starting with c, for messages.
func kindName(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	default:
		return "not valid JSON"
	}
}

// jSONArray splits a JSON array into its raw elements.
func jSONArray(raw []byte) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("not valid JSON (%v at byte %d)", syn, syn.Offset)
		}
		return nil, fmt.Errorf("not a valid JSON array (%v)", err)
	}
	return elems, nil
}

// jSONPairs parses the elements of a JSON array of [lat,lon] pairs
// (numbers only, finite; ranges are checked by the constructors).
func jSONPairs(elems []json.RawMessage) ([]Point, error) {
	points := make([]Point, len(elems))
	for i, e := range elems {
		if t := trimJSON(e); len(t) > 0 && kindName(t[0]) == "a number" {
			return nil, fmt.Errorf("expected an array of [lat,lon] pairs such as [[52.5,13.4],[52.6,13.5],...]; "+
				"element %d is a bare number (flat numeric arrays are not accepted)", i)
		}
		p, err := jSONPair(e, fmt.Sprintf(" of the pair at index %d", i))
		if err != nil {
			return nil, err
		}
		points[i] = p
	}
	return points, nil
}

// jSONPair parses one [lat,lon] JSON pair; where locates it in messages.
func jSONPair(raw json.RawMessage, where string) (Point, error) {
	raw = trimJSON(raw)
	if len(raw) == 0 || raw[0] != '[' {
		kind := "nothing"
		if len(raw) > 0 {
			kind = kindName(raw[0])
		}
		return Point{}, fmt.Errorf("each coordinate must be a [lat,lon] array of two numbers; the value%s is %s", where, kind)
	}
	elems, err := jSONArray(raw)
	if err != nil {
		return Point{}, fmt.Errorf("the value%s is %w", where, err)
	}
	if len(elems) != 2 {
		return Point{}, fmt.Errorf("each coordinate must be a [lat,lon] array of exactly two numbers; the array%s has %d element(s)", where, len(elems))
	}
	lat, err := jSONNumber(elems[0], "latitude", where)
	if err != nil {
		return Point{}, err
	}
	lon, err := jSONNumber(elems[1], "longitude", where)
	if err != nil {
		return Point{}, err
	}
	return Point{Lat: lat, Lon: lon}, nil
}

// jSONNumber parses one JSON number that must be finite as a float64.
func jSONNumber(raw json.RawMessage, name, where string) (float64, error) {
	raw = trimJSON(raw)
	if len(raw) == 0 || kindName(raw[0]) != "a number" {
		kind := "nothing"
		if len(raw) > 0 {
			kind = kindName(raw[0])
		}
		return 0, fmt.Errorf("%s%s must be a JSON number, got %s", name, where, kind)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s%s: could not parse %s as a number", name, where, raw)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s%s is not a finite number: %s", name, where, raw)
	}
	return v, nil
}

// commaValues parses the legacy coordinate text "(v,v,...)" or
// "v,v,...": whitespace is tolerated around values and parentheses, at
// most one outer pair of parentheses is allowed and it must be balanced.
// noun names the value in messages ("polygon" or "point").
func commaValues(s, noun string) ([]string, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return nil, fmt.Errorf("%s coordinate string is empty", noun)
	}
	inner := raw
	open, closing := strings.HasPrefix(raw, "("), strings.HasSuffix(raw, ")")
	switch {
	case open && closing:
		inner = raw[1 : len(raw)-1]
	case open:
		return nil, fmt.Errorf("%s coordinate string has an opening '(' but is missing the closing ')'", noun)
	case closing:
		return nil, fmt.Errorf("%s coordinate string has a closing ')' but is missing the opening '('", noun)
	}
	if strings.ContainsAny(inner, "()") {
		return nil, fmt.Errorf("%s coordinate string must have at most one outer pair of parentheses; "+
			"nested or extra '(' or ')' are not allowed", noun)
	}
	inner = strings.TrimSpace(inner)
	if inner == "" {
		return nil, fmt.Errorf("%s coordinate string is empty between the parentheses", noun)
	}
	parts := strings.Split(inner, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts, nil
}

// commaPoints turns legacy values into points, lat first; an odd count
// or a value that is not a number is an error.
func commaPoints(parts []string, noun string) ([]Point, error) {
	if len(parts)%2 != 0 {
		return nil, fmt.Errorf("%s coordinates must be lat,lon pairs, got an odd number of values (%d)", noun, len(parts))
	}
	points := make([]Point, len(parts)/2)
	for i := range points {
		lat, ok := parseDecimal(parts[2*i])
		if !ok {
			return nil, fmt.Errorf("could not parse latitude %q of the pair at index %d as a number", parts[2*i], i)
		}
		lon, ok := parseDecimal(parts[2*i+1])
		if !ok {
			return nil, fmt.Errorf("could not parse longitude %q of the pair at index %d as a number", parts[2*i+1], i)
		}
		points[i] = Point{Lat: lat, Lon: lon}
	}
	return points, nil
}

// parseDecimal parses a number with Rust's f64 grammar, which the
// aviso-server uses for coordinate strings: an optional sign, then digits
// with an optional fraction ("5", "5.", ".5", "5.25") and an optional
// exponent ("1e3", "1E-3"), or inf/infinity/nan in any case. Go-only forms
// (hexadecimal, underscores) are refused. Out-of-range magnitudes give
// ±Inf, which the range checks reject.
func parseDecimal(s string) (float64, bool) {
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	i, digits := 0, 0
	for i < len(body) && body[i] >= '0' && body[i] <= '9' {
		i++
		digits++
	}
	if i < len(body) && body[i] == '.' {
		i++
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i++
			expDigits++
		}
		if expDigits == 0 {
			return 0, false
		}
	}
	if i != len(body) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}
