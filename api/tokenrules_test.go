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

	"github.com/herald-gateway/herald/auth"
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

		{"exp a numeric string", hsHeader, fmt.Sprintf(`{"username":"rita","exp":"%d"}`, exp), auth.MsgTokenExpNotNumeric},
		{"exp null", hsHeader, `{"username":"rita","exp":null}`, auth.MsgTokenExpNotNumeric},
		{"exp an object", hsHeader, `{"username":"rita","exp":{}}`, auth.MsgTokenExpNotNumeric},
		{"nbf a numeric string", hsHeader, rawClaims(fmt.Sprintf(`"nbf":"%d"`, t0.Unix())), auth.MsgTokenNbfNotNumeric},
		{"nbf true", hsHeader, rawClaims(`"nbf":true`), auth.MsgTokenNbfNotNumeric},
		{"iat a numeric string", hsHeader, rawClaims(fmt.Sprintf(`"iat":"%d"`, t0.Unix())), auth.MsgTokenIatNotNumeric},
		{"iat an array", hsHeader, rawClaims(`"iat":[1]`), auth.MsgTokenIatNotNumeric},
		{"exp beyond float64", hsHeader, `{"username":"rita","exp":1e400}`, auth.MsgTokenExpOutOfRange},
		{"exp beyond year 9999", hsHeader, `{"username":"rita","exp":253402300800}`, auth.MsgTokenExpOutOfRange},
		{"nbf that would overflow into the past", hsHeader, rawClaims(`"nbf":1e19`), auth.MsgTokenNbfOutOfRange},
		{"iat that would overflow into the past", hsHeader, rawClaims(`"iat":-1e19`), auth.MsgTokenIatOutOfRange},

		{"iat beyond the leeway", hsHeader, rawClaims(fmt.Sprintf(`"iat":%d`, t0.Add(61*time.Second).Unix())), auth.MsgTokenIatInFuture},
		{"iat a day ahead", hsHeader, rawClaims(fmt.Sprintf(`"iat":%d`, t0.Add(24*time.Hour).Unix())), auth.MsgTokenIatInFuture},

		{"crit naming an extension", `{"alg":"HS256","crit":["b64"],"b64":false}`, rawClaims(""), auth.MsgTokenCritUnsupported},
		{"crit naming a registered parameter", `{"alg":"HS256","crit":["exp"],"exp":1}`, rawClaims(""), auth.MsgTokenCritUnsupported},
		{"crit empty", `{"alg":"HS256","crit":[]}`, rawClaims(""), auth.MsgTokenCritMalformed},
		{"crit a string", `{"alg":"HS256","crit":"b64"}`, rawClaims(""), auth.MsgTokenCritMalformed},
		{"crit with a number", `{"alg":"HS256","crit":[1]}`, rawClaims(""), auth.MsgTokenCritMalformed},
		{"crit null", `{"alg":"HS256","crit":null}`, rawClaims(""), auth.MsgTokenCritMalformed},

		{"claim repeated, last one wins elsewhere", hsHeader, `{"username":"rita","realm":"other","realm":"ecmwf","roles":["reader"],"exp":` + fmt.Sprint(exp) + `}`, auth.MsgTokenClaimsDuplicate},
		{"claim repeated through an escape", hsHeader, rawClaims(`"re\u0061lm":"other"`), auth.MsgTokenClaimsDuplicate},
		{"exp repeated", hsHeader, rawClaims(`"exp":1`), auth.MsgTokenClaimsDuplicate},
		{"member repeated in attributes", hsHeader, rawClaims(`"attributes":{"team":"a","team":"b"}`), auth.MsgTokenClaimsDuplicate},
		{"member repeated in an array", hsHeader, rawClaims(`"x":[{"a":1,"a":2}]`), auth.MsgTokenClaimsDuplicate},
		{"header member repeated", `{"alg":"none","alg":"HS256"}`, rawClaims(""), auth.MsgTokenHeaderDuplicate},
		{"kid repeated", `{"alg":"HS256","kid":"a","kid":"b"}`, rawClaims(""), auth.MsgTokenHeaderDuplicate},

		{"claims not valid UTF-8", hsHeader, rawClaims("\"x\":\"\xff\""), auth.MsgInvalidToken},
		{"claims with trailing data", hsHeader, rawClaims("") + "{}", auth.MsgInvalidToken},
		{"header not an object", `["HS256"]`, rawClaims(""), auth.MsgInvalidToken},
		{"claims null", hsHeader, `null`, auth.MsgInvalidToken},
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
		{"REALM does not override realm", rawClaims(`"REALM":"partners"`), "realm", 403, auth.MsgNoReadRole},
		{"REALM alone is no realm", fmt.Sprintf(`{"username":"rita","REALM":"ecmwf","roles":["reader"],"exp":%d}`, exp), "readers", 403, auth.MsgNoReadRole},
		{"role\u017f is not roles", fmt.Sprintf(`{"username":"rita","realm":"ecmwf","role\u017f":["reader"],"exp":%d}`, exp), "readers", 403, auth.MsgNoReadRole},
		{"USERNAME is not username", fmt.Sprintf(`{"USERNAME":"rita","exp":%d}`, exp), "any", 401, auth.MsgMissingUserClaims},
		{"EXP is not exp", `{"username":"rita","EXP":"9999999999"}`, "any", 401, auth.MsgInvalidToken},
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
