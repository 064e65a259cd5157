package notification

import (
	"fmt"
	"strings"
)

// ParseKind classifies a request that could not be parsed (Aviso's request
// parsing, docs/api.md).
type ParseKind uint8

// Parse failure kinds, in pipeline order.
const (
	// InvalidJSON: the body is not JSON (an empty body included).
	InvalidJSON ParseKind = iota + 1
	// UnknownField: a top-level key outside the request model.
	UnknownField
	// InvalidShape: JSON that does not fit the request model.
	InvalidShape
)

// Code returns the wire error code of the kind.
func (k ParseKind) Code() string {
	switch k {
	case InvalidJSON:
		return "INVALID_JSON"
	case UnknownField:
		return "UNKNOWN_FIELD"
	default:
		return "INVALID_REQUEST_SHAPE"
	}
}

// ParseError is a request body that failed the parse pipeline (docs/api.md).
type ParseError struct {
	Kind ParseKind
	// Detail is the innermost cause.
	Detail string
}

// Error returns the message.
func (e *ParseError) Error() string {
	switch e.Kind {
	case InvalidJSON:
		return "JSON parsing failed: " + e.Detail
	case UnknownField:
		return "Request contains unknown fields: " + e.Detail
	default:
		return "Request deserialization failed: " + e.Detail
	}
}

// UnknownEventTypeError is a request naming an event type that is not
// configured while the schema is strict (Aviso's error bodies, docs/api.md).
type UnknownEventTypeError struct {
	EventType string
	// Configured lists the configured event types, sorted.
	Configured []string
}

// Error returns the message.
func (e *UnknownEventTypeError) Error() string {
	return fmt.Sprintf("unknown event type '%s'", e.EventType)
}

// ValidationError is a request value a client must fix: an identifier, a
// cursor, a spatial value or the payload. Field is empty when the problem
// is not about one identifier field.
type ValidationError struct {
	Field string
	// Message is the whole explanation, naming the field and the rule.
	Message string
	// Detail is the innermost cause (often equal to Message).
	Detail string
	// Cause is the typed error behind it when there is one (a
	// *PayloadError for a payload a codec refused).
	Cause error
}

// Error returns the message.
func (e *ValidationError) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *ValidationError) Unwrap() error { return e.Cause }

// invalid builds a ValidationError for one field from a handler's reason.
func invalid(field, format string, args ...any) *ValidationError {
	reason := fmt.Sprintf(format, args...)
	return &ValidationError{
		Field:   field,
		Message: fmt.Sprintf("invalid value for identifier '%s': %s", field, reason),
		Detail:  reason,
	}
}

// spatialInvalid builds the ValidationError of a polygon or point-cloud
// value, worded as aviso-server words it ("field 'polygon' must be a
// valid polygon: …"), which clients may match.
func spatialInvalid(field string, err error) *ValidationError {
	return &ValidationError{Field: field, Message: "field '" + field + "' " + err.Error(), Detail: err.Error()}
}

// requestInvalid builds a ValidationError not tied to one field.
func requestInvalid(format string, args ...any) *ValidationError {
	m := fmt.Sprintf(format, args...)
	return &ValidationError{Message: m, Detail: m}
}

// quoteList renders names as 'a', 'b'.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}
