package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
)

// The upgrade of GET /api/v1/session and the auth request (the session
// protocol, docs/sessions.md), through the real router with authentication on:
// credentials on the upgrade with the HTTP API's answers before it, the
// first-frame auth of clients that cannot set headers, the origin check,
// the subprotocol and the per-user session limit.

// sessionWait bounds every wait on a frame.
const sessionWait = 10 * time.Second

// wsSession is a session client that reads frames on request.
type wsSession struct {
	t       *testing.T
	conn    *websocket.Conn
	next    int
	welcome map[string]any
}

// dialSession upgrades to a session; it returns the HTTP answer when the
// upgrade is refused.
func dialSession(t *testing.T, h *herald, hdr http.Header, subprotocols ...string) (*wsSession, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
	defer cancel()
	if subprotocols == nil {
		subprotocols = []string{"herald.v1"}
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.URL, "http")+"/api/v1/session",
		&websocket.DialOptions{HTTPHeader: hdr, Subprotocols: subprotocols})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		return nil, resp
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	s := &wsSession{t: t, conn: c}
	if s.welcome = s.frame(); s.welcome["type"] != "welcome" {
		t.Fatalf("first frame %v, want welcome", s.welcome)
	}
	return s, resp
}

// frame reads the next frame.
func (s *wsSession) frame() map[string]any {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
	defer cancel()
	typ, data, err := s.conn.Read(ctx)
	if err != nil {
		s.t.Fatalf("read: %v", err)
	}
	if typ != websocket.MessageText {
		s.t.Fatalf("frame type %v", typ)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		s.t.Fatalf("frame %s: %v", data, err)
	}
	return f
}

// call sends a request (fields is JSON object text without braces) and
// returns its reply; other frames before it fail the test.
func (s *wsSession) call(op, fields string) map[string]any {
	s.t.Helper()
	s.next++
	id := s.next
	req := `{"id":` + strconv.Itoa(id) + `,"op":"` + op + `"`
	if fields != "" {
		req += "," + fields
	}
	req += "}"
	ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
	defer cancel()
	if err := s.conn.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
		s.t.Fatalf("write: %v", err)
	}
	f := s.frame()
	if f["type"] != "reply" || f["id"] != float64(id) {
		s.t.Fatalf("%s: got %v, want its reply", req, f)
	}
	return f
}

// okCall is call that expects success.
func (s *wsSession) okCall(op, fields string) map[string]any {
	s.t.Helper()
	r := s.call(op, fields)
	if r["ok"] != true {
		s.t.Fatalf("%s %s: %v", op, fields, r)
	}
	return r
}

// failCall is call that expects the error code and message.
func (s *wsSession) failCall(op, fields, code, msg string) {
	s.t.Helper()
	r := s.call(op, fields)
	e, _ := r["error"].(map[string]any)
	if r["ok"] != false || e["code"] != code || e["message"] != msg {
		s.t.Fatalf("%s %s: %v, want %s %q", op, fields, r, code, msg)
	}
}

// refused checks an upgrade answered over HTTP with status and the JSON
// error code and message.
func refused(t *testing.T, resp *http.Response, status int, code, msg string) {
	t.Helper()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	if resp.StatusCode != status || body["code"] != code || body["message"] != msg {
		t.Fatalf("upgrade answered %d %s, want %d %s %q", resp.StatusCode, raw, status, code, msg)
	}
}

