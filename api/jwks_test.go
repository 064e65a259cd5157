package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-gateway/herald/auth"
)

// testKeySet holds the asymmetric keys of the tests.
type testKeySet struct {
	once        sync.Once
	rsa1, rsa2  *rsa.PrivateKey
	ec1         *ecdsa.PrivateKey
	ec384       *ecdsa.PrivateKey
	rsa1024Bits *rsa.PrivateKey
}

// testKeys are generated once per test binary.
var testKeys testKeySet

func keys(t *testing.T) *testKeySet {
	t.Helper()
	testKeys.once.Do(func() {
		var err error
		must := func(e error) {
			if e != nil && err == nil {
				err = e
			}
		}
		var e error
		testKeys.rsa1, e = rsa.GenerateKey(rand.Reader, 2048)
		must(e)
		testKeys.rsa2, e = rsa.GenerateKey(rand.Reader, 2048)
		must(e)
		testKeys.ec1, e = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(e)
		testKeys.ec384, e = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		must(e)
		testKeys.rsa1024Bits, e = rsa.GenerateKey(rand.Reader, 1024)
		must(e)
		if err != nil {
			panic(err)
		}
	})
	return &testKeys
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// rsaJWK returns the public JWK of an RSA key.
func rsaJWK(k *rsa.PrivateKey, kid string) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

// ecJWK returns the public JWK of an EC key.
func ecJWK(k *ecdsa.PrivateKey, kid string) map[string]any {
	size := (k.Curve.Params().BitSize + 7) / 8
	pub, err := k.PublicKey.Bytes()
	if err != nil {
		panic(err)
	}
	crv := map[int]string{256: "P-256", 384: "P-384"}[k.Curve.Params().BitSize]
	return map[string]any{"kty": "EC", "kid": kid, "crv": crv, "x": b64(pub[1 : 1+size]), "y": b64(pub[1+size:])}
}

// writeJWKS writes a JWKS document and gives the file a modification
// time of its own, so that a rewrite is seen as a change even on file
// systems with coarse timestamps.
func writeJWKS(t *testing.T, path string, version int, keys ...map[string]any) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, version, b)
}

func writeFile(t *testing.T, path string, version int, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2020, 1, 1, 0, 0, version, 0, time.UTC)
	if err := os.Chtimes(tmp, mt, mt); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// jwksConfig is a trusted_proxy config verifying with a JWKS file only,
// or with the file and a secret.
func jwksConfig(path string, withSecret bool) string {
	secret := ""
	if withSecret {
		secret = ", jwt_secret: " + testSecret
	}
	return strings.Replace(matrixConfig("trusted_proxy", ""), "jwt_secret: "+testSecret, "jwks_file: '"+path+"'"+secret, 1)
}

// TestJWKS verifies RS256 and ES256 tokens from a JWKS file, with the
// algorithm pinned to the key type, and follows key rotation by
// rewriting the file.
func TestJWKS(t *testing.T) {
	k := keys(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	writeJWKS(t, path, 1, rsaJWK(k.rsa1, "r1"), ecJWK(k.ec1, "e1"),
		map[string]any{"kty": "oct", "k": "c2VjcmV0"},                        // symmetric keys are skipped
		ecJWK(k.ec384, "p384"),                                               // other curves are skipped
		map[string]any{"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"}) // encryption keys are skipped
	s := start(t, setup{yaml: jwksConfig(path, false)})
	reader := user("rita", "ecmwf", "reader")
	pubDER, err := x509.MarshalPKIXPublicKey(&k.rsa1.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})

	watch := func(token string) reply {
		return s.call(t, http.MethodPost, "/api/v1/watch", `{"event_type":"readers","identifier":{}}`, bearer(token))
	}
	accept := func(name, token string) {
		t.Helper()
		if r := watch(token); r.Status != 200 {
			t.Fatalf("%s: got %d %s", name, r.Status, r.Raw)
		}
	}
	refuse := func(name, token string) {
		t.Helper()
		wantAuthError(t, watch(token), 401, "UNAUTHORIZED", "unauthorized", auth.MsgInvalidToken, []string{"Bearer"})
	}
	accept("RS256 with kid", mint(t, jwt.SigningMethodRS256, k.rsa1, reader, "r1"))
	accept("RS256 without kid", mint(t, jwt.SigningMethodRS256, k.rsa1, reader, ""))
	accept("ES256 with kid", mint(t, jwt.SigningMethodES256, k.ec1, reader, "e1"))
	accept("ES256 without kid", mint(t, jwt.SigningMethodES256, k.ec1, reader, ""))
	refuse("RS256 unknown kid", mint(t, jwt.SigningMethodRS256, k.rsa1, reader, "nope"))
	refuse("RS256 kid of the EC key", mint(t, jwt.SigningMethodRS256, k.rsa1, reader, "e1"))
	refuse("RS256 signed by another key", mint(t, jwt.SigningMethodRS256, k.rsa2, reader, "r1"))
	refuse("RS512", mint(t, jwt.SigningMethodRS512, k.rsa1, reader, "r1"))
	refuse("PS256", mint(t, jwt.SigningMethodPS256, k.rsa1, reader, "r1"))
	refuse("ES384 with a P-384 key", mint(t, jwt.SigningMethodES384, k.ec384, reader, "p384"))
	refuse("HS256 without jwt_secret", hs256(t, reader))
	refuse("HS256 keyed with the RSA public key (PEM)", mint(t, jwt.SigningMethodHS256, pubPEM, reader, "r1"))
	refuse("HS256 keyed with the RSA public key (DER)", mint(t, jwt.SigningMethodHS256, pubDER, reader, "r1"))
	refuse("alg none", mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, reader, "r1"))
	expired := user("rita", "ecmwf", "reader")
	expired["exp"] = t0.Add(-time.Hour).Unix()
	refuse("expired RS256", mint(t, jwt.SigningMethodRS256, k.rsa1, expired, "r1"))

	// Rotation: r2 replaces r1.
	writeJWKS(t, path, 2, rsaJWK(k.rsa2, "r2"))
	accept("RS256 with the new key", mint(t, jwt.SigningMethodRS256, k.rsa2, reader, "r2"))
	refuse("RS256 with the retired key", mint(t, jwt.SigningMethodRS256, k.rsa1, reader, "r1"))
	refuse("ES256 with the retired key", mint(t, jwt.SigningMethodES256, k.ec1, reader, "e1"))

	// A rewrite that does not parse keeps the keys in use; so does a
	// missing file. The next good rewrite is picked up.
	writeFile(t, path, 3, []byte(`{"keys": [`))
	accept("keys kept over a broken rewrite", mint(t, jwt.SigningMethodRS256, k.rsa2, reader, "r2"))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	accept("keys kept while the file is missing", mint(t, jwt.SigningMethodRS256, k.rsa2, reader, "r2"))
	writeJWKS(t, path, 4, ecJWK(k.ec1, "e1"))
	accept("ES256 after the file returns", mint(t, jwt.SigningMethodES256, k.ec1, reader, "e1"))
	refuse("RS256 after the file returns", mint(t, jwt.SigningMethodRS256, k.rsa2, reader, "r2"))
}

