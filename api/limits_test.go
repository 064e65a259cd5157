package api_test

import (
	"net/http"
	"strings"
	"testing"

	"herald/configs"
)

// limitsConfig is the matrix config in trusted_proxy mode with stream
// limits.
func limitsConfig(perUser, perClient int, header string) setup {
	return setup{yaml: matrixConfig("trusted_proxy", ""), edit: func(c *configs.Config) {
		c.WatchEndpoint.MaxStreamsPerUser = perUser
		c.WatchEndpoint.MaxStreamsPerClient = perClient
		c.Application.ClientAddressHeader = header
	}}
}

func wantTooMany(t *testing.T, r reply, msg string) {
	t.Helper()
	want := map[string]any{"code": "TOO_MANY_STREAMS", "error": "too_many_requests", "message": msg, "request_id": r.Header.Get("X-Request-ID")}
	if r.Status != http.StatusTooManyRequests || !equalJSON(r.Body, want) || r.Header.Get("Retry-After") != "10" {
		t.Fatalf("got %d %s (Retry-After %q)\nwant 429 %v", r.Status, r.Raw, r.Header.Get("Retry-After"), want)
	}
}

// TestStreamLimitPerUser: a user beyond max_streams_per_user gets 429;
// other users are not affected; closing a stream frees its slot; notify
// is not a stream.
func TestStreamLimitPerUser(t *testing.T) {
	s := start(t, limitsConfig(2, 0, ""))
	rita := bearer(hs256(t, user("rita", "ecmwf", "reader")))
	walt := bearer(hs256(t, user("walt", "ecmwf", "writer")))
	watch := `{"event_type":"any","identifier":{}}`
	first, closeFirst := s.openStream(t, "/api/v1/watch", watch, rita)
	second, _ := s.openStream(t, "/api/v1/watch", watch, rita)
	if first.StatusCode != 200 || second.StatusCode != 200 {
		t.Fatalf("statuses %d %d", first.StatusCode, second.StatusCode)
	}
	msg := "user 'rita' already has 2 open streams, the limit; close one or retry later"
	wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, rita), msg)
	wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/replay", `{"event_type":"any","identifier":{},"from_id":"0"}`, rita), msg)
	if r := s.call(t, http.MethodPost, "/api/v1/watch", watch, walt); r.Status != 200 {
		t.Fatalf("other user: %d %s", r.Status, r.Raw)
	}
	if r := s.call(t, http.MethodPost, "/api/v1/notification", `{"event_type":"public","identifier":{"k":"v"}}`, rita); r.Status != 200 {
		t.Fatalf("notify: %d %s", r.Status, r.Raw)
	}
	closeFirst()
	waitFor(t, "the closed stream to be released", func() bool { n, _ := s.Limits.Open("rita", ""); return n == 1 })
	if r := s.call(t, http.MethodPost, "/api/v1/watch", watch, rita); r.Status != 200 {
		t.Fatalf("after closing one: %d %s", r.Status, r.Raw)
	}
}

// TestStreamLimitPerClient: anonymous and authenticated streams count
// against the client address; with client_address_header the proxy's
// header names the client.
func TestStreamLimitPerClient(t *testing.T) {
	watch := `{"event_type":"public","identifier":{}}`
	t.Run("peer address", func(t *testing.T) {
		s := start(t, limitsConfig(0, 1, ""))
		// A failed request holds its slot only while it is answered.
		if r := s.call(t, http.MethodPost, "/api/v1/watch", `{`, nil); r.Status != 400 {
			t.Fatalf("bad request: %d %s", r.Status, r.Raw)
		}
		waitFor(t, "the failed request to be released", func() bool { _, n := s.Limits.Open("", "127.0.0.1"); return n == 0 })
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, nil); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		msg := "client address 127.0.0.1 already has 1 open streams, the limit; close one or retry later"
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, bearer(hs256(t, user("rita", "ecmwf")))), msg)
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", `{`, nil), msg)
	})
	t.Run("forwarded address", func(t *testing.T) {
		s := start(t, limitsConfig(0, 1, "x-forwarded-for"))
		xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("203.0.113.7, 10.0.0.1")); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("2001:db8::1")); resp.StatusCode != 200 {
			t.Fatalf("second client: %d", resp.StatusCode)
		}
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/replay", `{"event_type":"public","identifier":{},"from_id":"0"}`, xff("203.0.113.7")),
			"client address 203.0.113.7 already has 1 open streams, the limit; close one or retry later")
		// No usable header: the peer address counts.
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("not-an-ip")); resp.StatusCode != 200 {
			t.Fatalf("peer: %d", resp.StatusCode)
		}
		if u, c := s.Limits.Open("", "127.0.0.1"); u != 0 || c != 1 {
			t.Fatalf("open %d %d", u, c)
		}
	})
	t.Run("unlimited", func(t *testing.T) {
		s := start(t, limitsConfig(0, 0, ""))
		for i := 0; i < 5; i++ {
			if resp, _ := s.openStream(t, "/api/v1/watch", watch, nil); resp.StatusCode != 200 {
				t.Fatalf("stream %d: %d", i, resp.StatusCode)
			}
		}
	})
}

