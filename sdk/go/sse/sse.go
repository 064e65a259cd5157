// Package sse reads a text/event-stream body (the WHATWG HTML "Server-sent
// events" format) event by event. No OpenAPI generator parses event
// streams: a client generated from herald's document gets the watch and
// replay answers as a plain *http.Response, and this small reader turns its
// body into events whose Data is the JSON of one herald event (decode it
// into the generated types; see the sdk README).
//
// It follows the format's parsing rules: lines end with LF, CR or CRLF; a
// line starting with ':' is a comment; "field: value" drops one space after
// the colon; several data lines are joined with LF; a blank line ends an
// event; an event without data is not dispatched; the event name defaults
// to "message"; id (without NUL) and retry are kept. Lines are limited in
// length so that a broken server cannot make the client buffer without end.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxLine is the longest line Reader accepts, in bytes.
const MaxLine = 1 << 20

// ErrLineTooLong is returned when a line exceeds MaxLine.
var ErrLineTooLong = errors.New("sse: line longer than 1 MiB")

// Event is one dispatched event.
type Event struct {
	Name  string // the event field; "message" when the event had none
	Data  []byte // the data lines joined with "\n"
	ID    string // the last event id seen so far in the stream
	Retry int    // the last retry field seen (milliseconds), 0 when none
}

// Reader reads events from a stream.
type Reader struct {
	br    *bufio.Reader
	id    string
	retry int
	line  []byte
	first bool
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 4096), first: true}
}

// readLine returns the next line without its ending. At the end of the
// input it returns the last, unterminated line with io.EOF.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		b, err := r.br.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return r.line, io.EOF
			}
			return nil, err
		}
		switch b {
		case '\n':
			return r.line, nil
		case '\r':
			if next, err := r.br.Peek(1); err == nil && next[0] == '\n' {
				_, _ = r.br.ReadByte()
			}
			return r.line, nil
		}
		if len(r.line) >= MaxLine {
			return nil, ErrLineTooLong
		}
		r.line = append(r.line, b)
	}
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (an event not ended by a blank line is discarded, as the format says).
func (r *Reader) Next() (Event, error) {
	var name string
	var data []byte
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return Event{}, fmt.Errorf("sse: reading the stream: %w", err)
		}
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return Event{}, io.EOF
		}
		if r.first {
			r.first = false
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a leading BOM
		}
		if len(line) == 0 {
			if !hasData {
				name = ""
				continue
			}
			if name == "" {
				name = "message"
			}
			return Event{Name: name, Data: data, ID: r.id, Retry: r.retry}, nil
		}
		if errors.Is(err, io.EOF) {
			return Event{}, io.EOF
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.id = string(value)
			}
		case "retry":
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 && isDigits(value) {
				r.retry = n
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