// TestJWKSWithSecret: both HS256 (secret) and RS256 (file) verify; the
// HS/RS confusion stays refused.
func TestJWKSWithSecret(t *testing.T) {
	k := keys(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeJWKS(t, path, 1, rsaJWK(k.rsa1, "r1"))
	s := start(t, setup{yaml: jwksConfig(path, true)})
	reader := user("rita", "ecmwf", "reader")
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.rsa1.PublicKey)
	for _, tc := range []struct {
		name  string
		token string
		want  int
	}{
		{"HS256", hs256(t, reader), 200},
		{"RS256", mint(t, jwt.SigningMethodRS256, k.rsa1, reader, "r1"), 200},
		{"HS256 keyed with the public key", mint(t, jwt.SigningMethodHS256, pubDER, reader, "r1"), 401},
		{"HS256 keyed with the modulus", mint(t, jwt.SigningMethodHS256, k.rsa1.N.Bytes(), reader, "r1"), 401},
	} {
		r := s.call(t, http.MethodPost, "/api/v1/watch", `{"event_type":"readers","identifier":{}}`, bearer(tc.token))
		if r.Status != tc.want {
			t.Fatalf("%s: got %d %s", tc.name, r.Status, r.Raw)
		}
	}
}

// TestJWKSStartup: a JWKS file that is missing or holds no usable key
// stops herald at startup.
func TestJWKSStartup(t *testing.T) {
	k := keys(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, _ := json.Marshal(map[string]any{"keys": []any{rsaJWK(k.rsa1024Bits, "small")}})
	private, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "d": "AA"}}})
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.json"), "auth.jwks_file: stat " + filepath.Join(dir, "none.json") + ": no such file or directory"},
		{"not JSON", write("bad.json", "nope"), "auth.jwks_file " + filepath.Join(dir, "bad.json") + ": not a JWKS document: invalid character 'o' in literal null (expecting 'u')"},
		{"no usable key", write("oct.json", `{"keys":[{"kty":"oct","k":"AA"}]}`), "auth.jwks_file " + filepath.Join(dir, "oct.json") + ": no RS256 or ES256 signing key in the JWKS document"},
		{"small RSA key", write("small.json", string(small)), "auth.jwks_file " + filepath.Join(dir, "small.json") + ": key 0: RSA key of 1024 bits; at least 2048 are required"},
		{"private key", write("private.json", string(private)), "auth.jwks_file " + filepath.Join(dir, "private.json") + `: key 0: holds private key material ("d"); publish only public keys`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auth.NewAuthenticator(auth.Options{Config: auth.Config{
				Enabled: true, Mode: auth.ModeTrustedProxy, JWKSFile: tc.path, AdminRoles: map[string][]string{"r": {"a"}},
			}})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}
