package handlers

import (
	"errors"
	"net/http"
	"slices"

	"herald/configs"
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

// denial is why a stream check refused a request: an HTTP status and the
// message of its body.
type denial struct {
	status int
	msg    string
}

// streamAuth returns the auth block of a schema, nil for none (and for the
// generic schemas of non-strict mode).
func streamAuth(s *notification.Schema) *configs.StreamAuth {
	if s == nil || s.Config == nil {
		return nil
	}
	return s.Config.Auth
}

// DecideStream applies the per-stream matrix of reference §13 to one
// request and returns 0 and "" when it may proceed, or the status (401 or
// 403) and message of the refusal:
//
//	required  read_roles  write_roles  watch/replay            notify
//	false/-   -           -            anyone                  anyone
//	true      absent      absent       any authenticated user  admins only
//	true      set         absent       read role or admin      admins only
//	true      absent      set          any authenticated user  write role or admin
//	true      set         set          read role or admin      write role or admin
func (p AuthPolicy) DecideStream(sa *configs.StreamAuth, id *Identity, op Operation) (int, string) {
	d := p.decideStream(sa, id, op)
	return d.status, d.msg
}

func (p AuthPolicy) decideStream(sa *configs.StreamAuth, id *Identity, op Operation) denial {
	if !p.Enabled || sa == nil || sa.Required == nil || !*sa.Required {
		return denial{}
	}
	if id == nil {
		return denial{http.StatusUnauthorized, MsgStreamAuthRequired}
	}
	admin := p.IsAdmin(id)
	switch op {
	case OpRead:
		if sa.ReadRoles != nil && !admin && !RoleMap(sa.ReadRoles).Admits(id) {
			return denial{http.StatusForbidden, MsgNoReadRole}
		}
	case OpWrite:
		switch {
		case sa.WriteRoles == nil && !admin:
			return denial{http.StatusForbidden, MsgAdminsOnlyWrite}
		case sa.WriteRoles != nil && !admin && !RoleMap(sa.WriteRoles).Admits(id):
			return denial{http.StatusForbidden, MsgNoWriteRole}
		}
	}
	return denial{}
}

// authorizeStream runs the stream check of reference §13 for the request
// and answers the refusal itself; it reports whether the request may
// proceed.
func (h *Handlers) authorizeStream(w http.ResponseWriter, r *http.Request, set *Settings, s *notification.Schema, op Operation) bool {
	d := set.Auth.decideStream(streamAuth(s), IdentityFrom(r.Context()), op)
	switch d.status {
	case 0:
		return true
	case http.StatusUnauthorized:
		WriteUnauthorized(w, r, set.Auth.Direct, d.msg)
	default:
		WriteForbidden(w, r, d.msg)
	}
	return false
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
	if !set.Auth.Enabled || !usesECPDS(s) {
		return true
	}
	id := IdentityFrom(r.Context())
	if id == nil || set.Auth.IsAdmin(id) {
		return true
	}
	reqID := RequestID(r.Context())
	if set.ECPDS == nil {
		h.log.Error("a schema uses the ecpds plugin but no ECPDS checker is configured", "request_id", reqID, "event_type", s.Name)
		WriteInternalError(w, r, MsgServerMisconfigured)
		return false
	}
	key := set.ECPDS.MatchKey()
	value, ok := canonicalValue(s, filter, key)
	if !ok {
		WriteForbidden(w, r, "Required field '"+key+"' not found in request identifiers")
		return false
	}
	err := set.ECPDS.Check(r.Context(), id.Username, value)
	var denied *ECPDSDeniedError
	switch {
	case err == nil:
		return true
	case errors.As(err, &denied):
		WriteForbidden(w, r, denied.Error())
	case errors.Is(err, ErrECPDSUnavailable):
		h.log.Warn("ECPDS unavailable", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		WriteUnavailable(w, r, MsgECPDSUnavailable)
	case r.Context().Err() != nil:
		// The client went away while waiting; nobody reads the answer.
		WriteUnavailable(w, r, MsgECPDSUnavailable)
	default:
		h.log.Error("ECPDS check failed", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		WriteInternalError(w, r, MsgECPDSUnexpectedError)
	}
	return false
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
