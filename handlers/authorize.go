package handlers

import (
	"context"
	"errors"
	"herald/api/httperr"
	"herald/auth"
	"herald/notification"
	"net/http"
)

// authorizeStream runs the stream check of reference §13 for the request
// and answers the refusal itself; it reports whether the request may
// proceed.
func (h *Handlers) authorizeStream(w http.ResponseWriter, r *http.Request, set *Settings, s *notification.Schema, op auth.Operation) bool {
	if e := set.Auth.DecideStream(s.Name, auth.IdentityFrom(r.Context()), op); e != nil {
		auth.WriteError(w, r, set.Auth.Direct, e)
		return false
	}
	return true
}

// checkECPDS runs the ECPDS destination check of reference §14 on a
// watch or replay whose identifier has been processed into filter; it
// answers a refusal itself and reports whether the request may proceed.
// Streams without the plugin, anonymous requests (possible only on
// streams that do not require auth) and admins pass without a lookup.
func (h *Handlers) checkECPDS(w http.ResponseWriter, r *http.Request, set *Settings, s *notification.Schema, filter *notification.Filter) bool {
	e := h.decideECPDS(r.Context(), set, s, filter, auth.IdentityFrom(r.Context()), httperr.RequestID(r.Context()))
	switch {
	case e == nil:
		return true
	case e.internal:
		auth.WriteInternalError(w, r, e.Message)
	default:
		auth.WriteError(w, r, set.Auth.Direct, &e.Error)
	}
	return false
}

// ecpdsRefusal is a refusal of the ECPDS check: a denial, or (internal)
// a failure herald must answer with a 500.
type ecpdsRefusal struct {
	auth.Error
	internal bool
}

// decideECPDS runs the ECPDS destination check of reference §14 for a
// user on a processed watch or replay filter: nil when it may proceed.
func (h *Handlers) decideECPDS(ctx context.Context, set *Settings, s *notification.Schema, filter *notification.Filter, id *auth.Identity, reqID string) *ecpdsRefusal {
	if !set.Auth.Enabled || !set.Auth.UsesPlugin(s.Name, auth.PluginECPDS) {
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
		return &ecpdsRefusal{auth.Error{Kind: auth.Forbidden, Message: auth.MsgServerMisconfigured}, true}
	}
	key := set.ECPDS.MatchKey()
	value, ok := canonicalValue(s, filter, key)
	if !ok {
		h.obs.ECPDSDecision(ECPDSDenyMatchKey)
		return &ecpdsRefusal{Error: auth.Error{Kind: auth.Forbidden, Message: "Required field '" + key + "' not found in request identifiers"}}
	}
	err := set.ECPDS.Check(ctx, id.Username, value)
	switch {
	case err == nil:
		h.obs.ECPDSDecision(ECPDSAllow)
		return nil
	case errors.Is(err, auth.ErrDenied):
		h.obs.ECPDSDecision(ECPDSDenyDestination)
		return &ecpdsRefusal{Error: auth.Error{Kind: auth.Forbidden, Message: err.Error()}}
	case errors.Is(err, auth.ErrUnavailable):
		h.log.Warn("ECPDS unavailable", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		h.obs.ECPDSDecision(ECPDSUnavailable)
		return &ecpdsRefusal{Error: auth.Error{Kind: auth.Unavailable, Message: auth.MsgECPDSUnavailable}}
	case ctx.Err() != nil:
		// The client went away while waiting; nobody reads the answer.
		h.obs.ECPDSDecision(ECPDSUnavailable)
		return &ecpdsRefusal{Error: auth.Error{Kind: auth.Unavailable, Message: auth.MsgECPDSUnavailable}}
	default:
		h.log.Error("ECPDS check failed", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		h.obs.ECPDSDecision(ECPDSError)
		return &ecpdsRefusal{auth.Error{Kind: auth.Forbidden, Message: auth.MsgECPDSUnexpectedError}, true}
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
