package configs

// Default values of the config file. Where a runtime package applies a
// default to a zero option (engine, stream, session, handlers, jetstream
// each declare theirs), the value here is the same number, so a key left
// out of the file and an option left zero in code mean one thing; the
// server package's TestDefaultsAgree keeps them equal.
const (
	// DefaultMaxBodyBytes is herald's request body limit (1 MiB).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxBatchNotifications is application.max_batch_notifications.
	DefaultMaxBatchNotifications = 1000
	// MaxBatchNotificationsLimit is the largest max_batch_notifications:
	// the answer to a batch lists an id per notification, and a backend
	// failure part-way lists each by index.
	MaxBatchNotificationsLimit = 100000
	// DefaultBaseURL is application.base_url: the origin CloudEvent
	// source and schema URLs are built on.
	DefaultBaseURL = "http://localhost"
	// DefaultDataDir is where the embedded JetStream server keeps its files.
	DefaultDataDir = "./data/jetstream"
	// DefaultMaxPoints is the PointCloudHandler's max_points when unset and
	// its upper limit.
	DefaultMaxPoints = 10000
	// DefaultMaxLagSec is herald's watch_endpoint.max_lag_sec.
	DefaultMaxLagSec = 30
	// DefaultStreamSendBufferBytes is herald's
	// watch_endpoint.stream_send_buffer_bytes: 128 KiB of unread data at
	// most per stream connection in the kernel.
	DefaultStreamSendBufferBytes = 128 << 10
	// DefaultMaxStreamsPerUser is herald's watch_endpoint.max_streams_per_user.
	DefaultMaxStreamsPerUser = 64
	// DefaultMaxStreamsPerClient is herald's
	// watch_endpoint.max_streams_per_client: 0, no limit. Behind a load
	// balancer every client may share one address, and a per-address limit
	// would cap the whole service; max_streams_per_user still applies.
	DefaultMaxStreamsPerClient = 0
	// DefaultCORSMaxAgeSec is application.cors.max_age_sec when unset.
	DefaultCORSMaxAgeSec = 600
	// DefaultReplayBatchSize is watch_endpoint.replay_batch_size: the
	// stored records one history page fetches. The stream runner and the
	// handlers' settings fall back to it too.
	DefaultReplayBatchSize = 100
	// DefaultLiveQueueSize is watch_endpoint.live_queue_size: the live
	// records one watcher may have waiting, and the engine's queue bound
	// for a subscription that sets none. It is large enough for a watch
	// to buffer live records while it replays a long history; the memory
	// it costs is proportional to the records actually waiting, not to
	// the bound.
	DefaultLiveQueueSize = 4096
	// DefaultMaxHistoricalNotifications is
	// watch_endpoint.max_historical_notifications: the replay cap of
	// event types that set none.
	DefaultMaxHistoricalNotifications = 10000
	// DefaultMaxHistoryPerTopic is
	// notification_backend.in_memory.max_history_per_topic: the in-memory
	// history kept per exact subject; only the latest notification
	// survives, as in Aviso (Aviso's backends, docs/operations.md).
	DefaultMaxHistoryPerTopic = 1
	// DefaultMaxTopics is notification_backend.in_memory.max_topics: the
	// number of subjects the in-memory engine tracks before it evicts the
	// least recently published one.
	DefaultMaxTopics = 10000
	// DefaultMetricsPort is metrics.port: the port of the /metrics
	// listener (aviso-server has no default; the port every guide uses).
	DefaultMetricsPort = 9090
)

// Values of logging.format.
const (
	// LogFormatJSON writes one JSON object a line (the default).
	LogFormatJSON = "json"
	// LogFormatText writes human-readable key=value lines, for
	// development.
	LogFormatText = "text"
)

// Defaults of the session block (WebSocket sessions): the session
// package's Default* values.
const (
	// DefaultSessionMaxSubscriptions is session.max_subscriptions.
	DefaultSessionMaxSubscriptions = 32
	// DefaultSessionMaxProducers is session.max_producers.
	DefaultSessionMaxProducers = 32
	// DefaultSessionMaxProducerBytes is session.max_producer_bytes (32 MiB).
	DefaultSessionMaxProducerBytes = 32 << 20
	// DefaultSessionProducerCredit is session.producer_credit.
	DefaultSessionProducerCredit = 16
	// DefaultSessionProducerMaxBatch is session.producer_max_batch.
	DefaultSessionProducerMaxBatch = 1000
	// DefaultSessionQueueFrames is session.session_queue_frames.
	DefaultSessionQueueFrames = 1024
	// DefaultSessionQueueBytes is session.session_queue_bytes (1 MiB).
	DefaultSessionQueueBytes = 1 << 20
	// DefaultSessionMaxFrameEvents is session.max_frame_events.
	DefaultSessionMaxFrameEvents = 256
	// DefaultSessionMaxFrameBytes is session.max_frame_bytes (4 MiB).
	DefaultSessionMaxFrameBytes = 4 << 20
	// DefaultSessionBlockingTimeoutMs is session.blocking_timeout_ms.
	DefaultSessionBlockingTimeoutMs = 1000
	// DefaultMaxSessionsPerUser is session.max_sessions_per_user.
	DefaultMaxSessionsPerUser = 64
)

