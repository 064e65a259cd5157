package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/golang-jwt/jwt/v5"
)

// JWTLeeway is the clock skew allowed on exp, as in Aviso, and on nbf
// and iat: TokenLeeway, the rule a WebSocket session's expiry
// applies as well.
const JWTLeeway = TokenLeeway

// Errors of token verification.
var (
	// ErrInvalidToken: bad signature, refused algorithm, expired, no exp,
	// malformed token or claims (401 "Invalid or expired token").
	ErrInvalidToken = errors.New("invalid or expired token")
	// ErrMissingUserClaims: neither username nor sub (401 "Token is
	// missing required user claims").
	ErrMissingUserClaims = errors.New("token has neither a username nor a sub claim")
)

// VerifierOptions configure token verification.
type VerifierOptions struct {
	// Secret is auth.jwt_secret: HS256 tokens are verified with it. Empty
	// refuses HS256.
	Secret string
	// JWKSFile is auth.jwks_file: RS256 and ES256 tokens are verified with
	// its keys. Empty refuses RS256 and ES256.
	JWKSFile string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives JWKS reload messages; nil discards them.
	Logger *slog.Logger
}

// Verifier checks JWTs locally: signature with an algorithm pinned to its key
// type, exp required with 60 s leeway, audience not checked (Aviso's auth
// rules, docs/auth.md); and, beyond Aviso, the standards' rules the JWT
// library leaves open (see checkTokenJSON): strict JSON without repeated
// member names, no crit header, NumericDates that are JSON numbers, no iat in
// the future, claim names matched exactly. Create it with NewVerifier; it is
// safe for concurrent use.
type Verifier struct {
	secret []byte
	jwks   *jwksFile
	parser *jwt.Parser
}

// NewVerifier returns a verifier; it fails when neither a secret nor a
// JWKS file is given, or when the JWKS file does not load.
func NewVerifier(opts VerifierOptions) (*Verifier, error) {
	v := &Verifier{}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var methods []string
	if opts.Secret != "" {
		v.secret = []byte(opts.Secret)
		methods = append(methods, AlgHS256)
	}
	if opts.JWKSFile != "" {
		f, err := loadJWKSFile(opts.JWKSFile, log)
		if err != nil {
			return nil, err
		}
		v.jwks = f
		methods = append(methods, AlgRS256, AlgES256)
	}
	if len(methods) == 0 {
		return nil, errors.New("auth: set auth.jwt_secret or auth.jwks_file to verify tokens")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(JWTLeeway),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(now),
	)
	return v, nil
}

// tokenClaims are the claims herald reads (Aviso's auth rules, docs/auth.md).
type tokenClaims struct {
	jwt.RegisteredClaims
	Username   *string           `json:"username"`
	Realm      *string           `json:"realm"`
	Roles      []string          `json:"roles"`
	Attributes map[string]string `json:"attributes"`
}

// UnmarshalJSON reads the claims with go-json-experiment/json instead of
// encoding/json, which the JWT library would use: claim names match
// exactly (RFC 7519 §4; encoding/json would also take "REALM" or
// "role\u017f" for realm and roles, last one winning), a repeated name
// or invalid UTF-8 is an error.
func (c *tokenClaims) UnmarshalJSON(b []byte) error {
	type plain tokenClaims // no UnmarshalJSON method: no recursion
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return fmt.Errorf("token claims: %w", err)
	}
	return nil
}

// key selects the verification key for a token: the secret for HS256,
// the JWKS keys of the token's algorithm (and kid, when the token names
// one) for RS256 and ES256.
func (v *Verifier) key(t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	switch alg {
	case AlgHS256:
		if v.secret == nil {
			return nil, errors.New("HS256 tokens are not accepted")
		}
		return v.secret, nil
	case AlgRS256, AlgES256:
		if v.jwks == nil {
			return nil, fmt.Errorf("%s tokens are not accepted", alg)
		}
		kid, _ := t.Header["kid"].(string)
		keys := v.jwks.keysFor(alg, kid)
		switch len(keys) {
		case 0:
			return nil, fmt.Errorf("no %s key with kid %q", alg, kid)
		case 1:
			return keys[0], nil
		}
		set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(keys))}
		for i, k := range keys {
			set.Keys[i] = k
		}
		return set, nil
	}
	return nil, fmt.Errorf("algorithm %q is not accepted", alg)
}

// Verify checks a token and returns its user. Errors wrap
// ErrInvalidToken or ErrMissingUserClaims; a token refused by one of
// herald's own rules also wraps a *TokenRuleError naming the rule.
func (v *Verifier) Verify(token string) (*Identity, error) {
	if err := checkTokenJSON(token); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	var c tokenClaims
	if _, err := v.parser.ParseWithClaims(token, &c, v.key); err != nil {
		if errors.Is(err, jwt.ErrTokenUsedBeforeIssued) {
			err = &TokenRuleError{Message: MsgTokenIatInFuture, cause: err}
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	id := &Identity{Roles: c.Roles, Attributes: c.Attributes}
	switch {
	case c.Username != nil && *c.Username != "":
		id.Username = *c.Username
	case c.Subject != "":
		id.Username = c.Subject
	default:
		return nil, ErrMissingUserClaims
	}
	if c.Realm != nil {
		id.Realm = *c.Realm
	}
	if c.ExpiresAt != nil {
		id.Expires = c.ExpiresAt.Time
	}
	return id, nil
}
