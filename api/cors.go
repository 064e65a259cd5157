package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// corsMethods are the methods herald's API uses.
const corsMethods = "GET, POST, DELETE"

// corsExposed are the response headers a browser script may read.
const corsExposed = "X-Request-ID, WWW-Authenticate, Retry-After"

// CORS applies a configured cross-origin policy (herald's
// `application.cors`). Without the block herald keeps Aviso's behaviour,
// handled by the SSE writer: `Access-Control-Allow-Origin: *` on event
// streams and nothing else.
type CORS struct {
	anyOrigin bool
	origins   []string
	headers   string
	maxAge    string
}

// CORSConfig is a cross-origin policy (the `application.cors` block).
type CORSConfig struct {
	// AllowedOrigins are the origins allowed; "*" allows any.
	AllowedOrigins []string
	// AllowedHeaders are the request headers a preflight allows.
	AllowedHeaders []string
	// MaxAge is how long a browser may cache a preflight answer (0: not
	// said).
	MaxAge time.Duration
}

// NewCORS returns the policy of a configuration, or nil when c is nil
// (no `application.cors` block).
func NewCORS(c *CORSConfig) *CORS {
	if c == nil {
		return nil
	}
	p := &CORS{
		anyOrigin: slices.Contains(c.AllowedOrigins, "*"),
		origins:   append([]string(nil), c.AllowedOrigins...),
		headers:   strings.Join(c.AllowedHeaders, ", "),
	}
	if c.MaxAge > 0 {
		p.maxAge = strconv.Itoa(int(c.MaxAge / time.Second))
	}
	return p
}

// allowed returns the Access-Control-Allow-Origin value for a request
// origin, or "" when the origin is not allowed.
func (c *CORS) allowed(origin string) string {
	switch {
	case origin == "":
		return ""
	case c.anyOrigin:
		return "*"
	case slices.Contains(c.origins, origin):
		return origin
	}
	return ""
}

// Middleware answers preflight requests of allowed origins (204) and
// sets the CORS headers on the responses to them. Requests from other
// origins get no CORS header, so browsers refuse them.
func (c *CORS) Middleware(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if !c.anyOrigin {
			h.Add("Vary", "Origin")
		}
		allow := c.allowed(r.Header.Get("Origin"))
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !c.anyOrigin {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
			}
			if allow == "" {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			h.Set("Access-Control-Allow-Origin", allow)
			h.Set("Access-Control-Allow-Methods", corsMethods)
			if c.headers != "" {
				h.Set("Access-Control-Allow-Headers", c.headers)
			}
			if c.maxAge != "" {
				h.Set("Access-Control-Max-Age", c.maxAge)
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allow != "" {
			h.Set("Access-Control-Allow-Origin", allow)
			h.Set("Access-Control-Expose-Headers", corsExposed)
		}
		next.ServeHTTP(w, r)
	})
}
