package auth

import (
	"net/http"
	"strings"
	"testing"
)

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		value  string
		direct bool
		want   Credentials
		err    string
	}{
		{"Bearer a.b.c", true, Credentials{Scheme: "Bearer", Header: "Bearer a.b.c", Token: "a.b.c"}, ""},
		{"  bearer a.b.c  ", true, Credentials{Scheme: "Bearer", Header: "bearer a.b.c", Token: "a.b.c"}, ""},
		{"Basic dXNlcjpwYXNz", true, Credentials{Scheme: "Basic", Header: "Basic dXNlcjpwYXNz"}, ""},
		{"BASIC  dXNlcjpwYXNz", true, Credentials{Scheme: "Basic", Header: "BASIC  dXNlcjpwYXNz"}, ""},
		{"Bearer a b", true, Credentials{Scheme: "Bearer", Header: "Bearer a b", Token: "a b"}, ""},
		{"", true, Credentials{}, "Authorization header cannot be empty"},
		{"   ", true, Credentials{}, "Authorization header cannot be empty"},
		{"Bearer", true, Credentials{}, "Authorization header must use Bearer or Basic scheme"},
		{"Bearer\ta.b.c", true, Credentials{}, "Authorization header must use Bearer or Basic scheme"},
		{"Digest abc", true, Credentials{}, "Authorization header must use Bearer or Basic scheme"},
		{"Basic \t ", true, Credentials{}, "Authorization header must use Bearer or Basic scheme"},
		{"Basic  \t x", true, Credentials{Scheme: "Basic", Header: "Basic  \t x"}, ""},
		{"Basic\u00a0abc", true, Credentials{}, "Authorization header is not valid UTF-8"},
		{"Bearer \xff", true, Credentials{}, "Authorization header is not valid UTF-8"},
		{"Bearer a\x00b", true, Credentials{}, "Authorization header is not valid UTF-8"},
		{"Bearer a.b.c", false, Credentials{Scheme: "Bearer", Header: "Bearer a.b.c", Token: "a.b.c"}, ""},
		{" BEARER \t a.b.c ", false, Credentials{Scheme: "Bearer", Header: "BEARER \t a.b.c", Token: "a.b.c"}, ""},
		{"Basic dXNlcjpwYXNz", false, Credentials{}, "Authorization header must use Bearer token"},
		{"Bearer", false, Credentials{}, "Authorization header must use Bearer token"},
		{"Bearer a b", false, Credentials{}, "Authorization header must use Bearer token"},
		{"", false, Credentials{}, "Authorization header must use Bearer token"},
		{"Bearer caf\xc3\xa9", false, Credentials{}, "Authorization header must use Bearer token"},
	}
	for _, tc := range tests {
		got, err := ParseAuthorization(tc.value, tc.direct)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("ParseAuthorization(%q, direct=%v) = %+v, %q; want %+v, %q", tc.value, tc.direct, got, gotErr, tc.want, tc.err)
		}
	}
}

func FuzzParseAuthorization(f *testing.F) {
	for _, s := range []string{"Bearer a.b.c", "Basic dXNlcjpwYXNz", "", " ", "Bearer", "bearer  x ", "Digest x", "Bearer a b", "Basic \xff", "Bearer\tx"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, value string, direct bool) {
		c, err := ParseAuthorization(value, direct)
		if err != nil {
			if _, ok := err.(*MalformedHeaderError); !ok || c != (Credentials{}) {
				t.Fatalf("error %T with credentials %+v", err, c)
			}
			return
		}
		if c.Scheme != "Bearer" && c.Scheme != "Basic" {
			t.Fatalf("scheme %q", c.Scheme)
		}
		if c.Header == "" || c.Header != strings.TrimSpace(c.Header) || !visibleASCII(c.Header) {
			t.Fatalf("header %q", c.Header)
		}
		if !direct && (c.Token == "" || strings.ContainsAny(c.Token, " \t") || c.Scheme != "Bearer") {
			t.Fatalf("trusted_proxy token %q", c.Token)
		}
		if (c.Scheme == "Bearer") != (c.Token != "") {
			t.Fatalf("token %q for scheme %s", c.Token, c.Scheme)
		}
	})
}

const sampleJWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.c2lnbmF0dXJl"

