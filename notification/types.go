// Package notification owns the event-type schemas read from the config:
// the identifier handlers (one file per handler), constraints, spatial
// geometry and filters, request canonicalisation for notify, watch and
// replay, cursor parsing, and CloudEvent construction. It turns untrusted
// request values into canonical, validated values and typed errors; it does
// not store, route or transport anything (packages engine and handlers do).
package notification

import (
	"encoding/json"

	"github.com/herald-gateway/herald/geo"
	"github.com/herald-gateway/herald/topic"
)

// Handler validates and canonicalises the scalar values of one identifier
// field. Handlers are immutable after construction and safe for concurrent
// use.
type Handler interface {
	// Type is the handler's name in the schema, for example "IntHandler".
	Type() string
	// Canonical validates a value already coerced to text (see Coerce) and
	// returns its canonical form. The error says what is wrong with the
	// value without naming the field; the caller adds the field name.
	Canonical(value string) (string, error)
	// Describe returns the handler-specific keys shown by the schema API,
	// with unset optional keys as nil (for example {"max_length": nil}).
	Describe() map[string]any
}

// Constrainer is implemented by the handlers that accept constraint
// objects on watch and replay (IntHandler, FloatHandler, EnumHandler).
type Constrainer interface {
	// Constraint compiles one operator ("eq", "in", "gt", "gte", "lt",
	// "lte", "between") and its JSON operand into a predicate over
	// canonical values. The error names the operator and says what was
	// expected.
	Constraint(op string, operand json.RawMessage) (Constraint, error)
}

// Constraint is a compiled predicate over one canonical token value.
type Constraint interface {
	// Match reports whether the canonical value satisfies the constraint.
	Match(value string) bool
}

// Notification is a validated, canonical notification ready to be stored.
type Notification struct {
	// EventType is the schema name (for a schema-less generic notification,
	// the event type as sent).
	EventType string
	// Subject is the encoded subject: base first, then the key_order values.
	Subject string
	// Tokens are the decoded subject tokens; Tokens[0] is the topic base.
	Tokens []string
	// Identifier holds the canonical values of the ordinary (non-spatial)
	// identifier fields. Rendering uses it only for generic notifications;
	// schema notifications are rebuilt from Tokens.
	Identifier map[string]string
	// geo.Geometry is the notification's polygon or point cloud, nil if none.
	Geometry *geo.Geometry
	// Payload is the payload as stored: compact JSON text by default.
	Payload []byte
	// ContentType is the media type of Payload ("application/json").
	ContentType string
	// TraceParent and TraceState are the W3C trace context of the
	// notification's creation (its publish span), stored with it and
	// delivered as the CloudEvent's traceparent and tracestate extension
	// attributes. Both are empty when tracing is off: the notification
	// is then stored and delivered as it was without tracing.
	TraceParent, TraceState string
}

// Base returns the topic base, the stream the notification belongs to.
func (n *Notification) Base() string {
	if len(n.Tokens) == 0 {
		return ""
	}
	return n.Tokens[0]
}

// TokenConstraint applies a Constraint to the subject token at Pos.
type TokenConstraint struct {
	// Pos is the index in the decoded subject tokens (base is 0).
	Pos int
	// Field is the constrained identifier's name.
	Field string
	// Constraint is the compiled predicate.
	Constraint Constraint
}

// Filter is the complete matcher of a watch or replay: subject pattern,
// constraints and spatial filter. It is reusable by any transport and safe
// for concurrent use.
type Filter struct {
	Pattern     topic.Pattern
	Constraints []TokenConstraint
	// Spatial is nil when the request has no spatial filter.
	Spatial geo.SpatialFilter
}

// Match reports whether a notification with the given decoded subject tokens
// and geometry passes the filter (Aviso's watch and replay, docs/api.md).
func (f *Filter) Match(tokens []string, g *geo.Geometry) bool {
	if !f.Pattern.Match(tokens) {
		return false
	}
	for _, c := range f.Constraints {
		if c.Pos >= len(tokens) {
			return false
		}
		v := tokens[c.Pos]
		if v == "" || v == "*" || !c.Constraint.Match(v) {
			return false
		}
	}
	if f.Spatial != nil && !f.Spatial.Match(g) {
		return false
	}
	return true
}
