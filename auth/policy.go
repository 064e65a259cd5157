package auth

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/herald-gateway/herald/api/httperr"
)

// Operation is what a request does with a stream: read (watch, replay) or
// write (notify).
type Operation uint8

// Operations on a stream.
const (
	OpRead Operation = iota
	OpWrite
)

// Policy is the global authentication setting the handlers need.
// The Authenticator authenticates; the handlers authorise per stream.
type Policy struct {
	// Enabled is auth.enabled; when false everything is public.
	Enabled bool
	// Direct is true in auth mode direct: 401 answers then also offer
	// `WWW-Authenticate: Basic`.
	Direct bool
	// Admins is auth.admin_roles.
	Admins RoleMap
	// Streams are the access rules of the event types that have an auth
	// block, by event type.
	Streams map[string]*StreamRules
}

// IsAdmin reports whether id holds an admin role. An empty admin map
// admits nobody (startup validation requires one when auth is enabled).
func (p Policy) IsAdmin(id *Identity) bool {
	return len(p.Admins) > 0 && p.Admins.Admits(id)
}

// DenyKind classifies a refusal of authentication or authorisation; each
// transport maps it to its own answer (HTTP 401/403/503/400, WebSocket
// error codes).
type DenyKind uint8

// Refusal kinds.
const (
	// Unauthenticated: credentials are missing or invalid (HTTP 401).
	Unauthenticated DenyKind = iota + 1
	// Forbidden: the user lacks a role (HTTP 403).
	Forbidden
	// Unavailable: the authentication service could not answer (503).
	Unavailable
	// BadCredentials: the credentials are malformed beyond a 401, such as
	// two Authorization headers (HTTP 400).
	BadCredentials
)

// Code returns the API error code of the kind.
func (k DenyKind) Code() string {
	switch k {
	case Unauthenticated:
		return "UNAUTHORIZED"
	case Forbidden:
		return "FORBIDDEN"
	case Unavailable:
		return "SERVICE_UNAVAILABLE"
	default:
		return "INVALID_AUTHORIZATION_HEADER"
	}
}

// Status returns the HTTP status of the kind.
func (k DenyKind) Status() int {
	switch k {
	case Unauthenticated:
		return http.StatusUnauthorized
	case Forbidden:
		return http.StatusForbidden
	case Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusBadRequest
	}
}

// Error is a refusal: its kind and the message for the client.
type Error struct {
	Kind    DenyKind
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// PluginECPDS names the ECPDS destination check in a stream's plugins.
const PluginECPDS = "ecpds"

// StreamRules are the access rules of one stream (its schema's auth
// block).
type StreamRules struct {
	// Required turns the rules on; otherwise the stream is public.
	Required bool
	// ReadRoles and WriteRoles are nil when the block does not set them.
	ReadRoles, WriteRoles RoleMap
	// Plugins name extra checks, such as PluginECPDS.
	Plugins []string
}

// Rules returns the access rules of an event type (nil: public).
func (p Policy) Rules(eventType string) *StreamRules { return p.Streams[eventType] }

// UsesPlugin reports whether an event type's rules list plugin.
func (p Policy) UsesPlugin(eventType, plugin string) bool {
	r := p.Rules(eventType)
	return r != nil && slices.Contains(r.Plugins, plugin)
}

// DecideStream applies the per-stream matrix of Aviso's auth rules
// (docs/auth.md) to one request and returns nil when it may proceed, or the
// refusal:
//
//	required  read_roles  write_roles  watch/replay            notify
//	false/-   -           -            anyone                  anyone
//	true      absent      absent       any authenticated user  admins only
//	true      set         absent       read role or admin      admins only
//	true      absent      set          any authenticated user  write role or admin
//	true      set         set          read role or admin      write role or admin
func (p Policy) DecideStream(eventType string, id *Identity, op Operation) *Error {
	sa := p.Rules(eventType)
	if !p.Enabled || sa == nil || !sa.Required {
		return nil
	}
	if id == nil {
		return &Error{Unauthenticated, MsgStreamAuthRequired}
	}
	admin := p.IsAdmin(id)
	switch op {
	case OpRead:
		if sa.ReadRoles != nil && !admin && !sa.ReadRoles.Admits(id) {
			return &Error{Forbidden, MsgNoReadRole}
		}
	case OpWrite:
		switch {
		case sa.WriteRoles == nil && !admin:
			return &Error{Forbidden, MsgAdminsOnlyWrite}
		case sa.WriteRoles != nil && !admin && !sa.WriteRoles.Admits(id):
			return &Error{Forbidden, MsgNoWriteRole}
		}
	}
	return nil
}

// WriteError answers a refusal over HTTP: 401 (with the
// WWW-Authenticate challenges of the mode), 403, 503 or 400.
func WriteError(w http.ResponseWriter, r *http.Request, direct bool, e *Error) {
	switch e.Kind {
	case Unauthenticated:
		WriteUnauthorized(w, r, direct, e.Message)
	case Forbidden:
		WriteForbidden(w, r, e.Message)
	case Unavailable:
		WriteUnavailable(w, r, e.Message)
	default:
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.AuthErrorBody{Code: e.Kind.Code(), Error: "bad_request", Message: e.Message, RequestID: httperr.RequestID(r.Context())})
	}
}

// Errors of a DestinationChecker.
var (
	// ErrDenied: the user may not read the destination. The error's
	// message is the one the client gets.
	ErrDenied = errors.New("destination denied")
	// ErrUnavailable: the destination lists could not be fetched.
	ErrUnavailable = errors.New("destination service unavailable")
)

// DestinationChecker is what the ECPDS authorisation needs of the
// destination plugin (implemented by *ecpds.Client).
type DestinationChecker interface {
	// MatchKey is the identifier field whose canonical value must be one
	// of the user's destinations.
	MatchKey() string
	// Check returns nil when username may read destination, an error
	// wrapping ErrDenied when not (its message is the client's), one
	// wrapping ErrUnavailable when the lists cannot be fetched, or ctx's
	// error.
	Check(ctx context.Context, username, destination string) error
}
