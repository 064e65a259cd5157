package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"sync"
)

// Signing algorithms herald verifies. Each is pinned to its key type:
// HS256 only with jwt_secret, RS256 only with a JWKS RSA key, ES256 only
// with a JWKS P-256 key; `none` and every other algorithm are refused.
const (
	AlgHS256 = "HS256"
	AlgRS256 = "RS256"
	AlgES256 = "ES256"
)

// minRSABits is the smallest RSA modulus accepted from a JWKS file.
const minRSABits = 2048

// maxJWKSBytes bounds a JWKS file.
const maxJWKSBytes = 1 << 20

// jwk is one usable public key of a JWKS document.
type jwk struct {
	kid string
	alg string // AlgRS256 or AlgES256
	key crypto.PublicKey
}

// parseJWKS parses a JWKS document (RFC 7517) and returns its signing
// keys: RSA keys (RS256, at least 2048 bits) and EC P-256 keys (ES256).
// Keys for other uses ("use" other than "sig"), other algorithms or other
// key types (oct, OKP, other curves) are skipped. A key of a supported
// type that is malformed, or that carries private key material, makes the
// whole document invalid, as does a document without any usable key.
func parseJWKS(data []byte) ([]jwk, error) {
	var doc struct {
		Keys []map[string]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JWKS document: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`not a JWKS document: no "keys" array`)
	}
	var out []jwk
	for i, m := range doc.Keys {
		k, ok, err := parseJWK(m)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if ok {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no RS256 or ES256 signing key in the JWKS document")
	}
	return out, nil
}

// jwkString returns a string member of a JWK ("" when absent); a member
// of another JSON type is an error.
func jwkString(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%q must be a string", name)
	}
	return s, nil
}

// jwkBytes decodes a base64url member of a JWK.
func jwkBytes(m map[string]json.RawMessage, name string) ([]byte, error) {
	s, err := jwkString(m, name)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, fmt.Errorf("%q is missing", name)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not base64url: %w", name, err)
	}
	return b, nil
}

// parseJWK parses one key; ok is false for a key that is skipped.
func parseJWK(m map[string]json.RawMessage) (k jwk, ok bool, err error) {
	strs := map[string]string{}
	for _, name := range []string{"kty", "use", "alg", "kid", "crv"} {
		if strs[name], err = jwkString(m, name); err != nil {
			return jwk{}, false, err
		}
	}
	if strs["use"] != "" && strs["use"] != "sig" {
		return jwk{}, false, nil
	}
	var want string
	switch strs["kty"] {
	case "RSA":
		want = AlgRS256
	case "EC":
		if strs["crv"] != "P-256" {
			return jwk{}, false, nil
		}
		want = AlgES256
	default:
		return jwk{}, false, nil
	}
	if a := strs["alg"]; a != "" && a != want {
		return jwk{}, false, nil
	}
	for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "k"} {
		if _, has := m[private]; has {
			return jwk{}, false, fmt.Errorf("holds private key material (%q); publish only public keys", private)
		}
	}
	k = jwk{kid: strs["kid"], alg: want}
	if want == AlgRS256 {
		k.key, err = rsaKey(m)
	} else {
		k.key, err = ecKey(m)
	}
	if err != nil {
		return jwk{}, false, err
	}
	return k, true, nil
}

func rsaKey(m map[string]json.RawMessage) (*rsa.PublicKey, error) {
	n, err := jwkBytes(m, "n")
	if err != nil {
		return nil, err
	}
	e, err := jwkBytes(m, "e")
	if err != nil {
		return nil, err
	}
	if len(e) > 4 {
		return nil, errors.New(`"e" is too large`)
	}
	var exp int
	for _, b := range e {
		exp = exp<<8 | int(b)
	}
	if exp < 3 || exp%2 == 0 {
		return nil, fmt.Errorf(`"e" must be an odd exponent of at least 3, got %d`, exp)
	}
	mod := new(big.Int).SetBytes(n)
	if mod.BitLen() < minRSABits {
		return nil, fmt.Errorf("RSA key of %d bits; at least %d are required", mod.BitLen(), minRSABits)
	}
	return &rsa.PublicKey{N: mod, E: exp}, nil
}

func ecKey(m map[string]json.RawMessage) (*ecdsa.PublicKey, error) {
	x, err := jwkBytes(m, "x")
	if err != nil {
		return nil, err
	}
	y, err := jwkBytes(m, "y")
	if err != nil {
		return nil, err
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New(`P-256 "x" and "y" must be 32 bytes each`)
	}
	pt := make([]byte, 0, 65)
	pt = append(pt, 4)
	pt = append(pt, x...)
	pt = append(pt, y...)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
	if err != nil {
		return nil, fmt.Errorf("invalid P-256 point: %w", err)
	}
	return pub, nil
}

// jwksFile is a JWKS document on disk, re-read when the file changes
// (another inode, size or modification time). A change that does not
// parse keeps the previous keys and is logged once.
type jwksFile struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	info    os.FileInfo
	keys    []jwk
	failed  os.FileInfo // the version that last failed to load
	missing bool        // the last stat failed (logged once)
}

// loadJWKSFile reads a JWKS file; it fails unless the file holds at
// least one usable key.
func loadJWKSFile(path string, log *slog.Logger) (*jwksFile, error) {
	f := &jwksFile{path: path, log: log}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth.jwks_file: %w", err)
	}
	keys, err := readJWKS(path)
	if err != nil {
		return nil, fmt.Errorf("auth.jwks_file %s: %w", path, err)
	}
	f.info, f.keys = info, keys
	return f, nil
}

func readJWKS(path string) ([]jwk, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJWKSBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	return parseJWKS(data)
}

// sameVersion reports whether two stats describe the same file version.
func sameVersion(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// current returns the keys, re-reading the file when it changed.
func (f *jwksFile) current() []jwk {
	f.mu.Lock()
	defer f.mu.Unlock()
	info, err := os.Stat(f.path)
	if err != nil {
		if !f.missing {
			f.log.Warn("auth.jwks_file cannot be read; keeping the previous keys", "path", f.path, "error", err)
			f.missing = true
		}
		return f.keys
	}
	f.missing = false
	if sameVersion(info, f.info) || sameVersion(info, f.failed) {
		return f.keys
	}
	keys, err := readJWKS(f.path)
	if err != nil {
		f.log.Warn("auth.jwks_file changed but does not load; keeping the previous keys", "path", f.path, "error", err)
		f.failed = info
		return f.keys
	}
	f.info, f.keys, f.failed = info, keys, nil
	f.log.Info("auth.jwks_file reloaded", "path", f.path, "keys", len(keys))
	return keys
}

// keysFor returns the keys that may verify a token signed with alg and,
// when kid is set, carrying that key id.
func (f *jwksFile) keysFor(alg, kid string) []crypto.PublicKey {
	var out []crypto.PublicKey
	for _, k := range f.current() {
		if k.alg == alg && (kid == "" || k.kid == kid) {
			out = append(out, k.key)
		}
	}
	return out
}
