package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-gateway/herald/auth"
)

// matrixStreams are the streams of the role matrix and their auth blocks, one
// per row of Aviso's auth rules (docs/auth.md) plus a realm-wide ["*"] stream.
var matrixStreams = []struct{ name, auth string }{
	{"public", ""},
	{"optional", "{required: false}"},
	{"any", "{required: true}"},
	{"readers", "{required: true, read_roles: {ecmwf: [reader]}}"},
	{"writers", "{required: true, write_roles: {ecmwf: [writer]}}"},
	{"both", "{required: true, read_roles: {ecmwf: [reader]}, write_roles: {ecmwf: [writer]}}"},
	{"realm", "{required: true, read_roles: {partners: ['*']}, write_roles: {partners: ['*']}}"},
}

// matrixConfig returns the matrix config. mode "" disables auth (and
// drops the stream auth blocks, which would then be a startup error).
func matrixConfig(mode, tronURL string) string {
	var b strings.Builder
	b.WriteString("application: {host: 127.0.0.1, port: 8000}\n")
	b.WriteString("notification_backend: {kind: in_memory}\n")
	b.WriteString("watch_endpoint: {replay_batch_delay_ms: 0}\n")
	switch mode {
	case "trusted_proxy":
		fmt.Fprintf(&b, "auth: {enabled: true, mode: trusted_proxy, jwt_secret: %s, admin_roles: {ecmwf: [admin]}}\n", testSecret)
	case "direct":
		fmt.Fprintf(&b, "auth: {enabled: true, mode: direct, auth_o_tron_url: %q, timeout_ms: 2000, jwt_secret: %s, admin_roles: {ecmwf: [admin]}}\n", tronURL, testSecret)
	}
	b.WriteString("notification_schema:\n")
	for _, s := range matrixStreams {
		fmt.Fprintf(&b, "  %s:\n    topic: {base: %s, key_order: [k]}\n    identifier: {k: {type: StringHandler, required: false}}\n", s.name, s.name)
		if mode != "" && s.auth != "" {
			fmt.Fprintf(&b, "    auth: %s\n", s.auth)
		}
	}
	return b.String()
}

