package notification

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/geo"
	"github.com/herald-gateway/herald/topic"
)

// ContentTypeJSON is the content type of JSON payloads.
const ContentTypeJSON = "application/json"

var nullPayload = []byte("null")

// Notify validates and canonicalises a notify request against s (Aviso's
// notify, docs/api.md): the reserved `point` is refused, undeclared keys are
// refused, every declared field must be present, each value is coerced and
// canonicalised by its handler, the payload requirement is checked, and the
// subject is built from base and key_order. Errors are *ValidationError. For
// an event type with a payload codec the payload is decoded through it
// (NotifyContext).
func (s *Schema) Notify(ident map[string]json.RawMessage, payload json.RawMessage) (*Notification, error) {
	return s.NotifyContext(context.Background(), ident, payload)
}

// NotifyContext is Notify with a context, which bounds the decode of a
// typed payload by a JAQ-backed codec. A typed payload is required; JSON
// wire formats take the JSON value itself, text formats (SYSLOG, YAML,
// TOML, XML) a JSON string holding the text, binary formats (CBOR, AVRO,
// PROTOBUF) a JSON string of padded standard base64. It must decode into
// exactly one record, whose fields fill the identifiers of the same name
// (a value given in ident must agree). A codec diagnostic is a
// *ValidationError whose Cause is a *PayloadError; busy extension workers
// give a *BusyError.
func (s *Schema) NotifyContext(ctx context.Context, ident map[string]json.RawMessage, payload json.RawMessage) (*Notification, error) {
	if _, ok := ident[configs.FieldPoint]; ok {
		return nil, &ValidationError{Field: configs.FieldPoint,
			Message: "identifier.point is only supported for watch/replay endpoints, not /notification",
			Detail:  "identifier 'point' is only allowed on watch and replay (it filters by location); notifications carry a polygon or point_cloud instead"}
	}
	if s.Generic {
		return s.notifyGeneric(ident, payload)
	}
	if p := s.Payload; p != nil {
		if err := s.checkDeclared(ident); err != nil {
			return nil, err
		}
		if payload == nil {
			return nil, &ValidationError{Field: "payload",
				Message: "payload is required for event type '" + s.Name + "': it is typed by codec '" + p.Codec() + "'",
				Detail:  "payload is required"}
		}
		wire, err := p.UnwrapJSON(payload)
		if err != nil {
			return nil, payloadErr(err)
		}
		ns, err := s.records(ctx, ident, wire, true)
		if err != nil {
			return nil, err
		}
		return ns[0], nil
	}
	if err := s.checkDeclared(ident); err != nil {
		return nil, err
	}
	n := &Notification{EventType: s.Name, ContentType: ContentTypeJSON}
	tokens, err := s.fields(n, ident)
	if err != nil {
		return nil, err
	}
	p, err := storedPayload(s, payload)
	if err != nil {
		return nil, err
	}
	n.Payload = p
	return n, s.subject(n, tokens)
}

// route fills the routing of n (tokens, subject, geometry) from ident.
func (s *Schema) route(n *Notification, ident map[string]json.RawMessage) error {
	tokens, err := s.fields(n, ident)
	if err != nil {
		return err
	}
	return s.subject(n, tokens)
}

// fields validates every declared field of ident and returns the subject
// tokens; the geometry goes into n.
func (s *Schema) fields(n *Notification, ident map[string]json.RawMessage) ([]string, error) {
	tokens := make([]string, 1+len(s.KeyOrder))
	tokens[0] = s.Base
	for _, f := range s.Fields {
		raw, ok := ident[f.Name]
		if !ok {
			return nil, &ValidationError{Field: f.Name,
				Message: "required field '" + f.Name + "' is missing: notify needs every declared identifier",
				Detail:  "missing field '" + f.Name + "'"}
		}
		if gh, ok := f.Handler.(GeometryHandler); ok {
			g, err := gh.Geometry(raw)
			if err != nil {
				return nil, spatialInvalid(f.Name, err)
			}
			n.Geometry = g
			if f.Pos > 0 {
				tokens[f.Pos] = string(g.CanonicalJSON())
			}
			continue
		}
		v, err := canonicalScalar(f, raw, "notify")
		if err != nil {
			return nil, err
		}
		if f.Pos > 0 {
			tokens[f.Pos] = v
		}
	}
	return tokens, nil
}

// subject sets n's tokens and subject and checks its length.
func (s *Schema) subject(n *Notification, tokens []string) error {
	n.Tokens = tokens
	n.Subject = topic.Encode(tokens)
	return checkSubject(n.Subject, tokens, s.keyOrderNames())
}