func TestSessionUpgradeAuth(t *testing.T) {
	h := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	rita := hs256(t, user("rita", "ecmwf", "reader"))

	t.Run("credentials on the upgrade", func(t *testing.T) {
		s, _ := dialSession(t, h, bearer(rita))
		s.okCall("subscribe", `"name":"a","event_type":"readers","identifier":{}`)
		s.failCall("notify", `"event_type":"writers","identifier":{"k":"x"},"payload":null`,
			"FORBIDDEN", "User does not have required write role for this stream")
		s.failCall("auth", `"token":"`+rita+`"`, "INVALID_REQUEST",
			"auth is allowed once, as the first request, and only when the upgrade request carried no credentials")
	})
	t.Run("bad credentials are refused before the upgrade", func(t *testing.T) {
		_, resp := dialSession(t, h, bearer(hs256(t, user("rita", "ecmwf", "reader"))[:40]+"x.y.z"))
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("upgrade answered %d %v", resp.StatusCode, resp.Header)
		}
		_, resp = dialSession(t, h, http.Header{"Authorization": {"Bearer " + rita, "Bearer " + rita}})
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("two Authorization headers: %d", resp.StatusCode)
		}
	})
	t.Run("auth as the first frame", func(t *testing.T) {
		s, _ := dialSession(t, h, nil)
		r := s.okCall("auth", `"token":"`+rita+`"`)
		if r["user"] != "rita" || len(r["roles"].([]any)) != 1 || r["roles"].([]any)[0] != "reader" {
			t.Fatalf("auth reply %v", r)
		}
		s.okCall("subscribe", `"name":"a","event_type":"readers","identifier":{}`)
		s.failCall("auth", `"token":"`+rita+`"`, "INVALID_REQUEST",
			"auth is allowed once, as the first request, and only when the upgrade request carried no credentials")
	})
	t.Run("without credentials only public streams, ping and schema", func(t *testing.T) {
		s, _ := dialSession(t, h, nil)
		s.okCall("ping", "")
		s.okCall("schema", `"event_type":"readers"`)
		s.failCall("subscribe", `"name":"a","event_type":"any","identifier":{}`,
			"UNAUTHORIZED", "Authentication is required for this stream")
		s.okCall("subscribe", `"name":"b","event_type":"optional","identifier":{}`)
		// The first request has gone: auth is no longer allowed.
		s.failCall("auth", `"token":"`+rita+`"`, "INVALID_REQUEST",
			"auth is allowed once, as the first request, and only when the upgrade request carried no credentials")
	})
	t.Run("a failed auth frame", func(t *testing.T) {
		s, _ := dialSession(t, h, nil)
		r := s.call("auth", `"token":"not-a-jwt"`)
		if e, _ := r["error"].(map[string]any); r["ok"] != false || e["code"] != "UNAUTHORIZED" {
			t.Fatalf("bad token: %v", r)
		}
		s.failCall("subscribe", `"name":"a","event_type":"readers","identifier":{}`,
			"UNAUTHORIZED", "Authentication is required for this stream")
	})
	t.Run("auth frame shapes", func(t *testing.T) {
		s, _ := dialSession(t, h, nil)
		s.failCall("auth", `"token":"a","basic":"b"`, "INVALID_REQUEST",
			`auth takes exactly one of "token" (a JWT) or "basic" (base64 of user:password, direct mode)`)
		s, _ = dialSession(t, h, nil)
		s.failCall("auth", `"user":"rita"`, "INVALID_REQUEST",
			"auth does not take 'user' (it takes id, op, token, basic)")
	})
}

