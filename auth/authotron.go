package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Answers of auth-o-tron other than a JWT.
var (
	// ErrUpstreamUnauthorized: auth-o-tron answered 401 (→ 401).
	ErrUpstreamUnauthorized = errors.New("auth-o-tron rejected the credentials (401)")
	// ErrUpstreamForbidden: auth-o-tron answered 403 (→ 403).
	ErrUpstreamForbidden = errors.New("auth-o-tron denied the credentials (403)")
	// ErrUpstreamUnavailable: any other status, a transport error, a
	// timeout or a 2xx answer without a JWT (→ 503).
	ErrUpstreamUnavailable = errors.New("auth-o-tron unavailable")
)

// maxAuthOTronBody bounds the response body read from auth-o-tron.
const maxAuthOTronBody = 64 << 10

// AuthOTron is the client of auth-o-tron's `GET /authenticate`
// (Aviso's auth rules, docs/auth.md, mode direct).
type AuthOTron struct {
	url     string
	client  *http.Client
	timeout time.Duration
}

// NewAuthOTron returns a client for the auth-o-tron at baseURL with a
// per-call timeout. client nil means a client that follows no redirects
// (a redirect would replay the user's credentials elsewhere).
func NewAuthOTron(baseURL string, timeout time.Duration, client *http.Client) *AuthOTron {
	if client == nil {
		client = &http.Client{
			Transport:     http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &AuthOTron{url: strings.TrimRight(baseURL, "/") + "/authenticate", client: client, timeout: timeout}
}

// Authenticate forwards an Authorization header value to auth-o-tron and
// returns the JWT of its answer. Errors wrap ErrUpstreamUnauthorized,
// ErrUpstreamForbidden or ErrUpstreamUnavailable; their text never holds
// the credentials.
func (a *AuthOTron) Authenticate(ctx context.Context, authorization string) (string, error) {
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUpstreamUnavailable, err)
	}
	req.Header.Set("Authorization", authorization)
	resp, err := a.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("%w: %v", ErrUpstreamUnavailable, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return "", ErrUpstreamUnauthorized
	case resp.StatusCode == http.StatusForbidden:
		return "", ErrUpstreamForbidden
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "", fmt.Errorf("%w: status %d", ErrUpstreamUnavailable, resp.StatusCode)
	}
	if t, ok := jwtFromAuthorization(resp.Header.Get("Authorization")); ok {
		return t, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAuthOTronBody))
	if err != nil {
		return "", fmt.Errorf("%w: reading the answer: %v", ErrUpstreamUnavailable, err)
	}
	if t, ok := ExtractJWT(resp.Header, body); ok {
		return t, nil
	}
	return "", fmt.Errorf("%w: the answer holds no JWT", ErrUpstreamUnavailable)
}

// ExtractJWT finds the JWT in a 2xx answer of auth-o-tron, in Aviso's
// order: the response `Authorization: Bearer <jwt>` header; else a JSON
// object body's first present member of `token`, `jwt`, `access_token`
// (trimmed); else a JSON string body; else the raw body, trimmed. A
// candidate counts only if it looks like a JWT (three non-empty base64url
// segments); the signature is verified later.
func ExtractJWT(h http.Header, body []byte) (string, bool) {
	if t, ok := jwtFromAuthorization(h.Get("Authorization")); ok {
		return t, true
	}
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return "", false
	}
	var obj struct {
		Token       *string `json:"token"`
		JWT         *string `json:"jwt"`
		AccessToken *string `json:"access_token"`
	}
	if json.Unmarshal([]byte(trimmed), &obj) == nil {
		var first *string
		for _, c := range []*string{obj.Token, obj.JWT, obj.AccessToken} {
			if c != nil {
				first = c
				break
			}
		}
		if first != nil {
			if t := strings.TrimSpace(*first); jwtLike(t) {
				return t, true
			}
		}
	}
	var s string
	if json.Unmarshal([]byte(trimmed), &s) == nil {
		if t := strings.TrimSpace(s); jwtLike(t) {
			return t, true
		}
	}
	if jwtLike(trimmed) {
		return trimmed, true
	}
	return "", false
}

// jwtFromAuthorization returns the token of a `Bearer <jwt>` value.
func jwtFromAuthorization(v string) (string, bool) {
	parts := strings.Fields(v)
	if len(parts) != 2 || !strings.EqualFold(parts[0], "Bearer") || !jwtLike(parts[1]) {
		return "", false
	}
	return parts[1], true
}

// jwtLike reports whether s has the shape of a compact JWS: three
// non-empty segments of base64url characters separated by dots.
func jwtLike(s string) bool {
	segs := 0
	n := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if n == 0 {
				return false
			}
			segs++
			n = 0
			continue
		}
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
		n++
	}
	return segs == 3
}