// passThroughTron is a fake auth-o-tron that accepts any bearer token
// shaped like a JWT and answers with it in the Authorization header, and
// refuses everything else with 401. herald then verifies the token
// locally, so the matrix runs the same tokens through both modes.
func passThroughTron(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := strings.Fields(r.Header.Get("Authorization"))
		if r.URL.Path != "/authenticate" || len(fields) != 2 || fields[0] != "Bearer" || strings.Count(fields[1], ".") != 2 || strings.HasSuffix(fields[1], ".") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Authorization", "Bearer "+fields[1])
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// outcome codes of the matrix.
const (
	ok        = "200"
	needAuth  = "401 stream"  // MsgStreamAuthRequired
	badToken  = "401 token"   // MsgInvalidToken
	noRead    = "403 read"    // MsgNoReadRole
	noWrite   = "403 write"   // MsgNoWriteRole
	adminOnly = "403 admins"  // MsgAdminsOnlyWrite
	notAdmin  = "403 admin"   // MsgNoAdminRole
	needCreds = "401 header"  // MsgHeaderRequired
	malformed = "401 malform" // the malformed-header message of the mode
)

// TestRoleMatrix runs every stream row of Aviso's auth rules (docs/auth.md),
// each operation and the admin endpoint, for every kind of caller, with auth
// disabled and in both modes, over real HTTP.
func TestRoleMatrix(t *testing.T) {
	// Callers: their tokens and the Authorization header they send.
	noExp := user("rita", "ecmwf", "reader")
	delete(noExp, "exp")
	expired := user("rita", "ecmwf", "reader")
	expired["exp"] = t0.Add(-JWTLeewayPlus).Unix()
	callers := []struct {
		name   string
		header func(t *testing.T) http.Header
	}{
		{"reader", func(t *testing.T) http.Header { return bearer(hs256(t, user("rita", "ecmwf", "reader"))) }},
		{"writer", func(t *testing.T) http.Header { return bearer(hs256(t, user("walt", "ecmwf", "writer"))) }},
		{"admin", func(t *testing.T) http.Header { return bearer(hs256(t, user("ada", "ecmwf", "admin"))) }},
		{"other realm", func(t *testing.T) http.Header {
			return bearer(hs256(t, user("otto", "partners", "reader", "writer", "admin")))
		}},
		{"no token", func(*testing.T) http.Header { return nil }},
		{"malformed header", func(*testing.T) http.Header { return authHeader("Digest abc") }},
		{"expired", func(t *testing.T) http.Header { return bearer(hs256(t, expired)) }},
		{"wrong signature", func(t *testing.T) http.Header {
			return bearer(mint(t, jwt.SigningMethodHS256, []byte("another-secret"), user("rita", "ecmwf", "reader"), ""))
		}},
		{"alg none", func(t *testing.T) http.Header {
			return bearer(mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, user("ada", "ecmwf", "admin"), ""))
		}},
		{"wrong algorithm", func(t *testing.T) http.Header {
			return bearer(mint(t, jwt.SigningMethodHS512, []byte(testSecret), user("ada", "ecmwf", "admin"), ""))
		}},
		{"missing exp", func(t *testing.T) http.Header { return bearer(hs256(t, noExp)) }},
	}
	// The first six columns vary per row; the five bad tokens are a 401
	// everywhere, public streams included.
	bad := []string{badToken, badToken, badToken, badToken, badToken}
	rows := []struct {
		stream, op string
		want       []string // reader, writer, admin, other realm, no token, malformed
	}{
		{"public", "read", []string{ok, ok, ok, ok, ok, ok}},
		{"public", "write", []string{ok, ok, ok, ok, ok, ok}},
		{"optional", "read", []string{ok, ok, ok, ok, ok, ok}},
		{"optional", "write", []string{ok, ok, ok, ok, ok, ok}},
		{"any", "read", []string{ok, ok, ok, ok, needAuth, needAuth}},
		{"any", "write", []string{adminOnly, adminOnly, ok, adminOnly, needAuth, needAuth}},
		{"readers", "read", []string{ok, noRead, ok, noRead, needAuth, needAuth}},
		{"readers", "write", []string{adminOnly, adminOnly, ok, adminOnly, needAuth, needAuth}},
		{"writers", "read", []string{ok, ok, ok, ok, needAuth, needAuth}},
		{"writers", "write", []string{noWrite, ok, ok, noWrite, needAuth, needAuth}},
		{"both", "read", []string{ok, noRead, ok, noRead, needAuth, needAuth}},
		{"both", "write", []string{noWrite, ok, ok, noWrite, needAuth, needAuth}},
		{"realm", "read", []string{noRead, noRead, ok, ok, needAuth, needAuth}},
		{"realm", "write", []string{noWrite, noWrite, ok, ok, needAuth, needAuth}},
		{"", "admin", []string{notAdmin, notAdmin, ok, notAdmin, needCreds, malformed}},
	}
	tron := passThroughTron(t)
	messages := map[string]string{
		needAuth: auth.MsgStreamAuthRequired, badToken: auth.MsgInvalidToken,
		noRead: auth.MsgNoReadRole, noWrite: auth.MsgNoWriteRole, adminOnly: auth.MsgAdminsOnlyWrite,
		notAdmin: auth.MsgNoAdminRole, needCreds: auth.MsgHeaderRequired,
	}
	for _, mode := range []string{"", "trusted_proxy", "direct"} {
		modeName := mode
		if mode == "" {
			modeName = "disabled"
		}
		t.Run(modeName, func(t *testing.T) {
			s := start(t, setup{yaml: matrixConfig(mode, tron.URL)})
			challenges := []string{"Bearer"}
			malformedMsg := "Authorization header must use Bearer token"
			if mode == "direct" {
				challenges = []string{"Bearer", "Basic"}
				malformedMsg = "Authorization header must use Bearer or Basic scheme"
			}
			for _, row := range rows {
				want := append(append([]string(nil), row.want...), bad...)
				for i, c := range callers {
					if mode == "" {
						want[i] = ok // auth disabled: everything is public
					}
					hdr := c.header(t)
					var requests []struct{ method, path, body string }
					switch row.op {
					case "read":
						requests = append(requests,
							struct{ method, path, body string }{http.MethodPost, "/api/v1/watch", `{"event_type":"` + row.stream + `","identifier":{}}`},
							struct{ method, path, body string }{http.MethodPost, "/api/v1/replay", `{"event_type":"` + row.stream + `","identifier":{},"from_id":"0"}`})
					case "write":
						requests = append(requests, struct{ method, path, body string }{http.MethodPost, "/api/v1/notification", `{"event_type":"` + row.stream + `","identifier":{"k":"v"}}`})
					case "admin":
						requests = append(requests, struct{ method, path, body string }{http.MethodDelete, "/api/v1/admin/wipe/all", ""})
					}
					for _, rq := range requests {
						r := s.call(t, rq.method, rq.path, rq.body, hdr)
						where := fmt.Sprintf("%s %s %s as %s", row.stream, rq.method, rq.path, c.name)
						switch want[i] {
						case ok:
							if r.Status != http.StatusOK {
								t.Fatalf("%s: got %d %s, want 200", where, r.Status, r.Raw)
							}
							if len(r.Header.Values("WWW-Authenticate")) != 0 {
								t.Fatalf("%s: 200 with WWW-Authenticate", where)
							}
						case malformed:
							t.Run(where, func(t *testing.T) {
								wantAuthError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "unauthorized", malformedMsg, challenges)
							})
						default:
							msg := messages[want[i]]
							t.Run(where, func(t *testing.T) {
								if strings.HasPrefix(want[i], "401") {
									wantAuthError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "unauthorized", msg, challenges)
								} else {
									wantAuthError(t, r, http.StatusForbidden, "FORBIDDEN", "forbidden", msg, nil)
								}
							})
						}
					}
				}
			}
		})
	}
}