func TestSessionUpgradeChecks(t *testing.T) {
	h := start(t, setup{yaml: matrixConfig("trusted_proxy", ""), edit: func(c *configs.Config) {
		c.Application.CORS = &configs.CORS{AllowedOrigins: []string{"https://ok.example"}}
		c.Session.MaxSessionsPerUser = 2
	}})
	rita := bearer(hs256(t, user("rita", "ecmwf", "reader")))

	t.Run("subprotocol", func(t *testing.T) {
		_, resp := dialSession(t, h, nil, "mqtt", "herald.v0")
		refused(t, resp, http.StatusBadRequest, "INVALID_REQUEST", "the session protocol is herald.v1; the client offered mqtt, herald.v0")
		// A client that offers none gets herald.v1 (without the
		// header, which RFC 6455 allows only for an offered one).
		s, _ := dialSession(t, h, nil, []string{}...)
		if got := s.conn.Subprotocol(); got != "" || s.welcome["protocol"] != "herald.v1" {
			t.Fatalf("subprotocol %q, welcome %v", got, s.welcome)
		}
		s.okCall("ping", "")
		s, _ = dialSession(t, h, nil, "herald.v1")
		if got := s.conn.Subprotocol(); got != "herald.v1" {
			t.Fatalf("subprotocol %q", got)
		}
	})
	t.Run("origin", func(t *testing.T) {
		hdr := http.Header{"Origin": {"https://evil.example"}}
		_, resp := dialSession(t, h, hdr)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("bad origin: %d", resp.StatusCode)
		}
		s, _ := dialSession(t, h, http.Header{"Origin": {"https://ok.example"}})
		s.okCall("ping", "")
		// A page herald serves itself (the browser console) needs no
		// entry: its origin names the host the upgrade is sent to.
		s, _ = dialSession(t, h, http.Header{"Origin": {h.URL}})
		s.okCall("ping", "")
		_, resp = dialSession(t, h, http.Header{"Origin": {"http://other" + strings.TrimPrefix(h.URL, "http://127.0.0.1")}})
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("another host on the same port: %d", resp.StatusCode)
		}
		// The scheme counts: the same host over https is another origin
		// than the http one the upgrade came over, unless a proxy in
		// front says the client used https.
		https := "https" + strings.TrimPrefix(h.URL, "http")
		_, resp = dialSession(t, h, http.Header{"Origin": {https}})
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("the same host with another scheme: %d", resp.StatusCode)
		}
		s, _ = dialSession(t, h, http.Header{"Origin": {https}, "X-Forwarded-Proto": {"https"}})
		s.okCall("ping", "")
		_, resp = dialSession(t, h, http.Header{"Origin": {h.URL}, "X-Forwarded-Proto": {"https"}})
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("an http page behind a proxy the client reached over https: %d", resp.StatusCode)
		}
	})
	t.Run("sessions per user", func(t *testing.T) {
		a, _ := dialSession(t, h, rita)
		dialSession(t, h, rita)
		_, resp := dialSession(t, h, rita)
		if resp.Header.Get("Retry-After") == "" {
			t.Fatalf("third session: no Retry-After in %v", resp.Header)
		}
		refused(t, resp, http.StatusTooManyRequests, "TOO_MANY_STREAMS", "user 'rita' already has 2 open sessions (session.max_sessions_per_user)")
		// The auth frame counts the same way.
		s, _ := dialSession(t, h, nil)
		s.failCall("auth", `"token":"`+hs256(t, user("rita", "ecmwf", "reader"))+`"`, "LIMIT_EXCEEDED",
			"user 'rita' already has 2 open sessions (session.max_sessions_per_user)")
		// A closed session frees its place.
		_ = a.conn.Close(websocket.StatusNormalClosure, "")
		// The server releases the place once the session has ended,
		// just after the close handshake.
		testkit.WaitFor(t, sessionWait, "the closed session's place freed", func() bool {
			s, resp := dialSession(t, h, rita)
			if s != nil {
				s.okCall("ping", "")
				return true
			}
			if resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("after a close: %d", resp.StatusCode)
			}
			return false
		})
	})
}

// TestSessionCredentialsExpire: a token is accepted until its exp plus
// the 60 s leeway, by HTTP requests and the session's upgrade alike, and
// the session keeps its credentials until then (not until the bare exp,
// which may already have passed when it opened). Then the subscriptions
// that need credentials end with unauthorized, the message saying when
// the credentials expired, and a resume id; public ones go on, and
// requests that need credentials are refused, saying why.
func TestSessionCredentialsExpire(t *testing.T) {
	h := start(t, setup{yaml: matrixConfig("trusted_proxy", ""), now: time.Now})
	token := func(exp time.Time) http.Header {
		claims := user("rita", "ecmwf", "reader")
		claims["exp"], claims["iat"] = exp.Unix(), exp.Add(-time.Hour).Unix()
		return bearer(hs256(t, claims))
	}
	// Expired 58 s ago: accepted for 1 to 2 s more. Expired 62 s ago:
	// refused, over HTTP and on the upgrade.
	exp := time.Now().Truncate(time.Second).Add(-58 * time.Second)
	until := exp.Add(60 * time.Second)
	inside, outside := token(exp), token(exp.Add(-4*time.Second))
	replay := `{"event_type":"readers","identifier":{},"from_id":"0"}`
	if r := h.call(t, http.MethodPost, "/api/v1/replay", replay, outside); r.Status != http.StatusUnauthorized {
		t.Fatalf("replay beyond the leeway: %d %s", r.Status, r.Raw)
	}
	if _, resp := dialSession(t, h, outside); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("upgrade beyond the leeway: %d", resp.StatusCode)
	}
	if r := h.call(t, http.MethodPost, "/api/v1/replay", replay, inside); r.Status != http.StatusOK {
		t.Fatalf("replay within the leeway: %d %s", r.Status, r.Raw)
	}
	s, _ := dialSession(t, h, inside)
	s.okCall("subscribe", `"name":"a","event_type":"readers","identifier":{}`)
	s.okCall("subscribe", `"name":"b","event_type":"optional","identifier":{}`)
	end := s.frame()
	expired := "the session's credentials expired at " + until.UTC().Format(time.RFC3339) + " (the token's exp, " + exp.UTC().Format(time.RFC3339) +
		", plus 1m0s of leeway for clock skew); reconnect with fresh ones"
	if end["type"] != "subscription_ended" || end["sub"] != "a" || end["reason"] != "unauthorized" || end["resume_from_id"] != "readers@1" ||
		end["message"] != expired+" and resume from resume_from_id" {
		t.Fatalf("end %v", end)
	}
	if time.Now().Before(until) {
		t.Fatalf("ended before the exp plus the leeway, %v", until)
	}
	s.failCall("subscribe", `"name":"a","event_type":"readers","identifier":{}`, "UNAUTHORIZED", "Authentication is required for this stream: "+expired)
	// The notify's reply and the event of b, in either order.
	ctx, cancel := context.WithTimeout(context.Background(), sessionWait)
	defer cancel()
	if err := s.conn.Write(ctx, websocket.MessageText, []byte(`{"id":"n","op":"notify","event_type":"optional","identifier":{"k":"x"},"payload":null}`)); err != nil {
		t.Fatal(err)
	}
	var reply, ev map[string]any
	for reply == nil || ev == nil {
		switch f := s.frame(); f["type"] {
		case "reply":
			reply = f
		case "events":
			ev = f
		default:
			t.Fatalf("frame %v", f)
		}
	}
	if reply["ok"] != true || ev["sub"] != "b" {
		t.Fatalf("after the expiry: notify %v, events %v", reply, ev)
	}
}

