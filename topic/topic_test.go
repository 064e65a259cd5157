package topic

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEncodeToken(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"abc", "abc"},
		{".", "%2E"},
		{"*", "%2A"},
		{">", "%3E"},
		{"%", "%25"},
		{"1.45", "1%2E45"},
		{"1%25", "1%2525"},
		{"1*34", "1%2A34"},
		{"a.b*c>d%e", "a%2Eb%2Ac%3Ed%25e"},
		{"...", "%2E%2E%2E"},
		{"%2E", "%252E"},
		{"Zürich", "Zürich"},
		{"東京.駅", "東京%2E駅"},
		{"😀", "😀"},
		{"a b\tc", "a b\tc"},
		{"-_~+/:@$!,;=&?#[]{}()'\"\\^|`", "-_~+/:@$!,;=&?#[]{}()'\"\\^|`"},
		{"20250706", "20250706"},
		// Bytes that are not UTF-8 pass through; DecodeToken rejects them.
		{"\xff", "\xff"},
	}
	for _, tt := range tests {
		if got := EncodeToken(tt.in); got != tt.want {
			t.Errorf("EncodeToken(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeToken(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"abc", "abc"},
		{"%2E", "."},
		{"%2A", "*"},
		{"%3E", ">"},
		{"%25", "%"},
		{"1%2E45", "1.45"},
		{"1%2525", "1%25"},
		{"1%25", "1%"},
		{"a%2Eb%2Ac%3Ed%25e", "a.b*c>d%e"},
		// Lowercase hex is accepted (as in the reference); EncodeToken
		// always writes uppercase.
		{"%2e", "."},
		{"%2a%3e", "*>"},
		{"%c3%bc", "ü"},
		// Escapes of unreserved bytes are accepted.
		{"%41", "A"},
		{"%C3%BC", "ü"},
		{"Zürich", "Zürich"},
		{"東京%2E駅", "東京.駅"},
		{"%20", " "},
		{"%00", "\x00"},
	}
	for _, tt := range tests {
		got, err := DecodeToken(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("DecodeToken(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
		}
	}
}

func TestDecodeTokenErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"%", `token "%": invalid percent-encoding: '%' at byte 0 is not followed by two hex digits (write a literal '%' as %25)`},
		{"%4", `token "%4": invalid percent-encoding: '%' at byte 0 is not followed by two hex digits (write a literal '%' as %25)`},
		{"abc%", `token "abc%": invalid percent-encoding: '%' at byte 3 is not followed by two hex digits (write a literal '%' as %25)`},
		{"abc%2", `token "abc%2": invalid percent-encoding: '%' at byte 3 is not followed by two hex digits (write a literal '%' as %25)`},
		{"%GG", `token "%GG": invalid percent-encoding: "%GG" at byte 0 is not '%' followed by two hex digits (write a literal '%' as %25)`},
		{"%G1", `token "%G1": invalid percent-encoding: "%G1" at byte 0 is not '%' followed by two hex digits (write a literal '%' as %25)`},
		{"%1G", `token "%1G": invalid percent-encoding: "%1G" at byte 0 is not '%' followed by two hex digits (write a literal '%' as %25)`},
		{"ab%%20", `token "ab%%20": invalid percent-encoding: "%%2" at byte 2 is not '%' followed by two hex digits (write a literal '%' as %25)`},
		{"%2E%ZZ", `token "%2E%ZZ": invalid percent-encoding: "%ZZ" at byte 3 is not '%' followed by two hex digits (write a literal '%' as %25)`},
		{"%FF", `token "%FF": invalid percent-encoding: decodes to invalid UTF-8`},
		{"%C3", `token "%C3": invalid percent-encoding: decodes to invalid UTF-8`},
		{"%E2%82", `token "%E2%82": invalid percent-encoding: decodes to invalid UTF-8`},
		{"a%2E\xff", `token "a%2E\xff": invalid percent-encoding: decodes to invalid UTF-8`},
		{"\xff", `token "\xff": invalid percent-encoding: not valid UTF-8`},
		{"ab\xc3", `token "ab\xc3": invalid percent-encoding: not valid UTF-8`},
	}
	for _, tt := range tests {
		got, err := DecodeToken(tt.in)
		if err == nil {
			t.Errorf("DecodeToken(%q) = %q, nil; want error", tt.in, got)
			continue
		}
		if !errors.Is(err, ErrInvalidEncoding) {
			t.Errorf("DecodeToken(%q) error %v does not wrap ErrInvalidEncoding", tt.in, err)
		}
		if err.Error() != tt.want {
			t.Errorf("DecodeToken(%q) error\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestEncodeDecodeSubject(t *testing.T) {
	tests := []struct {
		tokens  []string
		subject string
	}{
		{[]string{"weather", "north", "20250706"}, "weather.north.20250706"},
		{[]string{"mars", "1.45", "a*b", "p%q", ">"}, "mars.1%2E45.a%2Ab.p%25q.%3E"},
		{[]string{"diss", "FOO", "1.59342", "a*b", "p%q"}, "diss.FOO.1%2E59342.a%2Ab.p%25q"},
		{[]string{"diss.v2", "FOO"}, "diss%2Ev2.FOO"},
		{[]string{"evt"}, "evt"},
		{[]string{""}, ""},
		{[]string{"a", ""}, "a."},
		{[]string{"a", "", "b"}, "a..b"},
		{[]string{"x.y", "z"}, "x%2Ey.z"},
		{[]string{"x", "y.z"}, "x.y%2Ez"},
		{[]string{"Zürich", "東京"}, "Zürich.東京"},
	}
	for _, tt := range tests {
		if got := Encode(tt.tokens); got != tt.subject {
			t.Errorf("Encode(%q) = %q, want %q", tt.tokens, got, tt.subject)
		}
		got, err := decode(tt.subject)
		if err != nil || !reflect.DeepEqual(got, tt.tokens) {
			t.Errorf("decode(%q) = %q, %v; want %q", tt.subject, got, err, tt.tokens)
		}
	}
	if got := Encode(nil); got != "" {
		t.Errorf("Encode(nil) = %q, want empty", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"a.%2", `subject "a.%2": token "%2": invalid percent-encoding: '%' at byte 0 is not followed by two hex digits (write a literal '%' as %25)`},
		{"a.b%GG.c", `subject "a.b%GG.c": token "b%GG": invalid percent-encoding: "%GG" at byte 1 is not '%' followed by two hex digits (write a literal '%' as %25)`},
		{"%FF.a", `subject "%FF.a": token "%FF": invalid percent-encoding: decodes to invalid UTF-8`},
	}
	for _, tt := range tests {
		got, err := decode(tt.in)
		if err == nil {
			t.Errorf("decode(%q) = %q, nil; want error", tt.in, got)
			continue
		}
		if !errors.Is(err, ErrInvalidEncoding) || err.Error() != tt.want {
			t.Errorf("decode(%q) error\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

// TestNoCollisions checks that tokens containing the separator never
// produce the subject of a different token split.
func TestNoCollisions(t *testing.T) {
	splits := [][]string{
		{"x.y", "z"},
		{"x", "y.z"},
		{"x", "y", "z"},
		{"x.y.z"},
		{"x%2Ey", "z"},
		{"x%", "2Ey.z"},
	}
	seen := map[string][]string{}
	for _, s := range splits {
		e := Encode(s)
		if prev, ok := seen[e]; ok {
			t.Errorf("Encode(%q) = Encode(%q) = %q", s, prev, e)
		}
		seen[e] = s
		back, err := decode(e)
		if err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("decode(Encode(%q)) = %q, %v", s, back, err)
		}
	}
	p := Pattern{Literal("x.y"), Literal("z")}
	if p.Match([]string{"x", "y.z"}) {
		t.Error(`pattern x.y|z matched x|y.z`)
	}
	if !p.Match([]string{"x.y", "z"}) {
		t.Error(`pattern x.y|z did not match x.y|z`)
	}
}

func TestPatternMatch(t *testing.T) {
	p := Pattern{Literal("diss"), Literal("FOO"), Any(), Literal("od")}
	tests := []struct {
		pattern Pattern
		tokens  []string
		want    bool
	}{
		{p, []string{"diss", "FOO", "E1", "od"}, true},
		{p, []string{"diss", "FOO", "E2", "od"}, true},
		{p, []string{"diss", "FOO", "*", "od"}, true},
		{p, []string{"diss", "FOO", "", "od"}, true},
		{p, []string{"diss", "FOO", "E1", "mars"}, false},
		{p, []string{"mars", "FOO", "E1", "od"}, false},
		{p, []string{"diss", "FOO", "E1"}, false},
		{p, []string{"diss", "FOO", "E1", "od", "x"}, false},
		{Pattern{Literal("diss"), Literal("FOO")}, []string{"diss", "FOO", "E1"}, false},
		{Pattern{Literal("mars"), Literal("1.45"), Literal("p%q")}, []string{"mars", "1.45", "p%q"}, true},
		{Pattern{Literal("mars"), Literal("1.45")}, []string{"mars", "1%2E45"}, false},
		// A literal "*" matches only the value "*".
		{Pattern{Literal("a"), Literal("*")}, []string{"a", "*"}, true},
		{Pattern{Literal("a"), Literal("*")}, []string{"a", "b"}, false},
		// A wildcard token's Value is ignored.
		{Pattern{Literal("a"), {Value: "x", Wildcard: true}}, []string{"a", "b"}, true},
		{Pattern{Any(), Any()}, []string{"a", "b"}, true},
		{Pattern{}, []string{}, true},
		{Pattern{}, nil, true},
		{Pattern{}, []string{""}, false},
		{Pattern{Literal("")}, []string{""}, true},
		{Pattern{Literal("Zürich")}, []string{"Zürich"}, true},
		{Pattern{Literal("zürich")}, []string{"Zürich"}, false},
	}
	for _, tt := range tests {
		if got := tt.pattern.Match(tt.tokens); got != tt.want {
			t.Errorf("%s.Match(%q) = %v, want %v", tt.pattern.Display(), tt.tokens, got, tt.want)
		}
	}
}

func TestPatternDisplaySubject(t *testing.T) {
	tests := []struct {
		pattern          Pattern
		display, subject string
	}{
		{Pattern{Literal("weather"), Literal("T1"), Literal("south"), Literal("20250706"), Any(), Any(), Any()},
			"weather.T1.south.20250706.*.*.*", "weather.T1.south.20250706.*.*.*"},
		{Pattern{Literal("mars"), Literal("1.45"), Any(), Literal("p%q")},
			"mars.1.45.*.p%q", "mars.1%2E45.*.p%25q"},
		{Pattern{Literal("a"), Literal("*"), Any()}, "a.*.*", "a.%2A.*"},
		{Pattern{Literal("a"), Literal(">")}, "a.>", "a.%3E"},
		{Pattern{Literal("base")}, "base", "base"},
		{Pattern{Literal("Zürich"), Any()}, "Zürich.*", "Zürich.*"},
		{Pattern{}, "", ""},
	}
	for _, tt := range tests {
		if got := tt.pattern.Display(); got != tt.display {
			t.Errorf("Display() = %q, want %q", got, tt.display)
		}
		if got := tt.pattern.Subject(); got != tt.subject {
			t.Errorf("Subject() = %q, want %q", got, tt.subject)
		}
	}
}

// pat builds a pattern from a display string: "*" is a wildcard, anything
// else a literal (tests only; values here contain no '.').
func pat(s string) Pattern {
	var p Pattern
	for _, t := range strings.Split(s, ".") {
		if t == "*" {
			p = append(p, Any())
		} else {
			p = append(p, Literal(t))
		}
	}
	return p
}

func TestGeneric(t *testing.T) {
	tests := []struct {
		eventType  string
		identifier map[string]string
		tokens     []string
		subject    string
	}{
		{"evt", nil, []string{"evt"}, "evt"},
		{"evt", map[string]string{}, []string{"evt"}, "evt"},
		{"evt", map[string]string{"b": "2", "a": "1", "c": "x.y"}, []string{"evt", "1", "2", "x.y"}, "evt.1.2.x%2Ey"},
		{"evt", map[string]string{"Z": "upper", "a": "lower", "_": "u"}, []string{"evt", "upper", "u", "lower"}, "evt.upper.u.lower"},
		{"my.evt", map[string]string{"k": "*"}, []string{"my.evt", "*"}, "my%2Eevt.%2A"},
	}
	for _, tt := range tests {
		got := Generic(tt.eventType, tt.identifier)
		if !reflect.DeepEqual(got, tt.tokens) {
			t.Errorf("Generic(%q, %v) = %q, want %q", tt.eventType, tt.identifier, got, tt.tokens)
		}
		if s := Encode(got); s != tt.subject {
			t.Errorf("Encode(Generic(%q, %v)) = %q, want %q", tt.eventType, tt.identifier, s, tt.subject)
		}
	}
}

func FuzzDecodeToken(f *testing.F) {
	for _, s := range []string{
		"", "abc", "1%2E45", "1%2525", "%2e", "%", "%4", "%GG", "%FF", "%C3%BC",
		"Zürich", "a.b*c>d%e", "\xff", "%00", "東京%2E駅",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Encoding any valid UTF-8 string and decoding it is the identity.
		enc := EncodeToken(s)
		if strings.ContainsAny(enc, ".*>") {
			t.Fatalf("EncodeToken(%q) = %q contains a reserved character", s, enc)
		}
		back, err := DecodeToken(enc)
		if utf8.ValidString(s) {
			if err != nil || back != s {
				t.Fatalf("DecodeToken(EncodeToken(%q)) = %q, %v", s, back, err)
			}
		} else if err == nil {
			t.Fatalf("DecodeToken(EncodeToken(%q)) accepted invalid UTF-8", s)
		}

		// Decoding never panics; valid input re-encodes canonically.
		d, err := DecodeToken(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidEncoding) {
				t.Fatalf("DecodeToken(%q) error %v does not wrap ErrInvalidEncoding", s, err)
			}
			return
		}
		if !utf8.ValidString(d) {
			t.Fatalf("DecodeToken(%q) = %q is not UTF-8", s, d)
		}
		canon := EncodeToken(d)
		d2, err := DecodeToken(canon)
		if err != nil || d2 != d {
			t.Fatalf("DecodeToken(EncodeToken(DecodeToken(%q))) = %q, %v; want %q", s, d2, err, d)
		}
		if !strings.Contains(s, "%") && !strings.ContainsAny(s, ".*>") && canon != s {
			t.Fatalf("EncodeToken(DecodeToken(%q)) = %q, want the input back", s, canon)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"", "weather.north.20250706", "mars.1%2E45.a%2Ab.p%25q.%3E", "a..b", ".", "a.%2",
		"diss%2Ev2.FOO", "%FF.a", "x%2Ey.z", "x.y%2Ez",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokens, err := decode(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidEncoding) {
				t.Fatalf("decode(%q) error %v does not wrap ErrInvalidEncoding", s, err)
			}
			return
		}
		if want := strings.Count(s, ".") + 1; len(tokens) != want {
			t.Fatalf("decode(%q) gave %d tokens, want %d", s, len(tokens), want)
		}
		canon := Encode(tokens)
		again, err := decode(canon)
		if err != nil || !reflect.DeepEqual(again, tokens) {
			t.Fatalf("decode(Encode(%q)) = %q, %v; want %q", tokens, again, err, tokens)
		}
		if Encode(again) != canon {
			t.Fatalf("Encode is not idempotent on %q", s)
		}
		p := make(Pattern, len(tokens))
		for i, tok := range tokens {
			p[i] = Literal(tok)
		}
		if !p.Match(tokens) {
			t.Fatalf("literal pattern of %q does not match its tokens", s)
		}
		if p.Subject() != canon {
			t.Fatalf("literal pattern subject %q, want %q", p.Subject(), canon)
		}
	})
}
