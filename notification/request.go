package notification

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Request is the body shared by notify, watch and replay (Aviso's
// request parsing, docs/api.md), plus the optional replay end cursors of
// aviso-server 0.13.
type Request struct {
	EventType string
	// Identifier maps each key to its raw JSON value. It is never nil.
	Identifier map[string]json.RawMessage
	// FromID, FromDate, ToID and ToDate are nil when absent or null.
	FromID   *string
	FromDate *string
	ToID     *string
	ToDate   *string
	// Payload is nil when absent or JSON null; otherwise its raw JSON.
	Payload json.RawMessage
	// Where is the WHERE predicate of a watch or replay (herald), nil when
	// absent or null.
	Where *string
	// Format names the payload view of a watch or replay (herald: the row
	// view "json", or a codec name for a typed payload), nil when absent
	// or null.
	Format *string
	// Batch is the raw JSON object of a watch or replay's batch option
	// (herald: records sent in containers of the format), nil when absent
	// or null; package stream reads its members.
	Batch json.RawMessage
}

var requestFields = map[string]bool{
	"event_type": true, "identifier": true, "from_id": true, "from_date": true,
	"payload": true, "to_id": true, "to_date": true, "where": true, "format": true, "batch": true,
}

// ParseRequest runs the parse pipeline of Aviso's request parsing
// (docs/api.md) on a request body: JSON syntax (InvalidJSON: the whole body is
// checked first, strictly: valid UTF-8, no lone surrogates, no trailing data),
// unknown top-level keys (UnknownField, checked before the shape), then the
// shape of each field (InvalidShape). It returns a *ParseError on failure. Raw
// values in the result alias body.
func ParseRequest(body []byte) (*Request, error) {
	return parseRequest(body, requestFields, requestAllowed)
}

// notifyFields are the top-level keys of a notify request: aviso-server's
// request model. The replay end cursors belong to it (so they are never an
// unknown field), and CheckNoEnd refuses them once the event type is known.
var notifyFields = map[string]bool{
	"event_type": true, "identifier": true, "from_id": true, "from_date": true,
	"to_id": true, "to_date": true, "payload": true,
}

const (
	requestAllowed = "event_type, identifier, from_id, from_date, to_id, to_date, where, format, batch, payload"
	notifyAllowed  = "event_type, identifier, from_id, from_date, to_id, to_date, payload"
)

// CheckNoEnd refuses the replay end cursors on an endpoint other than
// replay: endpoint is the path the request was sent to ("/notification",
// "/watch"). The message is aviso-server's.
func (r *Request) CheckNoEnd(endpoint string) error {
	if r.ToID == nil && r.ToDate == nil {
		return nil
	}
	m := "to_id and to_date are only supported for the replay endpoint, not " + endpoint
	return &ValidationError{Message: m, Detail: m}
}

// ParseNotifyRequest is ParseRequest for a notify body: the fields of
// aviso-server's request model, without herald's watch fields (where,
// format). The end cursors parse; CheckNoEnd refuses them.
func ParseNotifyRequest(body []byte) (*Request, error) {
	return parseRequest(body, notifyFields, notifyAllowed)
}

func parseRequest(body []byte, fields map[string]bool, allowed string) (*Request, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &ParseError{Kind: InvalidJSON, Detail: "EOF while parsing a value: the body is empty"}
	}
	top, err := scanRequest(body)
	if err == nil {
		err = checkNumberRange(body)
	}
	if err != nil {
		return nil, &ParseError{Kind: InvalidJSON, Detail: err.Error()}
	}
	if top.kind != '{' {
		return nil, &ParseError{Kind: InvalidShape, Detail: "expected a JSON object with event_type and identifier, found " + jsonKind(top.kind)}
	}
	var unknown []string
	for _, m := range top.members {
		if !fields[m.key] {
			unknown = append(unknown, m.key)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &ParseError{Kind: UnknownField, Detail: quoteList(unknown) + " (allowed: " + allowed + ")"}
	}
	if top.dup != "" {
		return nil, &ParseError{Kind: InvalidShape, Detail: fmt.Sprintf("duplicate field `%s`", top.dup)}
	}
	if top.identDup != "" {
		return nil, &ParseError{Kind: InvalidShape, Detail: fmt.Sprintf("duplicate field `%s` in `identifier`: each identifier key may appear once", top.identDup)}
	}
	req := &Request{}
	var haveType, haveIdent bool
	for _, m := range top.members {
		switch m.key {
		case "event_type":
			if m.raw[0] != '"' {
				return nil, shapeErr("event_type", "a string", m.raw)
			}
			req.EventType = unquote(m.raw)
			haveType = true
		case "identifier":
			if m.raw[0] != '{' {
				return nil, shapeErr("identifier", "an object", m.raw)
			}
			req.Identifier = top.identifier
			haveIdent = true
		case "from_id", "from_date", "to_id", "to_date", "where", "format":
			s, err := optionalString(m.key, m.raw)
			if err != nil {
				return nil, err
			}
			switch m.key {
			case "from_id":
				req.FromID = s
			case "from_date":
				req.FromDate = s
			case "to_id":
				req.ToID = s
			case "where":
				req.Where = s
			case "format":
				req.Format = s
			default:
				req.ToDate = s
			}
		case "payload":
			if string(m.raw) != "null" {
				req.Payload = json.RawMessage(m.raw)
			}
		case "batch":
			switch m.raw[0] {
			case 'n':
			case '{':
				req.Batch = json.RawMessage(m.raw)
			default:
				return nil, shapeErr("batch", "an object", m.raw)
			}
		}
	}
	if !haveType {
		return nil, &ParseError{Kind: InvalidShape, Detail: "missing field `event_type`"}
	}
	if !haveIdent {
		return nil, &ParseError{Kind: InvalidShape, Detail: "missing field `identifier`"}
	}
	return req, nil
}

// ElementKeyError is a key of a producer batch element other than
// identifier and payload (the event type is the producer's).
type ElementKeyError struct{ Key string }

// Error returns the message.
func (e *ElementKeyError) Error() string {
	return "unknown key '" + e.Key + "': an element has identifier and payload"
}

// ParseNotifyElement parses one element of a WebSocket producer's batch,
// an object {"identifier": …, "payload": …} already known to be one valid
// JSON value, as the notify request of eventType: the checks of
// ParseNotifyRequest on the element itself, without rebuilding a notify
// body. A missing identifier is an empty one. The first key other than
// identifier and payload, in document order, is an *ElementKeyError;
// other failures are *ParseError. Raw values in the result alias elem.
func ParseNotifyElement(elem []byte, eventType string) (*Request, error) {
	top, err := scanRequest(elem)
	if err != nil {
		return nil, &ParseError{Kind: InvalidJSON, Detail: err.Error()}
	}
	if top.kind != '{' {
		return nil, &ParseError{Kind: InvalidShape, Detail: "expected a JSON object with identifier and payload, found " + jsonKind(top.kind)}
	}
	for _, m := range top.members {
		if m.key != "identifier" && m.key != "payload" {
			return nil, &ElementKeyError{Key: m.key}
		}
	}
	if err := checkNumberRange(elem); err != nil {
		return nil, &ParseError{Kind: InvalidJSON, Detail: err.Error()}
	}
	if top.dup != "" {
		return nil, &ParseError{Kind: InvalidShape, Detail: fmt.Sprintf("duplicate field `%s`", top.dup)}
	}
	if top.identDup != "" {
		return nil, &ParseError{Kind: InvalidShape, Detail: fmt.Sprintf("duplicate field `%s` in `identifier`: each identifier key may appear once", top.identDup)}
	}
	req := &Request{EventType: eventType, Identifier: map[string]json.RawMessage{}}
	for _, m := range top.members {
		switch m.key {
		case "identifier":
			if m.raw[0] != '{' {
				return nil, shapeErr("identifier", "an object", m.raw)
			}
			req.Identifier = top.identifier
		case "payload":
			if string(m.raw) != "null" {
				req.Payload = json.RawMessage(m.raw)
			}
		}
	}
	return req, nil
}

type member struct {
	key string
	raw []byte
}

// scanned is the top level of a request body.
type scanned struct {
	kind    byte // first byte of the top-level value
	members []member
	dup     string // first duplicated top-level key
	// identifier holds the members of the first top-level "identifier"
	// object; identDup is its first repeated key (refused: Aviso would
	// silently take the last value).
	identifier map[string]json.RawMessage
	identDup   string
}

// scanRequest validates the whole body as one JSON value and collects the
// top-level members, and the members of "identifier", as raw spans of body.
func scanRequest(body []byte) (*scanned, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true))
	out := &scanned{kind: body[len(body)-len(bytes.TrimLeft(body, " \t\r\n"))]}
	if out.kind != '{' {
		if err := dec.SkipValue(); err != nil {
			return nil, syntaxErr(body, err)
		}
		return out, trailing(dec, body)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntaxErr(body, err)
	}
	seen := make(map[string]bool, 4)
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, syntaxErr(body, err)
		}
		key := tok.String()
		if key == "identifier" && dec.PeekKind() == '{' && out.identifier == nil {
			ident, err := scanIdentifier(dec, body)
			if err != nil {
				return nil, err
			}
			out.identifier = ident.m
			out.identDup = ident.dup
			out.members = append(out.members, member{key: key, raw: ident.raw})
		} else {
			start := dec.InputOffset()
			if err := dec.SkipValue(); err != nil {
				return nil, syntaxErr(body, err)
			}
			out.members = append(out.members, member{key: key, raw: bytes.TrimLeft(body[start:dec.InputOffset()], " \t\r\n:")})
		}
		if seen[key] && out.dup == "" {
			out.dup = key
		}
		seen[key] = true
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntaxErr(body, err)
	}
	return out, trailing(dec, body)
}

