package configs

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Redacted replaces a secret in logs and printed configs.
const Redacted = "[redacted]"

// redact returns Redacted for a set secret and "" for an unset one, so
// that a log still shows whether the secret is configured.
func redact(secret string) string {
	if secret == "" {
		return ""
	}
	return Redacted
}

// authView is Auth with its secret redacted.
type authView Auth

// redacted returns a copy of a with jwt_secret redacted.
func (a Auth) redacted() authView {
	a.JWTSecret = redact(a.JWTSecret)
	return authView(a)
}

// String formats the block with jwt_secret redacted, so that %v and %+v
// of a Config never print the secret.
func (a Auth) String() string { return fmt.Sprintf("%+v", a.redacted()) }

// LogValue logs the block with jwt_secret redacted.
func (a Auth) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("enabled", a.Enabled),
		slog.String("mode", a.Mode),
		slog.String("auth_o_tron_url", a.AuthOTronURL),
		slog.String("jwt_secret", redact(a.JWTSecret)),
		slog.Any("admin_roles", a.AdminRoles),
		slog.Int("timeout_ms", a.TimeoutMs),
		slog.String("jwks_file", a.JWKSFile),
	)
}

// MarshalJSON encodes the block with jwt_secret redacted.
func (a Auth) MarshalJSON() ([]byte, error) { return json.Marshal(a.redacted()) }

// ecpdsView is ECPDS with its password redacted.
type ecpdsView ECPDS

// String formats the block with the password redacted.
func (e ECPDS) String() string {
	e.Password = redact(e.Password)
	return fmt.Sprintf("%+v", ecpdsView(e))
}

// MarshalJSON encodes the block with the password redacted.
func (e ECPDS) MarshalJSON() ([]byte, error) {
	e.Password = redact(e.Password)
	return json.Marshal(ecpdsView(e))
}

// LogValue logs the block with the password redacted.
func (e ECPDS) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("username", e.Username),
		slog.String("password", redact(e.Password)),
		slog.Any("servers", e.Servers),
		slog.String("match_key", e.MatchKey),
		slog.String("target_field", e.TargetField),
		slog.Int("cache_ttl_seconds", e.CacheTTLSeconds),
		slog.Int("max_entries", e.MaxEntries),
		slog.Int("request_timeout_seconds", e.RequestTimeoutSeconds),
		slog.Int("connect_timeout_seconds", e.ConnectTimeoutSeconds),
		slog.String("partial_outage_policy", e.PartialOutagePolicy),
	)
}

// jetStreamView is JetStream with its token redacted.
type jetStreamView JetStream

// String formats the block with the NATS token redacted.
func (j JetStream) String() string {
	j.Token = redact(j.Token)
	return fmt.Sprintf("%+v", jetStreamView(j))
}

// MarshalJSON encodes the block with the NATS token redacted.
func (j JetStream) MarshalJSON() ([]byte, error) {
	j.Token = redact(j.Token)
	return json.Marshal(jetStreamView(j))
}

// LogValue logs the block with the NATS token redacted.
func (j JetStream) LogValue() slog.Value {
	j.Token = redact(j.Token)
	return slog.AnyValue(jetStreamView(j))
}
