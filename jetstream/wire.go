package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/geo"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// Message headers written by Publish. The spatial metadata keys of
// geo.Geometry.Metadata (spatial_bbox, spatial_geometry,
// spatial_point_cloud) are headers as well, as in Aviso's spatial metadata.
const (
	// HeaderEventType holds the notification's event type when it is not
	// the one the stream's base implies (its schema's name, or the base
	// itself for schema-less streams).
	HeaderEventType = "Herald-Event-Type"
	// HeaderIdentifier holds the identifier values as a JSON object of
	// strings when the notification carries them (generic notifications;
	// schema notifications are rebuilt from the subject tokens).
	HeaderIdentifier = "Herald-Identifier"
	// HeaderContentType holds the payload's media type when it is not
	// application/json.
	HeaderContentType = "Content-Type"
	// HeaderTraceParent and HeaderTraceState hold the W3C trace context
	// of the notification's creation, when it has one (tracing on).
	// They are not named traceparent: a NATS server reads a message's
	// sampled traceparent header as a request for its own message
	// tracing, building a map of every header of each such message (and
	// sending trace events where an account enables it).
	HeaderTraceParent = "Herald-Traceparent"
	HeaderTraceState  = "Herald-Tracestate"
	// legacyTraceParent and legacyTraceState are the names development
	// builds of 0.3.0 stored the trace context under; such records are
	// read alike.
	legacyTraceParent = "traceparent"
	legacyTraceState  = "tracestate"
)

// maxSubjectLen bounds the wire subject of a notification: a NATS server
// refuses a protocol line longer than its max_control_line (4 KiB by
// default; herald raises the embedded server's, but an external one
// keeps its own) and closes the connection, so a longer subject is
// refused before it is sent. The publish line is the subject, a reply
// inbox of about 30 bytes and two lengths, so 3,800 bytes keep it under
// 4,096. Wire subjects can be longer than canonical ones (space, control
// bytes, DEL and U+FFFD travel as %XX escapes), so topic.MaxSubjectBytes
// alone does not bound them.
const maxSubjectLen = 3800

// appendWireToken appends the wire form of one decoded subject token
// (topic.AppendWireToken).
func appendWireToken(b []byte, t string) []byte { return topic.AppendWireToken(b, t) }

// wireSubject returns the NATS subject of decoded tokens.
func wireSubject(tokens []string) string {
	n := len(tokens)
	for _, t := range tokens {
		n += len(t)
	}
	b := make([]byte, 0, n+8)
	for i, t := range tokens {
		if i > 0 {
			b = append(b, '.')
		}
		b = appendWireToken(b, t)
	}
	return string(b)
}

// wireFilter returns the narrowest NATS subject filter of a pattern: its
// wire-encoded literals with '*' for wildcards. It matches exactly the
// subjects with as many tokens as the pattern whose literals are equal, which
// is what topic.Pattern.Match requires, so it never excludes a match;
// constraints and spatial filters still run afterwards. (It is narrower than
// the reference's coarse filter (Aviso's subject encoding,
// docs/architecture.md), which ends in ">" and so also matches longer
// subjects, and which misses the bare base subject that a one-token pattern
// selects.)
func wireFilter(p topic.Pattern) string {
	b := make([]byte, 0, 64)
	for i, t := range p {
		if i > 0 {
			b = append(b, '.')
		}
		if t.Wildcard {
			b = append(b, '*')
		} else {
			b = appendWireToken(b, t.Value)
		}
	}
	return string(b)
}

// decodeToken undoes appendWireToken.
func decodeToken(s string) (string, error) {
	if s == "%" {
		return "", nil
	}
	return topic.DecodeToken(s)
}

// decodeSubject splits a wire subject into decoded tokens and returns the
// canonical subject (topic.Encode of the tokens) as well.
func decodeSubject(subject string) (tokens []string, canonical string, err error) {
	tokens = strings.Split(subject, ".")
	if strings.IndexByte(subject, '%') < 0 {
		return tokens, subject, nil
	}
	for i, t := range tokens {
		d, err := decodeToken(t)
		if err != nil {
			return nil, "", fmt.Errorf("subject %q: %w", subject, err)
		}
		tokens[i] = d
	}
	return tokens, topic.Encode(tokens), nil
}

