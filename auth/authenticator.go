package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
)

// Authentication modes (auth.mode).
const (
	// ModeDirect forwards the Authorization header to auth-o-tron.
	ModeDirect = "direct"
	// ModeTrustedProxy verifies a Bearer JWT set by a trusted proxy.
	ModeTrustedProxy = "trusted_proxy"
)

// Config is the authentication setting (the `auth` block).
type Config struct {
	// Enabled turns authentication on; off, everything is public.
	Enabled bool
	// Mode is ModeDirect or ModeTrustedProxy.
	Mode string
	// AuthOTronURL is auth-o-tron's base URL (mode direct).
	AuthOTronURL string
	// JWTSecret verifies HS256 tokens; JWKSFile names a JWKS document of
	// public keys for asymmetric tokens.
	JWTSecret, JWKSFile string
	// AdminRoles are the admin roles per realm.
	AdminRoles map[string][]string
	// Timeout bounds each auth-o-tron call.
	Timeout time.Duration
}

// Options configure authentication.
type Options struct {
	// Config is the validated authentication setting.
	Config Config
	// HTTPClient calls auth-o-tron (mode direct); nil means a client that
	// follows no redirects. auth.timeout_ms bounds every call either way.
	HTTPClient *http.Client
	// Now returns the current time (token expiry); nil means time.Now.
	Now func() time.Time
	// Logger receives denials and upstream failures, never credentials;
	// nil discards them.
	Logger *slog.Logger
	// Observer is told each authentication attempt (metrics); nil
	// records nothing.
	Observer Observer
}

// Authentication outcomes, as the metrics label them (Aviso's
// aviso_auth_requests_total).
const (
	OutcomeSuccess            = "success"
	OutcomeUnauthorized       = "unauthorized"
	OutcomeForbidden          = "forbidden"
	OutcomeServiceUnavailable = "service_unavailable"
)

// Observer is told the outcome of each authentication attempt: a
// request that presented credentials (or an admin request without), and
// a WebSocket session's auth frame. A request without credentials on a
// stream route is no attempt; nor is a 400 for a repeated header.
type Observer interface {
	AuthAttempt(mode, outcome string)
}

// noAuthObserver records nothing.
type noAuthObserver struct{}

func (noAuthObserver) AuthAttempt(string, string) {}

// outcomeOf labels a failure's status.
func outcomeOf(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return OutcomeUnauthorized
	case http.StatusForbidden:
		return OutcomeForbidden
	case http.StatusServiceUnavailable:
		return OutcomeServiceUnavailable
	}
	return ""
}

// Authenticator turns the Authorization header into a Identity (Aviso's auth
// rules, docs/auth.md): in mode trusted_proxy by verifying a Bearer JWT
// locally, in mode direct by asking auth-o-tron for a JWT and verifying that.
// Create it with NewAuthenticator.
type Authenticator struct {
	policy   Policy
	mode     string
	verifier *Verifier
	tron     *AuthOTron
	log      *slog.Logger
	obs      Observer
}

// NewAuthenticator returns the authenticator of an `auth` block. With
// auth disabled it lets every request through unauthenticated; otherwise
// it fails when the block cannot verify tokens (no secret and no JWKS
// file, or a JWKS file that does not load).
func NewAuthenticator(opts Options) (*Authenticator, error) {
	c := opts.Config
	policy := Policy{Enabled: c.Enabled, Direct: c.Mode == ModeDirect, Admins: RoleMap(c.AdminRoles)}
	a := &Authenticator{policy: policy, mode: c.Mode, log: opts.Logger, obs: opts.Observer}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.obs == nil {
		a.obs = noAuthObserver{}
	}
	if !c.Enabled {
		return a, nil
	}
	v, err := NewVerifier(VerifierOptions{Secret: c.JWTSecret, JWKSFile: c.JWKSFile, Now: opts.Now, Logger: a.log})
	if err != nil {
		return nil, err
	}
	a.verifier = v
	if a.policy.Direct {
		if c.AuthOTronURL == "" {
			return nil, errors.New("auth: mode direct needs auth.auth_o_tron_url")
		}
		a.tron = NewAuthOTron(c.AuthOTronURL, c.Timeout, opts.HTTPClient)
	}
	return a, nil
}

// Policy is the authorisation policy the handlers apply per stream.
func (a *Authenticator) Policy() Policy { return a.policy }

// MsgDuplicateAuthorization is the message of the 400 answer to a request
// with more than one Authorization header: a proxy in front of herald may
// have checked another one than herald would read.
const MsgDuplicateAuthorization = "Authorization header must appear only once"

// failure is an authentication answer other than success.
type failure struct {
	status int
	msg    string
	reason string // for the log
}

// write answers the failure.
func (a *Authenticator) write(w http.ResponseWriter, r *http.Request, f *failure, username string) {
	a.log.Warn("request denied by authentication", "request_id", httperr.RequestID(r.Context()),
		"mode", a.mode, "status", f.status, "reason", f.reason, "username", username, "path", r.URL.Path)
	if o := outcomeOf(f.status); o != "" {
		a.obs.AuthAttempt(a.mode, o)
	}
	switch f.status {
	case http.StatusBadRequest:
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.AuthErrorBody{
			Code: "INVALID_AUTHORIZATION_HEADER", Error: "bad_request", Message: f.msg,
			RequestID: httperr.RequestID(r.Context()),
		})
	case http.StatusUnauthorized:
		WriteUnauthorized(w, r, a.policy.Direct, f.msg)
	case http.StatusForbidden:
		WriteForbidden(w, r, f.msg)
	default:
		WriteUnavailable(w, r, f.msg)
	}
}