// JWTLeewayPlus is just beyond the 60 s leeway.
const JWTLeewayPlus = 61 * time.Second

// TestTokenClaims checks the claims rules: username else sub, both
// missing, the 60 s leeway, realm scoping and malformed claim types.
func TestTokenClaims(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	subOnly := jwt.MapClaims{"sub": "sam", "realm": "ecmwf", "roles": []string{"reader"}, "exp": t0.Add(time.Hour).Unix()}
	nobody := jwt.MapClaims{"realm": "ecmwf", "roles": []string{"reader"}, "exp": t0.Add(time.Hour).Unix()}
	emptyName := jwt.MapClaims{"username": "", "realm": "ecmwf", "exp": t0.Add(time.Hour).Unix()}
	inLeeway := user("rita", "ecmwf", "reader")
	inLeeway["exp"] = t0.Add(-59 * time.Second).Unix()
	noRealm := user("rita", "", "reader")
	delete(noRealm, "realm")
	badAttrs := user("rita", "ecmwf", "reader")
	badAttrs["attributes"] = map[string]any{"team": 7}
	goodAttrs := user("rita", "ecmwf", "reader")
	goodAttrs["attributes"] = map[string]any{"team": "ops"}
	roleString := user("rita", "ecmwf")
	roleString["roles"] = "reader"
	expString := user("rita", "ecmwf", "reader")
	expString["exp"] = "tomorrow"
	withAud := user("rita", "ecmwf", "reader")
	withAud["aud"] = "somebody-else"
	notYet := user("rita", "ecmwf", "reader")
	notYet["nbf"] = t0.Add(2 * time.Minute).Unix()
	tests := []struct {
		name   string
		claims jwt.MapClaims
		stream string
		status int
		msg    string
	}{
		{"sub when no username", subOnly, "readers", 200, ""},
		{"empty username falls back to sub", emptyName, "any", 401, auth.MsgMissingUserClaims},
		{"neither username nor sub", nobody, "any", 401, auth.MsgMissingUserClaims},
		{"expired within the leeway", inLeeway, "readers", 200, ""},
		{"no realm never matches a role map", noRealm, "readers", 403, auth.MsgNoReadRole},
		{"no realm is still authenticated", noRealm, "any", 200, ""},
		{"string attributes", goodAttrs, "readers", 200, ""},
		{"non-string attributes", badAttrs, "any", 401, auth.MsgInvalidToken},
		{"roles not a list", roleString, "any", 401, auth.MsgInvalidToken},
		{"exp not a number", expString, "any", 401, "token claim exp must be a NumericDate (a JSON number)"},
		{"audience not checked", withAud, "readers", 200, ""},
		{"not valid yet", notYet, "any", 401, auth.MsgInvalidToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.call(t, http.MethodPost, "/api/v1/replay", `{"event_type":"`+tc.stream+`","identifier":{},"from_id":"0"}`, bearer(hs256(t, tc.claims)))
			switch tc.status {
			case 200:
				if r.Status != 200 {
					t.Fatalf("got %d %s", r.Status, r.Raw)
				}
			case 401:
				wantAuthError(t, r, 401, "UNAUTHORIZED", "unauthorized", tc.msg, []string{"Bearer"})
			default:
				wantAuthError(t, r, 403, "FORBIDDEN", "forbidden", tc.msg, nil)
			}
		})
	}
}

