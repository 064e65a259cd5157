// Package configs owns herald's configuration: the Go types of the config
// file (an Aviso aviso-server config plus herald's own additions), their
// defaults, the strict YAML loader with environment overrides, and the
// shipped YAML files. It imports no other herald package and knows nothing
// about handlers, engines or HTTP; rules that need the identifier handlers
// themselves are checked by package notification when it builds its
// registry.
//
// Load resolves the relative paths of the codecs block (codecs.definitions,
// codecs.resources[].dir) against the directory of the config file, so a
// config finds its codec files whatever the working directory; other paths
// (notification_backend.jetstream.data_dir, auth.jwks_file, ...) stay
// relative to the working directory, as in Aviso.
package configs

// Config is the whole configuration file.
//
// Every Aviso key keeps its Aviso name and meaning. herald's additions are
// documented on their fields as "herald:".
type Config struct {
	Application         Application `yaml:"application"`
	Logging             Logging     `yaml:"logging"`
	NotificationBackend Backend     `yaml:"notification_backend"`
	// NotificationSchemaStrict is nil when unset: strict iff at least one
	// schema is configured (Aviso's error bodies, docs/api.md).
	NotificationSchemaStrict *bool `yaml:"notification_schema_strict"`
	// NotificationSchema holds the event types in file order.
	NotificationSchema []*Schema     `yaml:"notification_schema"`
	WatchEndpoint      WatchEndpoint `yaml:"watch_endpoint"`
	Auth               Auth          `yaml:"auth"`
	Metrics            Metrics       `yaml:"metrics"`
	// ECPDS is nil when the block is absent.
	ECPDS *ECPDS `yaml:"ecpds"`
	// Codecs is herald: codec definitions (and the resources their
	// protobuf codecs compile from) loaded and checked at startup; nil
	// when the block is absent.
	Codecs *Codecs `yaml:"codecs"`
	// Session is herald: the limits of WebSocket sessions
	// (GET /api/v1/session).
	Session Session `yaml:"session"`
	// Tracing is herald: `tracing`, OpenTelemetry traces of notifies and
	// deliveries exported over OTLP, and the W3C trace context carried
	// from publishers to subscribers; nil when the block is absent. Left
	// out of the JSON form when nil, so that a config without it keeps
	// its fingerprint.
	Tracing *Tracing `yaml:"tracing" json:",omitempty"`
}

// Session is herald's `session` block: the limits of one WebSocket
// session (the session protocol, docs/sessions.md).
type Session struct {
	// MaxSubscriptions bounds the subscriptions (and running replays) of
	// one session.
	MaxSubscriptions int `yaml:"max_subscriptions"`
	// MaxProducers bounds the producers of one session.
	MaxProducers int `yaml:"max_producers"`
	// MaxProducerBytes bounds the bytes of batches a session has sent and
	// not yet had answered.
	MaxProducerBytes int64 `yaml:"max_producer_bytes"`
	// ProducerCredit is the number of batches a producer may have awaiting
	// their outcome at once.
	ProducerCredit int `yaml:"producer_credit"`
	// ProducerMaxBatch bounds the notifications of one batch.
	ProducerMaxBatch int `yaml:"producer_max_batch"`
	// QueueFrames bounds the frames of the session's outbound queue of
	// events frames, shared by its subscriptions (session_queue_frames).
	QueueFrames int `yaml:"session_queue_frames"`
	// QueueBytes bounds the bytes of the frames of that queue
	// (session_queue_bytes); an empty queue takes one frame of any size.
	QueueBytes int `yaml:"session_queue_bytes"`
	// MaxFrameEvents bounds the events of one events frame.
	MaxFrameEvents int `yaml:"max_frame_events"`
	// MaxFrameBytes bounds every frame the server sends.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
	// BlockingTimeoutMs bounds how long a BLOCKING subscription may hold
	// back its delivery (and its publishers) before it ends with overflow.
	BlockingTimeoutMs int `yaml:"blocking_timeout_ms"`
	// MaxSessionsPerUser bounds the sessions of one authenticated user; 0
	// means no limit.
	MaxSessionsPerUser int `yaml:"max_sessions_per_user"`
}

