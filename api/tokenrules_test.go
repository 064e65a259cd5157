package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/api"
	"herald/handlers"
)

// signRaw signs a header and a claims object given as raw JSON text with
// HS256 and the test secret, so that a test can send JSON no encoder
// would produce (repeated members, strings for NumericDates).
func signRaw(header, claims string) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// rawClaims returns the claims of a reader valid for an hour after t0,
// with extra members (raw JSON) appended.
func rawClaims(extra string) string {
	c := fmt.Sprintf(`{"username":"rita","realm":"ecmwf","roles":["reader"],"exp":%d`, t0.Add(time.Hour).Unix())
	if extra != "" {
		c += "," + extra
	}
	return c + "}"
}

const hsHeader = `{"alg":"HS256","typ":"JWT"}`

// TestTokenRules sends tokens that break one of herald's own JWT rules
// (RFC 7515 crit, RFC 7519 NumericDate, repeated JSON members, iat in the
// future, exact claim names) to the replay and admin routes in both auth
// modes: each is a 401 UNAUTHORIZED naming the rule, with the usual
// challenges, and the token never appears in the answer.
func TestTokenRules(t *testing.T) {
	exp := t0.Add(time.Hour).Unix()
	tests := []struct {
		name           string
		header, claims string
		msg            string // "" means accepted (200)
	}{
		{"well-formed", hsHeader, rawClaims(""), ""},
		{"fractional exp", hsHeader, fmt.Sprintf(`{"username":"rita","exp":%d.5}`, exp), ""},
		{"iat now", hsHeader, rawClaims(fmt.Sprintf(`"iat":%d`, t0.Unix())), ""},
		{"iat within the leeway", hsHeader, rawClaims(fmt.Sprintf(`"iat":%d`, t0.Add(59*time.Second).Unix())), ""},

		{"exp a numeric string", hsHeader, fmt.Sprintf(`{"username":"rita","exp":"%d"}`, exp), api.MsgTokenExpNotNumeric},
		{"exp null", hsHeader, `{"username":"rita","exp":null}`, api.MsgTokenExpNotNumeric},
		{"exp an object", hsHeader, `{"username":"rita","exp":{}}`, api.MsgTokenExpNotNumeric},
		{"nbf a numeric string", hsHeader, rawClaims(fmt.Sprintf(`"nbf":"%d"`, t0.Unix())), api.MsgTokenNbfNotNumeric},
		{"nbf true", hsHeader, rawClaims(`"nbf":true`), api.MsgTokenNbfNotNumeric},
		{"iat a numeric string", hsHeader, rawClaims(fmt.Sprintf(`"iat":"%d"`, t0.Unix())), api.MsgTokenIatNotNumeric},
		{"iat an array", hsHeader, rawClaims(`"iat":[1]`), api.MsgTokenIatNotNumeric},
		{"exp beyond float64", hsHeader, `{"username":"rita","exp":1e400}`, api.MsgTokenExpOutOfRange},
		{"exp beyond year 9999", hsHeader, `{"username":"rita","exp":253402300800}`, api.MsgTokenExpOutOfRange},
		{"nbf that would overflow into the past", hsHeader, rawClaims(`"nbf":1e19`), api.MsgTokenNbfOutOfRange},
		{"iat that would overflow into the past", hsHeader, rawClaims(`"iat":-1e19`), api.MsgTokenIatOutOfRange},

		{"iat beyond the leeway", hsHeader, rawClaims(fmt.Sprintf(`"iat":%d`, t0.Add(61*time.Second).Unix())), api.MsgTokenIatInFuture},
		{"iat a day ahead", hsHeader, rawClaims(fmt.Sprintf(`"iat":%d`, t0.Add(24*time.Hour).Unix())), api.MsgTokenIatInFuture},

		{"crit naming an extension", `{"alg":"HS256","crit":["b64"],"b64":false}`, rawClaims(""), api.MsgTokenCritUnsupported},
		{"crit naming a registered parameter", `{"alg":"HS256","crit":["exp"],"exp":1}`, rawClaims(""), api.MsgTokenCritUnsupported},
		{"crit empty", `{"alg":"HS256","crit":[]}`, rawClaims(""), api.MsgTokenCritMalformed},
		{"crit a string", `{"alg":"HS256","crit":"b64"}`, rawClaims(""), api.MsgTokenCritMalformed},
		{"crit with a number", `{"alg":"HS256","crit":[1]}`, rawClaims(""), api.MsgTokenCritMalformed},
		{"crit null", `{"alg":"HS256","crit":null}`, rawClaims(""), api.MsgTokenCritMalformed},

		{"claim repeated, last one wins elsewhere", hsHeader, `{"username":"rita","realm":"other","realm":"ecmwf","roles":["reader"],"exp":` + fmt.Sprint(exp) + `}`, api.MsgTokenClaimsDuplicate},
		{"claim repeated through an escape", hsHeader, rawClaims(`"re\u0061lm":"other"`), api.MsgTokenClaimsDuplicate},
		{"exp repeated", hsHeader, rawClaims(`"exp":1`), api.MsgTokenClaimsDuplicate},
		{"member repeated in attributes", hsHeader, rawClaims(`"attributes":{"team":"a","team":"b"}`), api.MsgTokenClaimsDuplicate},
		{"member repeated in an array", hsHeader, rawClaims(`"x":[{"a":1,"a":2}]`), api.MsgTokenClaimsDuplicate},
		{"header member repeated", `{"alg":"none","alg":"HS256"}`, rawClaims(""), api.MsgTokenHeaderDuplicate},
		{"kid repeated", `{"alg":"HS256","kid":"a","kid":"b"}`, rawClaims(""), api.MsgTokenHeaderDuplicate},

		{"claims not valid UTF-8", hsHeader, rawClaims("\"x\":\"\xff\""), handlers.MsgInvalidToken},
		{"claims with trailing data", hsHeader, rawClaims("") + "{}", handlers.MsgInvalidToken},
		{"header not an object", `["HS256"]`, rawClaims(""), handlers.MsgInvalidToken},
		{"claims null", hsHeader, `null`, handlers.MsgInvalidToken},
	}
	tron := passThroughTron(t)
	for _, mode := range []string{"trusted_proxy", "direct"} {
		s := start(t, setup{yaml: matrixConfig(mode, tron.URL)})
		challenges := []string{"Bearer"}
		if mode == "direct" {
			challenges = []string{"Bearer", "Basic"}
		}
		for _, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				tok := signRaw(tc.header, tc.claims)
				r := s.call(t, http.MethodPost, "/api/v1/replay", `{"event_type":"any","identifier":{},"from_id":"0"}`, bearer(tok))
				if tc.msg == "" {
					if r.Status != http.StatusOK {
						t.Fatalf("got %d %s, want 200", r.Status, r.Raw)
					}
					return
				}
				wantAuthError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "unauthorized", tc.msg, challenges)
				r = s.call(t, http.MethodDelete, "/api/v1/admin/wipe/all", "", bearer(tok))
				wantAuthError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "unauthorized", tc.msg, challenges)
				for _, seg := range strings.Split(tok, ".") {
					if strings.Contains(r.Raw, seg) {
						t.Fatalf("answer echoes the token: %s", r.Raw)
					}
				}
			})
		}
	}
}

