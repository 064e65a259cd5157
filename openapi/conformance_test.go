package openapi_test

// These tests drive the code that serves the API (package api's router
// and middleware, package handlers' answer writers) and check what it
// sends against openapi.json. They live in the external test package:
// package api imports package openapi, so only an external test may
// import api.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/herald-gateway/herald/api"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/ecpds"
	"github.com/herald-gateway/herald/handlers"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/openapi"
)

// TestRouteTableMatchesRouter checks the route table of the document tests
// against the routes api.NewRouter really serves.
func TestRouteTableMatchesRouter(t *testing.T) {
	router := api.NewRouter(api.Options{Handlers: handlers.New(handlers.Options{})})
	routes, ok := router.(chi.Routes)
	if !ok {
		t.Fatalf("api.NewRouter returned %T, not a chi router", router)
	}
	var got []string
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		got = append(got, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := openapi.RouteKeys()
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("router serves\n %q\nthe route table lists\n %q", got, want)
	}
}

// answer is an expected authentication or admission answer.
type answer struct {
	status     int
	code       string
	message    string
	www        []string // WWW-Authenticate fields, in order
	retryAfter string
}

// check compares a recorded answer with want and with the document entry
// of the route it was served for (docPath is the templated path).
func check(t *testing.T, rec *httptest.ResponseRecorder, method, docPath string, want answer) {
	t.Helper()
	for _, e := range openapi.CheckResponse(method, docPath, rec.Code, rec.Header(), rec.Body.Bytes()) {
		t.Error(e)
	}
	var body struct{ Code, Message string }
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != want.status || body.Code != want.code || body.Message != want.message {
		t.Errorf("%s %s: %d %s %q, want %d %s %q", method, docPath, rec.Code, body.Code, body.Message, want.status, want.code, want.message)
	}
	if got := rec.Header().Values("WWW-Authenticate"); !slices.Equal(got, want.www) {
		t.Errorf("%s %s: WWW-Authenticate %q, want %q", method, docPath, got, want.www)
	}
	if got := rec.Header().Get("Retry-After"); got != want.retryAfter {
		t.Errorf("%s %s: Retry-After %q, want %q", method, docPath, got, want.retryAfter)
	}
}

// target is a route as requested and as documented.
type target struct {
	method, path, docPath string
}

var (
	notifyRoute = target{"POST", "/api/v1/notification", "/api/v1/notification"}
	batchRoute  = target{"POST", "/api/v1/notifications", "/api/v1/notifications"}
	watchRoute  = target{"POST", "/api/v1/watch", "/api/v1/watch"}
	replayRoute = target{"POST", "/api/v1/replay", "/api/v1/replay"}
	streamRoute = []target{notifyRoute, batchRoute, watchRoute, replayRoute}
	// sessionRoute authenticates as the stream routes do; its refusals
	// come before the upgrade.
	sessionRoute = target{"GET", "/api/v1/session", "/api/v1/session"}
	adminRoutes  = []target{
		{"DELETE", "/api/v1/admin/notification/alert@42", "/api/v1/admin/notification/{notification_id}"},
		{"DELETE", "/api/v1/admin/wipe/stream", "/api/v1/admin/wipe/stream"},
		{"DELETE", "/api/v1/admin/wipe/all", "/api/v1/admin/wipe/all"},
		{"POST", "/api/v1/admin/reload", "/api/v1/admin/reload"},
	}
)