// TestPublicEndpointsNeverAuthenticate checks that schema endpoints,
// /health, the homepage and the OpenAPI document answer 200 whatever the
// Authorization header, even in direct mode with auth-o-tron down.
func TestPublicEndpointsNeverAuthenticate(t *testing.T) {
	down := closedURL(t)
	for _, mode := range []string{"trusted_proxy", "direct"} {
		s := start(t, setup{yaml: matrixConfig(mode, down)})
		for _, path := range []string{"/api/v1/schema", "/api/v1/schema/any", "/health", "/", "/api-docs/openapi.json"} {
			for _, h := range []http.Header{nil, authHeader("Digest abc"), authHeader(""), bearer("not.a.jwt"), authHeader("Basic dXNlcjpwYXNz"),
				bearer(hs256(t, user("ada", "ecmwf", "admin")))} {
				if r := s.call(t, http.MethodGet, path, "", h); r.Status != http.StatusOK {
					t.Fatalf("%s GET %s with %v: %d %s", mode, path, h, r.Status, r.Raw)
				}
			}
		}
	}
}

// TestPipelineOrder checks where authentication and authorisation run:
// a bad token is refused before the body is read; stream authorisation
// runs after the event-type check (and notify's point check) and before
// spatial, cursor and identifier validation.
func TestPipelineOrder(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	reader := bearer(hs256(t, user("rita", "ecmwf", "reader")))
	badSig := bearer(mint(t, jwt.SigningMethodHS256, []byte("x"), user("rita", "ecmwf", "reader"), ""))
	tests := []struct {
		name, path, body string
		hdr              http.Header
		status           int
		code             string
	}{
		{"bad token before JSON parsing", "/api/v1/watch", `{`, badSig, 401, "UNAUTHORIZED"},
		{"JSON parsing before stream auth", "/api/v1/watch", `{`, nil, 400, "INVALID_JSON"},
		{"unknown field before stream auth", "/api/v1/watch", `{"foo":1}`, nil, 400, "UNKNOWN_FIELD"},
		{"unknown event type before stream auth", "/api/v1/watch", `{"event_type":"nope","identifier":{}}`, nil, 400, "UNKNOWN_EVENT_TYPE"},
		{"notify point before stream auth", "/api/v1/notification", `{"event_type":"any","identifier":{"point":[1,2]}}`, nil, 400, "INVALID_NOTIFICATION_REQUEST"},
		{"stream auth before cursors", "/api/v1/replay", `{"event_type":"any","identifier":{}}`, nil, 401, "UNAUTHORIZED"},
		{"stream auth before notify identifiers", "/api/v1/notification", `{"event_type":"any","identifier":{"zzz":1}}`, nil, 401, "UNAUTHORIZED"},
		{"role check before cursors", "/api/v1/replay", `{"event_type":"writers","identifier":{},"from_id":"x"}`, reader, 400, "INVALID_REPLAY_REQUEST"},
		{"read role before cursors", "/api/v1/replay", `{"event_type":"realm","identifier":{},"from_id":"x"}`, reader, 403, "FORBIDDEN"},
		{"write role before identifiers", "/api/v1/notification", `{"event_type":"both","identifier":{"zzz":1}}`, reader, 403, "FORBIDDEN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.call(t, http.MethodPost, tc.path, tc.body, tc.hdr)
			if r.Status != tc.status || r.Body["code"] != tc.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Raw, tc.status, tc.code)
			}
		})
	}
}

