package cli

import (
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const authSecret = "cli-test-secret"

// authConfig protects alert: reading needs a user, writing an admin.
var authConfig = strings.Replace(testConfig, "  alert:\n", "  alert:\n    auth:\n      required: true\n", 1) + `
auth:
  enabled: true
  mode: trusted_proxy
  jwt_secret: ` + authSecret + `
  admin_roles:
    ecmwf: [admin]
`

func adminToken(t *testing.T) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"username": "alice", "realm": "ecmwf", "roles": []string{"admin"}, "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(authSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestToken: --token, else $HERALD_TOKEN, goes on every request as a
// Bearer token, the session's upgrade included; without one the
// server's 401 is exit 1 with its message.
func TestToken(t *testing.T) {
	h := startHerald(t, "in_memory", authConfig)
	tok := adminToken(t)
	u := "--url=" + h.url
	r := runCLI(t, nil, nil, "notify", "alert", "region=asia", "level=1", "--payload", "1", u)
	if r.code != 1 || r.stderr != "herald notify: the server refused: 401 Unauthorized UNAUTHORIZED: Authentication is required for this stream\n" {
		t.Fatalf("no token: %+v", r)
	}
	if r := runCLI(t, nil, nil, "notify", "alert", "region=asia", "level=1", "--payload", "1", "--token", tok, u); r.code != 0 || r.stdout != "alert@1\n" {
		t.Fatalf("--token: %+v", r)
	}
	env := []string{"HERALD_TOKEN=" + tok}
	if r := runCLI(t, env, nil, "notify", "alert", "region=asia", "level=2", "--payload", "2", u); r.code != 0 || r.stdout != "alert@2\n" {
		t.Fatalf("$HERALD_TOKEN: %+v", r)
	}
	if r := runCLI(t, env, nil, "notify", "alert", "region=asia", "level=2", "--payload", "2", "--token", "not-a-jwt", u); r.code != 1 ||
		!strings.HasPrefix(r.stderr, "herald notify: the server refused: 401 Unauthorized UNAUTHORIZED: ") {
		t.Fatalf("--token wins over $HERALD_TOKEN: %+v", r)
	}
	if r := runCLI(t, nil, nil, "replay", "alert", "--from", "0", u); r.code != 1 ||
		r.stderr != "herald replay: the server refused: 401 Unauthorized UNAUTHORIZED: Authentication is required for this stream\n" {
		t.Fatalf("replay without a token: %+v", r)
	}
	if r := runCLI(t, env, nil, "replay", "alert", "--from", "0", "--output", "json", u); r.code != 0 || lines(r.stdout) != 2 {
		t.Fatalf("replay with the token: %+v", r)
	}
	r = runCLI(t, env, strings.NewReader("CREATE SUBSCRIPTION a TO alert\n"), "session", u)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "\nsubscribed a (generation 1) to alert.*.*, boundary alert@2\n") {
		t.Fatalf("session with the token: %+v", r)
	}
	r = runCLI(t, nil, strings.NewReader("CREATE SUBSCRIPTION a TO alert\n"), "session", u)
	if r.code != 1 || !strings.HasSuffix(r.stdout, "\nerror UNAUTHORIZED: Authentication is required for this stream\n") {
		t.Fatalf("session without a token: %+v", r)
	}
}

// TestInsecure: herald behind a TLS proxy with a self-signed
// certificate cannot be reached (exit 3) unless --insecure says so.
func TestInsecure(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig)
	target, _ := url.Parse(h.url)
	ts := httptest.NewUnstartedServer(&httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		FlushInterval: -1,
	})
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	ts.StartTLS()
	t.Cleanup(ts.Close)
	r := runCLI(t, nil, nil, "schema", "alert", "--url", ts.URL)
	if r.code != 3 || r.stderr != "herald schema: cannot connect to "+ts.URL+"/api/v1/schema/alert: tls: failed to verify certificate: x509: certificate signed by unknown authority\n" {
		t.Fatalf("without --insecure: %+v", r)
	}
	if r := runCLI(t, nil, nil, "notify", "alert", "region=asia", "level=1", "--payload", "1", "--insecure", "--url", ts.URL); r.code != 0 || r.stdout != "alert@1\n" {
		t.Fatalf("--insecure notify: %+v", r)
	}
	if r := runCLI(t, nil, nil, "replay", "alert", "--from", "0", "--output", "json", "--insecure", "--url", ts.URL); r.code != 0 || lines(r.stdout) != 1 {
		t.Fatalf("--insecure replay: %+v", r)
	}
	if r := runCLI(t, nil, strings.NewReader("ping\n"), "session", "--insecure", "--url", ts.URL); r.code != 0 || !strings.Contains(r.stdout, "\npong ") {
		t.Fatalf("--insecure session: %+v", r)
	}
}
