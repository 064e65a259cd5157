package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// checker is a DestinationChecker with a fixed answer per destination.
type checker map[string]error

func (checker) MatchKey() string { return "destination" }
func (c checker) Check(_ context.Context, _, dest string) error {
	return c[dest]
}

// TestDecideDestination: every outcome of the ECPDS destination check,
// with the refusal the client gets and whether herald is at fault.
func TestDecideDestination(t *testing.T) {
	p := Policy{Enabled: true, Admins: RoleMap{"ecmwf": {"admin"}},
		Streams: map[string]*StreamRules{"diss": {Required: true, Plugins: []string{PluginECPDS}}, "open": {Required: true}}}
	user := &Identity{Username: "bob", Realm: "ecmwf", Roles: []string{"reader"}}
	admin := &Identity{Username: "root", Realm: "ecmwf", Roles: []string{"admin"}}
	denied := fmt.Errorf("User 'bob' does not have access to destination 'B': %w", ErrDenied)
	down := fmt.Errorf("all servers failed: %w", ErrUnavailable)
	c := checker{"A": nil, "B": denied, "C": down, "D": errors.New("boom")}
	value := func(v string) func(string) (string, bool) {
		return func(key string) (string, bool) { return v, v != "" && key == "destination" }
	}
	for _, tc := range []struct {
		name      string
		p         Policy
		checker   DestinationChecker
		eventType string
		id        *Identity
		value     string
		want      Destination
	}{
		{"no plugin", p, c, "open", user, "A", Destination{}},
		{"anonymous", p, c, "diss", nil, "A", Destination{}},
		{"auth disabled", Policy{}, c, "diss", user, "B", Destination{}},
		{"admin", p, c, "diss", admin, "B", Destination{Outcome: DestinationAdminBypass}},
		{"allowed", p, c, "diss", user, "A", Destination{Outcome: DestinationAllow}},
		{"denied", p, c, "diss", user, "B", Destination{Outcome: DestinationDenied,
			Denied: &Error{Forbidden, "User 'bob' does not have access to destination 'B': destination denied"}}},
		{"no match key", p, c, "diss", user, "", Destination{Outcome: DestinationNoMatchKey,
			Denied: &Error{Forbidden, "Required field 'destination' not found in request identifiers"}}},
		{"unavailable", p, c, "diss", user, "C", Destination{Outcome: DestinationUnavailable,
			Denied: &Error{Unavailable, MsgECPDSUnavailable}, Cause: down}},
		{"unexpected", p, c, "diss", user, "D", Destination{Outcome: DestinationError,
			Denied: &Error{Forbidden, MsgECPDSUnexpectedError}, Internal: true, Cause: c["D"]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.p.DecideDestination(context.Background(), tc.checker, tc.eventType, tc.id, value(tc.value))
			if got.Outcome != tc.want.Outcome || got.Internal != tc.want.Internal || got.Cause != tc.want.Cause ||
				(got.Denied == nil) != (tc.want.Denied == nil) || (got.Denied != nil && *got.Denied != *tc.want.Denied) {
				t.Fatalf("got %+v (denied %+v), want %+v (denied %+v)", got, got.Denied, tc.want, tc.want.Denied)
			}
		})
	}
	// Without a checker on a stream that uses the plugin: herald's fault.
	got := p.DecideDestination(context.Background(), nil, "diss", user, value("A"))
	if got.Outcome != DestinationError || !got.Internal || *got.Denied != (Error{Forbidden, MsgServerMisconfigured}) || got.Cause == nil {
		t.Fatalf("no checker: %+v", got)
	}
}
