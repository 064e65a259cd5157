package auth

import (
	"context"
	"errors"
)

// Outcomes of a destination check, as the metrics label them (Aviso's
// aviso_ecpds_access_decisions_total outcomes).
const (
	DestinationAllow       = "allow"
	DestinationDenied      = "deny_destination"
	DestinationNoMatchKey  = "deny_match_key_missing"
	DestinationUnavailable = "unavailable"
	DestinationAdminBypass = "admin_bypass"
	DestinationError       = "error"
)

// Destination is the outcome of a destination check.
type Destination struct {
	// Outcome is one of the Destination* labels; "" when the check does
	// not apply (the stream has no such plugin, or the request is
	// anonymous), which is not counted.
	Outcome string
	// Denied is the refusal, nil when the request may proceed.
	Denied *Error
	// Internal marks a refusal caused by herald (a missing checker, an
	// unexpected failure): answer it as a server error and log Cause.
	Internal bool
	// Cause is the checker's error behind a refusal, for the log.
	Cause error
}

// DecideDestination runs the destination check of the ECPDS plugin on a
// watch or replay of eventType by id: the plugin's match key must have a
// single canonical value in the request (value reports it) that the
// checker allows for the user. Admins pass without a lookup; so do
// anonymous requests (only possible on streams that do not require
// auth). checker is nil when no ECPDS block is configured.
func (p Policy) DecideDestination(ctx context.Context, checker DestinationChecker, eventType string, id *Identity, value func(key string) (string, bool)) Destination {
	if !p.Enabled || !p.UsesPlugin(eventType, PluginECPDS) || id == nil {
		return Destination{}
	}
	if p.IsAdmin(id) {
		return Destination{Outcome: DestinationAdminBypass}
	}
	deny := func(outcome string, kind DenyKind, msg string, internal bool, cause error) Destination {
		return Destination{Outcome: outcome, Denied: &Error{Kind: kind, Message: msg}, Internal: internal, Cause: cause}
	}
	if checker == nil {
		return deny(DestinationError, Forbidden, MsgServerMisconfigured, true,
			errors.New("a schema uses the ecpds plugin but no ECPDS checker is configured"))
	}
	key := checker.MatchKey()
	v, ok := value(key)
	if !ok {
		return deny(DestinationNoMatchKey, Forbidden, "Required field '"+key+"' not found in request identifiers", false, nil)
	}
	err := checker.Check(ctx, id.Username, v)
	switch {
	case err == nil:
		return Destination{Outcome: DestinationAllow}
	case errors.Is(err, ErrDenied):
		return deny(DestinationDenied, Forbidden, err.Error(), false, nil)
	case errors.Is(err, ErrUnavailable):
		return deny(DestinationUnavailable, Unavailable, MsgECPDSUnavailable, false, err)
	case ctx.Err() != nil:
		// The client went away while waiting; nobody reads the answer.
		return deny(DestinationUnavailable, Unavailable, MsgECPDSUnavailable, false, nil)
	default:
		return deny(DestinationError, Forbidden, MsgECPDSUnexpectedError, true, err)
	}
}