func (s *Schema) fieldNames() []string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names
}

// canonicalScalar coerces and canonicalises one scalar value.
func canonicalScalar(f *Field, raw json.RawMessage, op string) (string, error) {
	text, err := Coerce(raw)
	if err != nil {
		switch {
		case errors.Is(err, ErrNullValue):
			return "", invalid(f.Name, "value cannot be null")
		case errors.Is(err, ErrObjectValue):
			if op == "notify" {
				return "", invalid(f.Name, "constraint objects are only allowed on watch and replay; notify needs a plain value")
			}
			return "", invalid(f.Name, "constraint objects are not supported by %s", f.Handler.Type())
		case errors.Is(err, ErrArrayValue):
			return "", invalid(f.Name, "arrays are not allowed; send a single value")
		default:
			return "", invalid(f.Name, "%v", err)
		}
	}
	v, err := f.Handler.Canonical(text)
	if err != nil {
		return "", invalid(f.Name, "%v", err)
	}
	return v, nil
}

func storedPayload(s *Schema, payload json.RawMessage) ([]byte, error) {
	if payload == nil {
		if s.PayloadRequired {
			return nil, &ValidationError{Field: "payload",
				Message: "payload is required for event type '" + s.Name + "'",
				Detail:  "payload is required"}
		}
		return nullPayload, nil
	}
	v := jsontext.Value(bytes.Clone(payload))
	if err := v.Compact(jsontext.AllowDuplicateNames(false)); err != nil {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
			key := se.JSONPointer.LastToken()
			msg := fmt.Sprintf("payload repeats the key '%s' (at /payload%s): each key of a JSON object may appear once", key, se.JSONPointer)
			return nil, &ValidationError{Field: "payload", Message: msg, Detail: "duplicate key '" + key + "' in payload"}
		}
		return nil, &ValidationError{Field: "payload", Message: "payload is not valid JSON: " + err.Error(), Detail: err.Error()}
	}
	return v, nil
}

func (s *Schema) notifyGeneric(ident map[string]json.RawMessage, payload json.RawMessage) (*Notification, error) {
	values := make(map[string]string, len(ident))
	for k, raw := range ident {
		text, err := Coerce(raw)
		if err != nil {
			return nil, invalid(k, "%v", err)
		}
		values[k] = text
	}
	p, err := storedPayload(s, payload)
	if err != nil {
		return nil, err
	}
	tokens := topic.Generic(s.Name, values)
	subject := topic.Encode(tokens)
	if err := checkSubject(subject, tokens, sortedKeys(values)); err != nil {
		return nil, err
	}
	return &Notification{
		EventType: s.Name, Tokens: tokens, Subject: subject,
		Identifier: values, Payload: p, ContentType: ContentTypeJSON,
	}, nil
}

// CheckSpatial runs the spatial pre-checks of a watch or replay identifier,
// which aviso-server runs before the cursors: polygon and point together,
// and a malformed point. Messages are aviso-server's; the details are
// herald's. The checks that depend on the schema are Filter's.
func (s *Schema) CheckSpatial(ident map[string]json.RawMessage) error {
	rawPoint, hasPoint := ident[configs.FieldPoint]
	_, hasPolygon := ident[configs.FieldPolygon]
	if hasPoint && hasPolygon {
		return &ValidationError{Field: configs.FieldPoint,
			Message: "Cannot specify both identifier.polygon and identifier.point. Provide only one spatial filter.",
			Detail:  "identifier cannot contain both 'polygon' and 'point': send one spatial filter"}
	}
	if hasPoint {
		if _, err := geo.ParsePoint(rawPoint); err != nil {
			return &ValidationError{Field: configs.FieldPoint,
				Message: "identifier.point must be a valid [lat,lon] coordinate pair or compatible string: " + err.Error(),
				Detail:  err.Error()}
		}
	}
	return nil
}

// Operations a watch or replay identifier is checked for, as they appear
// in aviso-server's messages.
const (
	OpWatch  = "watch"
	OpReplay = "replay"
)