type identScan struct {
	m   map[string]json.RawMessage
	raw []byte
	dup string // the first repeated key
}

func scanIdentifier(dec *jsontext.Decoder, body []byte) (identScan, error) {
	begin := dec.InputOffset()
	if _, err := dec.ReadToken(); err != nil {
		return identScan{}, syntaxErr(body, err)
	}
	m := make(map[string]json.RawMessage, 8)
	dup := ""
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return identScan{}, syntaxErr(body, err)
		}
		key := tok.String()
		start := dec.InputOffset()
		if err := dec.SkipValue(); err != nil {
			return identScan{}, syntaxErr(body, err)
		}
		if _, seen := m[key]; seen && dup == "" {
			dup = key
		}
		m[key] = json.RawMessage(bytes.TrimLeft(body[start:dec.InputOffset()], " \t\r\n:"))
	}
	if _, err := dec.ReadToken(); err != nil {
		return identScan{}, syntaxErr(body, err)
	}
	return identScan{m: m, raw: bytes.TrimLeft(body[begin:dec.InputOffset()], " \t\r\n:"), dup: dup}, nil
}

// trailing rejects anything but whitespace after the value.
func trailing(dec *jsontext.Decoder, body []byte) error {
	if dec.PeekKind() == 0 {
		if _, err := dec.ReadToken(); err == io.EOF {
			return nil
		} else if err != nil {
			return syntaxErr(body, err)
		}
	}
	return syntaxErr(body, fmt.Errorf("trailing characters after the JSON value at byte %d", dec.InputOffset()))
}

