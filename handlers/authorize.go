package handlers

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"herald/api/httperr"
	"herald/configs"
	"herald/ecpds"
	"herald/notification"
)

// Operation is what a request does with a stream: read (watch, replay) or
// write (notify).
type Operation uint8

// Operations on a stream.
const (
	OpRead Operation = iota
	OpWrite
)

// AuthPolicy is the global authentication setting the handlers need.
// Package api authenticates; the handlers authorise per stream.
type AuthPolicy struct {
	// Enabled is auth.enabled; when false everything is public.
	Enabled bool
	// Direct is true in auth mode direct: 401 answers then also offer
	// `WWW-Authenticate: Basic`.
	Direct bool
	// Admins is auth.admin_roles.
	Admins RoleMap
}

// IsAdmin reports whether id holds an admin role. An empty admin map
// admits nobody (startup validation requires one when auth is enabled).
func (p AuthPolicy) IsAdmin(id *Identity) bool {
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
	// AuthUnavailable: the authentication service could not answer (503).
	AuthUnavailable
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
	case AuthUnavailable:
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
	case AuthUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusBadRequest
	}
}

// AuthError is a refusal: its kind and the message for the client.
type AuthError struct {
	Kind    DenyKind
	Message string
}

// Error returns the message.
func (e *AuthError) Error() string { return e.Message }

// streamAuth returns the auth block of a schema, nil for none (and for the
// generic schemas of non-strict mode).
func streamAuth(s *notification.Schema) *configs.StreamAuth {
	if s == nil || s.Config == nil {
		return nil
	}
	return s.Config.Auth
}

// DecideStream applies the per-stream matrix of reference §13 to one
// request and returns nil when it may proceed, or the refusal:
//
//	required  read_roles  write_roles  watch/replay            notify
//	false/-   -           -            anyone                  anyone
//	true      absent      absent       any authenticated user  admins only
//	true      set         absent       read role or admin      admins only
//	true      absent      set          any authenticated user  write role or admin
//	true      set         set          read role or admin      write role or admin
func (p AuthPolicy) DecideStream(sa *configs.StreamAuth, id *Identity, op Operation) *AuthError {
	if !p.Enabled || sa == nil || sa.Required == nil || !*sa.Required {
		return nil
	}
	if id == nil {
		return &AuthError{Unauthenticated, MsgStreamAuthRequired}
	}
	admin := p.IsAdmin(id)
	switch op {
	case OpRead:
		if sa.ReadRoles != nil && !admin && !RoleMap(sa.ReadRoles).Admits(id) {
			return &AuthError{Forbidden, MsgNoReadRole}
		}
	case OpWrite:
		switch {
		case sa.WriteRoles == nil && !admin:
			return &AuthError{Forbidden, MsgAdminsOnlyWrite}
		case sa.WriteRoles != nil && !admin && !RoleMap(sa.WriteRoles).Admits(id):
			return &AuthError{Forbidden, MsgNoWriteRole}
		}
	}
	return nil
}

// WriteAuthError answers a refusal over HTTP: 401 (with the
// WWW-Authenticate challenges of the mode), 403, 503 or 400.
func WriteAuthError(w http.ResponseWriter, r *http.Request, direct bool, e *AuthError) {
	switch e.Kind {
	case Unauthenticated:
		WriteUnauthorized(w, r, direct, e.Message)
	case Forbidden:
		WriteForbidden(w, r, e.Message)
	case AuthUnavailable:
		WriteUnavailable(w, r, e.Message)
	default:
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.AuthErrorBody{Code: e.Kind.Code(), Error: "bad_request", Message: e.Message, RequestID: httperr.RequestID(r.Context())})
	}
}

// authorizeStream runs the stream check of reference §13 for the request
// and answers the refusal itself; it reports whether the request may
// proceed.
func (h *Handlers) authorizeStream(w http.ResponseWriter, r *http.Request, set *Settings, s *notification.Schema, op Operation) bool {
	if e := set.Auth.DecideStream(streamAuth(s), IdentityFrom(r.Context()), op); e != nil {
		WriteAuthError(w, r, set.Auth.Direct, e)
		return false
	}
	return true
}

// usesECPDS reports whether a schema lists the ecpds plugin.
func usesECPDS(s *notification.Schema) bool {
	sa := streamAuth(s)
	return sa != nil && slices.Contains(sa.Plugins, configs.PluginECPDS)
}

