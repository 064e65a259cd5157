package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
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

// trustedConfig is limitsConfig with a per-client limit behind the given
// trusted proxies.
func trustedConfig(perClient int, header string, proxies ...string) setup {
	return setup{yaml: matrixConfig("trusted_proxy", ""), edit: func(c *configs.Config) {
		c.WatchEndpoint.MaxStreamsPerClient = perClient
		c.Application.ClientAddressHeader = header
		c.Application.TrustedProxies = proxies
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
	testkit.WaitFor(t, 5*time.Second, "the closed stream to be released", func() bool { n, _ := s.Limits.Open("rita", ""); return n == 1 })
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
		testkit.WaitFor(t, 5*time.Second, "the failed request to be released", func() bool { _, n := s.Limits.Open("", "127.0.0.1"); return n == 0 })
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, nil); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		msg := "client address 127.0.0.1 already has 1 open streams, the limit; close one or retry later"
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, bearer(hs256(t, user("rita", "ecmwf")))), msg)
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", `{`, nil), msg)
	})
	xff := func(v ...string) http.Header { return http.Header{"X-Forwarded-For": v} }
	t.Run("header without trusted proxies", func(t *testing.T) {
		// The header is ignored: every request counts under the peer.
		s := start(t, limitsConfig(0, 1, "x-forwarded-for"))
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("203.0.113.7")); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, xff("198.51.100.1")),
			"client address 127.0.0.1 already has 1 open streams, the limit; close one or retry later")
	})
	t.Run("forwarded address", func(t *testing.T) {
		s := start(t, trustedConfig(1, "x-forwarded-for", "127.0.0.0/8", "10.0.0.0/8"))
		// The right-most address that is not a trusted proxy is the
		// client: the proxy at 10.0.0.1 forwarded for 203.0.113.7.
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("198.51.100.9, 203.0.113.7, 10.0.0.1")); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("[2001:db8::1]:4711")); resp.StatusCode != 200 {
			t.Fatalf("second client: %d", resp.StatusCode)
		}
		msg := "client address 203.0.113.7 already has 1 open streams, the limit; close one or retry later"
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/replay", `{"event_type":"public","identifier":{},"from_id":"0"}`, xff("203.0.113.7")), msg)
		// Several header lines are one list, in order.
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, xff("192.0.2.1", "203.0.113.7:80", "10.0.0.2")), msg)
		// Only trusted proxies: the left-most counts.
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("10.9.9.9, 10.0.0.1")); resp.StatusCode != 200 {
			t.Fatalf("all trusted: %d", resp.StatusCode)
		}
		// No usable header: the peer address counts.
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("not-an-ip")); resp.StatusCode != 200 {
			t.Fatalf("peer: %d", resp.StatusCode)
		}
		for addr, want := range map[string]int{"127.0.0.1": 1, "203.0.113.7": 1, "2001:db8::1": 1, "10.9.9.9": 1, "198.51.100.9": 0} {
			if u, c := s.Limits.Open("", addr); u != 0 || c != want {
				t.Fatalf("open %s: %d %d, want 0 %d", addr, u, c, want)
			}
		}
	})
	t.Run("x-real-ip", func(t *testing.T) {
		s := start(t, trustedConfig(1, "X-Real-IP", "127.0.0.1"))
		real := func(v string) http.Header { return http.Header{"X-Real-Ip": {v}} }
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, real("203.0.113.7")); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, real("203.0.113.8")); resp.StatusCode != 200 {
			t.Fatalf("second client: %d", resp.StatusCode)
		}
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, real("203.0.113.7")),
			"client address 203.0.113.7 already has 1 open streams, the limit; close one or retry later")
		// X-Forwarded-For is not the configured header: the peer counts.
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("203.0.113.7")); resp.StatusCode != 200 {
			t.Fatalf("peer: %d", resp.StatusCode)
		}
		if _, c := s.Limits.Open("", "127.0.0.1"); c != 1 {
			t.Fatalf("peer streams %d", c)
		}
	})
	t.Run("untrusted peer", func(t *testing.T) {
		// The TCP peer (127.0.0.1) is not a trusted proxy: its header,
		// whatever it says, is not believed.
		s := start(t, trustedConfig(1, "X-Forwarded-For", "10.0.0.0/8"))
		if resp, _ := s.openStream(t, "/api/v1/watch", watch, xff("203.0.113.7, 10.0.0.1")); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, xff("203.0.113.8, 10.0.0.1")),
			"client address 127.0.0.1 already has 1 open streams, the limit; close one or retry later")
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

