package jsonplain

import (
	"encoding/json"
	"testing"
)

// TestString: a plain string is one encoding/json writes between its
// quotes unchanged, for every single byte and a few longer strings; and
// every printable ASCII byte encoding/json leaves alone is plain.
func TestString(t *testing.T) {
	cases := []string{"", "forecast", "europe step 12", "a<b", "x&y", "tab\t", "é", "q\"", `b\`, "\x7f"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}))
	}
	for _, s := range cases {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		unchanged := string(b) == `"`+s+`"`
		if got := String(s); got && !unchanged || !got && unchanged && len(s) == 1 && s[0] >= 0x20 && s[0] < 0x7f {
			t.Errorf("String(%q) = %v, encoding/json writes %s", s, got, b)
		}
	}
}