// message builds the NATS message of a notification: wire subject, payload
// and headers. eventType is the event type records of the base get by
// default; the header is written only when n's differs.
func message(n *notification.Notification, streamName, eventType, msgID string) (*nats.Msg, error) {
	if len(n.Tokens) == 0 || n.Tokens[0] == "" {
		return nil, errors.New("notification has no topic base")
	}
	subject := wireSubject(n.Tokens)
	if len(subject) > maxSubjectLen {
		return nil, fmt.Errorf("subject of %d bytes on the wire is too long: at most %d bytes fit a NATS protocol line (shorten the identifier values): %w", len(subject), maxSubjectLen, ErrTooLong)
	}
	h := make(nats.Header, 8)
	h[nats.MsgIdHdr] = []string{msgID}
	h[nats.ExpectedStreamHdr] = []string{streamName}
	if n.EventType != "" && n.EventType != eventType {
		h[HeaderEventType] = []string{n.EventType}
	}
	if ct := n.ContentType; ct != "" && ct != notification.ContentTypeJSON {
		h[HeaderContentType] = []string{ct}
	}
	if len(n.Identifier) > 0 {
		id, err := identifierJSON(n.Identifier)
		if err != nil {
			return nil, fmt.Errorf("identifier: %w", err)
		}
		h[HeaderIdentifier] = []string{string(id)}
	}
	for k, v := range n.Geometry.Metadata() {
		h[k] = []string{v}
	}
	if n.TraceParent != "" {
		h[HeaderTraceParent] = []string{n.TraceParent}
		if n.TraceState != "" {
			h[HeaderTraceState] = []string{n.TraceState}
		}
	}
	return &nats.Msg{Subject: subject, Data: n.Payload, Header: h}, nil
}

// record rebuilds the stored notification of a message: tokens and
// canonical subject from the wire subject, event type, content type,
// identifier and geometry from the headers, sequence and timestamp from
// the JetStream metadata. eventType is the base's default event type.
func record(subject string, h nats.Header, data []byte, seq uint64, at time.Time, eventType string) (*engine.Record, error) {
	tokens, canonical, err := decodeSubject(subject)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	rec := &engine.Record{
		Notification: notification.Notification{
			EventType:   eventType,
			Subject:     canonical,
			Tokens:      tokens,
			Payload:     data,
			ContentType: notification.ContentTypeJSON,
		},
		Seq:  seq,
		Time: at.UTC(),
	}
	if len(h) == 0 {
		return rec, nil
	}
	if v := h.Get(HeaderEventType); v != "" {
		rec.EventType = v
	}
	if v := h.Get(HeaderContentType); v != "" {
		rec.ContentType = v
	}
	if v := h[HeaderTraceParent]; len(v) > 0 {
		rec.TraceParent = v[0]
		if v := h[HeaderTraceState]; len(v) > 0 {
			rec.TraceState = v[0]
		}
	} else if v := h[legacyTraceParent]; len(v) > 0 {
		rec.TraceParent = v[0]
		if v := h[legacyTraceState]; len(v) > 0 {
			rec.TraceState = v[0]
		}
	}
	if v := h.Get(HeaderIdentifier); v != "" {
		if err := json.Unmarshal([]byte(v), &rec.Identifier); err != nil {
			return nil, fmt.Errorf("header %s: %w", HeaderIdentifier, err)
		}
	}
	g, err := geo.GeometryFromMetadata(h.Get)
	if err != nil {
		return nil, err
	}
	rec.Geometry = g
	return rec, nil
}

// msgIDLen is the length of a Nats-Msg-Id: a NUID.
const msgIDLen = 22

// natsHeaderLine and crlf frame the headers of a NATS message (ADR-4).
const (
	natsHeaderLine = "NATS/1.0\r\n"
	crlf           = "\r\n"
)

// msgSize is the size of msg as the NATS server counts it against its
// max_payload: the payload and the encoded headers, as nats.go encodes
// them (a "NATS/1.0" line, one "Key: value" line per value, trimmed, and
// an empty line).
func msgSize(msg *nats.Msg) int {
	size := len(msg.Data)
	if len(msg.Header) == 0 {
		return size
	}
	size += len(natsHeaderLine) + len(crlf)
	for k, vs := range msg.Header {
		for _, v := range vs {
			size += len(k) + len(textproto.TrimString(v)) + len(": ") + len(crlf)
		}
	}
	return size
}