// TestClaimNamesAreExact checks that claim names match exactly (RFC 7519
// §4): a case variant or a Unicode fold of a claim herald reads is an
// unknown claim, ignored, where encoding/json would have taken it (and
// let it win over the exact name).
func TestClaimNamesAreExact(t *testing.T) {
	s := start(t, setup{yaml: matrixConfig("trusted_proxy", "")})
	exp := t0.Add(time.Hour).Unix()
	tests := []struct {
		name, claims, stream string
		status               int
		msg                  string
	}{
		{"REALM does not override realm", rawClaims(`"REALM":"partners"`), "realm", 403, handlers.MsgNoReadRole},
		{"REALM alone is no realm", fmt.Sprintf(`{"username":"rita","REALM":"ecmwf","roles":["reader"],"exp":%d}`, exp), "readers", 403, handlers.MsgNoReadRole},
		{"role\u017f is not roles", fmt.Sprintf(`{"username":"rita","realm":"ecmwf","role\u017f":["reader"],"exp":%d}`, exp), "readers", 403, handlers.MsgNoReadRole},
		{"USERNAME is not username", fmt.Sprintf(`{"USERNAME":"rita","exp":%d}`, exp), "any", 401, handlers.MsgMissingUserClaims},
		{"EXP is not exp", `{"username":"rita","EXP":"9999999999"}`, "any", 401, handlers.MsgInvalidToken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.call(t, http.MethodPost, "/api/v1/replay", `{"event_type":"`+tc.stream+`","identifier":{},"from_id":"0"}`, bearer(signRaw(hsHeader, tc.claims)))
			if tc.status == 403 {
				wantAuthError(t, r, 403, "FORBIDDEN", "forbidden", tc.msg, nil)
			} else {
				wantAuthError(t, r, 401, "UNAUTHORIZED", "unauthorized", tc.msg, []string{"Bearer"})
			}
		})
	}
}