// TestSessionECPDS: a session's subscriptions are authorised with the
// stream rules and the ECPDS destination check, as watch and replay are.
func TestSessionECPDS(t *testing.T) {
	f := newFakeECPDS(t)
	f.set("rita", destinations("CIP"))
	h := start(t, setup{yaml: ecpdsConfig("strict", 100, f.ts.URL+"/prefix/")})
	s, _ := dialSession(t, h, bearer(hs256(t, user("rita", "ecmwf", "reader"))))
	s.okCall("subscribe", `"name":"a","event_type":"diss","identifier":{"destination":"CIP"}`)
	s.failCall("subscribe", `"name":"b","event_type":"diss","identifier":{"destination":"FOO"}`,
		"FORBIDDEN", "User 'rita' does not have access to destination 'FOO'")
	s.failCall("replay", `"name":"c","event_type":"diss","identifier":{"destination":"*"},"from_id":"0"`,
		"FORBIDDEN", "Required field 'destination' not found in request identifiers")
	s.okCall("replay", `"name":"d","event_type":"diss","identifier":{"destination":"CIP"},"from_id":"0"`)
	if end := s.frame(); end["type"] != "subscription_ended" || end["sub"] != "d" || end["reason"] != "end_of_stream" {
		t.Fatalf("replay end %v", end)
	}
	if got := f.calls.Load(); got != 1 {
		t.Fatalf("%d upstream calls, want 1 (the cache answers the rest)", got)
	}
	// Notify never asks ECPDS; the reader has no write role.
	s.failCall("notify", `"event_type":"diss","identifier":{"destination":"CIP","step":1},"payload":null`,
		"FORBIDDEN", "User does not have required write role for this stream")
	// CREATE SUBSCRIPTION: the destination WHERE pins is the one checked.
	s.okCall("execute", `"statement":"CREATE SUBSCRIPTION e TO diss WHERE destination = 'CIP' AND step >= 1"`)
	s.failCall("execute", `"statement":"CREATE SUBSCRIPTION f TO diss WHERE destination = 'FOO'"`,
		"FORBIDDEN", "User 'rita' does not have access to destination 'FOO'")
	s.failCall("execute", `"statement":"CREATE SUBSCRIPTION f TO plain"`, "INVALID_WATCH_REQUEST",
		"execute: line 1 column 31: required field 'destination' must be pinned in WHERE with =, as in destination = …: CREATE SUBSCRIPTION takes its identifier from the top-level AND conditions of WHERE")
	// Access is decided first, as for subscribe's missing field.
	anon, _ := dialSession(t, h, nil)
	anon.failCall("execute", `"statement":"CREATE SUBSCRIPTION f TO plain"`, "UNAUTHORIZED", "Authentication is required for this stream")
	anon.failCall("subscribe", `"name":"f","event_type":"plain","identifier":{}`, "UNAUTHORIZED", "Authentication is required for this stream")
}