// Application is the `application` block: the HTTP listener and links.
type Application struct {
	Host            string    `yaml:"host"`
	Port            int       `yaml:"port"`
	BaseURL         string    `yaml:"base_url"`
	StaticFilesPath string    `yaml:"static_files_path"`
	Homepage        *Homepage `yaml:"homepage"`

	// MaxBodyBytes is herald: the request body limit; larger bodies get 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxBatchNotifications is herald: the most notifications one batch
	// notify (POST /api/v1/notifications) may carry.
	MaxBatchNotifications int `yaml:"max_batch_notifications"`
	// ReadHeaderTimeoutSec is herald: the time allowed to read request headers.
	ReadHeaderTimeoutSec int `yaml:"read_header_timeout_sec"`
	// ReadBodyTimeoutSec is herald: the time allowed to read a request body.
	ReadBodyTimeoutSec int `yaml:"read_body_timeout_sec"`
	// ShutdownGraceSec is herald: how long a graceful shutdown waits for
	// open requests and streams before the process exits.
	ShutdownGraceSec int `yaml:"shutdown_grace_sec"`
	// CORS is herald: cross-origin settings. nil (the default) keeps
	// Aviso's behaviour: `Access-Control-Allow-Origin: *` on event streams
	// and no other CORS header.
	CORS *CORS `yaml:"cors"`
	// ClientAddressHeader is herald: a request header set by a trusted
	// reverse proxy (X-Forwarded-For or X-Real-IP) that names the client
	// address for the per-client stream limit. It is read only on requests
	// whose TCP peer is in TrustedProxies, and then its right-most address
	// that is not itself in TrustedProxies is the client's (the entries to
	// its left were written by the client and prove nothing). Empty, or
	// without TrustedProxies, the TCP peer address counts.
	ClientAddressHeader string `yaml:"client_address_header"`
	// TrustedProxies is herald: the reverse proxies whose
	// ClientAddressHeader is believed, as CIDRs (10.0.0.0/8, fd00::/8) or
	// single addresses. Empty (the default) ignores the header.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// CORS is herald: `application.cors`, the cross-origin policy. When the
// block is present herald answers preflight requests and sets the CORS
// headers on every response of an allowed origin.
type CORS struct {
	// AllowedOrigins are the origins allowed to call herald from a
	// browser, as scheme://host[:port], or ["*"] for any origin.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHeaders are the request headers a browser may send
	// (default Authorization, Content-Type, Last-Event-ID).
	AllowedHeaders []string `yaml:"allowed_headers"`
	// MaxAgeSec is how long a browser may cache a preflight answer
	// (default 600; 0 sends no Access-Control-Max-Age).
	MaxAgeSec int `yaml:"max_age_sec"`
}

// Homepage is `application.homepage`: links shown on the homepage.
type Homepage struct {
	ClientDocumentationURL string `yaml:"client_documentation_url"`
	ClientRepositoryURL    string `yaml:"client_repository_url"`
	ServerDocumentationURL string `yaml:"server_documentation_url"`
	ServerRepositoryURL    string `yaml:"server_repository_url"`
}

// Logging is the `logging` block.
type Logging struct {
	// Level is trace, debug, info, warn, error or off, in any case
	// ("warning" is warn; empty is info). Unlike Aviso, which logs at info
	// on an unknown level, anything else is a config error (see LogLevel).
	Level string `yaml:"level"`
	// Format is LogFormatJSON (the default) or LogFormatText; any other
	// value is accepted for compatibility with aviso-server and logs JSON.
	Format string `yaml:"format"`
	// OTLP is `logging.otlp`, the export of the log over OTLP in addition
	// to stdout; nil when the block is absent (or null). Left out of the
	// JSON form when nil, so that a config without it keeps its
	// fingerprint.
	OTLP *OTLP `yaml:"otlp" json:",omitempty"`
}

// Protocols accepted by `logging.otlp.protocol`.
const (
	// OTLPGRPC exports over OTLP/gRPC (collectors listen on 4317); the
	// default.
	OTLPGRPC = "grpc"
	// OTLPHTTP exports over OTLP/HTTP with protobuf bodies (collectors
	// listen on 4318), to the path /v1/logs.
	OTLPHTTP = "http"
)

// OTLP is `logging.otlp`: when Enabled, every log record also goes to an
// OpenTelemetry collector at Endpoint over Protocol (stdout keeps
// getting it). As in aviso-server, keys of the block that are none of
// these three are ignored (Warnings names them), and Endpoint is checked
// only when Enabled.
type OTLP struct {
	Enabled bool `yaml:"enabled"`
	// Endpoint is the collector's address: a URL, or host:port (then
	// http:// is assumed). See ExportURL.
	Endpoint string `yaml:"endpoint"`
	// Protocol is OTLPGRPC or OTLPHTTP, in lower case.
	Protocol string `yaml:"protocol"`
	// Ignored lists the keys written under the block that it does not
	// have, as "logging.otlp.KEY (line N)" (or the environment variable
	// that set it); they change nothing.
	Ignored []string `yaml:"-" json:"-"`
}

// Backend kinds accepted by `notification_backend.kind`.
const (
	BackendInMemory  = "in_memory"
	BackendJetStream = "jetstream"
)

// Backend is the `notification_backend` block.
type Backend struct {
	Kind      string    `yaml:"kind"`
	InMemory  InMemory  `yaml:"in_memory"`
	JetStream JetStream `yaml:"jetstream"`
}

// InMemory is `notification_backend.in_memory`.
type InMemory struct {
	MaxHistoryPerTopic int  `yaml:"max_history_per_topic"`
	MaxTopics          int  `yaml:"max_topics"`
	EnableMetrics      bool `yaml:"enable_metrics"`
}

// JetStream is `notification_backend.jetstream`. Its String, LogValue and
// MarshalJSON methods redact the token.
type JetStream struct {
	// NatsURL names an external NATS server or cluster. Empty means herald
	// starts an embedded nats-server (herald).
	NatsURL                 string `yaml:"nats_url"`
	Token                   string `yaml:"token"`
	TimeoutSeconds          int    `yaml:"timeout_seconds"`
	RetryAttempts           int    `yaml:"retry_attempts"`
	MaxMessages             *int64 `yaml:"max_messages"`
	MaxBytes                *int64 `yaml:"max_bytes"`
	RetentionTime           string `yaml:"retention_time"`
	StorageType             string `yaml:"storage_type"`
	Replicas                *int   `yaml:"replicas"`
	RetentionPolicy         string `yaml:"retention_policy"`
	DiscardPolicy           string `yaml:"discard_policy"`
	EnableAutoReconnect     bool   `yaml:"enable_auto_reconnect"`
	MaxReconnectAttempts    int    `yaml:"max_reconnect_attempts"`
	ReconnectDelayMs        int    `yaml:"reconnect_delay_ms"`
	PublishRetryAttempts    int    `yaml:"publish_retry_attempts"`
	PublishRetryBaseDelayMs int    `yaml:"publish_retry_base_delay_ms"`

	// DataDir is herald: the embedded server's file store directory.
	DataDir string `yaml:"data_dir"`
	// Listen is herald: host:port on which the embedded server accepts NATS
	// clients (for the nats CLI); empty means no port at all.
	Listen string `yaml:"listen"`
	// SyncAlways is herald: fsync every write of the embedded server.
	SyncAlways bool `yaml:"sync_always"`
}

// WatchEndpoint is the `watch_endpoint` block.
type WatchEndpoint struct {
	SSEHeartbeatIntervalSec          int `yaml:"sse_heartbeat_interval_sec"`
	ConnectionMaxDurationSec         int `yaml:"connection_max_duration_sec"`
	ReplayBatchSize                  int `yaml:"replay_batch_size"`
	MaxHistoricalNotifications       int `yaml:"max_historical_notifications"`
	ReplayBatchDelayMs               int `yaml:"replay_batch_delay_ms"`
	ConcurrentNotificationProcessing int `yaml:"concurrent_notification_processing"`

	// LiveQueueSize is herald: how many live notifications one watcher may
	// have waiting; a watcher that falls further behind is closed with an
	// error event so that it reconnects from its last sequence.
	LiveQueueSize int `yaml:"live_queue_size"`
	// MaxStreamsPerUser is herald: how many watch and replay streams one
	// authenticated user may have open at once (429 beyond); 0 means no
	// limit.
	MaxStreamsPerUser int `yaml:"max_streams_per_user"`
	// MaxStreamsPerClient is herald: how many watch and replay streams one
	// client address may have open at once (429 beyond); 0 means no limit.
	// Behind a reverse proxy set application.client_address_header and
	// application.trusted_proxies, or every client shares the proxy's
	// address. The default is 0: behind a load balancer a per-address
	// limit would cap the whole service.
	MaxStreamsPerClient int `yaml:"max_streams_per_client"`
	// MaxLagSec is herald: how old, in seconds, a live watcher's oldest
	// undelivered notification may get. A watcher that lags more is ended
	// with connection-closing and resume_from_id (the client resumes from
	// it and loses nothing) instead of holding notifications and socket
	// buffers for a client that does not read.
	MaxLagSec int `yaml:"max_lag_sec"`
	// StreamSendBufferBytes is herald: the kernel socket send buffer of a
	// stream connection (SO_SNDBUF), which bounds what a watcher that
	// reads nothing holds in the kernel; 0 keeps the operating system's
	// auto-tuned buffer (megabytes per connection).
	StreamSendBufferBytes int `yaml:"stream_send_buffer_bytes"`
}

// Auth modes accepted by `auth.mode`.
const (
	// AuthModeDirect forwards the Authorization header to auth-o-tron.
	AuthModeDirect = "direct"
	// AuthModeTrustedProxy verifies a Bearer JWT set by a trusted proxy.
	AuthModeTrustedProxy = "trusted_proxy"
)

// Auth is the global `auth` block. Its String, LogValue and MarshalJSON
// methods redact jwt_secret.
type Auth struct {
	Enabled      bool                `yaml:"enabled"`
	Mode         string              `yaml:"mode"`
	AuthOTronURL string              `yaml:"auth_o_tron_url"`
	JWTSecret    string              `yaml:"jwt_secret"`
	AdminRoles   map[string][]string `yaml:"admin_roles"`
	TimeoutMs    int                 `yaml:"timeout_ms"`

	// JWKSFile is herald: a JWKS document on disk whose RSA (RS256) and
	// P-256 (ES256) public keys verify tokens besides (or instead of)
	// jwt_secret. herald re-reads it when it changes.
	JWKSFile string `yaml:"jwks_file"`
}

// Metrics is the `metrics` block.
type Metrics struct {
	Enabled bool   `yaml:"enabled"`
	Host    string `yaml:"host"`
	// Port is 0 when unset.
	Port int `yaml:"port"`
	// Pprof is herald: when true (and Enabled), the metrics listener also
	// serves Go's profiles (net/http/pprof) under /debug/pprof/. Off by
	// default; left out of the JSON form when false.
	Pprof bool `yaml:"pprof" json:",omitempty"`
}

// Partial-outage policies accepted by `ecpds.partial_outage_policy`.
const (
	// ECPDSStrict needs an answer from every server.
	ECPDSStrict = "strict"
	// ECPDSAnySuccess needs an answer from at least one server.
	ECPDSAnySuccess = "any_success"
)

// ECPDS is the `ecpds` block of the destination plugin. Its String,
// LogValue and MarshalJSON methods redact the password.
type ECPDS struct {
	Username              string   `yaml:"username"`
	Password              string   `yaml:"password"`
	Servers               []string `yaml:"servers"`
	MatchKey              string   `yaml:"match_key"`
	TargetField           string   `yaml:"target_field"`
	CacheTTLSeconds       int      `yaml:"cache_ttl_seconds"`
	MaxEntries            int      `yaml:"max_entries"`
	RequestTimeoutSeconds int      `yaml:"request_timeout_seconds"`
	ConnectTimeoutSeconds int      `yaml:"connect_timeout_seconds"`
	PartialOutagePolicy   string   `yaml:"partial_outage_policy"`
}

// Schema is one event type under `notification_schema`.
type Schema struct {
	// Name is the event type (the map key in the file).
	Name string `yaml:"-"`
	// Line is the line of the event type's key in the file (0 when unknown).
	Line int `yaml:"-"`

	Topic *Topic `yaml:"topic"`
	// Identifier holds the declared identifier fields in file order.
	Identifier    []*IdentifierField `yaml:"identifier"`
	Payload       *Payload           `yaml:"payload"`
	Auth          *StreamAuth        `yaml:"auth"`
	StoragePolicy *StoragePolicy     `yaml:"storage_policy"`
	// MaxHistoricalNotifications overrides the global replay cap.
	MaxHistoricalNotifications *int `yaml:"max_historical_notifications"`
	// Endpoint is a legacy Aviso key, accepted and ignored.
	Endpoint any `yaml:"endpoint"`
}

// Topic is a schema's `topic` block.
type Topic struct {
	Base     string   `yaml:"base"`
	KeyOrder []string `yaml:"key_order"`
	// Separator is obsolete (always "."); accepted and ignored.
	Separator *string `yaml:"separator"`
}

// IdentifierField is one declared identifier field. Handler-specific keys
// are pointers or nil slices when absent; Keys lists the keys present, so
// that package notification can reject a key its handler does not know.
type IdentifierField struct {
	// Name is the field's key in the file.
	Name string `yaml:"-"`
	// Line is the line of the field's key in the file.
	Line int `yaml:"-"`
	// Keys are the keys written under the field, in file order.
	Keys []string `yaml:"-"`

	Type        string  `yaml:"type"`
	Required    *bool   `yaml:"required"`
	Description *string `yaml:"description"`

	MaxLength       *int     `yaml:"max_length"`
	CanonicalFormat *string  `yaml:"canonical_format"`
	Values          []string `yaml:"values"`
	// Range holds the YAML text of the two bounds, parsed by the handler.
	Range     []string `yaml:"range"`
	Default   *string  `yaml:"default"`
	MaxPoints *int     `yaml:"max_points"`
}

// Payload is a schema's `payload` block.
type Payload struct {
	Required bool `yaml:"required"`
	// Codec is herald: the name of a codec of the codecs block that types
	// the payload. Notify decodes the payload through it (a payload is
	// then always required), and its internal schema is the event type's
	// payload schema. Empty: an opaque JSON payload, as in Aviso.
	Codec string `yaml:"codec"`
}

// StreamAuth is a schema's `auth` block.
type StreamAuth struct {
	Required   *bool               `yaml:"required"`
	ReadRoles  map[string][]string `yaml:"read_roles"`
	WriteRoles map[string][]string `yaml:"write_roles"`
	// Plugins is nil when absent and non-nil (possibly empty) when written.
	Plugins []string `yaml:"plugins"`
}

// StoragePolicy is a schema's `storage_policy` block (JetStream only).
type StoragePolicy struct {
	RetentionTime   *string `yaml:"retention_time"`
	MaxMessages     *int64  `yaml:"max_messages"`
	MaxSize         *string `yaml:"max_size"`
	AllowDuplicates *bool   `yaml:"allow_duplicates"`
	Compression     *bool   `yaml:"compression"`
}

// Codecs is herald: the `codecs` block. The definitions file holds codec
// statements (CREATE SCHEMA, CREATE WIRE … SCHEMA, CREATE CODEC, …, as
// `herald codec check` reads them); resources are named, versioned
// directories of files (the .proto sources of protobuf codecs).
type Codecs struct {
	// Definitions is the path of the definitions file.
	Definitions string `yaml:"definitions"`
	// Resources are the resources the definitions may use.
	Resources []CodecResource `yaml:"resources"`
}

// CodecResource is one resource of the `codecs` block.
type CodecResource struct {
	// Name is the resource name codecs refer to (USING RESOURCE name).
	Name string `yaml:"name"`
	// Version is the resource version (VERSION n); 0 means 1.
	Version int `yaml:"version"`
	// Dir is the directory whose files make up the resource.
	Dir string `yaml:"dir"`
}