// TestTrustedProxyRefusesBasic: Basic credentials are not accepted in
// trusted_proxy mode; on a protected stream that is a 401 offering only
// Bearer, on an admin route the malformed-header 401.
func TestTrustedProxyRefusesBasic(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	basic := authHeader("Basic dXNlcjpwYXNz")
	r := s.call(t, http.MethodPost, "/api/v1/watch", `{"event_type":"any","identifier":{}}`, basic)
	wantAuthError(t, r, 401, "UNAUTHORIZED", "unauthorized", auth.MsgStreamAuthRequired, []string{"Bearer"})
	r = s.call(t, http.MethodDelete, "/api/v1/admin/wipe/all", "", basic)
	wantAuthError(t, r, 401, "UNAUTHORIZED", "unauthorized", "Authorization header must use Bearer token", []string{"Bearer"})
	if r := s.call(t, http.MethodPost, "/api/v1/watch", `{"event_type":"public","identifier":{}}`, basic); r.Status != 200 {
		t.Fatalf("public stream with Basic: %d %s", r.Status, r.Raw)
	}
}

// TestAdminRouteHeaders checks the admin-route header messages of both
// modes.
func TestAdminRouteHeaders(t *testing.T) {
	tron := passThroughTron(t)
	tests := []struct {
		mode, header, msg string
	}{
		{"direct", "", "Authorization header cannot be empty"},
		{"direct", "Bearer", "Authorization header must use Bearer or Basic scheme"},
		{"direct", "Token abc", "Authorization header must use Bearer or Basic scheme"},
		{"direct", "Basic    ", "Authorization header must use Bearer or Basic scheme"},
		{"direct", "Bearer caf\xc3\xa9", "Authorization header is not valid UTF-8"},
		{"trusted_proxy", "", "Authorization header must use Bearer token"},
		{"trusted_proxy", "Bearer a b", "Authorization header must use Bearer token"},
		{"trusted_proxy", "Bearer", "Authorization header must use Bearer token"},
	}
	servers := map[string]*herald{}
	for _, tc := range tests {
		s := servers[tc.mode]
		if s == nil {
			s = start(t, setup{yaml: matrixConfig(tc.mode, tron.URL)})
			servers[tc.mode] = s
		}
		challenges := []string{"Bearer"}
		if tc.mode == "direct" {
			challenges = []string{"Bearer", "Basic"}
		}
		t.Run(tc.mode+" "+tc.header, func(t *testing.T) {
			wantAuthError(t, s.call(t, http.MethodDelete, "/api/v1/admin/wipe/all", "", authHeader(tc.header)),
				401, "UNAUTHORIZED", "unauthorized", tc.msg, challenges)
			// The same header on a public stream is ignored.
			if r := s.call(t, http.MethodPost, "/api/v1/notification", `{"event_type":"public","identifier":{"k":"v"}}`, authHeader(tc.header)); r.Status != 200 {
				t.Fatalf("public notify: %d %s", r.Status, r.Raw)
			}
		})
	}
}
