package handlers

import (
	"context"
	"net/http"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/notification"
)

// authorizeStream runs the stream check of Aviso's auth rules (docs/auth.md)
// for the request and answers the refusal itself; it reports whether the
// request may proceed.
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

// decideECPDS runs the ECPDS destination check (auth.DecideDestination)
// for a user on a processed watch or replay filter: nil when it may
// proceed. It logs and counts the outcome.
func (h *Handlers) decideECPDS(ctx context.Context, set *Settings, s *notification.Schema, filter *notification.Filter, id *auth.Identity, reqID string) *ecpdsRefusal {
	d := set.Auth.DecideDestination(ctx, set.ECPDS, s.Name, id, func(key string) (string, bool) { return canonicalValue(s, filter, key) })
	if d.Outcome != "" {
		h.obs.ECPDSDecision(d.Outcome)
	}
	if d.Denied == nil {
		return nil
	}
	switch {
	case d.Internal:
		h.log.Error("ECPDS check failed", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", d.Cause)
	case d.Cause != nil:
		h.log.Warn("ECPDS unavailable", "request_id", reqID, "event_type", s.Name, "username", id.Username, "error", d.Cause)
	}
	return &ecpdsRefusal{denied: d.Denied, internal: d.Internal}
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