// checkECPDS runs the ECPDS destination check of reference §14 on a
// watch or replay whose identifier has been processed into filter; it
// answers a refusal itself and reports whether the request may proceed.
// Streams without the plugin, anonymous requests (possible only on
// streams that do not require auth) and admins pass without a lookup.
func (h *Handlers) checkECPDS(w http.ResponseWriter, r *http.Request, set *Settings, s *notification.Schema, filter *notification.Filter) bool {
	e := h.decideECPDS(r.Context(), set, s, filter, IdentityFrom(r.Context()), httperr.RequestID(r.Context()))
	switch {
	case e == nil:
		return true
	case e.internal:
		WriteInternalError(w, r, e.Message)
	default:
		WriteAuthError(w, r, set.Auth.Direct, &e.AuthError)
	}
	return false
}

// DestinationChecker is what the ECPDS authorisation needs of the
// destination plugin (implemented by *ecpds.Client).
type DestinationChecker interface {
	// MatchKey is the identifier field whose canonical value must be one
	// of the user's destinations.
	MatchKey() string
	// Check returns nil when username may read destination, an
	// *ecpds.DeniedError when not, an error wrapping ecpds.ErrUnavailable
	// when the lists cannot be fetched, or ctx's error.
	Check(ctx context.Context, username, destination string) error
}

// ecpdsRefusal is a refusal of the ECPDS check: a denial, or (internal)
// a failure herald must answer with a 500.
type ecpdsRefusal struct {
	AuthError
	internal bool
}

// decideECPDS runs the ECPDS destination check of reference §14 for a
// user on a processed watch or replay filter: nil when it may proceed.
func (h *Handlers) decideECPDS(ctx context.Context, set *Settings, s *notification.Schema, filter *notification.Filter, id *Identity, reqID string) *ecpdsRefusal {
	if !set.Auth.Enabled || !usesECPDS(s) {
		return nil
	}
	if id == nil {
		return nil
	}
	if set.Auth.IsAdmin(id) {
		h.obs.ECPDSDecision(ECPDSAdminBypass)
		return nil
	}
	if set.ECPDS == nil {
		h.log.Error("a schema uses the ecpds plugin but no ECPDS checker is configured", "request_id", reqID, "event_type", s.Name)
		h.obs.ECPDSDecision(ECPDSError)
		return &ecpdsRefusal{AuthError{Forbidden, MsgServerMisconfigured}, true}
	}
	key := set.ECPDS.MatchKey()
	value, ok := canonicalValue(s, filter, key)
	if !ok {
		h.obs.ECPDSDecision(ECPDSDenyMatchKey)
		return &ecpdsRefusal{AuthError: AuthError{Forbidden, "Required field '" + key + "' not found in request identifiers"}}
	}
	err := set.ECPDS.Check(ctx, id.Username, value)
	var denied *ecpds.DeniedError
	switch {
	case err == nil:
		h.obs.ECPDSDecision(ECPDSAllow)
		return nil
	case errors.As(err, &denied):
		h.obs.ECPDSDecision(ECPDSDenyDestination)
		return &ecpdsRefusal{AuthError: AuthError{Forbidden, denied.Error()}}
	case errors.Is(err, ecpds.ErrUnavailable):
		h.log.Warn("ECPDS unavailable", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		h.obs.ECPDSDecision(ECPDSUnavailable)
		return &ecpdsRefusal{AuthError: AuthError{AuthUnavailable, MsgECPDSUnavailable}}
	case ctx.Err() != nil:
		// The client went away while waiting; nobody reads the answer.
		h.obs.ECPDSDecision(ECPDSUnavailable)
		return &ecpdsRefusal{AuthError: AuthError{AuthUnavailable, MsgECPDSUnavailable}}
	default:
		h.log.Error("ECPDS check failed", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		h.obs.ECPDSDecision(ECPDSError)
		return &ecpdsRefusal{AuthError{Forbidden, MsgECPDSUnexpectedError}, true}
	}
}

// canonicalValue returns the canonical value a processed watch/replay
// identifier gives to field name: the literal subject token at the
// field's key_order position. A field that is absent, a wildcard
// (including a scalar "*") or a constraint has no single value.
func canonicalValue(s *notification.Schema, filter *notification.Filter, name string) (string, bool) {
	f, ok := s.Field(name)
	if !ok || f.Pos <= 0 || filter == nil || f.Pos >= len(filter.Pattern) {
		return "", false
	}
	t := filter.Pattern[f.Pos]
	if t.Wildcard {
		return "", false
	}
	return t.Value, true
}
