package notification

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/store"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/geo"
)

// ceTemplate holds the constant parts of one event type's CloudEvents.
type ceTemplate struct {
	// typ is `","type":"int.ecmwf.aviso.<event_type>"}`.
	typ []byte
	// idPrefix is `<event_type>@` JSON-escaped.
	idPrefix []byte
	source   []byte
	schema   []byte
}

func newCETemplate(baseURL, eventType string) ceTemplate {
	var t ceTemplate
	et := jsonstr.Append(nil, eventType)
	et = et[1 : len(et)-1]
	t.idPrefix = append(append([]byte(nil), et...), '@')
	t.source = jsonstr.Append(nil, baseURL)
	t.schema = jsonstr.Append(nil, baseURL+"/schema/"+eventType)
	t.typ = jsonstr.Append([]byte(`","type":`), "int.ecmwf.aviso."+eventType)
	t.typ = append(t.typ, '}')
	return t
}

// CloudEvent renders a stored notification as the CloudEvent JSON of Aviso's
// CloudEvent form (docs/api.md; keys in alphabetical order, one line). The
// event type is recovered from the subject's base; a base with no schema is
// rendered as a generic event type named after the base.
func (r *Registry) CloudEvent(n *Notification, seq uint64, at time.Time) ([]byte, error) {
	s, err := r.schemaOf(n, seq)
	if err != nil {
		return nil, err
	}
	return s.CloudEvent(n, seq, at)
}

// schemaOf returns the schema a stored notification is rendered with.
func (r *Registry) schemaOf(n *Notification, seq uint64) (*Schema, error) {
	base := n.Base()
	s, ok := r.byBase[base]
	if !ok {
		if base == "" {
			return nil, fmt.Errorf("notification %d has an empty subject", seq)
		}
		s = &Schema{Name: base, Base: base, Generic: true, ce: newCETemplate(r.baseURL, base)}
	}
	return s, nil
}

// CloudEvent renders n (stored with seq at time at) as this event type's
// CloudEvent.
func (s *Schema) CloudEvent(n *Notification, seq uint64, at time.Time) ([]byte, error) {
	if store.IsStored(n.ContentType) {
		return s.CloudEventView(n, seq, at, nil)
	}
	b := make([]byte, 0, 256+len(n.Payload)+16*len(n.Tokens))
	b = append(b, `{"data":{"identifier":`...)
	var err error
	b, err = s.appendIdentifier(b, n)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"payload":`...)
	b = appendPayload(b, n.Payload)
	b = append(b, `},"datacontenttype":"application/json","dataschema":`...)
	b = append(b, s.ce.schema...)
	return s.appendEnd(b, n, seq, at), nil
}

// appendEnd appends the attributes after dataschema: id, source,
// specversion, time, the distributed tracing extension's traceparent and
// tracestate when n carries a trace context (in their alphabetical
// place; a notification stored without one renders as it always has),
// and type.
func (s *Schema) appendEnd(b []byte, n *Notification, seq uint64, at time.Time) []byte {
	b = append(b, `,"id":"`...)
	b = append(b, s.ce.idPrefix...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `","source":`...)
	b = append(b, s.ce.source...)
	b = append(b, `,"specversion":"1.0","time":"`...)
	b = AppendTime(b, at)
	if n.TraceParent != "" {
		b = append(b, `","traceparent":`...)
		b = jsonstr.Append(b, n.TraceParent)
		if n.TraceState != "" {
			b = append(b, `,"tracestate":`...)
			b = jsonstr.Append(b, n.TraceState)
		}
		// s.ce.typ starts with the quote that closes the time.
		b = append(b, ',')
		return append(b, s.ce.typ[2:]...)
	}
	return append(b, s.ce.typ...)
}

// ceField is one identifier key of a schema's CloudEvents, in the
// alphabetical order they are written in.
type ceField struct {
	// key is the JSON-quoted name followed by ':'.
	key []byte
	// pos is the subject token index (0 for the geometry field).
	pos int
	// geometry marks the spatial field, rendered from the geometry.
	geometry bool
}

