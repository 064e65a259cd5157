package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestAppend(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"plain text", `"plain text"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"<é>&\x7f", "\"<é>&\x7f\""},
		{"\u2028\u2029\ufeff\U0001F600", "\"\u2028\u2029\ufeff\U0001F600\""},
		{"<é>&\xff", "\"<é>&\ufffd\""},
		{"a\xc3", "\"a\ufffd\""},
		{"\xed\xa0\x80", "\"\ufffd\ufffd\ufffd\""}, // a surrogate: three invalid bytes
		{"\xf4\x90\x80\x80x", "\"\ufffd\ufffd\ufffd\ufffdx\""},
	} {
		if got := string(Append(nil, c.in)); got != c.want {
			t.Errorf("Append(%q) = %s, want %s", c.in, got, c.want)
		}
		if got := string(AppendBytes([]byte("x"), []byte(c.in))); got != "x"+c.want {
			t.Errorf("AppendBytes(%q) = %s, want x%s", c.in, got, c.want)
		}
	}
}

func TestAppendEscaping(t *testing.T) {
	yaml := func(r rune) bool {
		return r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff
	}
	big := func(r rune) bool { return r > 0xffff }
	for _, c := range []struct {
		in     string
		escape func(rune) bool
		want   string
	}{
		{"a\x7fb\u0085c\ufeffd\uffff\u00e9\n", yaml, `"a\u007fb\u0085c\ufeffd\uffff` + "\u00e9" + `\n"`},
		{"\x7f\xff", yaml, `"\u007f` + "\ufffd" + `"`},
		{"x\U0001F600y", big, `"x\ud83d\ude00y"`},
		{"\x7f", big, "\"\x7f\""},
	} {
		if got := string(AppendEscaping(nil, c.in, c.escape)); got != c.want {
			t.Errorf("AppendEscaping(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestAppendAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	s := "é\"x\xff\U0001F600 text"
	b := []byte(s)
	if n := testing.AllocsPerRun(100, func() {
		buf = Append(buf[:0], s)
		buf = AppendBytes(buf[:0], b)
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// encodingJSON returns what encoding/json writes for s without HTML
// escaping, with the three escapes it adds beyond JSON's needs written as
// the characters they stand for: \ufffd (for invalid UTF-8, read back as
// U+FFFD), \u2028 and \u2029.
func encodingJSON(t *testing.T, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	in := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			out = append(out, in[i])
			continue
		}
		switch esc := string(in[i:min(i+6, len(in))]); esc {
		case `\ufffd`, `\u2028`, `\u2029`:
			var r rune
			switch esc {
			case `\ufffd`:
				r = utf8.RuneError
			case `\u2028`:
				r = '\u2028'
			default:
				r = '\u2029'
			}
			out = utf8.AppendRune(out, r)
			i += 5
		default:
			out = append(out, in[i], in[i+1])
			i++
		}
	}
	return out
}

// FuzzAppend compares Append with encoding/json: the same bytes but for
// the escapes encoding/json adds (see encodingJSON), valid JSON always,
// and the same string when read back.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		"", "a", `"\`, "\x00\b\f\n\r\t\x1f\x7f", "<>&", "é東京", "\u2028\u2029",
		"\ufffd", "\xff", "a\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf",
		"\U0001F600", "\\ufffd", "\\\xff", `\u2028`, "x\xe2\x80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Append(nil, s)
		if want := encodingJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("Append(%q) = %s, encoding/json writes %s", s, got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("Append(%q) = %s is not valid JSON", s, got)
		}
		var back, want string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		ref, _ := json.Marshal(s)
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if back != want {
			t.Fatalf("Append(%q) reads back as %q, encoding/json's output as %q", s, back, want)
		}
		if b := AppendBytes(nil, []byte(s)); !bytes.Equal(b, got) {
			t.Fatalf("AppendBytes(%q) = %s, Append = %s", s, b, got)
		}
	})
}