// WorkqueueRefusal is why notification_backend.jetstream.retention_policy
// workqueue is refused with the JetStream backend: aviso-server 0.13's
// reason, word for word after the key.
const WorkqueueRefusal = "'workqueue' is not supported: workqueue retention does not support Aviso's independent watch/replay consumers; use 'limits' or 'interest'"

// defaultCORSHeaders are application.cors.allowed_headers when unset.
var defaultCORSHeaders = []string{"Authorization", "Content-Type", "Last-Event-ID"}

// Plugin names accepted in a schema's `auth.plugins`.
const (
	// PluginECPDS is the ECPDS destination plugin (the ECPDS plugin,
	// docs/auth.md).
	PluginECPDS = "ecpds"
)

// Default returns a configuration holding every default of Aviso plus
// herald's own (docs/configuration.md lists them). Load decodes the file
// onto it, so an absent key keeps its default and a partial block (watch_endpoint, logging,
// ecpds, ...) takes per-key defaults.
//
// application.host, application.port and notification_backend.kind have no
// default: the file (or the environment) must set them.
//
// Where herald differs from Aviso:
//   - application.static_files_path is "" and means herald's built-in
//     homepage; set it to a directory holding index.html to serve your own
//     (Aviso's default is /app/static).
//   - notification_backend.jetstream.nats_url is "" and means an embedded
//     nats-server storing its files in jetstream.data_dir (Aviso connects
//     to nats://localhost:4222).
//   - logging.format is "json" (Aviso accepts the key for compatibility
//     only; output is JSON in both).
//
// notification_backend.jetstream.max_reconnect_attempts is 0, unlimited,
// as in aviso-server 0.13 (0.7 made it 5).
// notification_backend.jetstream.enable_auto_reconnect is accepted and
// ignored, as in aviso-server 0.13, which removed it: the NATS client
// always reconnects.
func Default() Config {
	return Config{
		Application: Application{
			BaseURL:               DefaultBaseURL,
			StaticFilesPath:       "",
			Homepage:              defaultHomepage(),
			MaxBodyBytes:          DefaultMaxBodyBytes,
			MaxBatchNotifications: DefaultMaxBatchNotifications,
			ReadHeaderTimeoutSec:  10,
			ReadBodyTimeoutSec:    30,
			ShutdownGraceSec:      30,
		},
		Logging: Logging{Level: "info", Format: "json"},
		NotificationBackend: Backend{
			InMemory: InMemory{
				MaxHistoryPerTopic: DefaultMaxHistoryPerTopic,
				MaxTopics:          DefaultMaxTopics,
			},
			JetStream: JetStream{
				TimeoutSeconds:          30,
				RetryAttempts:           3,
				StorageType:             "file",
				RetentionPolicy:         "limits",
				DiscardPolicy:           "old",
				EnableAutoReconnect:     true,
				MaxReconnectAttempts:    0,
				ReconnectDelayMs:        2000,
				PublishRetryAttempts:    5,
				PublishRetryBaseDelayMs: 150,
				DataDir:                 DefaultDataDir,
			},
		},
		WatchEndpoint: WatchEndpoint{
			SSEHeartbeatIntervalSec:          30,
			ConnectionMaxDurationSec:         3600,
			ReplayBatchSize:                  DefaultReplayBatchSize,
			MaxHistoricalNotifications:       DefaultMaxHistoricalNotifications,
			ReplayBatchDelayMs:               100,
			ConcurrentNotificationProcessing: 15,
			LiveQueueSize:                    DefaultLiveQueueSize,
			MaxLagSec:                        DefaultMaxLagSec,
			StreamSendBufferBytes:            DefaultStreamSendBufferBytes,
			MaxStreamsPerUser:                DefaultMaxStreamsPerUser,
			MaxStreamsPerClient:              DefaultMaxStreamsPerClient,
		},
		Auth: Auth{
			Mode:      AuthModeDirect,
			TimeoutMs: 5000,
		},
		Metrics: Metrics{Host: "127.0.0.1", Port: DefaultMetricsPort},
		Session: Session{
			MaxSubscriptions:   DefaultSessionMaxSubscriptions,
			MaxProducers:       DefaultSessionMaxProducers,
			MaxProducerBytes:   DefaultSessionMaxProducerBytes,
			ProducerCredit:     DefaultSessionProducerCredit,
			ProducerMaxBatch:   DefaultSessionProducerMaxBatch,
			QueueFrames:        DefaultSessionQueueFrames,
			QueueBytes:         DefaultSessionQueueBytes,
			MaxFrameEvents:     DefaultSessionMaxFrameEvents,
			MaxFrameBytes:      DefaultSessionMaxFrameBytes,
			BlockingTimeoutMs:  DefaultSessionBlockingTimeoutMs,
			MaxSessionsPerUser: DefaultMaxSessionsPerUser,
		},
	}
}