// syntaxErr phrases a JSON syntax error with its line and column.
func syntaxErr(body []byte, err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("EOF while parsing a value: the JSON text is incomplete")
	}
	msg := strings.TrimPrefix(err.Error(), "jsontext: ")
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off := min(int(se.ByteOffset), len(body))
		line := 1 + bytes.Count(body[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(body[:off], '\n')
		return fmt.Errorf("%s at line %d column %d", strings.TrimPrefix(se.Err.Error(), "jsontext: "), line, col)
	}
	return errors.New(msg)
}

// unquote decodes a valid JSON string literal.
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	v, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return string(raw[1 : len(raw)-1])
	}
	return string(v)
}

func optionalString(key string, raw json.RawMessage) (*string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '"' {
		return nil, shapeErr(key, "a string", raw)
	}
	s := unquote(raw)
	return &s, nil
}

func shapeErr(key, want string, raw json.RawMessage) *ParseError {
	return &ParseError{Kind: InvalidShape, Detail: fmt.Sprintf("invalid type for `%s`: expected %s, found %s", key, want, jsonKind(raw[0]))}
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// checkNumberRange refuses a body holding a number that serde_json cannot
// hold (beyond the f64 range, such as 1e400): aviso-server fails such a
// body as invalid JSON, and no JSON client could read it back. Only a
// body with an exponent or a very long run of digits can hold one, so the
// others are not walked.
func checkNumberRange(body []byte) error {
	if !mayOverflow(body) {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil // the body was checked as JSON already; io.EOF ends it
		}
		if tok.Kind() != '0' {
			continue
		}
		num := tok.String()
		if _, err := serdeParseNumber(num); err != nil {
			off := dec.InputOffset()
			line := 1 + bytes.Count(body[:off], []byte("\n"))
			col := int(off) - bytes.LastIndexByte(body[:off], '\n')
			return fmt.Errorf("number out of range at line %d column %d: %s cannot be represented as a 64-bit float", line, col, coerceSnippet(num))
		}
	}
}

// mayOverflow reports whether b holds an exponent marker right after a
// digit (as in every JSON number with an exponent) or a run of more than
// 308 digits, without which no JSON number exceeds the f64 range. An 'e'
// of a key such as "event_type" follows no digit.
func mayOverflow(b []byte) bool {
	run := 0
	for _, c := range b {
		switch {
		case (c == 'e' || c == 'E') && run > 0:
			return true
		case '0' <= c && c <= '9':
			if run++; run > 308 {
				return true
			}
		default:
			run = 0
		}
	}
	return false
}
