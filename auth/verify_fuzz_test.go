package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// fuzzSecret signs the fuzzed tokens, so that inputs reach the claims
// checks behind the signature.
const fuzzSecret = "fuzz-secret"

// fuzzNow is the verifier's clock in FuzzVerify.
var fuzzNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// signHS256 signs raw header and claims JSON.
func signHS256(header, claims []byte) string {
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, []byte(fuzzSecret))
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// FuzzVerify signs arbitrary header and claims JSON and verifies it. An
// accepted token must have strict JSON objects (no repeated member, valid
// UTF-8) for both, no crit, a JSON-number exp and JSON-number nbf/iat
// when present, and a user; a refused one wraps ErrInvalidToken or
// ErrMissingUserClaims, and a rule error's message never holds any part
// of the token.
func FuzzVerify(f *testing.F) {
	hs := `{"alg":"HS256","typ":"JWT"}`
	seeds := [][2]string{
		{hs, `{"username":"rita","realm":"ecmwf","roles":["reader"],"exp":1893553445}`},
		{hs, `{"username":"rita","exp":1893553445.5,"iat":1893553445}`},
		{hs, `{"username":"rita","exp":"1893553445"}`},
		{hs, `{"username":"rita","exp":null}`},
		{hs, `{"username":"rita","exp":1893553445,"nbf":"1"}`},
		{hs, `{"username":"rita","exp":1893553445,"iat":true}`},
		{hs, `{"username":"rita","exp":1893553445,"nbf":1e19}`},
		{hs, `{"username":"rita","exp":1e400}`},
		{hs, `{"username":"rita","exp":1893553445,"iat":1893560000}`},
		{hs, `{"username":"rita","realm":"other","realm":"ecmwf","exp":1893553445}`},
		{hs, `{"username":"rita","realm":"x","re\u0061lm":"ecmwf","exp":1893553445}`},
		{hs, `{"username":"rita","exp":1893553445,"attributes":{"a":"1","a":"2"}}`},
		{hs, `{"username":"rita","REALM":"ecmwf","role\u017f":["admin"],"exp":1893553445}`},
		{hs, "{\"username\":\"\xff\",\"exp\":1893553445}"},
		{hs, `null`},
		{`{"alg":"HS256","crit":["b64"],"b64":false}`, `{"username":"rita","exp":1893553445}`},
		{`{"alg":"HS256","crit":[]}`, `{"username":"rita","exp":1893553445}`},
		{`{"alg":"HS256","crit":"b64"}`, `{"username":"rita","exp":1893553445}`},
		{`{"alg":"none","alg":"HS256"}`, `{"username":"rita","exp":1893553445}`},
		{`{"alg":"HS256","kid":"a","kid":"b"}`, `{"username":"rita","exp":1893553445}`},
		{`["HS256"]`, `{}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	v, err := NewVerifier(VerifierOptions{Secret: fuzzSecret, Now: func() time.Time { return fuzzNow }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header, claims []byte) {
		token := signHS256(header, claims)
		id, err := v.Verify(token)
		if err != nil {
			if id != nil || !(errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrMissingUserClaims)) {
				t.Fatalf("identity %v with error %v", id, err)
			}
			var rule *TokenRuleError
			if errors.As(err, &rule) {
				for _, seg := range strings.Split(token, ".") {
					if strings.Contains(rule.Message, seg) {
						t.Fatalf("rule message %q holds a token segment", rule.Message)
					}
				}
			}
			return
		}
		if id == nil || id.Username == "" {
			t.Fatalf("accepted without a user: %+v", id)
		}
		// An independent reading: jsontext validation and encoding/json.
		for _, part := range [][]byte{header, claims} {
			if !jsontext.Value(part).IsValid() || jsontext.Value(part).Kind() != '{' {
				t.Fatalf("accepted a segment that is not a strict JSON object: %q", part)
			}
		}
		var h map[string]any
		if stdjson.Unmarshal(header, &h) != nil || h["alg"] != AlgHS256 {
			t.Fatalf("accepted header %q", header)
		}
		if _, has := h["crit"]; has {
			t.Fatalf("accepted crit: %q", header)
		}
		dec := stdjson.NewDecoder(bytes.NewReader(claims))
		dec.UseNumber()
		var c map[string]any
		if dec.Decode(&c) != nil {
			t.Fatalf("accepted claims %q", claims)
		}
		if _, ok := c["exp"].(stdjson.Number); !ok {
			t.Fatalf("accepted exp %#v", c["exp"])
		}
		for _, name := range []string{"nbf", "iat"} {
			if x, has := c[name]; has {
				if _, ok := x.(stdjson.Number); !ok {
					t.Fatalf("accepted %s %#v", name, x)
				}
			}
		}
	})
}
