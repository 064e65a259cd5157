package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/ecpds"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/server"
)

// t0 is the fixed "now" of every authentication test: tokens are minted
// relative to it and the verifier reads it, so no test depends on the
// wall clock.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// fixedNow returns t0.
func fixedNow() time.Time { return t0 }

// testSecret is the jwt_secret of the test configs.
const testSecret = "test-secret-0123456789"

// setup configures an in-process herald.
type setup struct {
	// yaml is the config file.
	yaml string
	// edit changes the parsed config before use.
	edit func(*configs.Config)
	// now is the verifier's clock (default fixedNow).
	now func() time.Time
	// ecpdsNow is the ECPDS cache clock (default time.Now).
	ecpdsNow func() time.Time
}

// herald is herald's HTTP surface on a loopback port, with the pieces
// tests inspect.
type herald struct {
	URL      string
	Handlers *handlers.Handlers
	Limits   *api.StreamLimiter
	ECPDS    *ecpds.Client
	Auth     *auth.Authenticator
}

// start runs herald in-process on a loopback port: the config parsed and
// validated as from a file, the in-memory engine, authentication, ECPDS,
// CORS and limits wired as main wires them.
func start(t *testing.T, s setup) *herald {
	t.Helper()
	cfg, err := configs.Parse([]byte(s.yaml), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if s.edit != nil {
		s.edit(cfg)
	}
	eng := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 100, MaxTopics: 1000})
	now := s.now
	if now == nil {
		now = fixedNow
	}
	srv, err := server.New(context.Background(), cfg, server.Options{Engine: eng, Version: "test", AuthNow: now, ECPDSNow: s.ecpdsNow})
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.CloseClientConnections()
		ts.Close()
		_ = eng.Close()
	})
	rt := srv.Runtime()
	return &herald{URL: ts.URL, Handlers: srv.Handlers(), Limits: srv.Limits(), ECPDS: rt.ECPDS, Auth: rt.Auth}
}

// reply is one answer. Event streams are not read: Body and Raw stay
// empty and the connection is closed once the headers are in.
type reply struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// call sends a request with the given body and headers.
func (s *herald) call(t *testing.T, method, path, body string, hdr http.Header) reply {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	r := reply{Status: resp.StatusCode, Header: resp.Header}
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return r
	}
	raw, _ := io.ReadAll(resp.Body)
	r.Raw = string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && method != http.MethodHead {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Fatalf("%s %s: response is not JSON: %v: %s", method, path, err, raw)
		}
	}
	return r
}

// openStream posts a watch or replay and returns the open response; the
// caller closes it with the returned function.
func (s *herald) openStream(t *testing.T, path, body string, hdr http.Header) (*http.Response, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header = hdr.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	closeFn := func() {
		once.Do(func() {
			cancel()
			resp.Body.Close()
		})
	}
	t.Cleanup(closeFn)
	return resp, closeFn
}

// bearer returns an Authorization header with a bearer token.
func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// authHeader returns an Authorization header with a raw value.
func authHeader(v string) http.Header {
	return http.Header{"Authorization": {v}}
}

// mint signs claims with method and key; kid, when set, goes into the
// header.
func mint(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("mint: %v", err)
	}
	return s
}

// user returns the claims of a user valid for an hour after t0.
func user(name, realm string, roles ...string) jwt.MapClaims {
	if roles == nil {
		roles = []string{}
	}
	return jwt.MapClaims{"username": name, "realm": realm, "roles": roles, "exp": t0.Add(time.Hour).Unix(), "iat": t0.Unix()}
}

// hs256 signs claims with the test secret.
func hs256(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	return mint(t, jwt.SigningMethodHS256, []byte(testSecret), claims, "")
}

// wantAuthError checks an authentication/authorisation error answer:
// status, exact body and, for 401, the WWW-Authenticate challenges.
func wantAuthError(t *testing.T, r reply, status int, code, errLabel, msg string, challenges []string) {
	t.Helper()
	want := map[string]any{"code": code, "error": errLabel, "message": msg, "request_id": r.Header.Get("X-Request-ID")}
	if r.Status != status || !equalJSON(r.Body, want) {
		t.Fatalf("got %d %s\nwant %d %v", r.Status, r.Raw, status, want)
	}
	if got := r.Header.Values("WWW-Authenticate"); !slices.Equal(got, challenges) {
		t.Fatalf("WWW-Authenticate %q, want %q", got, challenges)
	}
	if len(r.Header.Get("X-Request-ID")) != 36 {
		t.Fatalf("X-Request-ID %q", r.Header.Get("X-Request-ID"))
	}
}

func equalJSON(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// closedURL returns an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}