// TestForgedForwardedFor is a spoofing regression: behind
// a trusted proxy, a client that writes its own first X-Forwarded-For
// entries stays one client. Three watches whose forged first entries
// differ, under a limit of 1: only the first is admitted. After the
// limits are reconfigured (a reload) the same rule holds with the new
// limit, and the streams already open stay counted.
func TestForgedForwardedFor(t *testing.T) {
	s := start(t, trustedConfig(1, "X-Forwarded-For", "127.0.0.1/32"))
	watch := `{"event_type":"public","identifier":{}}`
	forged := func(first string) http.Header {
		return http.Header{"X-Forwarded-For": {first + ", 203.0.113.7"}}
	}
	msg := func(n int) string {
		return fmt.Sprintf("client address 203.0.113.7 already has %d open streams, the limit; close one or retry later", n)
	}
	if resp, _ := s.openStream(t, "/api/v1/watch", watch, forged("198.51.100.1")); resp.StatusCode != 200 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, forged("198.51.100.2")), msg(1))
	wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, forged("198.51.100.3")), msg(1))
	if _, c := s.Limits.Open("", "203.0.113.7"); c != 1 {
		t.Fatalf("open streams of 203.0.113.7: %d", c)
	}

	s.Limits.Configure(api.StreamLimitOptions{PerClient: 2, AddressHeader: "x-forwarded-for",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if resp, _ := s.openStream(t, "/api/v1/watch", watch, forged("198.51.100.4")); resp.StatusCode != 200 {
		t.Fatalf("after reload: %d", resp.StatusCode)
	}
	wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, forged("198.51.100.5")), msg(2))

	// A reload that drops the trusted proxies ignores the header: the
	// peer counts, and 203.0.113.7's streams stay counted under it.
	s.Limits.Configure(api.StreamLimitOptions{PerClient: 1, AddressHeader: "X-Forwarded-For"})
	if resp, _ := s.openStream(t, "/api/v1/watch", watch, forged("198.51.100.6")); resp.StatusCode != 200 {
		t.Fatalf("untrusted after reload: %d", resp.StatusCode)
	}
	wantTooMany(t, s.call(t, http.MethodPost, "/api/v1/watch", watch, forged("198.51.100.7")),
		"client address 127.0.0.1 already has 1 open streams, the limit; close one or retry later")
	if _, c := s.Limits.Open("", "203.0.113.7"); c != 2 {
		t.Fatalf("open streams of 203.0.113.7 after reload: %d", c)
	}
}

// TestClientAddress checks the address rule on requests alone.
func TestClientAddress(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, tc := range []struct {
		name, header, peer string
		proxies            []netip.Prefix
		values             []string
		want               string
	}{
		{"no header configured", "", "10.0.0.1:1", proxies, []string{"203.0.113.7"}, "10.0.0.1"},
		{"no trusted proxies", "X-Forwarded-For", "10.0.0.1:1", nil, []string{"203.0.113.7"}, "10.0.0.1"},
		{"untrusted peer", "X-Forwarded-For", "192.0.2.1:1", proxies, []string{"203.0.113.7"}, "192.0.2.1"},
		{"trusted peer", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"203.0.113.7"}, "203.0.113.7"},
		{"forged first entries", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"1.1.1.1, 2.2.2.2,203.0.113.7"}, "203.0.113.7"},
		{"trusted hops skipped", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"1.1.1.1, 203.0.113.7, 10.2.3.4", "10.0.0.9"}, "203.0.113.7"},
		{"all trusted", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"10.5.5.5, 10.0.0.9"}, "10.5.5.5"},
		{"garbage in the trusted part", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"203.0.113.7, unknown"}, "10.0.0.1"},
		{"garbage left of the client", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"unknown, 203.0.113.7"}, "203.0.113.7"},
		{"empty header", "X-Forwarded-For", "10.0.0.1:1", proxies, nil, "10.0.0.1"},
		{"ports and brackets", "X-Forwarded-For", "10.0.0.1:1", proxies, []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"ipv6 proxy", "X-Forwarded-For", "[2001:db8:ffff::1]:1", proxies, []string{"2001:db8::7, 2001:db8:ffff::2"}, "2001:db8::7"},
		{"mapped peer", "X-Forwarded-For", "[::ffff:10.0.0.1]:1", proxies, []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"x-real-ip", "X-Real-IP", "10.0.0.1:1", proxies, []string{"203.0.113.7"}, "203.0.113.7"},
		{"x-real-ip untrusted peer", "X-Real-IP", "192.0.2.1:1", proxies, []string{"203.0.113.7"}, "192.0.2.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := api.NewStreamLimiter(api.StreamLimitOptions{AddressHeader: tc.header, TrustedProxies: tc.proxies})
			r := httptest.NewRequest(http.MethodPost, "/api/v1/watch", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.values {
				r.Header.Add(tc.header, v)
			}
			if got := l.ClientAddress(r); got != tc.want {
				t.Fatalf("ClientAddress = %q, want %q", got, tc.want)
			}
		})
	}
}
