// Package httperr owns herald's JSON error model on HTTP: the Aviso error
// bodies (Aviso's error bodies, docs/api.md), the JSON response writer every
// endpoint and middleware answers with, and the request id carried in a
// request's context. It is a leaf: it imports no herald package, so that both
// api (middleware) and handlers (endpoints) use it without importing each
// other. It must not grow routing, endpoint or classification logic.
package httperr

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// ErrorBody is the Aviso error body of request-path failures (docs/api.md,
// "Errors").
type ErrorBody struct {
	Code    string `json:"code"`
	Error   string `json:"error"`
	Message string `json:"message"`
	Details string `json:"details"`
	// Topic is set only on SSE setup failures.
	Topic     *string `json:"topic,omitempty"`
	RequestID string  `json:"request_id"`
}

// UnknownEventTypeBody is the body of UNKNOWN_EVENT_TYPE (Aviso's error
// bodies, docs/api.md): it lists the configured event types instead of
// `details`.
type UnknownEventTypeBody struct {
	Code                 string   `json:"code"`
	Error                string   `json:"error"`
	Message              string   `json:"message"`
	ConfiguredEventTypes []string `json:"configured_event_types"`
	RequestID            string   `json:"request_id"`
}

// AuthErrorBody is the body of authentication, authorisation and
// admission failures (Aviso's error bodies, docs/api.md): no `details`.
type AuthErrorBody struct {
	Code      string `json:"code"`
	Error     string `json:"error"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// WriteJSON writes v as a JSON response with the given status. If v cannot
// be encoded it answers 500 with a fixed INTERNAL_ERROR body instead.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"code":"INTERNAL_ERROR","error":"internal_error","message":"response encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// requestIDKey is the context key of the request id.
type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id carried by ctx ("" if none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// JSONErrorText renders an error of github.com/go-json-experiment/json
// with one wording: the library deliberately alternates "cannot" and
// "unable to" from one process to the next, and a message a client sees
// (or a test compares) must not change with it.
func JSONErrorText(err error) string {
	return strings.Replace(err.Error(), "json: unable to ", "json: cannot ", 1)
}
