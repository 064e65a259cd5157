package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

type sseEvent struct{ name, data string }

func readAll(t testing.TB, text string) ([]sseEvent, error) {
	r := newSSEReader(strings.NewReader(text))
	var out []sseEvent
	for {
		name, data, err := r.next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, sseEvent{name, string(data)})
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		text string
		want []sseEvent
		err  error
	}{
		{"event: replay\ndata: {\"a\":1}\n\n", []sseEvent{{"replay", `{"a":1}`}}, nil},
		{"event: a\r\ndata: 1\r\n\r\nevent: b\ndata:2\n\n", []sseEvent{{"a", "1"}, {"b", "2"}}, nil},
		{": comment\nid: 7\nretry: 10\nevent: x\ndata: one\ndata: two\ndata:\n\n", []sseEvent{{"x", "one\ntwo\n"}}, nil},
		{"\n\n\nevent: x\ndata:  two spaces\n\n", []sseEvent{{"x", " two spaces"}}, nil},
		{"data: no name\n\n", []sseEvent{{"", "no name"}}, nil},
		{"event: x\ndata: 1\n", nil, io.ErrUnexpectedEOF},
		{"event: x\ndata: 1", nil, io.ErrUnexpectedEOF},
		{"event: a\ndata: 1\n\nevent: b\ndata: 2", []sseEvent{{"a", "1"}}, io.ErrUnexpectedEOF},
		{"event: x\ndata: " + strings.Repeat("y", 200_000) + "\n\n", []sseEvent{{"x", strings.Repeat("y", 200_000)}}, nil},
		{"", nil, nil},
	}
	for _, c := range cases {
		got, err := readAll(t, c.text)
		if !errors.Is(err, c.err) || len(got) != len(c.want) {
			t.Errorf("%.40q: %v %v, want %v %v", c.text, got, err, c.want, c.err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%.40q: event %d %q, want %q", c.text, i, got[i], c.want[i])
			}
		}
	}
}

// FuzzSSEReader: any input either reads into events or ends with an
// error, never a panic; and events written in herald's framing (one
// event line, data lines, a blank line) read back exactly.
func FuzzSSEReader(f *testing.F) {
	f.Add("event: replay\ndata: {\"id\":\"mars@1\"}\n\n", "x", "y\nz")
	f.Add("event: a\r\ndata: 1\r\n\r\n:c\n\n", "live-notification", "")
	f.Add("data\ndata:\nevent\n\n", "e", "\r")
	f.Fuzz(func(t *testing.T, text, name, data string) {
		_, _ = readAll(t, text)
		if strings.ContainsAny(name, "\r\n") || strings.Contains(data, "\r") {
			return
		}
		var b bytes.Buffer
		b.WriteString("event: " + name + "\n")
		for _, l := range strings.Split(data, "\n") {
			b.WriteString("data: " + l + "\n")
		}
		b.WriteString("\n")
		got, err := readAll(t, b.String())
		if err != nil || len(got) != 1 || got[0] != (sseEvent{name, data}) {
			t.Fatalf("%q / %q read back as %q (%v)", name, data, got, err)
		}
	})
}
