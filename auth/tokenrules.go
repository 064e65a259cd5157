package auth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Messages of the 401 answers to tokens refused by herald's own rules,
// checked on top of the JWT library's (signature, algorithm, exp, nbf).
// Each names the rule; none holds any part of the token.
const (
	MsgTokenHeaderDuplicate = "token header must not repeat a member name"
	MsgTokenClaimsDuplicate = "token claims must not repeat a member name"
	MsgTokenCritUnsupported = "token header crit names a JWS extension herald does not support (it supports none)"
	MsgTokenCritMalformed   = "token header crit must be a non-empty array of extension names"
	MsgTokenExpNotNumeric   = "token claim exp must be a NumericDate (a JSON number)"
	MsgTokenNbfNotNumeric   = "token claim nbf must be a NumericDate (a JSON number)"
	MsgTokenIatNotNumeric   = "token claim iat must be a NumericDate (a JSON number)"
	MsgTokenExpOutOfRange   = "token claim exp must be a NumericDate within the years 1 to 9999"
	MsgTokenNbfOutOfRange   = "token claim nbf must be a NumericDate within the years 1 to 9999"
	MsgTokenIatOutOfRange   = "token claim iat must be a NumericDate within the years 1 to 9999"
	MsgTokenIatInFuture     = "token claim iat must not be in the future (60 s leeway)"
)

// TokenRuleError is a token refused by one of herald's own rules: a
// header or claims object that repeats a member name (at any depth), a
// crit header, an exp, nbf or iat that is not a JSON number or lies
// outside the years 1 to 9999, an iat in the future beyond JWTLeeway.
type TokenRuleError struct {
	// Message is the 401 message: it names the rule and holds no part of
	// the token.
	Message string
	// cause, when set, says more for the log (a member name, a library
	// error); never a claim value.
	cause error
}

// Error returns the message and its cause.
func (e *TokenRuleError) Error() string {
	if e.cause == nil {
		return e.Message
	}
	return e.Message + ": " + e.cause.Error()
}

// Unwrap returns the cause.
func (e *TokenRuleError) Unwrap() error { return e.cause }

// numericDateClaims are the claims that must be NumericDates, with their
// messages.
var numericDateClaims = []struct {
	name, notNumber, outOfRange string
}{
	{"exp", MsgTokenExpNotNumeric, MsgTokenExpOutOfRange},
	{"nbf", MsgTokenNbfNotNumeric, MsgTokenNbfOutOfRange},
	{"iat", MsgTokenIatNotNumeric, MsgTokenIatOutOfRange},
}

// The NumericDates herald accepts: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59Z in seconds since the epoch. Beyond them the JWT
// library's conversion to time.Time overflows (a huge nbf or iat would
// land in the past and pass its check).
const (
	minNumericDate = -62135596800
	maxNumericDate = 253402300799
)

// errMalformedToken is a token whose header or claims segment is not a
// strict JSON object (401 "Invalid or expired token", as any malformed
// token).
var errMalformedToken = errors.New("malformed token")

// checkTokenJSON applies herald's rules to the header and claims of a
// compact JWS before the JWT library reads them: both must be base64url
// JSON objects read strictly (valid UTF-8, no trailing data, no member
// name twice in any object), the header must not carry crit, and exp,
// nbf and iat, when present, must be JSON numbers within the years 1 to
// 9999. It returns a *TokenRuleError for a broken rule, an error wrapping
// errMalformedToken for a token that is not a compact JWS of two JSON
// objects, and nil otherwise. Neither holds any part of the token.
func checkTokenJSON(token string) error {
	headerSeg, rest, ok := strings.Cut(token, ".")
	claimsSeg, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return fmt.Errorf("%w: not three dot-separated segments", errMalformedToken)
	}
	header, err := strictObject(headerSeg, MsgTokenHeaderDuplicate)
	if err != nil {
		return annotate(err, "header")
	}
	if crit, has := header["crit"]; has {
		var names []string
		if crit.Kind() != '[' || json.Unmarshal(crit, &names) != nil || len(names) == 0 {
			return &TokenRuleError{Message: MsgTokenCritMalformed}
		}
		return &TokenRuleError{Message: MsgTokenCritUnsupported}
	}
	claims, err := strictObject(claimsSeg, MsgTokenClaimsDuplicate)
	if err != nil {
		return annotate(err, "claims")
	}
	for _, c := range numericDateClaims {
		v, has := claims[c.name]
		if !has {
			continue
		}
		if v.Kind() != '0' {
			return &TokenRuleError{Message: c.notNumber}
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || f < minNumericDate || f > maxNumericDate {
			return &TokenRuleError{Message: c.outOfRange}
		}
	}
	return nil
}

// annotate says which segment a malformed-token error is about.
func annotate(err error, segment string) error {
	if errors.Is(err, errMalformedToken) {
		return fmt.Errorf("token %s: %w", segment, err)
	}
	return err
}

// strictObject decodes one base64url segment (unpadded, as the JWT
// library reads it) and reads it as a JSON object with jsontext's strict
// defaults. A repeated member name anywhere is a *TokenRuleError with
// dupMsg; anything else that is not a JSON object wraps
// errMalformedToken.
func strictObject(seg, dupMsg string) (map[string]jsontext.Value, error) {
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64url", errMalformedToken)
	}
	var m map[string]jsontext.Value
	if err := json.Unmarshal(raw, &m); err != nil {
		if errors.Is(err, jsontext.ErrDuplicateName) {
			return nil, &TokenRuleError{Message: dupMsg, cause: err}
		}
		return nil, fmt.Errorf("%w: not a strict JSON object: %w", errMalformedToken, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w: null, not a JSON object", errMalformedToken)
	}
	return m, nil
}
