package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/auth"
)

// fakeTron is a fake auth-o-tron: each credential selects an answer.
type fakeTron struct {
	ts      *httptest.Server
	mu      sync.Mutex
	seen    []string // Authorization headers received
	answers map[string]func(w http.ResponseWriter, r *http.Request)
}

func newFakeTron(t *testing.T) *fakeTron {
	t.Helper()
	f := &fakeTron{answers: map[string]func(http.ResponseWriter, *http.Request){}}
	f.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/authenticate" || r.URL.RawQuery != "" {
			http.Error(w, "wrong request "+r.Method+" "+r.URL.String(), http.StatusTeapot)
			return
		}
		auth := r.Header.Get("Authorization")
		f.mu.Lock()
		f.seen = append(f.seen, auth)
		answer := f.answers[auth]
		f.mu.Unlock()
		if answer == nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		answer(w, r)
	}))
	t.Cleanup(f.ts.Close)
	return f
}

func (f *fakeTron) lastSeen() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		return ""
	}
	return f.seen[len(f.seen)-1]
}

// body answers 200 with a body.
func body(b string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(b)) }
}

// status answers with a status.
func status(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// TestDirectMode runs herald in direct mode against a fake auth-o-tron
// returning each documented answer.
func TestDirectMode(t *testing.T) {
	tron := newFakeTron(t)
	reader := hs256(t, user("rita", "ecmwf", "reader"))
	admin := hs256(t, user("ada", "ecmwf", "admin"))
	expired := user("rita", "ecmwf", "reader")
	expired["exp"] = t0.Add(-time.Hour).Unix()
	expiredTok := hs256(t, expired)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tron.answers = map[string]func(http.ResponseWriter, *http.Request){
		"Bearer header": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Authorization", "Bearer "+reader)
		},
		"Bearer header-not-jwt": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Authorization", "Bearer nope")
			_, _ = w.Write([]byte(`{"token":"` + reader + `"}`))
		},
		"Bearer token":        body(`{"token":"` + reader + `"}`),
		"Bearer jwt":          body(`{"jwt":" ` + reader + ` "}`),
		"Bearer access":       body(`{"access_token":"` + reader + `","expires_in":300}`),
		"Bearer string":       body(`"` + reader + `"`),
		"Bearer raw":          body("\n" + reader + "\n"),
		"Bearer first-wins":   body(`{"token":"not-a-jwt","jwt":"` + reader + `"}`),
		"Bearer null-skipped": body(`{"token":null,"access_token":"` + reader + `"}`),
		"Bearer empty":        body(`{}`),
		"Bearer nothing":      status(http.StatusOK),
		"Bearer expired":      body(`{"token":"` + expiredTok + `"}`),
		"Bearer forged":       body(`{"token":"` + reader[:len(reader)-2] + `xx"}`),
		"Bearer unauthorized": status(http.StatusUnauthorized),
		"Bearer forbidden":    status(http.StatusForbidden),
		"Bearer error":        status(http.StatusInternalServerError),
		"Bearer bad-gateway":  status(http.StatusBadGateway),
		"Bearer not-found":    status(http.StatusNotFound),
		"Bearer redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/authenticate?again", http.StatusFound)
		},
		"Basic dXNlcjpwYXNz":   body(`{"token":"` + reader + `"}`),
		"Basic YWRhOnNlY3JldA": body(`{"token":"` + admin + `"}`),
		"Bearer slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		},
	}
	yaml := strings.Replace(matrixConfig("direct", tron.ts.URL+"/"), "timeout_ms: 2000", "timeout_ms: 200", 1)
	s := start(t, setup{yaml: yaml})
	unavailable := auth.MsgAuthUnavailable
	tests := []struct {
		header string
		status int
		msg    string
	}{
		{"Bearer header", 200, ""},
		{"Bearer header-not-jwt", 200, ""}, // falls back to the body
		{"Bearer token", 200, ""},
		{"Bearer jwt", 200, ""},
		{"Bearer access", 200, ""},
		{"Bearer string", 200, ""},
		{"Bearer raw", 200, ""},
		{"Bearer first-wins", 503, unavailable},
		{"Bearer null-skipped", 200, ""},
		{"bearer token", 401, auth.MsgInvalidToken}, // forwarded verbatim: the fake knows no lowercase scheme
		{"Bearer empty", 503, unavailable},
		{"Bearer nothing", 503, unavailable},
		{"Bearer expired", 401, auth.MsgInvalidToken},
		{"Bearer forged", 401, auth.MsgInvalidToken},
		{"Bearer unauthorized", 401, auth.MsgInvalidToken},
		{"Bearer forbidden", 403, auth.MsgTokenDenied},
		{"Bearer error", 503, unavailable},
		{"Bearer bad-gateway", 503, unavailable},
		{"Bearer not-found", 503, unavailable},
		{"Bearer redirect", 503, unavailable},
		{"Bearer slow", 503, unavailable},
		{"Basic dXNlcjpwYXNz", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.header, func(t *testing.T) {
			r := s.call(t, http.MethodPost, "/api/v1/watch", `{"event_type":"readers","identifier":{}}`, authHeader(tc.header))
			if got := tron.lastSeen(); got != tc.header {
				t.Fatalf("auth-o-tron received %q, want the header verbatim %q", got, tc.header)
			}
			switch tc.status {
			case 200:
				if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
					t.Fatalf("got %d %s", r.Status, r.Raw)
				}
			case 401:
				wantAuthError(t, r, 401, "UNAUTHORIZED", "unauthorized", tc.msg, []string{"Bearer", "Basic"})
			case 403:
				wantAuthError(t, r, 403, "FORBIDDEN", "forbidden", tc.msg, nil)
			case 503:
				wantAuthError(t, r, 503, "SERVICE_UNAVAILABLE", "service_unavailable", tc.msg, nil)
				if r.Header.Get("Retry-After") != "5" {
					t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
				}
			}
		})
	}

	// Admin credentials through auth-o-tron reach the admin endpoints;
	// a reader's do not.
	if r := s.call(t, http.MethodDelete, "/api/v1/admin/wipe/all", "", authHeader("Basic YWRhOnNlY3JldA")); r.Status != 200 || r.Body["success"] != true {
		t.Fatalf("admin via Basic: %d %s", r.Status, r.Raw)
	}
	wantAuthError(t, s.call(t, http.MethodDelete, "/api/v1/admin/wipe/all", "", authHeader("Basic dXNlcjpwYXNz")),
		403, "FORBIDDEN", "forbidden", auth.MsgNoAdminRole, nil)
	// A well-formed header on a public stream is verified too.
	wantAuthError(t, s.call(t, http.MethodPost, "/api/v1/watch", `{"event_type":"public","identifier":{}}`, authHeader("Bearer error")),
		503, "SERVICE_UNAVAILABLE", "service_unavailable", unavailable, nil)
}

// TestDirectModeUnreachable: auth-o-tron not listening is a 503 on
// streams and admin routes alike, but never on a request without
// credentials to a public stream.
func TestDirectModeUnreachable(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("direct", closedURL(t))})
	reader := bearer(hs256(t, user("rita", "ecmwf", "reader")))
	for _, rq := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/v1/watch", `{"event_type":"public","identifier":{}}`},
		{http.MethodPost, "/api/v1/notification", `{"event_type":"any","identifier":{"k":"v"}}`},
		{http.MethodDelete, "/api/v1/admin/wipe/all", ""},
	} {
		r := s.call(t, rq.method, rq.path, rq.body, reader)
		wantAuthError(t, r, 503, "SERVICE_UNAVAILABLE", "service_unavailable", auth.MsgAuthUnavailable, nil)
		if r.Header.Get("Retry-After") != "5" {
			t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
		}
	}
	if r := s.call(t, http.MethodPost, "/api/v1/notification", `{"event_type":"public","identifier":{"k":"v"}}`, nil); r.Status != 200 {
		t.Fatalf("anonymous public notify: %d %s", r.Status, r.Raw)
	}
}
