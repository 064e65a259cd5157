package auth

import (
	"net/http"
	"strconv"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
)

// Messages of the authentication and authorisation answers (Aviso's auth rules
// and the ECPDS plugin, docs/auth.md). Clients match on the codes; the
// messages are kept identical to Aviso's all the same.
const (
	MsgStreamAuthRequired   = "Authentication is required for this stream"
	MsgHeaderRequired       = "Authorization header is required"
	MsgInvalidToken         = "Invalid or expired token"
	MsgMissingUserClaims    = "Token is missing required user claims"
	MsgTokenDenied          = "Token validation was denied"
	MsgAuthUnavailable      = "Authentication service temporarily unavailable"
	MsgNoReadRole           = "User does not have required read role for this stream"
	MsgNoWriteRole          = "User does not have required write role for this stream"
	MsgAdminsOnlyWrite      = "Only administrators can write to this stream"
	MsgNoAdminRole          = "User does not have required administrative role"
	MsgECPDSUnavailable     = "ECPDS service is inaccessible"
	MsgServerMisconfigured  = "Server configuration error"
	MsgECPDSUnexpectedError = "ECPDS check failed unexpectedly"
)

// RetryAfterUnavailable is the Retry-After (seconds) of a 503 caused by
// auth-o-tron or ECPDS.
const RetryAfterUnavailable = 5

// WriteUnauthorized answers 401 UNAUTHORIZED with `WWW-Authenticate:
// Bearer`, plus a second `WWW-Authenticate: Basic` header when the auth
// mode is direct (Basic credentials are accepted there).
func WriteUnauthorized(w http.ResponseWriter, r *http.Request, direct bool, msg string) {
	h := w.Header()
	h.Add("WWW-Authenticate", "Bearer")
	if direct {
		h.Add("WWW-Authenticate", "Basic")
	}
	httperr.WriteJSON(w, http.StatusUnauthorized, httperr.AuthErrorBody{Code: "UNAUTHORIZED", Error: "unauthorized", Message: msg, RequestID: httperr.RequestID(r.Context())})
}

// WriteForbidden answers 403 FORBIDDEN.
func WriteForbidden(w http.ResponseWriter, r *http.Request, msg string) {
	httperr.WriteJSON(w, http.StatusForbidden, httperr.AuthErrorBody{Code: "FORBIDDEN", Error: "forbidden", Message: msg, RequestID: httperr.RequestID(r.Context())})
}

// WriteUnavailable answers 503 SERVICE_UNAVAILABLE with Retry-After.
func WriteUnavailable(w http.ResponseWriter, r *http.Request, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfterUnavailable))
	httperr.WriteJSON(w, http.StatusServiceUnavailable, httperr.AuthErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, RequestID: httperr.RequestID(r.Context())})
}

// WriteInternalError answers 500 INTERNAL_ERROR (a misconfiguration the
// startup checks should have caught).
func WriteInternalError(w http.ResponseWriter, r *http.Request, msg string) {
	httperr.WriteJSON(w, http.StatusInternalServerError, httperr.AuthErrorBody{Code: "INTERNAL_ERROR", Error: "internal_error", Message: msg, RequestID: httperr.RequestID(r.Context())})
}

// WriteTooManyStreams answers 429 TOO_MANY_STREAMS with Retry-After
// (herald's concurrent-stream limits).
func WriteTooManyStreams(w http.ResponseWriter, r *http.Request, msg string, retryAfter time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retryAfter/time.Second))))
	httperr.WriteJSON(w, http.StatusTooManyRequests, httperr.AuthErrorBody{Code: "TOO_MANY_STREAMS", Error: "too_many_requests", Message: msg, RequestID: httperr.RequestID(r.Context())})
}
