package auth

import (
	"context"
	"slices"
	"time"
)

// Identity is an authenticated user, taken from the claims of a verified
// JWT. The Authenticator puts it into the request context with
// WithIdentity; the handlers read it to authorise stream access.
type Identity struct {
	// Username is the `username` claim, else `sub`.
	Username string
	// Realm is the `realm` claim; empty when absent.
	Realm string
	// Roles is the `roles` claim.
	Roles []string
	// Attributes is the `attributes` claim.
	Attributes map[string]string
	// Expires is the token's `exp`; zero when the credentials do not
	// expire. They are accepted until ValidUntil, TokenLeeway later.
	Expires time.Time
}

// TokenLeeway is the clock skew allowed on a token's exp (and on nbf and
// iat), as in Aviso: credentials are accepted until exp + TokenLeeway.
// It is the one expiry rule: a request's token verification and a
// WebSocket session's expiry of its credentials both apply it.
const TokenLeeway = 60 * time.Second

// ValidUntil is when the credentials stop being accepted: Expires plus
// TokenLeeway (zero when they do not expire). A WebSocket session ends
// the subscriptions that need them then.
func (id *Identity) ValidUntil() time.Time {
	if id.Expires.IsZero() {
		return time.Time{}
	}
	return id.Expires.Add(TokenLeeway)
}

type identityKey struct{}

// WithIdentity returns ctx carrying the authenticated user.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the authenticated user of ctx, or nil for an
// anonymous request.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// RoleWildcard in a realm's role list admits every user of the realm.
const RoleWildcard = "*"

// RoleMap is a realm-scoped role map (realm → roles), as in
// `auth.admin_roles` and a stream's `read_roles` / `write_roles`.
type RoleMap map[string][]string

// Admits reports whether id passes the map (Aviso's auth rules, docs/auth.md):
// an empty map admits every authenticated user; otherwise the user's realm
// must be a key and the user must hold one of its roles, or the realm's list
// must contain "*". A nil identity is never admitted.
func (m RoleMap) Admits(id *Identity) bool {
	if id == nil {
		return false
	}
	if len(m) == 0 {
		return true
	}
	if id.Realm == "" {
		return false
	}
	allowed, ok := m[id.Realm]
	if !ok {
		return false
	}
	if slices.Contains(allowed, RoleWildcard) {
		return true
	}
	for _, r := range id.Roles {
		if slices.Contains(allowed, r) {
			return true
		}
	}
	return false
}