// defaultHomepage returns the homepage links of the Aviso reference.
func defaultHomepage() *Homepage {
	return &Homepage{
		ClientDocumentationURL: "https://sites.ecmwf.int/docs/aviso-client/main/",
		ClientRepositoryURL:    "https://github.com/ecmwf/aviso-client",
		ServerDocumentationURL: "https://sites.ecmwf.int/docs/aviso-server/main/",
		ServerRepositoryURL:    "https://github.com/ecmwf/aviso-server",
	}
}

// defaultCORS returns the defaults of an `application.cors` block; the
// allowed origins have none.
func defaultCORS() *CORS {
	return &CORS{
		AllowedHeaders: append([]string(nil), defaultCORSHeaders...),
		MaxAgeSec:      DefaultCORSMaxAgeSec,
	}
}

// defaultECPDS returns the defaults of an `ecpds` block; the credentials,
// servers and match_key have none.
func defaultECPDS() *ECPDS {
	return &ECPDS{
		TargetField:           "name",
		CacheTTLSeconds:       300,
		MaxEntries:            10000,
		RequestTimeoutSeconds: 30,
		ConnectTimeoutSeconds: 5,
		PartialOutagePolicy:   "strict",
	}
}

// Strict reports whether requests for an event type without a schema are
// rejected (Aviso's error bodies, docs/api.md): notification_schema_strict
// when set, otherwise true exactly when at least one schema is configured.
func (c *Config) Strict() bool {
	if c.NotificationSchemaStrict != nil {
		return *c.NotificationSchemaStrict
	}
	return len(c.NotificationSchema) > 0
}

// Warnings lists settings that are valid but probably not what the
// operator meant; the caller logs them at startup.
func (c *Config) Warnings() []string {
	var w []string
	if s := c.NotificationSchemaStrict; s != nil {
		switch {
		case !*s && len(c.NotificationSchema) > 0:
			w = append(w, "notification_schema_strict is false: event types without a schema are accepted through the generic fallback")
		case *s && len(c.NotificationSchema) == 0:
			w = append(w, "notification_schema_strict is true but no schema is configured: every notify, watch and replay request is rejected")
		}
	}
	if f := c.Logging.Format; f != "" && f != LogFormatJSON && f != LogFormatText {
		w = append(w, "logging.format "+quote(f)+" is accepted for compatibility and logs JSON; herald knows json and text")
	}
	if a := c.Application; a.ClientAddressHeader != "" && len(a.TrustedProxies) == 0 {
		w = append(w, "application.client_address_header "+quote(a.ClientAddressHeader)+" is ignored without application.trusted_proxies: the per-client stream limit counts the TCP peer address")
	} else if a.ClientAddressHeader == "" && len(a.TrustedProxies) > 0 {
		w = append(w, "application.trusted_proxies is set but application.client_address_header is not: the per-client stream limit counts the TCP peer address")
	}
	if !c.NotificationBackend.JetStream.EnableAutoReconnect {
		w = append(w, "notification_backend.jetstream.enable_auto_reconnect is ignored, as in aviso-server 0.13: herald always reconnects to NATS")
	}
	if o := c.Logging.OTLP; o != nil {
		for _, k := range o.Ignored {
			w = append(w, k+" is not a key of logging.otlp (enabled, endpoint, protocol) and is ignored, as aviso-server ignores it")
		}
	}
	for _, s := range c.NotificationSchema {
		if s.Topic != nil && s.Topic.Separator != nil && *s.Topic.Separator != "." {
			w = append(w, "notification_schema."+s.Name+".topic.separator is obsolete and ignored; subjects always use \".\"")
		}
	}
	return w
}