// serve sends one request through h.
func serve(h http.Handler, tg target, authorization *string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(tg.method, tg.path, strings.NewReader(`{}`))
	if authorization != nil {
		req.Header["Authorization"] = []string{*authorization}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const secret = "conformance-secret"

// token mints an HS256 JWT signed with secret.
func token(claims map[string]any) string {
	enc := base64.RawURLEncoding
	payload, _ := json.Marshal(claims)
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

func exp() int64 { return time.Now().Add(time.Hour).Unix() }

// rawToken mints an HS256 JWT whose claims are the JSON text given (a
// repeated member name included).
func rawToken(claims string) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

func authRouter(t *testing.T, mode, tronURL string, limits *api.StreamLimiter) http.Handler {
	t.Helper()
	auth, err := auth.NewAuthenticator(auth.Options{Config: auth.Config{
		Enabled: true, Mode: mode, AuthOTronURL: tronURL, JWTSecret: secret, Timeout: 2 * time.Second,
		AdminRoles: map[string][]string{"ecmwf": {"admin"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return api.NewRouter(api.Options{
		Handlers: handlers.New(handlers.Options{Settings: handlers.Settings{Auth: auth.Policy()}}),
		Auth:     auth,
		Limits:   limits,
	})
}

func ptr(s string) *string { return &s }

// TestAuthenticationAnswersMatchDocument drives the authentication
// middleware of the real router in both modes and checks every answer it
// gives on every route that authenticates.
func TestAuthenticationAnswersMatchDocument(t *testing.T) {
	bob := "Bearer " + token(map[string]any{"username": "bob", "realm": "ecmwf", "roles": []string{"user"}, "exp": exp()})
	noUser := "Bearer " + token(map[string]any{"realm": "ecmwf", "exp": exp()})
	twice := "Bearer " + rawToken(`{"username":"bob","username":"eve","exp":`+strconv.FormatInt(exp(), 10)+`}`)
	textExp := "Bearer " + rawToken(`{"username":"bob","exp":"tomorrow"}`)
	bearer := []string{"Bearer"}
	bearerBasic := []string{"Bearer", "Basic"}

	t.Run("trusted_proxy", func(t *testing.T) {
		h := authRouter(t, auth.ModeTrustedProxy, "", nil)
		cases := []struct {
			authorization *string
			want          answer
			streams       bool // also on notify, watch and replay
		}{
			{nil, answer{401, "UNAUTHORIZED", auth.MsgHeaderRequired, bearer, ""}, false},
			{ptr("Basic Ym9iOnB3"), answer{401, "UNAUTHORIZED", "Authorization header must use Bearer token", bearer, ""}, false},
			{ptr("Bearer not.a.jwt"), answer{401, "UNAUTHORIZED", auth.MsgInvalidToken, bearer, ""}, true},
			{&noUser, answer{401, "UNAUTHORIZED", auth.MsgMissingUserClaims, bearer, ""}, true},
			{&twice, answer{401, "UNAUTHORIZED", auth.MsgTokenClaimsDuplicate, bearer, ""}, true},
			{&textExp, answer{401, "UNAUTHORIZED", auth.MsgTokenExpNotNumeric, bearer, ""}, true},
			{&bob, answer{403, "FORBIDDEN", auth.MsgNoAdminRole, nil, ""}, false},
		}
		for _, c := range cases {
			for _, tg := range adminRoutes {
				check(t, serve(h, tg, c.authorization), tg.method, tg.docPath, c.want)
			}
			if c.streams {
				for _, tg := range append([]target{sessionRoute}, streamRoute...) {
					check(t, serve(h, tg, c.authorization), tg.method, tg.docPath, c.want)
				}
			}
		}
	})

	t.Run("direct", func(t *testing.T) {
		tron := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Header.Get("Authorization") {
			case "Bearer bad":
				w.WriteHeader(http.StatusUnauthorized)
			case "Bearer deny":
				w.WriteHeader(http.StatusForbidden)
			case "Bearer down":
				w.WriteHeader(http.StatusBadGateway)
			default:
				w.Header().Set("Authorization", bob)
			}
		}))
		defer tron.Close()
		h := authRouter(t, auth.ModeDirect, tron.URL, nil)
		cases := []struct {
			authorization *string
			want          answer
			streams       bool
		}{
			{nil, answer{401, "UNAUTHORIZED", auth.MsgHeaderRequired, bearerBasic, ""}, false},
			{ptr("   "), answer{401, "UNAUTHORIZED", "Authorization header cannot be empty", bearerBasic, ""}, false},
			{ptr("Token abc"), answer{401, "UNAUTHORIZED", "Authorization header must use Bearer or Basic scheme", bearerBasic, ""}, false},
			{ptr("Bearer \x01"), answer{401, "UNAUTHORIZED", "Authorization header is not valid UTF-8", bearerBasic, ""}, false},
			{ptr("Bearer bad"), answer{401, "UNAUTHORIZED", auth.MsgInvalidToken, bearerBasic, ""}, true},
			{ptr("Bearer deny"), answer{403, "FORBIDDEN", auth.MsgTokenDenied, nil, ""}, true},
			{ptr("Bearer down"), answer{503, "SERVICE_UNAVAILABLE", auth.MsgAuthUnavailable, nil, "5"}, true},
			{ptr("Basic Ym9iOnB3"), answer{403, "FORBIDDEN", auth.MsgNoAdminRole, nil, ""}, false},
		}
		for _, c := range cases {
			for _, tg := range adminRoutes {
				check(t, serve(h, tg, c.authorization), tg.method, tg.docPath, c.want)
			}
			if c.streams {
				for _, tg := range append([]target{sessionRoute}, streamRoute...) {
					check(t, serve(h, tg, c.authorization), tg.method, tg.docPath, c.want)
				}
			}
		}
	})
}

// TestStreamLimitAnswersMatchDocument holds one watch or replay open (its
// body never arrives) and checks the 429 of the next one.
func TestStreamLimitAnswersMatchDocument(t *testing.T) {
	bob := "Bearer " + token(map[string]any{"username": "bob", "realm": "ecmwf", "exp": exp()})
	retry := strconv.Itoa(int(api.StreamLimitRetryAfter / time.Second))
	cases := []struct {
		name          string
		opts          api.StreamLimitOptions
		auth          bool
		authorization *string
		message       string
	}{
		{"per client", api.StreamLimitOptions{PerClient: 1}, false, nil,
			"client address 192.0.2.1 already has 1 open streams, the limit; close one or retry later"},
		{"per user", api.StreamLimitOptions{PerUser: 1}, true, &bob,
			"user 'bob' already has 1 open streams, the limit; close one or retry later"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tg := range []target{watchRoute, replayRoute} {
				lim := api.NewStreamLimiter(c.opts)
				var h http.Handler
				if c.auth {
					h = authRouter(t, auth.ModeTrustedProxy, "", lim)
				} else {
					h = api.NewRouter(api.Options{Handlers: handlers.New(handlers.Options{}), Limits: lim})
				}
				pr, pw := io.Pipe()
				first := httptest.NewRequest(tg.method, tg.path, pr)
				if c.authorization != nil {
					first.Header.Set("Authorization", *c.authorization)
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					h.ServeHTTP(httptest.NewRecorder(), first)
				}()
				testkit.WaitFor(t, 5*time.Second, "the first stream to be counted", func() bool {
					user, client := lim.Open("bob", "192.0.2.1")
					return user+client > 0
				})
				check(t, serve(h, tg, c.authorization), tg.method, tg.docPath,
					answer{429, "TOO_MANY_STREAMS", c.message, nil, retry})
				pw.CloseWithError(errors.New("client went away"))
				<-done
			}
		})
	}
}

// TestHandlerAuthAnswersMatchDocument checks the answers the handlers write
// after authentication: the per-stream decisions of the role matrix (Aviso's
// auth rules, docs/auth.md) and the ECPDS outcomes, each on the routes that
// can give it.
func TestHandlerAuthAnswersMatchDocument(t *testing.T) {
	writeOn := func(write func(w http.ResponseWriter, r *http.Request), tg target) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		api.RequestID(http.HandlerFunc(write)).ServeHTTP(rec, httptest.NewRequest(tg.method, tg.path, nil))
		return rec
	}

	// The role matrix, every combination: each refusal must be documented
	// on the routes of its operation, in both auth modes.
	reader := map[string][]string{"ecmwf": {"reader"}}
	writer := map[string][]string{"ecmwf": {"writer"}}
	blocks := []*auth.StreamRules{nil, {Required: false}}
	for _, rr := range []auth.RoleMap{nil, reader} {
		for _, wr := range []auth.RoleMap{nil, writer} {
			blocks = append(blocks, &auth.StreamRules{Required: true, ReadRoles: rr, WriteRoles: wr})
		}
	}
	ids := []*auth.Identity{nil}
	for _, roles := range [][]string{nil, {"reader"}, {"writer"}, {"admin"}} {
		ids = append(ids, &auth.Identity{Username: "bob", Realm: "ecmwf", Roles: roles})
	}
	seen := map[string]bool{}
	for _, mode := range []string{auth.ModeTrustedProxy, auth.ModeDirect} {
		policy := auth.Policy{Enabled: true, Direct: mode == auth.ModeDirect, Admins: auth.RoleMap{"ecmwf": {"admin"}}}
		www := []string{"Bearer"}
		if policy.Direct {
			www = append(www, "Basic")
		}
		for _, sa := range blocks {
			for _, id := range ids {
				for _, op := range []auth.Operation{auth.OpRead, auth.OpWrite} {
					policy.Streams = map[string]*auth.StreamRules{"s": sa}
					denied := policy.DecideStream("s", id, op)
					if denied == nil {
						continue
					}
					status, msg := denied.Kind.Status(), denied.Message
					seen[msg] = true
					targets := []target{watchRoute, replayRoute}
					if op == auth.OpWrite {
						targets = []target{notifyRoute, batchRoute}
					}
					for _, tg := range targets {
						var rec *httptest.ResponseRecorder
						want := answer{status: status, message: msg}
						switch status {
						case http.StatusUnauthorized:
							rec = writeOn(func(w http.ResponseWriter, r *http.Request) { auth.WriteUnauthorized(w, r, policy.Direct, msg) }, tg)
							want.code, want.www = "UNAUTHORIZED", www
						case http.StatusForbidden:
							rec = writeOn(func(w http.ResponseWriter, r *http.Request) { auth.WriteForbidden(w, r, msg) }, tg)
							want.code = "FORBIDDEN"
						default:
							t.Fatalf("DecideStream answered %d %q", status, msg)
						}
						check(t, rec, tg.method, tg.docPath, want)
					}
				}
			}
		}
	}
	for _, msg := range []string{auth.MsgStreamAuthRequired, auth.MsgNoReadRole, auth.MsgNoWriteRole, auth.MsgAdminsOnlyWrite} {
		if !seen[msg] {
			t.Errorf("the role matrix never answered %q", msg)
		}
	}

	// ECPDS (watch and replay only).
	ecpds := []answer{
		{403, "FORBIDDEN", (&ecpds.DeniedError{Username: "alice", Destination: "CIP"}).Error(), nil, ""},
		{403, "FORBIDDEN", "Required field 'destination' not found in request identifiers", nil, ""},
		{503, "SERVICE_UNAVAILABLE", auth.MsgECPDSUnavailable, nil, strconv.Itoa(auth.RetryAfterUnavailable)},
		{500, "INTERNAL_ERROR", auth.MsgServerMisconfigured, nil, ""},
		{500, "INTERNAL_ERROR", auth.MsgECPDSUnexpectedError, nil, ""},
	}
	for _, want := range ecpds {
		write := func(w http.ResponseWriter, r *http.Request) {
			switch want.status {
			case http.StatusForbidden:
				auth.WriteForbidden(w, r, want.message)
			case http.StatusServiceUnavailable:
				auth.WriteUnavailable(w, r, want.message)
			default:
				auth.WriteInternalError(w, r, want.message)
			}
		}
		for _, tg := range []target{watchRoute, replayRoute} {
			check(t, writeOn(write, tg), tg.method, tg.docPath, want)
		}
	}
}

// TestCheckResponseRejects makes sure CheckResponse can fail.
func TestCheckResponseRejects(t *testing.T) {
	const rid = "3f1c9a6e-8b2d-4e57-9a41-0c6d2b7e5f18"
	body := func(code, label, msg string) []byte {
		b, _ := json.Marshal(map[string]string{"code": code, "error": label, "message": msg, "request_id": rid})
		return b
	}
	hdr := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {rid}}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name   string
		path   string
		status int
		header http.Header
		body   []byte
	}{
		{"undocumented status", "/api/v1/notification", 429, hdr("Retry-After", "10"), body("TOO_MANY_STREAMS", "too_many_requests", "x")},
		{"no WWW-Authenticate", "/api/v1/notification", 401, hdr(), body("UNAUTHORIZED", "unauthorized", auth.MsgInvalidToken)},
		{"bad WWW-Authenticate", "/api/v1/notification", 401, hdr("WWW-Authenticate", "Digest"), body("UNAUTHORIZED", "unauthorized", auth.MsgInvalidToken)},
		{"admin message on a stream", "/api/v1/watch", 401, hdr("WWW-Authenticate", "Bearer"), body("UNAUTHORIZED", "unauthorized", auth.MsgHeaderRequired)},
		{"write message on a read", "/api/v1/watch", 403, hdr(), body("FORBIDDEN", "forbidden", auth.MsgNoWriteRole)},
		{"no Retry-After", "/api/v1/watch", 503, hdr(), body("SERVICE_UNAVAILABLE", "service_unavailable", auth.MsgECPDSUnavailable)},
		{"Retry-After not a number", "/api/v1/watch", 429, hdr("Retry-After", "soon"), body("TOO_MANY_STREAMS", "too_many_requests", "user 'bob' already has 1 open streams, the limit; close one or retry later")},
		{"undocumented Retry-After", "/api/v1/admin/wipe/all", 403, hdr("Retry-After", "5"), body("FORBIDDEN", "forbidden", auth.MsgNoAdminRole)},
		{"details on an auth body", "/api/v1/admin/wipe/all", 403, hdr(),
			[]byte(`{"code":"FORBIDDEN","error":"forbidden","message":"` + auth.MsgNoAdminRole + `","details":"x","request_id":"` + rid + `"}`)},
		{"plain text on a JSON answer", "/api/v1/notification", 413, http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "X-Request-Id": {rid}},
			[]byte("request body too large\n")},
		{"405 without Allow", "/api/v1/watch", 405, hdr(), body("METHOD_NOT_ALLOWED", "method_not_allowed", "method POST is not allowed on /api/v1/watch; allowed: POST")},
		{"404 of a documented path", "/api/v1/watch", 404, hdr(), body("NOT_FOUND", "not_found", "no route for POST /api/v1/watch")},
		{"JSON on a plain-text handshake answer", "/api/v1/session", 426, hdr(), body("INVALID_REQUEST", "bad_request", "not an upgrade")},
		{"415 without Accept-Encoding", "/api/v1/watch", 415, hdr(), []byte(`{"code":"UNSUPPORTED_MEDIA_TYPE","error":"unsupported_media_type","message":"m","details":"m","request_id":"` + rid + `"}`)},
	}
	for _, c := range cases {
		method := "POST"
		switch {
		case strings.HasPrefix(c.path, "/api/v1/admin"):
			method = "DELETE"
		case c.path == "/api/v1/session" || c.name == "405 without Allow":
			method = "GET"
		}
		if errs := openapi.CheckResponse(method, c.path, c.status, c.header, c.body); len(errs) == 0 {
			t.Errorf("%s: accepted", c.name)
		}
	}
	ok := openapi.CheckResponse("POST", "/api/v1/watch", 429, hdr("Retry-After", "10"),
		body("TOO_MANY_STREAMS", "too_many_requests", "user 'bob' already has 1 open streams, the limit; close one or retry later"))
	if len(ok) != 0 {
		t.Errorf("a correct 429 was rejected: %q", ok)
	}
}
