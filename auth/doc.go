// Package auth owns who a request is and what it may do: the Identity of
// an authenticated user (from a JWT: verified locally with a secret or a
// JWKS document in mode trusted_proxy, or obtained from auth-o-tron in
// mode direct), realm-scoped role maps, the global Policy with each
// stream's access rules (the read and write role matrix of the Aviso
// API), the refusals (Error, DenyKind) with their HTTP answers, and the
// DestinationChecker contract that the ECPDS plugin implements.
//
// It knows no router and no handler: package api runs the Authenticator
// as middleware, and the handlers and the WebSocket session ask the
// Policy per stream.
package auth
