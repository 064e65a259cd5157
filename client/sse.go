package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseMaxLine bounds one line of an event stream: herald writes each
// event's data on one line, and a notification's payload is bounded by
// the server's body limit (1 MiB by default), so 64 MiB leaves room and
// still stops a runaway stream.
const sseMaxLine = 64 << 20

// sseReader reads Server-Sent Events (the WHATWG event-stream format):
// `event:` and `data:` fields, several data lines joined by newlines,
// comments and other fields ignored, an event dispatched at a blank
// line.
type sseReader struct {
	r    *bufio.Reader
	line []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// readLine returns the next line without its end of line (LF, CRLF or
// CR-less LF); the slice is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if len(s.line) > sseMaxLine {
			return nil, fmt.Errorf("event stream line longer than %d bytes", sseMaxLine)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(s.line) > 0 {
			return nil, io.ErrUnexpectedEOF // a line cut off by the end of the body
		}
		return nil, err
	}
	l := s.line[:len(s.line)-1]
	return bytes.TrimSuffix(l, []byte("\r")), nil
}

// next returns the next event's name and data. At the end of the body it
// returns io.EOF (io.ErrUnexpectedEOF when the body ends inside an
// event).
func (s *sseReader) next() (name string, data []byte, err error) {
	var buf []byte
	started, haveData := false, false
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && started {
				err = io.ErrUnexpectedEOF
			}
			return "", nil, err
		}
		if len(line) == 0 {
			if !started {
				continue
			}
			return name, buf, nil
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
			started = true
		case "data":
			if haveData {
				buf = append(buf, '\n')
			}
			buf = append(buf, value...)
			started, haveData = true, true
		}
	}
}
