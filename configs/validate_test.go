package configs

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// schemaDoc builds a config whose event type "m" is written at line 4
// with the given body (YAML flow or block lines indented by four spaces),
// followed by extra top-level YAML.
func schemaDoc(kind, body, extra string) string {
	return "application: {host: 127.0.0.1, port: 8000}\n" +
		"notification_backend: {kind: " + kind + "}\n" +
		"notification_schema:\n" +
		"  m:\n" + body + extra
}

// okFields is a valid topic and identifier for schema "m".
const okFields = "    topic: {base: m, key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}}\n"

// authOn enables auth validly (trusted_proxy needs only the secret).
const authOn = "auth: {enabled: true, mode: trusted_proxy, jwt_secret: s3cret, admin_roles: {ecmwf: [admin]}}\n"

// ecpdsOK is a valid ecpds block matching on field "a".
const ecpdsOK = "ecpds: {username: u, password: p, servers: [https://ecpds.example.org], match_key: a}\n"

func TestValidateRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		// application
		{"host missing", "application: {port: 1}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.host: required; the address to listen on, e.g. 127.0.0.1 or 0.0.0.0 (line 1)"}},
		{"host padded", "application: {host: ' h', port: 1}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.host: must not have leading or trailing whitespace (line 1)"}},
		{"port missing", "application: {host: h}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.port: required; the TCP port to listen on, e.g. 8000 (line 1)"}},
		{"application missing", "notification_backend: {kind: in_memory}\n", []string{
			"application.host: required; the address to listen on, e.g. 127.0.0.1 or 0.0.0.0",
			"application.port: required; the TCP port to listen on, e.g. 8000"}},
		{"port too large", "application: {host: h, port: 70000}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.port: must be between 0 and 65535 (0 picks a free port), got 70000 (line 1)"}},
		{"port negative", "application: {host: h, port: -1}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.port: must be between 0 and 65535 (0 picks a free port), got -1 (line 1)"}},
		{"homepage links", "application: {host: h, port: 1, homepage: {client_repository_url: 'ftp://x', server_repository_url: 'https://u:p@x.org'}}\nnotification_backend: {kind: in_memory}\n", []string{
			`application.homepage.client_repository_url: must be an absolute http(s) URL with a host and no credentials, got "ftp://x" (line 1)`,
			`application.homepage.server_repository_url: must be an absolute http(s) URL with a host and no credentials, got "https://u:p@x.org" (line 1)`}},
		{"herald limits", "application: {host: h, port: 1, max_body_bytes: 0, read_header_timeout_sec: 0, read_body_timeout_sec: -1, shutdown_grace_sec: -1}\nnotification_backend: {kind: in_memory}\n", []string{
			"application.max_body_bytes: must be greater than 0, got 0 (line 1)",
			"application.read_header_timeout_sec: must be greater than 0, got 0 (line 1)",
			"application.read_body_timeout_sec: must be greater than 0, got -1 (line 1)",
			"application.shutdown_grace_sec: must not be negative, got -1 (line 1)"}},
		{"shutdown grace zero", "application: {host: h, port: 1, shutdown_grace_sec: 0}\nnotification_backend: {kind: in_memory}\n", nil},
		{"batch limit zero", "application: {host: h, port: 1, max_batch_notifications: 0}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.max_batch_notifications: must be between 1 and 100000, got 0 (line 1)"}},
		{"batch limit too large", "application: {host: h, port: 1, max_batch_notifications: 100001}\nnotification_backend: {kind: in_memory}\n",
			[]string{"application.max_batch_notifications: must be between 1 and 100000, got 100001 (line 1)"}},
		{"batch limit bounds", "application: {host: h, port: 1, max_batch_notifications: 100000}\nnotification_backend: {kind: in_memory}\n", nil},
		// backend
		{"kind missing", "application: {host: h, port: 1}\n", []string{"notification_backend.kind: required; use in_memory or jetstream"}},
		{"kind unknown", "application: {host: h, port: 1}\nnotification_backend:\n  kind: redis\n",
			[]string{`notification_backend.kind: unknown backend "redis"; use in_memory or jetstream (line 3)`}},
		{"in_memory limits", "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory, in_memory: {max_history_per_topic: 0, max_topics: -1}}\n", []string{
			"notification_backend.in_memory.max_history_per_topic: must be greater than 0, got 0 (line 2)",
			"notification_backend.in_memory.max_topics: must be greater than 0, got -1 (line 2)"}},
		{"jetstream settings", `application: {host: h, port: 1}
notification_backend:
  kind: jetstream
  jetstream:
    nats_url: "nats://x "
    timeout_seconds: 0
    retry_attempts: 0
    max_reconnect_attempts: -1
    reconnect_delay_ms: 0
    publish_retry_attempts: 0
    publish_retry_base_delay_ms: 0
    max_messages: -2
    max_bytes: 0
    retention_time: 7x
    storage_type: disk
    replicas: 7
    retention_policy: forever
    discard_policy: oldest
    listen: "4222"
`, []string{
			"notification_backend.jetstream.nats_url: must not have leading or trailing whitespace (line 5)",
			"notification_backend.jetstream.timeout_seconds: must be greater than 0, got 0 (line 6)",
			"notification_backend.jetstream.retry_attempts: must be greater than 0, got 0 (line 7)",
			"notification_backend.jetstream.max_reconnect_attempts: must not be negative (0 means unlimited), got -1 (line 8)",
			"notification_backend.jetstream.reconnect_delay_ms: must be greater than 0, got 0 (line 9)",
			"notification_backend.jetstream.publish_retry_attempts: must be greater than 0, got 0 (line 10)",
			"notification_backend.jetstream.publish_retry_base_delay_ms: must be greater than 0, got 0 (line 11)",
			"notification_backend.jetstream.max_messages: must be greater than 0, or -1 for no limit, got -2 (line 12)",
			"notification_backend.jetstream.max_bytes: must be greater than 0, or -1 for no limit, got 0 (line 13)",
			`notification_backend.jetstream.retention_time: invalid duration "7x": unknown unit "x"; use s, m, h, d or w (line 14)`,
			`notification_backend.jetstream.storage_type: must be file or memory, got "disk" (line 15)`,
			"notification_backend.jetstream.replicas: must be between 1 and 5, got 7 (line 16)",
			`notification_backend.jetstream.retention_policy: must be limits or interest, got "forever" (line 17)`,
			`notification_backend.jetstream.discard_policy: must be old or new, got "oldest" (line 18)`,
			`notification_backend.jetstream.listen: must be host:port, e.g. 127.0.0.1:4222, got "4222" (line 19)`}},
		{"workqueue refused", "application: {host: h, port: 1}\nnotification_backend:\n  kind: jetstream\n  jetstream: {retention_policy: workqueue}\n",
			[]string{"notification_backend.jetstream.retention_policy: 'workqueue' is not supported: workqueue retention does not support Aviso's independent watch/replay consumers; use 'limits' or 'interest' (line 4)"}},
		{"workqueue unused by in_memory", "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory, jetstream: {retention_policy: workqueue}}\n", nil},
		{"interest", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {retention_policy: interest}}\n", nil},
		{"retention_time bounds", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {retention_time: 9223372036s}}\n", nil},
		{"retention_time beyond nanoseconds", "application: {host: h, port: 1}\nnotification_backend:\n  kind: jetstream\n  jetstream:\n    retention_time: 9223372037s\n",
			[]string{`notification_backend.jetstream.retention_time: invalid duration "9223372037s": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years) (line 5)`}},
		{"max_reconnect_attempts and enable_auto_reconnect", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {max_reconnect_attempts: 4294967295, enable_auto_reconnect: false}}\n", nil},
		{"jetstream no limits", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {max_messages: -1, max_bytes: -1, replicas: 1, listen: ':4222'}}\n", nil},
		{"embedded data_dir", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {data_dir: ' '}}\n",
			[]string{"notification_backend.jetstream.data_dir: required for the embedded server (nats_url is empty) (line 2)"}},
		{"data_dir unused with nats_url", "application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {nats_url: 'nats://n:4222', data_dir: ''}}\n", nil},
		// watch_endpoint
		{"watch endpoint", header + "watch_endpoint: {sse_heartbeat_interval_sec: 0, connection_max_duration_sec: 0, replay_batch_size: 0, max_historical_notifications: 0, replay_batch_delay_ms: -1, concurrent_notification_processing: -1, live_queue_size: 0, max_lag_sec: 0, stream_send_buffer_bytes: -1}\n", []string{
			"watch_endpoint.sse_heartbeat_interval_sec: must be greater than 0, got 0 (line 3)",
			"watch_endpoint.connection_max_duration_sec: must be greater than 0, got 0 (line 3)",
			"watch_endpoint.replay_batch_size: must be greater than 0, got 0 (line 3)",
			"watch_endpoint.max_historical_notifications: must be greater than 0, got 0 (line 3)",
			"watch_endpoint.replay_batch_delay_ms: must not be negative, got -1 (line 3)",
			"watch_endpoint.concurrent_notification_processing: must not be negative, got -1 (line 3)",
			"watch_endpoint.live_queue_size: must be greater than 0, got 0 (line 3)",
			"watch_endpoint.max_lag_sec: must be greater than 0, got 0 (line 3)",
			"watch_endpoint.stream_send_buffer_bytes: must not be negative, got -1 (line 3)"}},
		{"session", header + "session: {max_subscriptions: 0, max_producers: -1, max_producer_bytes: 0, producer_credit: 0, producer_max_batch: 0, session_queue_frames: 0, session_queue_bytes: -1, max_frame_events: 0, max_frame_bytes: 1000, blocking_timeout_ms: 0, max_sessions_per_user: -1}\n", []string{
			"session.max_subscriptions: must be greater than 0, got 0 (line 3)",
			"session.max_producers: must be greater than 0, got -1 (line 3)",
			"session.max_producer_bytes: must be greater than 0, got 0 (line 3)",
			"session.producer_credit: must be greater than 0, got 0 (line 3)",
			"session.producer_max_batch: must be greater than 0, got 0 (line 3)",
			"session.session_queue_frames: must be greater than 0, got 0 (line 3)",
			"session.session_queue_bytes: must be greater than 0, got -1 (line 3)",
			"session.max_frame_events: must be greater than 0, got 0 (line 3)",
			"session.blocking_timeout_ms: must be greater than 0, got 0 (line 3)",
			"session.max_sessions_per_user: must not be negative, got -1 (line 3)",
			"session.max_frame_bytes: must be at least 65536 (64 KiB), got 1000 (line 3)"}},
		// The reply to a full batch lists its ids: 2539 ids of "m" (25
		// bytes each at most) and 2048 bytes for the rest fit in 65536.
		{"full batch reply fits", schemaDoc("in_memory", okFields, "session: {max_frame_bytes: 65536, producer_max_batch: 2539}\n"), nil},
		{"full batch reply too large", schemaDoc("in_memory", okFields, "session: {max_frame_bytes: 65536, producer_max_batch: 2540}\n"), []string{
			`session.max_frame_bytes: must hold the reply to a full batch, which lists its ids: producer_max_batch (2540) ids of event type "m" need up to 65548 bytes, got 65536 (raise max_frame_bytes or lower producer_max_batch) (line 7)`}},
		{"no replay delay", header + "watch_endpoint: {replay_batch_delay_ms: 0, concurrent_notification_processing: 0}\n", nil},
		// auth
		{"auth mode checked when disabled", header + "auth: {mode: oauth}\n", []string{`auth.mode: must be direct or trusted_proxy, got "oauth" (line 3)`}},
		{"auth disabled ignores the rest", header + "auth: {enabled: false, timeout_ms: 0, admin_roles: {}}\n", nil},
		{"auth enabled direct", header + "auth:\n  enabled: true\n  timeout_ms: 0\n", []string{
			"auth.timeout_ms: must be greater than 0, got 0 (line 5)",
			"auth.auth_o_tron_url: required when auth.mode is direct (line 3)",
			"auth.jwt_secret: required when auth is enabled (or set auth.jwks_file to verify RS256/ES256 tokens) (line 3)",
			"auth.admin_roles: must name at least one realm and its admin roles when auth is enabled, e.g. {ecmwf: [admin]} (line 3)"}},
		{"auth padded", header + "auth: {enabled: true, auth_o_tron_url: 'http://a ', jwt_secret: ' s', admin_roles: {r: [a]}}\n", []string{
			"auth.auth_o_tron_url: must not have leading or trailing whitespace (line 3)",
			"auth.jwt_secret: must not have leading or trailing whitespace (line 3)"}},
		{"auth url", header + "auth: {enabled: true, auth_o_tron_url: 'auth-o-tron:8080', jwt_secret: s, admin_roles: {r: [a]}}\n",
			[]string{`auth.auth_o_tron_url: must be an absolute http(s) URL, got "auth-o-tron:8080" (line 3)`}},
		{"trusted proxy needs only the secret", header + authOn, nil},
		{"trusted proxy without secret", header + "auth: {enabled: true, mode: trusted_proxy, admin_roles: {r: [a]}}\n",
			[]string{"auth.jwt_secret: required when auth is enabled (or set auth.jwks_file to verify RS256/ES256 tokens) (line 3)"}},
		{"admin roles", header + "auth:\n  enabled: true\n  mode: trusted_proxy\n  jwt_secret: s\n  admin_roles:\n    ' ': [a]\n    ' x': [a]\n    empty: []\n    ok: [admin, '', ' b']\n", []string{
			"auth.admin_roles: realm names must not be empty or whitespace (line 7)",
			`auth.admin_roles: realm " x" must not have leading or trailing whitespace (line 7)`,
			`auth.admin_roles.empty: must list at least one role (use ["*"] for every user of the realm) (line 10)`,
			"auth.admin_roles.ok: roles must not be empty or whitespace (line 11)",
			`auth.admin_roles.ok: role " b" must not have leading or trailing whitespace (line 11)`}},
		{"jwks file instead of the secret", header + "auth: {enabled: true, mode: trusted_proxy, jwks_file: /etc/herald/jwks.json, admin_roles: {r: [a]}}\n", nil},
		{"jwks file and secret in direct mode", header + "auth: {enabled: true, auth_o_tron_url: 'http://a', jwt_secret: s, jwks_file: j.json, admin_roles: {r: [a]}}\n", nil},
		{"jwks file and secret whitespace", header + "auth: {enabled: true, mode: trusted_proxy, jwt_secret: '  ', jwks_file: ' j.json', admin_roles: {r: [a]}}\n", []string{
			"auth.jwt_secret: must not be whitespace (line 3)",
			"auth.jwks_file: must not have leading or trailing whitespace (line 3)"}},
		{"jwks file blank", header + "auth: {enabled: true, mode: trusted_proxy, jwks_file: ' ', admin_roles: {r: [a]}}\n", []string{
			"auth.jwks_file: must not be whitespace; remove the key or name a JWKS file (line 3)"}},
		// herald hardening keys
		{"cors valid", "application: {host: h, port: 1, cors: {allowed_origins: ['https://app.example.org', 'http://localhost:3000'], allowed_headers: [Authorization], max_age_sec: 0}}\nnotification_backend: {kind: in_memory}\n", nil},
		{"cors any origin", "application: {host: h, port: 1, cors: {allowed_origins: ['*']}}\nnotification_backend: {kind: in_memory}\n", nil},
		{"cors empty", "application: {host: h, port: 1, cors: {}}\nnotification_backend: {kind: in_memory}\n", []string{
			`application.cors.allowed_origins: must list at least one origin (scheme://host[:port]) or ["*"]; remove the cors block to keep Aviso's behaviour (line 1)`}},
		{"cors values", `application:
  host: h
  port: 1
  client_address_header: X Forwarded For
  cors:
    allowed_origins: ['*', 'https://app.example.org/', 'HTTPS://x.org', 'ftp://x.org', 'https://u@x.org', 'app.example.org']
    allowed_headers: [Authorization, 'X Bad', '']
    max_age_sec: -1
notification_backend: {kind: in_memory}
`, []string{
			`application.client_address_header: must be an HTTP header name such as X-Forwarded-For, got "X Forwarded For" (line 4)`,
			`application.cors.allowed_origins[0]: "*" allows every origin and must be the only entry (line 6)`,
			`application.cors.allowed_origins[1]: must be an origin such as https://app.example.org (lowercase scheme, no path or trailing slash), got "https://app.example.org/" (line 6)`,
			`application.cors.allowed_origins[2]: must be an origin such as https://app.example.org (lowercase scheme, no path or trailing slash), got "HTTPS://x.org" (line 6)`,
			`application.cors.allowed_origins[3]: must be an origin such as https://app.example.org (lowercase scheme, no path or trailing slash), got "ftp://x.org" (line 6)`,
			`application.cors.allowed_origins[4]: must be an origin such as https://app.example.org (lowercase scheme, no path or trailing slash), got "https://u@x.org" (line 6)`,
			`application.cors.allowed_origins[5]: must be an origin such as https://app.example.org (lowercase scheme, no path or trailing slash), got "app.example.org" (line 6)`,
			`application.cors.allowed_headers[1]: must be an HTTP header name, got "X Bad" (line 7)`,
			`application.cors.allowed_headers[2]: must be an HTTP header name, got "" (line 7)`,
			"application.cors.max_age_sec: must not be negative, got -1 (line 8)"}},
		{"stream limits", header + "watch_endpoint: {max_streams_per_user: -1, max_streams_per_client: -2}\n", []string{
			"watch_endpoint.max_streams_per_user: must not be negative, got -1 (line 3)",
			"watch_endpoint.max_streams_per_client: must not be negative, got -2 (line 3)"}},
		{"trusted proxies", "application:\n  host: h\n  port: 1\n  client_address_header: X-Forwarded-For\n  trusted_proxies:\n    - 10.0.0.0/8\n    - 10.0.0.0/33\n    - fd00::/8\n    - 192.0.2.7\n    - proxy.example.org\n    - ''\nnotification_backend: {kind: in_memory}\n", []string{
			`application.trusted_proxies[1]: must be a CIDR such as 10.0.0.0/8 or fd00::/8, or a single IP address, got "10.0.0.0/33" (line 7)`,
			`application.trusted_proxies[4]: must be a CIDR such as 10.0.0.0/8 or fd00::/8, or a single IP address, got "proxy.example.org" (line 10)`,
			`application.trusted_proxies[5]: must be a CIDR such as 10.0.0.0/8 or fd00::/8, or a single IP address, got "" (line 11)`}},
		{"stream limits off", "application: {host: h, port: 1, client_address_header: X-Real-IP}\nnotification_backend: {kind: in_memory}\nwatch_endpoint: {max_streams_per_user: 0, max_streams_per_client: 0}\n", nil},
		// logging
		{"logging levels", header + "logging: {level: ' DEBUG '}\n", nil},
		{"logging warning is warn", header + "logging: {level: warning}\n", nil},
		{"logging off", header + "logging: {level: Off}\n", nil},
		{"logging empty level is info", header + "logging: {level: ''}\n", nil},
		{"logging unknown level", header + "logging:\n  format: json\n  level: verbose\n", []string{
			`logging.level: must be trace, debug, info, warn, error or off, got "verbose" (line 5)`}},
		{"logging RUST_LOG-style level in the file", header + "logging: {level: 'aviso_server=debug'}\n", []string{
			`logging.level: must be trace, debug, info, warn, error or off, got "aviso_server=debug" (line 3)`}},
		// metrics
		{"metrics disabled", header + "metrics: {port: 8000}\n", nil},
		{"metrics port defaults to 9090", header + "metrics:\n  enabled: true\n", nil},
		{"metrics port 0", header + "metrics: {enabled: true, port: 0}\n", []string{"metrics.port: must be between 1 and 65535, got 0 (line 3)"}},
		{"metrics port clash", header + "metrics: {enabled: true, port: 8000, host: ''}\n", []string{
			"metrics.port: must differ from application.port (8000) (line 3)",
			"metrics.host: required when metrics.enabled is true (line 3)"}},
		{"metrics port range", header + "metrics: {enabled: true, port: 65536}\n", []string{"metrics.port: must be between 1 and 65535, got 65536 (line 3)"}},
		// ecpds
		{"ecpds valid alone", header + ecpdsOK, nil},
		{"ecpds empty block", header + "ecpds: {}\n", []string{
			"ecpds.username: required (line 3)",
			"ecpds.password: required (line 3)",
			"ecpds.servers: must list at least one server URL (line 3)",
			"ecpds.match_key: required; the identifier field whose value must be one of the user's destinations (line 3)"}},
		{"ecpds settings", header + `ecpds:
  username: " u"
  password: "p "
  servers:
    - http://ecpds.example.org
    - http://localhost:8080/ecpds
    - http://127.0.0.2
    - http://[::1]:81
    - ftp://ecpds.example.org
    - https://ecpds.example.org/?x=1
    - https://ecpds.example.org/#top
    - ecpds.example.org
    - " https://e.example"
  match_key: a.b
  target_field: ""
  cache_ttl_seconds: 0
  max_entries: 0
  request_timeout_seconds: 0
  connect_timeout_seconds: 0
  partial_outage_policy: best_effort
`, []string{
			"ecpds.username: must not have leading or trailing whitespace (line 4)",
			"ecpds.password: must not have leading or trailing whitespace (line 5)",
			`ecpds.servers[0]: plain http is allowed only to a loopback host (localhost, 127.0.0.1, ::1); use https, got "http://ecpds.example.org" (line 7)`,
			`ecpds.servers[4]: must be an https URL (or http to a loopback host), got "ftp://ecpds.example.org" (line 11)`,
			"ecpds.servers[5]: must not contain a query string; herald appends ?id=<username> itself (line 12)",
			"ecpds.servers[6]: must not contain a fragment (line 13)",
			`ecpds.servers[7]: must be an absolute https URL, got "ecpds.example.org" (line 14)`,
			"ecpds.servers[8]: must not have leading or trailing whitespace (line 15)",
			`ecpds.match_key: must be a bare identifier name (no spaces, dots or slashes), got "a.b" (line 16)`,
			"ecpds.target_field: required (line 17)",
			"ecpds.cache_ttl_seconds: must be greater than 0, got 0 (line 18)",
			"ecpds.max_entries: must be greater than 0, got 0 (line 19)",
			"ecpds.request_timeout_seconds: must be greater than 0, got 0 (line 20)",
			"ecpds.connect_timeout_seconds: must be greater than 0, got 0 (line 21)",
			`ecpds.partial_outage_policy: must be strict or any_success, got "best_effort" (line 22)`}},
		// topic base
		{"valid schema", schemaDoc("jetstream", okFields, ""), nil},
		{"base required", schemaDoc("in_memory", "    topic: {key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}}\n", ""),
			[]string{"notification_schema.m (line 4): topic.base: required when the topic block is present"}},
		{"base pattern", schemaDoc("in_memory", "    topic: {base: _m, key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}}\n", ""),
			[]string{`notification_schema.m (line 4): topic.base: "_m" is not a valid base; use letters, digits, _ and -, starting with a letter or digit`}},
		{"base pattern unicode", schemaDoc("in_memory", "    topic: {base: mé, key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}}\n", ""),
			[]string{`notification_schema.m (line 4): topic.base: "mé" is not a valid base; use letters, digits, _ and -, starting with a letter or digit`}},
		{"base too long", schemaDoc("in_memory", "    topic: {base: "+strings.Repeat("b", 256)+", key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}}\n", ""),
			[]string{`notification_schema.m (line 4): topic.base: "` + strings.Repeat("b", 60) + `..." is 256 bytes long; a topic base has at most 255 bytes (it names the event type's JetStream stream)`}},
		{"event name as base", "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory}\nnotification_schema:\n  my.event:\n    identifier: {a: {type: StringHandler, required: true}}\n  Good-1_x: {}\n",
			[]string{`notification_schema.my.event (line 4): topic: without a topic block the event type name is the topic base, and "my.event" is not a valid base (letters, digits, _ and -, starting with a letter or digit); add a topic block`}},
		{"duplicate base ignoring case", schemaDoc("in_memory", okFields, "  other:\n    topic: {base: M, key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}}\n  M: {}\n"), []string{
			`notification_schema.other (line 7): topic.base: base "M" is already used by event type "m" (line 4); bases must be unique ignoring case`,
			`notification_schema.M (line 10): topic: base "M" is already used by event type "m" (line 4); bases must be unique ignoring case`}},
		// key_order
		{"key_order empty", schemaDoc("in_memory", "    topic: {base: m, key_order: []}\n", ""),
			[]string{"notification_schema.m (line 4): topic.key_order: must not be empty; list the identifier fields that make up the subject, in order"}},
		{"key_order entries", schemaDoc("in_memory", `    topic: {base: m, key_order: [a, a, b, point_cloud]}
    identifier:
      a: {type: StringHandler, required: true}
      c: {type: DateHandler, required: false}
      d: {type: TimeHandler, required: false}
`, ""), []string{
			`notification_schema.m (line 4): topic.key_order: field "a" is listed twice`,
			`notification_schema.m (line 4): topic.key_order: field "b" is not declared under identifier`,
			"notification_schema.m (line 4): topic.key_order: point_cloud must not be listed; a point cloud travels as spatial metadata, not in the subject",
			`notification_schema.m (line 4): topic.key_order: field "c" is declared but not listed; every ordinary identifier must be routed`,
			`notification_schema.m (line 4): topic.key_order: field "d" is declared but not listed; every ordinary identifier must be routed`}},
		{"polygon may be listed or not", schemaDoc("in_memory", "    topic: {base: m, key_order: [a, polygon]}\n    identifier: {a: {type: StringHandler, required: true}, polygon: {type: PolygonHandler, required: true}}\n",
			"  n:\n    topic: {base: n, key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}, polygon: {type: PolygonHandler, required: true}}\n"), nil},
		{"no topic block, no key_order rules", schemaDoc("in_memory", "    identifier: {a: {type: StringHandler, required: true}}\n", ""), nil},
		// identifier fields
		{"field type and required", schemaDoc("in_memory", `    topic: {base: m, key_order: [a, b]}
    identifier:
      a: {description: x}
      b: {type: IntegerHandler, required: true}
`, ""), []string{
			"notification_schema.m (line 4): identifier.a.type: required; one of StringHandler, DateHandler, TimeHandler, EnumHandler, IntHandler, FloatHandler, ExpverHandler, PolygonHandler or PointCloudHandler",
			"notification_schema.m (line 4): identifier.a.required: required; true if watch and replay requests must give this field, false to make it a wildcard when omitted",
			`notification_schema.m (line 4): identifier.b.type: unknown handler "IntegerHandler"; use StringHandler, DateHandler, TimeHandler, EnumHandler, IntHandler, FloatHandler, ExpverHandler, PolygonHandler or PointCloudHandler`}},
		{"handler keys", schemaDoc("in_memory", `    topic: {base: m, key_order: [s, d, t, e, i, f, x]}
    identifier:
      s: {type: StringHandler, required: true, max_length: 0, values: [a]}
      d: {type: DateHandler, required: true, canonical_format: "%Y", range: [1, 2]}
      t: {type: TimeHandler, required: true, default: "1"}
      e: {type: EnumHandler, required: true}
      i: {type: IntHandler, required: true, range: [1, 2, 3], max_points: 5}
      f: {type: FloatHandler, required: true, range: [1]}
      x: {type: ExpverHandler, required: true, default: "1", canonical_format: x}
      polygon: {type: PolygonHandler, required: true, max_length: 3}
`, ""), []string{
			"notification_schema.m (line 4): identifier.s.values: not a key of StringHandler; its keys are type, required, description, max_length",
			"notification_schema.m (line 4): identifier.s.max_length: must be at least 1, got 0",
			"notification_schema.m (line 4): identifier.d.range: not a key of DateHandler; its keys are type, required, description, canonical_format",
			"notification_schema.m (line 4): identifier.t.default: not a key of TimeHandler; its keys are type, required, description",
			"notification_schema.m (line 4): identifier.e.values: required for EnumHandler; list the accepted values",
			"notification_schema.m (line 4): identifier.i.max_points: not a key of IntHandler; its keys are type, required, description, range",
			"notification_schema.m (line 4): identifier.i.range: must be [min, max], got 3 values",
			"notification_schema.m (line 4): identifier.f.range: must be [min, max], got 1 value",
			"notification_schema.m (line 4): identifier.x.canonical_format: not a key of ExpverHandler; its keys are type, required, description, default",
			"notification_schema.m (line 4): identifier.polygon.max_length: not a key of PolygonHandler; its keys are type, required, description"}},
		{"empty enum values allowed", schemaDoc("in_memory", "    topic: {base: m, key_order: [e]}\n    identifier: {e: {type: EnumHandler, values: [], required: true}}\n", ""), nil},
		{"reserved and bad names", schemaDoc("in_memory", `    topic: {base: m, key_order: [point, "a b", polygon, point_cloud]}
    identifier:
      point: {type: StringHandler, required: true}
      "a b": {type: StringHandler, required: true}
      polygon: {type: StringHandler, required: true}
      point_cloud: {type: IntHandler, required: true}
      area: {type: PolygonHandler, required: true}
      cloud: {type: PointCloudHandler, required: true}
`, ""), []string{
			"notification_schema.m (line 4): identifier.point: the name point is reserved for the spatial point filter of watch and replay; rename the field",
			"notification_schema.m (line 4): identifier.a b: field names must not be empty or contain spaces, dots or slashes",
			"notification_schema.m (line 4): identifier.polygon.type: the name polygon is reserved for a PolygonHandler field; rename the field or use type: PolygonHandler",
			"notification_schema.m (line 4): identifier.point_cloud.type: the name point_cloud is reserved for a PointCloudHandler field; rename the field or use type: PointCloudHandler",
			"notification_schema.m (line 4): identifier.area.type: a PolygonHandler field must be named polygon",
			"notification_schema.m (line 4): identifier.cloud.type: a PointCloudHandler field must be named point_cloud",
			"notification_schema.m (line 4): topic.key_order: point_cloud must not be listed; a point cloud travels as spatial metadata, not in the subject"}},
		{"point cloud rules", "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory}\nnotification_schema:\n" +
			"  m:\n    topic: {base: m, key_order: [a]}\n    identifier:\n      a: {type: StringHandler, required: true}\n      point_cloud: {type: PointCloudHandler, required: true, max_points: 10001}\n      polygon: {type: PolygonHandler, required: true}\n" +
			"  n:\n    identifier:\n      point_cloud: {type: PointCloudHandler, required: true, max_points: 1}\n", []string{
			"notification_schema.m (line 4): identifier.point_cloud.max_points: must be between 1 and 10000, got 10001",
			"notification_schema.m (line 4): identifier.polygon: a schema with a PointCloudHandler cannot declare polygon: watch and replay send polygon to filter the point cloud",
			"notification_schema.n (line 10): identifier.point_cloud: a PointCloudHandler needs a topic block"}},
		{"point cloud ok", schemaDoc("jetstream", "    topic: {base: m, key_order: [a]}\n    identifier: {a: {type: StringHandler, required: true}, point_cloud: {type: PointCloudHandler, required: true, max_points: 10000}}\n", ""), nil},
		// stream auth
		{"stream auth with auth disabled", schemaDoc("in_memory", okFields+"    auth: {required: true}\n", "  n:\n    identifier: {}\n    auth: {required: false, read_roles: {r: [a]}}\n  o:\n    identifier: {}\n    auth: {required: false}\n"), []string{
			"notification_schema.m (line 4): auth.required: is true but auth is disabled; set auth.enabled: true at the top level or remove this auth block",
			"notification_schema.n (line 8): auth: role lists need auth.enabled: true at the top level; enable auth or remove them"}},
		{"stream auth required key", schemaDoc("in_memory", okFields+"    auth: {write_roles: {r: [a]}}\n", authOn),
			[]string{"notification_schema.m (line 4): auth.required: required when the auth block is present (true or false)"}},
		{"stream roles", schemaDoc("in_memory", okFields+"    auth: {required: false, read_roles: {}, write_roles: {r: [], ' s': [' a']}}\n", authOn), []string{
			"notification_schema.m (line 4): auth.read_roles: must not be an empty map; remove it to let any authenticated user read",
			`notification_schema.m (line 4): auth.write_roles: realm " s" must not have leading or trailing whitespace`,
			`notification_schema.m (line 4): auth.write_roles: role " a" must not have leading or trailing whitespace`,
			`notification_schema.m (line 4): auth.write_roles.r: must list at least one role (use ["*"] for every user of the realm)`,
			"notification_schema.m (line 4): auth: role lists need auth.required: true; set it or remove the lists"}},
		{"empty write roles", schemaDoc("in_memory", okFields+"    auth: {required: true, write_roles: {}}\n", authOn),
			[]string{"notification_schema.m (line 4): auth.write_roles: must not be an empty map; remove it to let only admins write"}},
		{"stream auth ok", schemaDoc("in_memory", okFields+"    auth: {required: true, read_roles: {r: ['*']}, write_roles: {r: [w]}}\n", authOn), nil},
		// plugins and ECPDS
		{"plugins", schemaDoc("in_memory", okFields+"    auth: {required: false, plugins: [ecpds, ldap]}\n", authOn+ecpdsOK), []string{
			`notification_schema.m (line 4): auth.plugins: unknown plugin "ldap"; known plugins: ecpds`,
			"notification_schema.m (line 4): auth.plugins: plugins run only after stream authentication; set auth.required: true"}},
		{"empty plugins", schemaDoc("in_memory", okFields+"    auth: {required: true, plugins: []}\n", authOn),
			[]string{"notification_schema.m (line 4): auth.plugins: must not be empty; remove the key instead of writing plugins: []"}},
		{"ecpds block missing", schemaDoc("in_memory", okFields+"    auth: {required: true, plugins: [ecpds]}\n", authOn),
			[]string{"notification_schema.m (line 4): auth.plugins: the ecpds plugin needs a top-level ecpds block (servers, username, password, match_key)"}},
		{"ecpds ok", schemaDoc("in_memory", okFields+"    auth: {required: true, plugins: [ecpds]}\n", authOn+ecpdsOK), nil},
		{"match key not declared", schemaDoc("in_memory", "    topic: {base: m, key_order: [b]}\n    identifier: {b: {type: StringHandler, required: true}}\n    auth: {required: true, plugins: [ecpds]}\n", authOn+ecpdsOK),
			[]string{`notification_schema.m (line 4): auth.plugins: ecpds.match_key "a" is not declared under identifier`}},
		{"match key optional and unrouted", schemaDoc("in_memory", "    identifier: {a: {type: StringHandler, required: false}}\n    auth: {required: true, plugins: [ecpds]}\n", authOn+ecpdsOK), []string{
			"notification_schema.m (line 4): identifier.a.required: must be true: the field is the ecpds.match_key, which every watch and replay must give",
			`notification_schema.m (line 4): topic.key_order: must list the ecpds.match_key "a": ECPDS can only restrict what the subject retains`}},
		{"match key spatial", schemaDoc("in_memory", "    topic: {base: m, key_order: [b, polygon]}\n    identifier: {b: {type: StringHandler, required: true}, polygon: {type: PolygonHandler, required: true}}\n    auth: {required: true, plugins: [ecpds]}\n",
			authOn+"ecpds: {username: u, password: p, servers: ['http://localhost:1'], match_key: polygon}\n"),
			[]string{`notification_schema.m (line 4): auth.plugins: ecpds.match_key "polygon" is a spatial field; use an ordinary routing identifier such as destination`}},
		// storage policy
		{"storage policy on in_memory", schemaDoc("in_memory", okFields+"    storage_policy: {compression: true}\n", ""),
			[]string{"notification_schema.m (line 4): storage_policy: not supported by the in_memory backend; use notification_backend.kind: jetstream or remove it"}},
		{"storage policy values", schemaDoc("jetstream", "    identifier: {a: {type: StringHandler, required: true}}\n    storage_policy: {retention_time: 0s, max_messages: 0, max_size: '1024'}\n", ""), []string{
			"notification_schema.m (line 4): storage_policy: needs a topic block: the policy applies to the stream of topic.base",
			`notification_schema.m (line 4): storage_policy.retention_time: invalid duration "0s": must be greater than zero`,
			"notification_schema.m (line 4): storage_policy.max_messages: must be greater than 0, got 0",
			`notification_schema.m (line 4): storage_policy.max_size: invalid size "1024": missing unit; use K, Ki, M, Mi, G, Gi, T or Ti`}},
		{"storage policy retention_time beyond nanoseconds", schemaDoc("jetstream", okFields+"    storage_policy: {retention_time: 15251w}\n", ""),
			[]string{`notification_schema.m (line 4): storage_policy.retention_time: invalid duration "15251w": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years)`}},
		{"storage policy ok", schemaDoc("jetstream", okFields+"    storage_policy: {retention_time: 7D, max_messages: 1, max_size: 1Ti, allow_duplicates: true, compression: false}\n", ""), nil},
		// replay cap
		{"replay cap", schemaDoc("in_memory", okFields+"    max_historical_notifications: 0\n", ""),
			[]string{"notification_schema.m (line 4): max_historical_notifications: must be a positive integer, got 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), nil)
			var want string
			switch len(tt.want) {
			case 0:
			case 1:
				want = tt.want[0]
			default:
				want = strings.Join(append([]string{strconv.Itoa(len(tt.want)) + " problems:"}, tt.want...), "\n  ")
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != want {
				t.Fatalf("error:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestValidateInCode(t *testing.T) {
	c := Default()
	c.Application.Host = "0.0.0.0"
	c.NotificationBackend.Kind = BackendInMemory
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	c.NotificationSchema = []*Schema{{
		Name:       "m",
		Topic:      &Topic{Base: "m", KeyOrder: []string{"a"}},
		Identifier: []*IdentifierField{{Name: "a", Type: HandlerEnum, Required: ptr(true)}, nil},
	}, nil}
	want := "notification_schema.m: identifier.a.values: required for EnumHandler; list the accepted values"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want %s", err, want)
	}
}

func TestHandlerKeys(t *testing.T) {
	for _, h := range []string{HandlerString, HandlerDate, HandlerTime, HandlerEnum, HandlerInt, HandlerFloat, HandlerExpver, HandlerPolygon, HandlerPointCloud} {
		keys, ok := handlerKeys(h)
		if !ok || len(keys) < 3 || keys[0] != "type" || keys[1] != "required" || keys[2] != "description" {
			t.Errorf("handlerKeys(%s) = %v, %v", h, keys, ok)
		}
		if got := isSpatial(h); got != (h == HandlerPolygon || h == HandlerPointCloud) {
			t.Errorf("isSpatial(%s) = %v", h, got)
		}
	}
	const wantList = "StringHandler, DateHandler, TimeHandler, EnumHandler, IntHandler, FloatHandler, ExpverHandler, PolygonHandler or PointCloudHandler"
	if handlerList != wantList {
		t.Errorf("handlerList = %q, want %q", handlerList, wantList)
	}
	if keys, ok := handlerKeys("Nope"); ok || keys != nil {
		t.Errorf("handlerKeys(Nope) = %v, %v", keys, ok)
	}
	// Every key a handler allows is a yaml key of IdentifierField.
	fields := yamlFields(reflect.TypeFor[IdentifierField]())
	for _, h := range []string{HandlerString, HandlerDate, HandlerEnum, HandlerInt, HandlerExpver, HandlerPointCloud} {
		keys, _ := handlerKeys(h)
		for _, k := range keys {
			if _, ok := fields[k]; !ok {
				t.Errorf("%s key %s is not a field of IdentifierField", h, k)
			}
		}
	}
}

func TestCodecsBlock(t *testing.T) {
	base := "application: {host: h, port: 1}\nnotification_backend: {kind: in_memory}\n"
	cfg, err := Parse([]byte(base+"codecs:\n  definitions: defs.nspl\n  resources:\n    - {name: orders, version: 2, dir: proto}\n    - {name: shapes, dir: shapes}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Codecs.Definitions != "defs.nspl" || len(cfg.Codecs.Resources) != 2 ||
		cfg.Codecs.Resources[0] != (CodecResource{Name: "orders", Version: 2, Dir: "proto"}) || cfg.Codecs.Resources[1].Version != 0 {
		t.Fatalf("codecs %+v", cfg.Codecs)
	}
	_, err = Parse([]byte(base+"codecs:\n  resources:\n    - {name: 'a b', version: -1, dir: ''}\n    - {name: x, dir: d}\n    - {name: x, version: 1, dir: e}\n"), nil)
	want := []string{
		"codecs.definitions: required when the codecs block is present",
		`codecs.resources[0].name: must be a bare name (no spaces, dots or slashes), got "a b"`,
		"codecs.resources[0].version: must be 1 or more (0 or absent means 1), got -1",
		"codecs.resources[0].dir: required: the directory holding the resource's files",
		"codecs.resources[2]: resource x@1 is already declared by codecs.resources[1]",
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("error %v\nlacks %q", err, w)
		}
	}
	if _, err := Parse([]byte(base+"codecs:\n  definitions: d\n  resources:\n    - {name: x, dir: d, bogus: 1}\n"), nil); err == nil || !strings.Contains(err.Error(), "codecs.resources[0].bogus: unknown key") {
		t.Fatalf("unknown key: %v", err)
	}
}

// TestEnableAutoReconnectWarning: enable_auto_reconnect is accepted
// and ignored, as aviso-server 0.13 ignores it; set to false (what
// someone relying on it would write) it is said at startup.
func TestEnableAutoReconnectWarning(t *testing.T) {
	c, err := Parse([]byte("application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {enable_auto_reconnect: false}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"notification_backend.jetstream.enable_auto_reconnect is ignored, as in aviso-server 0.13: herald always reconnects to NATS"}
	if w := c.Warnings(); !reflect.DeepEqual(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
	c, err = Parse([]byte("application: {host: h, port: 1}\nnotification_backend: {kind: jetstream, jetstream: {enable_auto_reconnect: true}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
}