// TestCORS checks Aviso's default (Access-Control-Allow-Origin: * on
// event streams only) and a configured policy.
func TestCORS(t *testing.T) {
	watch := `{"event_type":"public","identifier":{}}`
	notify := `{"event_type":"public","identifier":{"k":"v"}}`
	origin := func(o string) http.Header { return http.Header{"Origin": {o}} }
	t.Run("default", func(t *testing.T) {
		s := start(t, setup{yaml: matrixConfig("", "")})
		if r := s.call(t, http.MethodPost, "/api/v1/watch", watch, origin("https://app.example.org")); r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("SSE ACAO %q", r.Header.Get("Access-Control-Allow-Origin"))
		}
		r := s.call(t, http.MethodPost, "/api/v1/notification", notify, origin("https://app.example.org"))
		if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("notify: %d ACAO %q", r.Status, r.Header.Get("Access-Control-Allow-Origin"))
		}
		pre := http.Header{"Origin": {"https://app.example.org"}, "Access-Control-Request-Method": {"POST"}}
		if r := s.call(t, http.MethodOptions, "/api/v1/watch", "", pre); r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("preflight without a policy: %d", r.Status)
		}
	})
	t.Run("configured", func(t *testing.T) {
		s := start(t, setup{yaml: matrixConfig("trusted_proxy", "") + "", edit: func(c *configs.Config) {
			c.Application.CORS = &configs.CORS{AllowedOrigins: []string{"https://app.example.org"}, AllowedHeaders: []string{"Authorization", "Content-Type"}, MaxAgeSec: 600}
		}})
		pre := func(o string) http.Header {
			return http.Header{"Origin": {o}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"authorization"}}
		}
		r := s.call(t, http.MethodOptions, "/api/v1/watch", "", pre("https://app.example.org"))
		want := map[string]string{
			"Access-Control-Allow-Origin":  "https://app.example.org",
			"Access-Control-Allow-Methods": "GET, POST, DELETE",
			"Access-Control-Allow-Headers": "Authorization, Content-Type",
			"Access-Control-Max-Age":       "600",
			"Vary":                         "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
		}
		if r.Status != http.StatusNoContent {
			t.Fatalf("preflight: %d", r.Status)
		}
		for k, v := range want {
			if got := strings.Join(r.Header.Values(k), ", "); got != v {
				t.Fatalf("preflight %s = %q, want %q", k, got, v)
			}
		}
		r = s.call(t, http.MethodOptions, "/api/v1/watch", "", pre("https://evil.example.org"))
		if r.Status != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("disallowed preflight: %d %v", r.Status, r.Header)
		}
		// Actual requests: the allowed origin is echoed, on streams, JSON
		// answers and refusals alike; other origins get nothing.
		for _, tc := range []struct {
			path, body, origin, acao string
			status                   int
		}{
			{"/api/v1/watch", watch, "https://app.example.org", "https://app.example.org", 200},
			{"/api/v1/watch", watch, "https://evil.example.org", "", 200},
			{"/api/v1/watch", watch, "", "", 200},
			{"/api/v1/notification", notify, "https://app.example.org", "https://app.example.org", 200},
			{"/api/v1/watch", `{"event_type":"any","identifier":{}}`, "https://app.example.org", "https://app.example.org", 401},
		} {
			r := s.call(t, http.MethodPost, tc.path, tc.body, origin(tc.origin))
			if r.Status != tc.status || r.Header.Get("Access-Control-Allow-Origin") != tc.acao {
				t.Fatalf("%s from %q: %d ACAO %q", tc.path, tc.origin, r.Status, r.Header.Get("Access-Control-Allow-Origin"))
			}
			if tc.acao != "" && r.Header.Get("Access-Control-Expose-Headers") != "X-Request-ID, WWW-Authenticate, Retry-After" {
				t.Fatalf("expose %q", r.Header.Get("Access-Control-Expose-Headers"))
			}
			if r.Header.Get("Vary") != "Origin" {
				t.Fatalf("Vary %q", r.Header.Values("Vary"))
			}
		}
	})
	t.Run("any origin", func(t *testing.T) {
		s := start(t, setup{yaml: matrixConfig("", ""), edit: func(c *configs.Config) {
			c.Application.CORS = &configs.CORS{AllowedOrigins: []string{"*"}}
		}})
		r := s.call(t, http.MethodPost, "/api/v1/notification", notify, origin("https://x.example"))
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Vary") != "" {
			t.Fatalf("ACAO %q Vary %q", r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Vary"))
		}
		r = s.call(t, http.MethodOptions, "/api/v1/notification", "", http.Header{"Origin": {"https://x.example"}, "Access-Control-Request-Method": {"POST"}})
		if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Max-Age") != "" {
			t.Fatalf("preflight %d %v", r.Status, r.Header)
		}
	})
}
