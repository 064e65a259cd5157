package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func readAll(t testing.TB, s string) ([]Event, error) {
	t.Helper()
	r := NewReader(strings.NewReader(s))
	var out []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestReader(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Event
	}{
		{"herald framing", "event: replay\ndata: {\"id\":\"mars@1\"}\n\nevent: connection-closing\ndata: {}\n\n",
			[]Event{{Name: "replay", Data: []byte(`{"id":"mars@1"}`)}, {Name: "connection-closing", Data: []byte(`{}`)}}},
		{"CRLF and CR", "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r",
			[]Event{{Name: "a", Data: []byte("1")}, {Name: "b", Data: []byte("2")}}},
		{"several data lines, no space", "data:x\ndata: y\ndata\n\n",
			[]Event{{Name: "message", Data: []byte("x\ny\n")}}},
		{"comments, id, retry, unknown fields", ": keep-alive\nid: 7\nretry: 1500\nfoo: bar\ndata: d\n\n",
			[]Event{{Name: "message", Data: []byte("d"), ID: "7", Retry: 1500}}},
		{"no data: not dispatched", "event: x\n\ndata: y\n\n",
			[]Event{{Name: "message", Data: []byte("y")}}},
		{"unterminated last event dropped", "data: a\n\ndata: b\n",
			[]Event{{Name: "message", Data: []byte("a")}}},
		{"BOM and bad retry ignored", "\xef\xbb\xbfretry: 1x\ndata: a\n\n",
			[]Event{{Name: "message", Data: []byte("a")}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
			[]Event{{Name: "message", Data: []byte("a"), ID: "1"}, {Name: "message", Data: []byte("b"), ID: "1"}}},
		{"empty", "", nil},
	}
	for _, c := range cases {
		got, err := readAll(t, c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", c.name, got, err, c.want)
		}
	}
}

func TestLineTooLong(t *testing.T) {
	_, err := readAll(t, "data: "+strings.Repeat("x", MaxLine)+"\n\n")
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("error %v, want ErrLineTooLong", err)
	}
}

// FuzzReader checks that any input ends in io.EOF or an error, never a
// panic, and that every event has a name and data that came from the
// input's data lines.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"event: replay\ndata: {\"id\":\"mars@1\"}\n\n", "data:x\r\ndata: y\r\n\r\n", ": c\nid: 1\nretry: 10\n\n",
		"\xef\xbb\xbfdata: a\r\r", "data\n\n", "event\ndata:\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		events, err := readAll(t, s)
		if err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		for _, ev := range events {
			if ev.Name == "" {
				t.Fatalf("event without a name: %+v", ev)
			}
			if len(ev.Data) > len(s) {
				t.Fatalf("data %q longer than the input %q", ev.Data, s)
			}
		}
	})
}