// ceFieldOrder lists the routed ordinary fields and the geometry field of
// s sorted by name, so rendering needs no sort.
func ceFieldOrder(s *Schema) []ceField {
	var names []string
	byName := map[string]ceField{}
	for _, f := range s.KeyOrder {
		if f.Spatial() {
			continue
		}
		names = append(names, f.Name)
		byName[f.Name] = ceField{pos: f.Pos}
	}
	if s.Geometry != nil {
		names = append(names, s.Geometry.Name)
		byName[s.Geometry.Name] = ceField{geometry: true}
	}
	sort.Strings(names)
	out := make([]ceField, len(names))
	for i, n := range names {
		f := byName[n]
		f.key = append(jsonstr.Append(nil, n), ':')
		out[i] = f
	}
	return out
}

func (s *Schema) appendIdentifier(b []byte, n *Notification) ([]byte, error) {
	if s.Generic {
		return appendGenericIdentifier(b, n), nil
	}
	if len(n.Tokens) != 1+len(s.KeyOrder) {
		return nil, fmt.Errorf("subject %q has %d tokens, event type %q routes %d", n.Subject, len(n.Tokens), s.Name, 1+len(s.KeyOrder))
	}
	b = append(b, '{')
	first := true
	for _, f := range s.ceFields {
		switch {
		case f.geometry:
			if n.Geometry == nil {
				continue
			}
		case n.Tokens[f.pos] == "":
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.key...)
		if f.geometry {
			b = append(b, n.Geometry.CanonicalJSON()...)
		} else {
			b = jsonstr.Append(b, n.Tokens[f.pos])
		}
	}
	return append(b, '}'), nil
}

// appendGenericIdentifier writes the stored identifier of a schema-less
// notification, keys sorted, plus its geometry if it has one.
func appendGenericIdentifier(b []byte, n *Notification) []byte {
	keys := make([]string, 0, len(n.Identifier)+1)
	for k := range n.Identifier {
		keys = append(keys, k)
	}
	geomKey := ""
	if g := n.Geometry; g != nil {
		geomKey = configs.FieldPolygon
		if g.Kind == geo.PointCloudGeometry {
			geomKey = configs.FieldPointCloud
		}
		if _, clash := n.Identifier[geomKey]; !clash {
			keys = append(keys, geomKey)
		}
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		if k == geomKey {
			b = append(b, n.Geometry.CanonicalJSON()...)
		} else {
			b = jsonstr.Append(b, n.Identifier[k])
		}
	}
	return append(b, '}')
}

// appendPayload appends the stored payload as JSON: valid single-line JSON
// as is, other valid JSON compacted, non-JSON legacy text as a JSON string,
// empty as null.
func appendPayload(b, p []byte) []byte {
	if len(p) == 0 {
		return append(b, "null"...)
	}
	if json.Valid(p) {
		if !bytes.ContainsAny(p, "\r\n") && !bytes.HasPrefix(p, []byte(" ")) && !bytes.HasSuffix(p, []byte(" ")) {
			return append(b, p...)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, p); err == nil {
			return append(b, c.Bytes()...)
		}
	}
	return jsonstr.Append(b, string(p))
}

// AppendTime appends t in UTC as RFC 3339 with "Z" and a fraction of 3, 6
// or 9 digits, omitted when zero (Aviso's CloudEvents, docs/api.md).
func AppendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		b = append(b, '.')
		b = appendPadded(b, ns/1_000_000, 3)
	case ns%1_000 == 0:
		b = append(b, '.')
		b = appendPadded(b, ns/1_000, 6)
	default:
		b = append(b, '.')
		b = appendPadded(b, ns, 9)
	}
	return append(b, 'Z')
}

func appendPadded(b []byte, v, width int) []byte {
	var tmp [9]byte
	for i := width - 1; i >= 0; i-- {
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, tmp[:width]...)
}
