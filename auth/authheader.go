package auth

import (
	"strings"
)

// Credentials are a well-formed Authorization header.
type Credentials struct {
	// Scheme is "Bearer" or "Basic" in canonical case.
	Scheme string
	// Header is the trimmed header value; direct mode forwards it to
	// auth-o-tron verbatim.
	Header string
	// Token is the bearer token (trusted_proxy mode only).
	Token string
}

// MalformedHeaderError is an Authorization header that cannot carry
// credentials. Non-admin routes treat such a header as absent; admin
// routes answer 401 with its message.
type MalformedHeaderError struct {
	// Message is the 401 message (Aviso's wording).
	Message string
}

// Error returns the 401 message.
func (e *MalformedHeaderError) Error() string { return e.Message }

// visibleASCII reports whether s holds only visible ASCII, spaces and
// tabs: the header values Aviso's framework can read as text.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// ParseAuthorization checks an Authorization header value for the auth
// mode (Aviso's auth rules, docs/auth.md).
//
// In direct mode the value, trimmed, must be `<scheme> <credentials>`
// with scheme Bearer or Basic (any case), separated by a space, and
// non-empty credentials; the whole trimmed value is forwarded. In
// trusted_proxy mode it must be exactly two whitespace-separated words,
// `Bearer <token>`. Anything else is a *MalformedHeaderError.
func ParseAuthorization(value string, direct bool) (Credentials, error) {
	if direct {
		return parseDirect(value)
	}
	return parseBearer(value)
}

func parseDirect(value string) (Credentials, error) {
	if !visibleASCII(value) {
		return Credentials{}, &MalformedHeaderError{"Authorization header is not valid UTF-8"}
	}
	v := strings.TrimSpace(value)
	if v == "" {
		return Credentials{}, &MalformedHeaderError{"Authorization header cannot be empty"}
	}
	scheme, creds, ok := strings.Cut(v, " ")
	var canonical string
	switch {
	case !ok:
	case strings.EqualFold(scheme, "Bearer"):
		canonical = "Bearer"
	case strings.EqualFold(scheme, "Basic"):
		canonical = "Basic"
	}
	if canonical == "" {
		return Credentials{}, &MalformedHeaderError{"Authorization header must use Bearer or Basic scheme"}
	}
	creds = strings.TrimSpace(creds)
	if creds == "" {
		return Credentials{}, &MalformedHeaderError{"Authorization header credentials cannot be empty"}
	}
	c := Credentials{Scheme: canonical, Header: v}
	if canonical == "Bearer" {
		c.Token = creds
	}
	return c, nil
}

func parseBearer(value string) (Credentials, error) {
	bad := &MalformedHeaderError{"Authorization header must use Bearer token"}
	if !visibleASCII(value) {
		return Credentials{}, bad
	}
	parts := strings.Fields(value)
	if len(parts) != 2 || !strings.EqualFold(parts[0], "Bearer") {
		return Credentials{}, bad
	}
	return Credentials{Scheme: "Bearer", Header: strings.TrimSpace(value), Token: parts[1]}, nil
}
