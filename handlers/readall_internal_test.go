package handlers

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAll: readAll returns exactly what io.ReadAll returns, whatever
// the announced length says and however the reader splits its reads.
func TestReadAll(t *testing.T) {
	body := strings.Repeat(`{"event_type":"x"}`, 7)
	n := int64(len(body))
	for _, c := range []struct {
		name          string
		length, limit int64
		r             func() io.Reader
	}{
		{"announced", n, 1 << 20, func() io.Reader { return strings.NewReader(body) }},
		{"announced, one byte per read", n, 1 << 20, func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) }},
		{"data with EOF", n, 1 << 20, func() io.Reader { return iotest.DataErrReader(strings.NewReader(body)) }},
		{"more than announced", n - 10, 1 << 20, func() io.Reader { return strings.NewReader(body) }},
		{"less than announced", n + 10, 1 << 20, func() io.Reader { return strings.NewReader(body) }},
		{"unknown length", -1, 1 << 20, func() io.Reader { return strings.NewReader(body) }},
		{"announced above the limit", n, n - 1, func() io.Reader { return strings.NewReader(body) }},
		{"empty", 0, 1 << 20, func() io.Reader { return strings.NewReader("") }},
	} {
		got, err := readAll(c.r(), c.length, c.limit)
		if err != nil || !bytes.Equal(got, []byte(body)) && c.name != "empty" || c.name == "empty" && len(got) != 0 {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
	}
	boom := errors.New("connection reset")
	got, err := readAll(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 10, 1<<20)
	if string(got) != "abc" || !errors.Is(err, boom) {
		t.Errorf("failing reader: %q, %v", got, err)
	}
}