// checkKeys runs aviso-server's key checks of a watch or replay
// identifier, in its order: point_cloud sent by a subscriber, point on a
// point-cloud schema, then any key the schema does not declare (point is
// allowed on a schema with a polygon field, polygon on a point-cloud
// schema). With several unknown keys the first in sorted order is named.
func (s *Schema) checkKeys(ident map[string]json.RawMessage, op string) error {
	cloud := s.Geometry != nil && s.Geometry.Name == configs.FieldPointCloud
	if _, ok := ident[configs.FieldPointCloud]; ok {
		return &ValidationError{Field: configs.FieldPointCloud,
			Message: "identifier.point_cloud is only supported for notify operations",
			Detail:  "subscribers must not send 'point_cloud'; send a closed 'polygon' to select notifications with a point inside it"}
	}
	if _, ok := ident[configs.FieldPoint]; ok && cloud {
		return &ValidationError{Field: configs.FieldPoint,
			Message: "identifier.point is not supported for point-cloud schemas; use identifier.polygon",
			Detail:  "send a closed 'polygon' to select point clouds with a point inside it"}
	}
	var unknown []string
	for k := range ident {
		if _, ok := s.byName[k]; ok {
			continue
		}
		switch {
		case k == configs.FieldPoint && s.Geometry != nil && s.Geometry.Name == configs.FieldPolygon:
		case k == configs.FieldPolygon && cloud:
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	k := unknown[0]
	detail := "'" + k + "' is not an identifier field of event type '" + s.Name + "'; its fields are " + s.fieldList()
	if k == configs.FieldPoint {
		detail = "identifier 'point' is only available on event types with a polygon field; '" + s.Name + "' has none"
	}
	return &ValidationError{Field: k,
		Message: "Unknown field '" + k + "' provided for " + op + " operation",
		Detail:  detail}
}

// fieldList names the declared identifier fields, for messages.
func (s *Schema) fieldList() string {
	if len(s.Fields) == 0 {
		return "none"
	}
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = "'" + f.Name + "'"
	}
	return strings.Join(names, ", ")
}

// Filter validates a watch or replay identifier against s (Aviso's watch and
// replay, docs/api.md) for op (OpWatch or OpReplay, named in messages) and
// compiles it into a Filter: exact tokens for scalar values, wildcards for
// absent optional fields and for constrained fields (with the constraint
// evaluated on the token), and the spatial filter. A key the schema does not
// declare is refused, as aviso-server 0.13 does, so that a typo never widens a
// subscription; schema-less event types take any key. Run CheckSpatial first.
func (s *Schema) Filter(ident map[string]json.RawMessage, op string) (*Filter, error) {
	if s.Generic {
		values := make(map[string]string, len(ident))
		for k, raw := range ident {
			text, err := Coerce(raw)
			if err != nil {
				return nil, invalid(k, "%v", err)
			}
			values[k] = text
		}
		tokens := topic.Generic(s.Name, values)
		p := make(topic.Pattern, len(tokens))
		for i, t := range tokens {
			p[i] = topic.Literal(t)
		}
		if err := checkPattern(p, sortedKeys(values)); err != nil {
			return nil, err
		}
		return &Filter{Pattern: p}, nil
	}
	if err := s.checkKeys(ident, op); err != nil {
		return nil, err
	}
	f := &Filter{Pattern: make(topic.Pattern, 1+len(s.KeyOrder))}
	f.Pattern[0] = topic.Literal(s.Base)
	for i := range s.KeyOrder {
		f.Pattern[i+1] = topic.Any()
	}
	for _, fd := range s.Fields {
		if fd.Spatial() {
			if err := s.spatialFilter(fd, ident, f, op); err != nil {
				return nil, err
			}
			continue
		}
		raw, ok := ident[fd.Name]
		if !ok {
			if fd.Required {
				return nil, &ValidationError{Field: fd.Name,
					Message: "Required field '" + fd.Name + "' missing for " + op + " operation",
					Detail:  "required field '" + fd.Name + "' is missing"}
			}
			continue
		}
		if len(raw) > 0 && raw[0] == '{' {
			c, ok := fd.Handler.(Constrainer)
			if !ok {
				return nil, invalid(fd.Name, "constraint objects are not supported by %s; only %s, %s and %s fields accept them", fd.Handler.Type(), configs.HandlerInt, configs.HandlerFloat, configs.HandlerEnum)
			}
			op, operand, err := ParseConstraintObject(raw)
			if err != nil {
				return nil, invalid(fd.Name, "%v", err)
			}
			cons, err := c.Constraint(op, operand)
			if err != nil {
				return nil, invalid(fd.Name, "%v", err)
			}
			if fd.Pos == 0 {
				// Not routed: the constraint can never match (Aviso's watch and replay).
				f.Constraints = append(f.Constraints, TokenConstraint{Pos: len(f.Pattern), Field: fd.Name, Constraint: cons})
				continue
			}
			f.Constraints = append(f.Constraints, TokenConstraint{Pos: fd.Pos, Field: fd.Name, Constraint: cons})
			continue
		}
		v, err := canonicalScalar(fd, raw, "watch")
		if err != nil {
			return nil, err
		}
		if fd.Pos > 0 && v != topic.Wildcard {
			f.Pattern[fd.Pos] = topic.Literal(v)
		}
	}
	if err := checkPattern(f.Pattern, s.keyOrderNames()); err != nil {
		return nil, err
	}
	return f, nil
}

func (s *Schema) spatialFilter(fd *Field, ident map[string]json.RawMessage, f *Filter, op string) error {
	rawPoly, hasPoly := ident[configs.FieldPolygon]
	rawPoint, hasPoint := ident[configs.FieldPoint]
	switch {
	case hasPoly:
		g, err := geo.ParsePolygon(rawPoly)
		if err != nil {
			return spatialInvalid(configs.FieldPolygon, err)
		}
		f.Spatial = geo.IntersectsFilter(g)
	case hasPoint && fd.Name == configs.FieldPolygon:
		p, err := geo.ParsePoint(rawPoint)
		if err != nil {
			return invalid(configs.FieldPoint, "%v", err)
		}
		f.Spatial = geo.ContainsPointFilter(p)
	case fd.Required:
		if fd.Name == configs.FieldPointCloud {
			return &ValidationError{Field: fd.Name,
				Message: "Required field 'point_cloud' missing for " + op + " operation",
				Detail:  "required field 'point_cloud' is missing: subscribers send a closed 'polygon' to select point clouds"}
		}
		return &ValidationError{Field: fd.Name,
			Message: "Required field 'polygon' missing for " + op + " operation",
			Detail:  "required field 'polygon' is missing: send 'polygon' or 'point'"}
	}
	return nil
}

// subjectTooLong returns the error of a notification subject or a watch
// pattern longer than topic.MaxSubjectBytes (n bytes encoded), naming the
// field whose encoded value is the longest. lens holds the encoded length
// of each token after the base and names the field of each; what says
// "subject" or "subject filter".
func subjectTooLong(n int, lens []int, names []string, what string) error {
	longest := 0
	for i := range lens {
		if lens[i] > lens[longest] {
			longest = i
		}
	}
	field := ""
	if longest < len(names) {
		field = names[longest]
	}
	msg := fmt.Sprintf("the identifier makes a %s of %d bytes (percent-encoded), more than the limit of %d bytes", what, n, topic.MaxSubjectBytes)
	if field != "" {
		msg += fmt.Sprintf("; its longest value is '%s' (%d bytes encoded): send a shorter value", field, lens[longest])
	}
	return &ValidationError{Field: field, Message: msg, Detail: fmt.Sprintf("%s longer than %d bytes", what, topic.MaxSubjectBytes)}
}

// checkSubject refuses a notification whose encoded subject exceeds
// topic.MaxSubjectBytes. tokens are the decoded tokens (base first) and
// names the field of each token after the base.
func checkSubject(subject string, tokens []string, names []string) error {
	if len(subject) <= topic.MaxSubjectBytes/3 {
		return nil // no token's wire form can triple it past the limit
	}
	n := topic.WireSubjectLen(tokens)
	if n <= topic.MaxSubjectBytes {
		return nil
	}
	lens := make([]int, len(tokens)-1)
	for i, t := range tokens[1:] {
		lens[i] = topic.WireLen(t)
	}
	return subjectTooLong(n, lens, names, "subject")
}

// checkPattern refuses a watch or replay pattern whose encoded subject
// exceeds topic.MaxSubjectBytes (the replay's JetStream consumer filter
// is built from it).
func checkPattern(p topic.Pattern, names []string) error {
	n := p.SubjectLen()
	if n <= topic.MaxSubjectBytes {
		return nil
	}
	lens := make([]int, len(p)-1)
	for i, t := range p[1:] {
		if !t.Wildcard {
			lens[i] = topic.WireLen(t.Value)
		}
	}
	return subjectTooLong(n, lens, names, "subject filter")
}

// keyOrderNames returns the names of the routed fields, in subject order.
func (s *Schema) keyOrderNames() []string {
	names := make([]string, len(s.KeyOrder))
	for i, f := range s.KeyOrder {
		names[i] = f.Name
	}
	return names
}

// sortedKeys returns the keys of m, sorted (the generic token order).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