// resolve authenticates the request. It returns nil and no failure for a
// request without usable credentials on a non-admin route (a malformed
// header counts as none there); a well-formed header is always verified.
// More than one Authorization header is a 400 on every route.
func (a *Authenticator) resolve(r *http.Request, admin bool) (*Identity, *failure) {
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return nil, nil
	case len(values) > 1:
		return nil, &failure{http.StatusBadRequest, MsgDuplicateAuthorization, "more than one authorization header"}
	}
	return a.check(r.Context(), values[0], admin)
}

// Authenticate verifies one Authorization header value (a WebSocket
// session's auth frame carries it instead of the upgrade request): the
// identity, or the refusal with its kind. With authentication disabled
// it returns nil, nil.
func (a *Authenticator) Authenticate(ctx context.Context, authorization string) (*Identity, *Error) {
	if !a.policy.Enabled {
		return nil, nil
	}
	id, f := a.check(ctx, authorization, true)
	if f != nil {
		a.log.Warn("session denied by authentication", "mode", a.mode, "status", f.status, "reason", f.reason)
		if o := outcomeOf(f.status); o != "" {
			a.obs.AuthAttempt(a.mode, o)
		}
		return nil, &Error{Kind: kindOf(f.status), Message: f.msg}
	}
	a.obs.AuthAttempt(a.mode, OutcomeSuccess)
	return id, nil
}

// kindOf maps a failure's status to its refusal kind.
func kindOf(status int) DenyKind {
	switch status {
	case http.StatusUnauthorized:
		return Unauthenticated
	case http.StatusForbidden:
		return Forbidden
	case http.StatusServiceUnavailable:
		return Unavailable
	}
	return BadCredentials
}

// check verifies one Authorization header value; strict makes a malformed
// value a 401 instead of no credentials.
func (a *Authenticator) check(ctx context.Context, value string, strict bool) (*Identity, *failure) {
	creds, err := ParseAuthorization(value, a.policy.Direct)
	if err != nil {
		if strict {
			return nil, &failure{http.StatusUnauthorized, err.Error(), "malformed authorization header"}
		}
		return nil, nil
	}
	token := creds.Token
	if a.policy.Direct {
		token, err = a.tron.Authenticate(ctx, creds.Header)
		switch {
		case errors.Is(err, ErrUpstreamUnauthorized):
			return nil, &failure{http.StatusUnauthorized, MsgInvalidToken, "auth-o-tron answered 401"}
		case errors.Is(err, ErrUpstreamForbidden):
			return nil, &failure{http.StatusForbidden, MsgTokenDenied, "auth-o-tron answered 403"}
		case err != nil:
			a.log.Warn("auth-o-tron validation failed; authentication service unavailable",
				"request_id", httperr.RequestID(ctx), "error", err.Error())
			return nil, &failure{http.StatusServiceUnavailable, MsgAuthUnavailable, "auth-o-tron unavailable"}
		}
	}
	id, err := a.verifier.Verify(token)
	var rule *TokenRuleError
	switch {
	case errors.Is(err, ErrMissingUserClaims):
		return nil, &failure{http.StatusUnauthorized, MsgMissingUserClaims, err.Error()}
	case errors.As(err, &rule):
		return nil, &failure{http.StatusUnauthorized, rule.Message, err.Error()}
	case err != nil:
		return nil, &failure{http.StatusUnauthorized, MsgInvalidToken, err.Error()}
	}
	return id, nil
}

// Streams authenticates notify, watch and replay requests: the identity,
// if any, goes into the request context; the handlers decide per stream
// whether it is required. A bad token is a 401 even on a public stream.
func (a *Authenticator) Streams(next http.Handler) http.Handler {
	if !a.policy.Enabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, f := a.resolve(r, false)
		if f != nil {
			a.write(w, r, f, "")
			return
		}
		if id != nil {
			a.obs.AuthAttempt(a.mode, OutcomeSuccess)
			r = r.WithContext(WithIdentity(r.Context(), id))
		}
		next.ServeHTTP(w, r)
	})
}

// Admin guards the admin endpoints: credentials are required (401) and
// must belong to an admin role (403).
func (a *Authenticator) Admin(next http.Handler) http.Handler {
	if !a.policy.Enabled {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, f := a.resolve(r, true)
		switch {
		case f != nil:
			a.write(w, r, f, "")
			return
		case id == nil:
			a.write(w, r, &failure{http.StatusUnauthorized, MsgHeaderRequired, "no credentials"}, "")
			return
		case !a.policy.IsAdmin(id):
			a.write(w, r, &failure{http.StatusForbidden, MsgNoAdminRole, "not an admin"}, id.Username)
			return
		}
		a.obs.AuthAttempt(a.mode, OutcomeSuccess)
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
	})
}