func TestExtractJWT(t *testing.T) {
	tests := []struct {
		name   string
		header string
		body   string
		want   string
	}{
		{"header", "Bearer " + sampleJWT, "", sampleJWT},
		{"header wins over body", "Bearer " + sampleJWT, `{"token":"x.y.z"}`, sampleJWT},
		{"header not a JWT, body used", "Bearer nope", `{"token":"x.y.z"}`, "x.y.z"},
		{"header not bearer", "Basic " + sampleJWT, `"x.y.z"`, "x.y.z"},
		{"token", "", `{"token":"` + sampleJWT + `"}`, sampleJWT},
		{"jwt", "", `{"jwt":"` + sampleJWT + `"}`, sampleJWT},
		{"access_token", "", `{"access_token":" ` + sampleJWT + ` "}`, sampleJWT},
		{"token before jwt", "", `{"jwt":"a.b.c","token":"x.y.z"}`, "x.y.z"},
		{"first present member decides", "", `{"token":"bad","jwt":"x.y.z"}`, ""},
		{"null members are absent", "", `{"token":null,"jwt":"x.y.z"}`, "x.y.z"},
		{"non-string member", "", `{"token":1,"jwt":"x.y.z"}`, ""},
		{"JSON string", "", ` "` + sampleJWT + `" `, sampleJWT},
		{"raw", "", "\n" + sampleJWT + "\r\n", sampleJWT},
		{"empty", "", "", ""},
		{"empty object", "", "{}", ""},
		{"text", "", "ok", ""},
		{"two segments", "", "a.b", ""},
		{"empty segment", "", "a..b", ""},
		{"four segments", "", "a.b.c.d", ""},
		{"padding", "", "a.b=.c", ""},
		{"plus sign", "", "a.b+c.d", ""},
	}
	for _, tc := range tests {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Authorization", tc.header)
		}
		got, ok := ExtractJWT(h, []byte(tc.body))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: ExtractJWT = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

func FuzzExtractJWT(f *testing.F) {
	for _, s := range []string{"", "{}", `{"token":"a.b.c"}`, `{"jwt":"a.b.c"}`, `{"access_token":"a.b.c"}`, `"a.b.c"`, "a.b.c", "a..c", `{"token":1}`, "\xff"} {
		f.Add("", s)
		f.Add("Bearer a.b.c", s)
	}
	f.Fuzz(func(t *testing.T, header, body string) {
		h := http.Header{}
		h.Set("Authorization", header)
		got, ok := ExtractJWT(h, []byte(body))
		if ok != (got != "") || (ok && !jwtLike(got)) {
			t.Fatalf("ExtractJWT(%q, %q) = %q, %v", header, body, got, ok)
		}
	})
}

func TestParseJWKS(t *testing.T) {
	// A 2048-bit modulus (0x80 followed by 255 zero bytes, base64url).
	n2048 := "gA" + strings.Repeat("A", 340)
	tests := []struct {
		name, doc, err string
		keys           int
	}{
		{"not JSON", "{", "not a JWKS document: unexpected end of JSON input", 0},
		{"no keys", "{}", `not a JWKS document: no "keys" array`, 0},
		{"keys not a list", `{"keys":{}}`, "not a JWKS document: json: cannot unmarshal object into Go struct field .keys of type []map[string]json.RawMessage", 0},
		{"empty", `{"keys":[]}`, "no RS256 or ES256 signing key in the JWKS document", 0},
		{"rsa", `{"keys":[{"kty":"RSA","n":"` + n2048 + `","e":"AQAB"}]}`, "", 1},
		{"rsa wrong alg skipped", `{"keys":[{"kty":"RSA","alg":"RS512","n":"` + n2048 + `","e":"AQAB"}]}`, "no RS256 or ES256 signing key in the JWKS document", 0},
		{"rsa small", `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`, "key 0: RSA key of 17 bits; at least 2048 are required", 0},
		{"rsa even exponent", `{"keys":[{"kty":"RSA","n":"` + n2048 + `","e":"Ag"}]}`, `key 0: "e" must be an odd exponent of at least 3, got 2`, 0},
		{"rsa huge exponent", `{"keys":[{"kty":"RSA","n":"` + n2048 + `","e":"AQABAQAB"}]}`, `key 0: "e" is too large`, 0},
		{"rsa missing n", `{"keys":[{"kty":"RSA","e":"AQAB"}]}`, `key 0: "n" is missing`, 0},
		{"rsa padded base64", `{"keys":[{"kty":"RSA","n":"` + n2048 + `","e":"AQAB=="}]}`, `key 0: "e" is not base64url: illegal base64 data at input byte 4`, 0},
		{"kty not a string", `{"keys":[{"kty":1}]}`, `key 0: "kty" must be a string`, 0},
		{"ec wrong length", `{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`, `key 0: P-256 "x" and "y" must be 32 bytes each`, 0},
		{"ec not on curve", `{"keys":[{"kty":"EC","crv":"P-256","x":"` + strings.Repeat("A", 43) + `","y":"` + strings.Repeat("A", 42) + `E"}]}`, "key 0: invalid P-256 point: P256 point not on curve", 0},
		{"ec other curve skipped", `{"keys":[{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}]}`, "no RS256 or ES256 signing key in the JWKS document", 0},
		{"private rsa", `{"keys":[{"kty":"RSA","n":"` + n2048 + `","e":"AQAB","p":"AA"}]}`, `key 0: holds private key material ("p"); publish only public keys`, 0},
		{"encryption key skipped", `{"keys":[{"kty":"RSA","use":"enc","n":"x","e":"x"},{"kty":"RSA","n":"` + n2048 + `","e":"AQAB","kid":"k"}]}`, "", 1},
	}
	for _, tc := range tests {
		keys, err := parseJWKS([]byte(tc.doc))
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.err || len(keys) != tc.keys {
			t.Errorf("%s: %d keys, error %q; want %d, %q", tc.name, len(keys), gotErr, tc.keys, tc.err)
		}
	}
}

func FuzzParseJWKS(f *testing.F) {
	for _, s := range []string{"", "{}", `{"keys":[]}`, `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`, `{"keys":[{"kty":"oct","k":"AA"}]}`, `{"keys":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		keys, err := parseJWKS(doc)
		if (err == nil) != (len(keys) > 0) {
			t.Fatalf("%d keys with error %v", len(keys), err)
		}
		for _, k := range keys {
			if (k.alg != AlgRS256 && k.alg != AlgES256) || k.key == nil {
				t.Fatalf("key %+v", k)
			}
		}
	})
}
