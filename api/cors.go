package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"herald/configs"
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

// NewCORS returns the policy of an `application.cors` block, or nil when
// the block is absent.
func NewCORS(c *configs.CORS) *CORS {
	if c == nil {
		return nil
	}
	p := &CORS{
		anyOrigin: slices.Contains(c.AllowedOrigins, "*"),
		origins:   append([]string(nil), c.AllowedOrigins...),
		headers:   strings.Join(c.AllowedHeaders, ", "),
	}
	if c.MaxAgeSec > 0 {
		p.maxAge = strconv.Itoa(c.MaxAgeSec)
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
