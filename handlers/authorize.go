package handlers

import (
	"context"
	"errors"
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

// ecpdsRefusal is a refusal of the ECPDS check: a denial, or (internal)
// a failure herald must answer with a 500 (its message is the client's).
type ecpdsRefusal struct {
	denied   *auth.Error
	internal bool
}

// Error returns the message.
func (e *ecpdsRefusal) Error() string { return e.denied.Message }

// Unwrap returns the denial.
func (e *ecpdsRefusal) Unwrap() error { return e.denied }

// refuse is a refusal of the ECPDS check of kind with msg.
func refuse(kind auth.DenyKind, msg string, internal bool) *ecpdsRefusal {
	return &ecpdsRefusal{denied: &auth.Error{Kind: kind, Message: msg}, internal: internal}
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
		return refuse(auth.Forbidden, auth.MsgServerMisconfigured, true)
	}
	key := set.ECPDS.MatchKey()
	value, ok := canonicalValue(s, filter, key)
	if !ok {
		h.obs.ECPDSDecision(ECPDSDenyMatchKey)
		return refuse(auth.Forbidden, "Required field '"+key+"' not found in request identifiers", false)
	}
	err := set.ECPDS.Check(ctx, id.Username, value)
	switch {
	case err == nil:
		h.obs.ECPDSDecision(ECPDSAllow)
		return nil
	case errors.Is(err, auth.ErrDenied):
		h.obs.ECPDSDecision(ECPDSDenyDestination)
		return refuse(auth.Forbidden, err.Error(), false)
	case errors.Is(err, auth.ErrUnavailable):
		h.log.Warn("ECPDS unavailable", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		h.obs.ECPDSDecision(ECPDSUnavailable)
		return refuse(auth.Unavailable, auth.MsgECPDSUnavailable, false)
	case ctx.Err() != nil:
		// The client went away while waiting; nobody reads the answer.
		h.obs.ECPDSDecision(ECPDSUnavailable)
		return refuse(auth.Unavailable, auth.MsgECPDSUnavailable, false)
	default:
		h.log.Error("ECPDS check failed", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", err)
		h.obs.ECPDSDecision(ECPDSError)
		return refuse(auth.Forbidden, auth.MsgECPDSUnexpectedError, true)
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
