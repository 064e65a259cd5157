package configs

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Validate checks every startup rule Aviso applies (startup validation,
// auth, ECPDS, topics, the schema rules; docs/configuration.md) and
// returns all problems as Problems, or nil. Load calls it; call it again
// after changing a Config in code. Rules that need an identifier
// handler's own parser (range bounds, canonical_format values, an Expver
// default) are checked by package notification when it builds its
// registry.
func (c *Config) Validate() error {
	if ps := c.validate(nil); len(ps) > 0 {
		return ps
	}
	return nil
}

// validator collects the problems of one configuration.
type validator struct {
	c *Config
	// lines maps key paths to file lines; nil when validating a Config
	// built in code (then the presence of application.port is not checked,
	// since 0 is a valid port).
	lines map[string]int
	ps    Problems
}

func (c *Config) validate(lines map[string]int) Problems {
	v := &validator{c: c, lines: lines}
	v.application()
	v.backend()
	v.watchEndpoint()
	v.session()
	v.auth()
	v.metrics()
	v.logging()
	v.ecpds()
	v.codecs()
	v.schemas()
	return v.ps
}

// codecs checks the `codecs` block's shape; compiling the definitions is
// the codec core's job at startup.
func (v *validator) codecs() {
	c := v.c.Codecs
	if c == nil {
		return
	}
	if strings.TrimSpace(c.Definitions) == "" {
		v.global("codecs.definitions", "required when the codecs block is present: the path of a file of codec statements")
	}
	seen := map[string]int{}
	for i, r := range c.Resources {
		path := fmt.Sprintf("codecs.resources[%d]", i)
		if !bareName(r.Name) {
			v.global(path+".name", "must be a bare name (no spaces, dots or slashes), got %q", r.Name)
		}
		if r.Version < 0 {
			v.global(path+".version", "must be 1 or more (0 or absent means 1), got %d", r.Version)
		}
		if strings.TrimSpace(r.Dir) == "" {
			v.global(path+".dir", "required: the directory holding the resource's files")
		}
		key := fmt.Sprintf("%s@%d", r.Name, max(r.Version, 1))
		if j, dup := seen[key]; dup {
			v.global(path, "resource %s is already declared by codecs.resources[%d]", key, j)
		}
		seen[key] = i
	}
}

// line returns the line of path or, when the key was not written, of its
// nearest written parent.
func (v *validator) line(path string) int {
	for p := path; p != ""; {
		if l, ok := v.lines[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

// global records a problem of a setting outside notification_schema.
func (v *validator) global(path, format string, args ...any) {
	v.ps = append(v.ps, Problem{Path: path, Line: v.line(path), Field: path, Rule: fmt.Sprintf(format, args...)})
}

// schema records a problem of an event type.
func (v *validator) schema(s *Schema, field, format string, args ...any) {
	v.ps = append(v.ps, Problem{
		Path: "notification_schema." + s.Name + "." + field, Line: s.Line,
		EventType: s.Name, Field: field, Rule: fmt.Sprintf(format, args...),
	})
}

func (v *validator) positive(path string, n int64) {
	if n <= 0 {
		v.global(path, "must be greater than 0, got %d", n)
	}
}

func (v *validator) nonNegative(path string, n int64) {
	if n < 0 {
		v.global(path, "must not be negative, got %d", n)
	}
}

func (v *validator) oneOf(path, got string, allowed ...string) {
	if slices.Contains(allowed, got) {
		return
	}
	list := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	v.global(path, "must be %s, got %s", list, quote(got))
}

// padded reports leading or trailing whitespace.
func padded(s string) bool {
	return strings.TrimSpace(s) != s
}

// httpURL reports whether s is an absolute http(s) URL with a host and no
// credentials.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && u.User == nil
}

func (v *validator) application() {
	a := &v.c.Application
	switch {
	case strings.TrimSpace(a.Host) == "":
		v.global("application.host", "required; the address to listen on, e.g. 127.0.0.1 or 0.0.0.0")
	case padded(a.Host):
		v.global("application.host", "must not have leading or trailing whitespace")
	}
	if _, ok := v.lines["application.port"]; v.lines != nil && !ok {
		v.global("application.port", "required; the TCP port to listen on, e.g. 8000")
	} else if a.Port < 0 || a.Port > 65535 {
		v.global("application.port", "must be between 0 and 65535 (0 picks a free port), got %d", a.Port)
	}
	if h := a.Homepage; h != nil {
		for _, l := range []struct{ key, url string }{
			{"client_documentation_url", h.ClientDocumentationURL},
			{"client_repository_url", h.ClientRepositoryURL},
			{"server_documentation_url", h.ServerDocumentationURL},
			{"server_repository_url", h.ServerRepositoryURL},
		} {
			if !httpURL(l.url) {
				v.global("application.homepage."+l.key, "must be an absolute http(s) URL with a host and no credentials, got %s", quote(l.url))
			}
		}
	}
	v.positive("application.max_body_bytes", a.MaxBodyBytes)
	if n := a.MaxBatchNotifications; n <= 0 || n > MaxBatchNotificationsLimit {
		v.global("application.max_batch_notifications", "must be between 1 and %d, got %d", MaxBatchNotificationsLimit, n)
	}
	v.positive("application.read_header_timeout_sec", int64(a.ReadHeaderTimeoutSec))
	v.positive("application.read_body_timeout_sec", int64(a.ReadBodyTimeoutSec))
	v.nonNegative("application.shutdown_grace_sec", int64(a.ShutdownGraceSec))
	if h := a.ClientAddressHeader; h != "" && !headerName(h) {
		v.global("application.client_address_header", "must be an HTTP header name such as X-Forwarded-For, got %s", quote(h))
	}
	for i, p := range a.TrustedProxies {
		if _, err := ParseTrustedProxy(p); err != nil {
			v.global(fmt.Sprintf("application.trusted_proxies[%d]", i), "must be a CIDR such as 10.0.0.0/8 or fd00::/8, or a single IP address, got %s", quote(p))
		}
	}
	if c := a.CORS; c != nil {
		v.cors(c)
	}
}

// headerName reports whether s is an HTTP header field name (an RFC 9110
// token).
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// origin reports whether s is a browser origin: scheme://host[:port]
// with an http(s) scheme and nothing after the authority.
func origin(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != "" &&
		u.User == nil && u.Path == "" && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" &&
		!strings.Contains(s, "#") && strings.ToLower(u.Scheme)+"://"+u.Host == s
}

// cors checks the `application.cors` block.
func (v *validator) cors(c *CORS) {
	const p = "application.cors."
	if len(c.AllowedOrigins) == 0 {
		v.global(p+"allowed_origins", "must list at least one origin (scheme://host[:port]) or [\"*\"]; remove the cors block to keep Aviso's behaviour")
	}
	for i, o := range c.AllowedOrigins {
		switch {
		case o == "*":
			if len(c.AllowedOrigins) > 1 {
				v.global(index(p+"allowed_origins", i), "\"*\" allows every origin and must be the only entry")
			}
		case !origin(o):
			v.global(index(p+"allowed_origins", i), "must be an origin such as https://app.example.org (lowercase scheme, no path or trailing slash), got %s", quote(o))
		}
	}
	for i, h := range c.AllowedHeaders {
		if !headerName(h) {
			v.global(index(p+"allowed_headers", i), "must be an HTTP header name, got %s", quote(h))
		}
	}
	v.nonNegative(p+"max_age_sec", int64(c.MaxAgeSec))
}

func (v *validator) backend() {
	b := &v.c.NotificationBackend
	switch b.Kind {
	case BackendInMemory, BackendJetStream:
	case "":
		v.global("notification_backend.kind", "required; use in_memory or jetstream")
	default:
		v.global("notification_backend.kind", "unknown backend %s; use in_memory or jetstream", quote(b.Kind))
	}
	const im = "notification_backend.in_memory."
	v.positive(im+"max_history_per_topic", int64(b.InMemory.MaxHistoryPerTopic))
	v.positive(im+"max_topics", int64(b.InMemory.MaxTopics))

	const p = "notification_backend.jetstream."
	js := &b.JetStream
	if padded(js.NatsURL) {
		v.global(p+"nats_url", "must not have leading or trailing whitespace")
	}
	v.positive(p+"timeout_seconds", int64(js.TimeoutSeconds))
	v.positive(p+"retry_attempts", int64(js.RetryAttempts))
	if js.MaxReconnectAttempts < 0 {
		v.global(p+"max_reconnect_attempts", "must not be negative (0 means unlimited), got %d", js.MaxReconnectAttempts)
	}
	v.positive(p+"reconnect_delay_ms", int64(js.ReconnectDelayMs))
	v.positive(p+"publish_retry_attempts", int64(js.PublishRetryAttempts))
	v.positive(p+"publish_retry_base_delay_ms", int64(js.PublishRetryBaseDelayMs))
	for _, l := range []struct {
		key string
		n   *int64
	}{{"max_messages", js.MaxMessages}, {"max_bytes", js.MaxBytes}} {
		if l.n != nil && (*l.n == 0 || *l.n < -1) {
			v.global(p+l.key, "must be greater than 0, or -1 for no limit, got %d", *l.n)
		}
	}
	if js.RetentionTime != "" {
		if _, err := ParseDuration(js.RetentionTime); err != nil {
			v.global(p+"retention_time", "%s", err.Error())
		}
	}
	v.oneOf(p+"storage_type", js.StorageType, "file", "memory")
	if r := js.Replicas; r != nil && (*r < 1 || *r > 5) {
		v.global(p+"replicas", "must be between 1 and 5, got %d", *r)
	}
	switch js.RetentionPolicy {
	case "workqueue":
		// aviso-server parses it, then refuses it when the JetStream
		// backend starts (so only with kind jetstream), with this reason.
		if b.Kind == BackendJetStream {
			v.global(p+"retention_policy", "%s", WorkqueueRefusal)
		}
	default:
		v.oneOf(p+"retention_policy", js.RetentionPolicy, "limits", "interest")
	}
	v.oneOf(p+"discard_policy", js.DiscardPolicy, "old", "new")
	if b.Kind == BackendJetStream && js.NatsURL == "" && strings.TrimSpace(js.DataDir) == "" {
		v.global(p+"data_dir", "required for the embedded server (nats_url is empty)")
	}
	if js.Listen != "" {
		_, port, err := net.SplitHostPort(js.Listen)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n < 0 || n > 65535 {
			v.global(p+"listen", "must be host:port, e.g. 127.0.0.1:4222, got %s", quote(js.Listen))
		}
	}
}

func (v *validator) session() {
	const p = "session."
	s := &v.c.Session
	v.positive(p+"max_subscriptions", int64(s.MaxSubscriptions))
	v.positive(p+"max_producers", int64(s.MaxProducers))
	v.positive(p+"max_producer_bytes", s.MaxProducerBytes)
	v.positive(p+"producer_credit", int64(s.ProducerCredit))
	v.positive(p+"producer_max_batch", int64(s.ProducerMaxBatch))
	v.positive(p+"session_queue_frames", int64(s.QueueFrames))
	v.positive(p+"session_queue_bytes", int64(s.QueueBytes))
	v.positive(p+"max_frame_events", int64(s.MaxFrameEvents))
	v.positive(p+"blocking_timeout_ms", int64(s.BlockingTimeoutMs))
	v.nonNegative(p+"max_sessions_per_user", int64(s.MaxSessionsPerUser))
	if s.MaxFrameBytes < 64<<10 {
		v.global(p+"max_frame_bytes", "must be at least 65536 (64 KiB), got %d", s.MaxFrameBytes)
		return
	}
	// The terminal reply of a full batch lists its ids in one frame.
	longest := ""
	for _, sc := range v.c.NotificationSchema {
		if sc != nil && len(sc.Name) > len(longest) {
			longest = sc.Name
		}
	}
	if s.ProducerMaxBatch > 0 && longest != "" {
		if need := BatchReplyBytes(s.ProducerMaxBatch, longest); need > s.MaxFrameBytes {
			v.global(p+"max_frame_bytes", "must hold the reply to a full batch, which lists its ids: producer_max_batch (%d) ids of event type %s need up to %d bytes, got %d (raise max_frame_bytes or lower producer_max_batch)",
				s.ProducerMaxBatch, quote(longest), need, s.MaxFrameBytes)
		}
	}
}

// BatchReplyBytes is the largest terminal reply of a session batch of n
// notifications of eventType: the ids "<eventType>@<sequence>" (a
// sequence has at most 20 digits), quoted and separated by commas, and
// 2048 bytes for the rest of the reply (the request's id, at most 1024
// bytes, the outcome and an error).
func BatchReplyBytes(n int, eventType string) int {
	return n*(len(eventType)+len(`"@",`)+20) + 2048
}

func (v *validator) watchEndpoint() {
	const p = "watch_endpoint."
	w := &v.c.WatchEndpoint
	v.positive(p+"sse_heartbeat_interval_sec", int64(w.SSEHeartbeatIntervalSec))
	v.positive(p+"connection_max_duration_sec", int64(w.ConnectionMaxDurationSec))
	v.positive(p+"replay_batch_size", int64(w.ReplayBatchSize))
	v.positive(p+"max_historical_notifications", int64(w.MaxHistoricalNotifications))
	v.nonNegative(p+"replay_batch_delay_ms", int64(w.ReplayBatchDelayMs))
	v.nonNegative(p+"concurrent_notification_processing", int64(w.ConcurrentNotificationProcessing))
	v.positive(p+"live_queue_size", int64(w.LiveQueueSize))
	v.nonNegative(p+"max_streams_per_user", int64(w.MaxStreamsPerUser))
	v.nonNegative(p+"max_streams_per_client", int64(w.MaxStreamsPerClient))
	v.positive(p+"max_lag_sec", int64(w.MaxLagSec))
	v.nonNegative(p+"stream_send_buffer_bytes", int64(w.StreamSendBufferBytes))
}

// roleProblem is one problem of a realm → roles map.
type roleProblem struct{ path, rule string }

// roleProblems checks a realm → roles map: realm and role names neither
// empty nor whitespace-padded, and at least one role per realm.
func roleProblems(base string, roles map[string][]string) []roleProblem {
	var out []roleProblem
	for _, realm := range slices.Sorted(maps.Keys(roles)) {
		p := base + "." + realm
		switch {
		case strings.TrimSpace(realm) == "":
			p = base
			out = append(out, roleProblem{p, "realm names must not be empty or whitespace"})
		case padded(realm):
			p = base
			out = append(out, roleProblem{p, "realm " + quote(realm) + " must not have leading or trailing whitespace"})
		}
		list := roles[realm]
		if len(list) == 0 {
			out = append(out, roleProblem{p, "must list at least one role (use [\"*\"] for every user of the realm)"})
		}
		for _, role := range list {
			switch {
			case strings.TrimSpace(role) == "":
				out = append(out, roleProblem{p, "roles must not be empty or whitespace"})
			case padded(role):
				out = append(out, roleProblem{p, "role " + quote(role) + " must not have leading or trailing whitespace"})
			}
		}
	}
	return out
}

func (v *validator) auth() {
	a := &v.c.Auth
	v.oneOf("auth.mode", a.Mode, AuthModeDirect, AuthModeTrustedProxy)
	if !a.Enabled {
		return
	}
	v.positive("auth.timeout_ms", int64(a.TimeoutMs))
	switch {
	case a.Mode == AuthModeDirect && strings.TrimSpace(a.AuthOTronURL) == "":
		v.global("auth.auth_o_tron_url", "required when auth.mode is direct")
	case padded(a.AuthOTronURL):
		v.global("auth.auth_o_tron_url", "must not have leading or trailing whitespace")
	case a.AuthOTronURL != "" && !httpURL(a.AuthOTronURL):
		v.global("auth.auth_o_tron_url", "must be an absolute http(s) URL, got %s", quote(a.AuthOTronURL))
	}
	switch {
	case strings.TrimSpace(a.JWTSecret) == "" && a.JWTSecret != "":
		v.global("auth.jwt_secret", "must not be whitespace")
	case a.JWTSecret == "" && a.JWKSFile == "":
		v.global("auth.jwt_secret", "required when auth is enabled (or set auth.jwks_file to verify RS256/ES256 tokens)")
	case padded(a.JWTSecret):
		v.global("auth.jwt_secret", "must not have leading or trailing whitespace")
	}
	switch {
	case a.JWKSFile != "" && strings.TrimSpace(a.JWKSFile) == "":
		v.global("auth.jwks_file", "must not be whitespace; remove the key or name a JWKS file")
	case padded(a.JWKSFile):
		v.global("auth.jwks_file", "must not have leading or trailing whitespace")
	}
	if len(a.AdminRoles) == 0 {
		v.global("auth.admin_roles", "must name at least one realm and its admin roles when auth is enabled, e.g. {ecmwf: [admin]}")
	}
	for _, rp := range roleProblems("auth.admin_roles", a.AdminRoles) {
		v.global(rp.path, "%s", rp.rule)
	}
}

func (v *validator) metrics() {
	m := &v.c.Metrics
	if !m.Enabled {
		if m.Pprof {
			v.global("metrics.pprof", "needs metrics.enabled true: the profiles are served on the metrics listener")
		}
		return
	}
	switch {
	case m.Port < 1 || m.Port > 65535:
		v.global("metrics.port", "must be between 1 and 65535, got %d", m.Port)
	case m.Port == v.c.Application.Port:
		v.global("metrics.port", "must differ from application.port (%d)", v.c.Application.Port)
	}
	if strings.TrimSpace(m.Host) == "" {
		v.global("metrics.host", "required when metrics.enabled is true")
	}
}

// LogLevelNames lists the values of logging.level, for messages.
const LogLevelNames = "trace, debug, info, warn, error or off"

// LogLevel returns the canonical name of a logging.level value: trace,
// debug, info, warn, error or off, written in any case and with
// surrounding spaces; "warning" is warn and the empty level is info. ok
// is false for anything else.
func LogLevel(s string) (name string, ok bool) {
	switch l := strings.ToLower(strings.TrimSpace(s)); l {
	case "trace", "debug", "info", "warn", "error", "off":
		return l, true
	case "warning":
		return "warn", true
	case "":
		return "info", true
	}
	return "", false
}

// logging checks the `logging` block: an unknown level is an error, not
// info as in Aviso, so that a typo does not go unnoticed.
func (v *validator) logging() {
	if _, ok := LogLevel(v.c.Logging.Level); !ok {
		v.global("logging.level", "must be %s, got %s", LogLevelNames, quote(v.c.Logging.Level))
	}
	v.otlp()
	v.tracing()
}

// bareName reports whether s can name an identifier field: not empty,
// without whitespace, dots, slashes or NUL.
func bareName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '.' || r == '/' || r == 0
	})
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (v *validator) ecpds() {
	e := v.c.ECPDS
	if e == nil {
		return
	}
	for _, c := range []struct{ key, val string }{{"username", e.Username}, {"password", e.Password}} {
		switch {
		case c.val == "":
			v.global("ecpds."+c.key, "required")
		case padded(c.val):
			v.global("ecpds."+c.key, "must not have leading or trailing whitespace")
		}
	}
	if len(e.Servers) == 0 {
		v.global("ecpds.servers", "must list at least one server URL")
	}
	for i, s := range e.Servers {
		p := index("ecpds.servers", i)
		if padded(s) {
			v.global(p, "must not have leading or trailing whitespace")
			continue
		}
		u, err := url.Parse(s)
		switch {
		case err != nil || u.Hostname() == "" || u.Opaque != "":
			v.global(p, "must be an absolute https URL, got %s", quote(s))
			continue
		case u.Scheme == "https":
		case u.Scheme == "http" && !loopback(u.Hostname()):
			v.global(p, "plain http is allowed only to a loopback host (localhost, 127.0.0.1, ::1); use https, got %s", quote(s))
		case u.Scheme != "http":
			v.global(p, "must be an https URL (or http to a loopback host), got %s", quote(s))
		}
		if u.RawQuery != "" || u.ForceQuery {
			v.global(p, "must not contain a query string; herald appends ?id=<username> itself")
		}
		if strings.Contains(s, "#") {
			v.global(p, "must not contain a fragment")
		}
	}
	switch {
	case e.MatchKey == "":
		v.global("ecpds.match_key", "required; the identifier field whose value must be one of the user's destinations")
	case !bareName(e.MatchKey):
		v.global("ecpds.match_key", "must be a bare identifier name (no spaces, dots or slashes), got %s", quote(e.MatchKey))
	}
	switch {
	case strings.TrimSpace(e.TargetField) == "":
		v.global("ecpds.target_field", "required")
	case padded(e.TargetField):
		v.global("ecpds.target_field", "must not have leading or trailing whitespace")
	}
	v.positive("ecpds.cache_ttl_seconds", int64(e.CacheTTLSeconds))
	v.positive("ecpds.max_entries", int64(e.MaxEntries))
	v.positive("ecpds.request_timeout_seconds", int64(e.RequestTimeoutSeconds))
	v.positive("ecpds.connect_timeout_seconds", int64(e.ConnectTimeoutSeconds))
	v.oneOf("ecpds.partial_outage_policy", e.PartialOutagePolicy, ECPDSStrict, ECPDSAnySuccess)
}

// plural formats "1 value", "3 values".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// lineSuffix formats " (line N)", or nothing for an unknown line.
func lineSuffix(line int) string {
	if line <= 0 {
		return ""
	}
	return " (line " + strconv.Itoa(line) + ")"
}

func (v *validator) schemas() {
	bases := make(map[string]*Schema)
	for _, s := range v.c.NotificationSchema {
		if s == nil {
			continue
		}
		v.base(s, bases)
		fields := v.identifier(s)
		v.keyOrder(s, fields)
		v.streamAuth(s, fields)
		v.storagePolicy(s)
		v.payload(s)
		if m := s.MaxHistoricalNotifications; m != nil && *m <= 0 {
			v.schema(s, "max_historical_notifications", "must be a positive integer, got %d", *m)
		}
	}
}

// payload checks the payload block's codec name; that the codec exists
// and fits the event type is checked against the compiled codecs
// (package notification).
func (v *validator) payload(s *Schema) {
	p := s.Payload
	if p == nil || p.Codec == "" {
		return
	}
	switch {
	case strings.TrimSpace(p.Codec) != p.Codec:
		v.schema(s, "payload.codec", "codec name %s has leading or trailing spaces", quote(p.Codec))
	case v.c.Codecs == nil:
		v.schema(s, "payload.codec", "names codec %s, but there is no codecs block: define the codec in the definitions file of a codecs block", quote(p.Codec))
	}
}

// base checks the topic base and its uniqueness ignoring case.
func (v *validator) base(s *Schema, bases map[string]*Schema) {
	base, field := s.Name, "topic"
	if s.Topic != nil {
		base, field = s.Topic.Base, "topic.base"
	}
	switch {
	case s.Topic != nil && base == "":
		v.schema(s, field, "required when the topic block is present")
	case len(base) > MaxBaseBytes:
		v.schema(s, field, "%s is %d bytes long; a topic base has at most %d bytes (it names the event type's JetStream stream)", quote(base), len(base), MaxBaseBytes)
	case s.Topic != nil && !ValidBase(base):
		v.schema(s, field, "%s is not a valid base; use letters, digits, _ and -, starting with a letter or digit", quote(base))
	case !ValidBase(base):
		v.schema(s, field, "without a topic block the event type name is the topic base, and %s is not a valid base (letters, digits, _ and -, starting with a letter or digit); add a topic block", quote(base))
	default:
		key := strings.ToLower(base)
		if other, dup := bases[key]; dup {
			v.schema(s, field, "base %s is already used by event type %s%s; bases must be unique ignoring case", quote(base), quote(other.Name), lineSuffix(other.Line))
			return
		}
		bases[key] = s
	}
}

// identifier checks the identifier fields and returns them by name.
func (v *validator) identifier(s *Schema) map[string]*IdentifierField {
	byName := make(map[string]*IdentifierField, len(s.Identifier))
	for _, f := range s.Identifier {
		if f == nil {
			continue
		}
		byName[f.Name] = f
		p := "identifier." + f.Name
		switch {
		case !bareName(f.Name):
			v.schema(s, p, "field names must not be empty or contain spaces, dots or slashes")
		case f.Name == FieldPoint:
			v.schema(s, p, "the name %s is reserved for the spatial point filter of watch and replay; rename the field", FieldPoint)
		}
		allowed, known := handlerKeys(f.Type)
		switch {
		case f.Type == "":
			v.schema(s, p+".type", "required; one of %s", handlerList)
		case !known:
			v.schema(s, p+".type", "unknown handler %s; use %s", quote(f.Type), handlerList)
		}
		if f.Required == nil {
			v.schema(s, p+".required", "required; true if watch and replay requests must give this field, false to make it a wildcard when omitted")
		}
		if !known {
			continue
		}
		for _, k := range f.Keys {
			if !slices.Contains(allowed, k) {
				v.schema(s, p+"."+k, "not a key of %s; its keys are %s", f.Type, strings.Join(allowed, ", "))
			}
		}
		switch f.Type {
		case HandlerEnum:
			if f.Values == nil {
				v.schema(s, p+".values", "required for %s; list the accepted values", HandlerEnum)
			}
		case HandlerInt, HandlerFloat:
			if f.Range != nil && len(f.Range) != 2 {
				v.schema(s, p+".range", "must be [min, max], got %s", plural(len(f.Range), "value"))
			}
		case HandlerString:
			if f.MaxLength != nil && *f.MaxLength < 1 {
				v.schema(s, p+".max_length", "must be at least 1, got %d", *f.MaxLength)
			}
		case HandlerPointCloud:
			if f.MaxPoints != nil && (*f.MaxPoints < 1 || *f.MaxPoints > DefaultMaxPoints) {
				v.schema(s, p+".max_points", "must be between 1 and %d, got %d", DefaultMaxPoints, *f.MaxPoints)
			}
		}
		switch {
		case f.Type == HandlerPolygon && f.Name != FieldPolygon:
			v.schema(s, p+".type", "a %s field must be named %s", HandlerPolygon, FieldPolygon)
		case f.Type == HandlerPointCloud && f.Name != FieldPointCloud:
			v.schema(s, p+".type", "a %s field must be named %s", HandlerPointCloud, FieldPointCloud)
		case f.Name == FieldPolygon && f.Type != HandlerPolygon:
			v.schema(s, p+".type", "the name %[1]s is reserved for a %[2]s field; rename the field or use type: %[2]s", FieldPolygon, HandlerPolygon)
		case f.Name == FieldPointCloud && f.Type != HandlerPointCloud:
			v.schema(s, p+".type", "the name %[1]s is reserved for a %[2]s field; rename the field or use type: %[2]s", FieldPointCloud, HandlerPointCloud)
		}
	}
	if pc := byName[FieldPointCloud]; pc != nil && pc.Type == HandlerPointCloud {
		if _, ok := byName[FieldPolygon]; ok {
			v.schema(s, "identifier."+FieldPolygon, "a schema with a %[1]s cannot declare %[2]s: watch and replay send %[2]s to filter the point cloud", HandlerPointCloud, FieldPolygon)
		}
		if s.Topic == nil {
			v.schema(s, "identifier."+FieldPointCloud, "a %s needs a topic block", HandlerPointCloud)
		}
	}
	return byName
}

// keyOrder checks topic.key_order against the declared fields.
func (v *validator) keyOrder(s *Schema, fields map[string]*IdentifierField) {
	t := s.Topic
	if t == nil {
		return
	}
	if len(t.KeyOrder) == 0 {
		v.schema(s, "topic.key_order", "must not be empty; list the identifier fields that make up the subject, in order")
	}
	seen := make(map[string]bool, len(t.KeyOrder))
	for _, k := range t.KeyOrder {
		switch {
		case k == FieldPointCloud:
			v.schema(s, "topic.key_order", "point_cloud must not be listed; a point cloud travels as spatial metadata, not in the subject")
		case seen[k]:
			v.schema(s, "topic.key_order", "field %s is listed twice", quote(k))
		case fields[k] == nil:
			v.schema(s, "topic.key_order", "field %s is not declared under identifier", quote(k))
		}
		seen[k] = true
	}
	for _, f := range s.Identifier {
		if f != nil && !isSpatial(f.Type) && !seen[f.Name] {
			v.schema(s, "topic.key_order", "field %s is declared but not listed; every ordinary identifier must be routed", quote(f.Name))
		}
	}
}

// streamAuth checks a schema's auth block, its plugins and the ECPDS
// match key.
func (v *validator) streamAuth(s *Schema, fields map[string]*IdentifierField) {
	a := s.Auth
	if a == nil {
		return
	}
	if a.Required == nil {
		v.schema(s, "auth.required", "required when the auth block is present (true or false)")
	}
	required := a.Required != nil && *a.Required
	for _, l := range []struct {
		key   string
		roles map[string][]string
		hint  string
	}{
		{"read_roles", a.ReadRoles, "remove it to let any authenticated user read"},
		{"write_roles", a.WriteRoles, "remove it to let only admins write"},
	} {
		if l.roles != nil && len(l.roles) == 0 {
			v.schema(s, "auth."+l.key, "must not be an empty map; %s", l.hint)
		}
		for _, rp := range roleProblems("auth."+l.key, l.roles) {
			v.schema(s, rp.path, "%s", rp.rule)
		}
	}
	hasRoles := len(a.ReadRoles) > 0 || len(a.WriteRoles) > 0
	switch {
	case !v.c.Auth.Enabled && required:
		v.schema(s, "auth.required", "is true but auth is disabled; set auth.enabled: true at the top level or remove this auth block")
	case !v.c.Auth.Enabled && hasRoles:
		v.schema(s, "auth", "role lists need auth.enabled: true at the top level; enable auth or remove them")
	case a.Required != nil && !required && hasRoles:
		v.schema(s, "auth", "role lists need auth.required: true; set it or remove the lists")
	}
	if a.Plugins == nil {
		return
	}
	if len(a.Plugins) == 0 {
		v.schema(s, "auth.plugins", "must not be empty; remove the key instead of writing plugins: []")
	}
	for _, p := range a.Plugins {
		if p != PluginECPDS {
			v.schema(s, "auth.plugins", "unknown plugin %s; known plugins: ecpds", quote(p))
		}
	}
	if len(a.Plugins) > 0 && !required {
		v.schema(s, "auth.plugins", "plugins run only after stream authentication; set auth.required: true")
	}
	if slices.Contains(a.Plugins, PluginECPDS) {
		v.ecpdsMatchKey(s, fields)
	}
}

// ecpdsMatchKey checks that a schema using the ecpds plugin routes the
// match key: a declared, required, ordinary identifier in key_order.
func (v *validator) ecpdsMatchKey(s *Schema, fields map[string]*IdentifierField) {
	e := v.c.ECPDS
	if e == nil {
		v.schema(s, "auth.plugins", "the ecpds plugin needs a top-level ecpds block (servers, username, password, match_key)")
		return
	}
	mk := e.MatchKey
	if !bareName(mk) {
		return // reported on ecpds.match_key
	}
	f := fields[mk]
	switch {
	case f == nil:
		v.schema(s, "auth.plugins", "ecpds.match_key %s is not declared under identifier", quote(mk))
		return
	case isSpatial(f.Type) || mk == FieldPolygon || mk == FieldPointCloud:
		v.schema(s, "auth.plugins", "ecpds.match_key %s is a spatial field; use an ordinary routing identifier such as destination", quote(mk))
		return
	case f.Required == nil || !*f.Required:
		v.schema(s, "identifier."+mk+".required", "must be true: the field is the ecpds.match_key, which every watch and replay must give")
	}
	if s.Topic == nil || !slices.Contains(s.Topic.KeyOrder, mk) {
		v.schema(s, "topic.key_order", "must list the ecpds.match_key %s: ECPDS can only restrict what the subject retains", quote(mk))
	}
}

// storagePolicy checks a schema's storage_policy block.
func (v *validator) storagePolicy(s *Schema) {
	sp := s.StoragePolicy
	if sp == nil {
		return
	}
	if v.c.NotificationBackend.Kind == BackendInMemory {
		v.schema(s, "storage_policy", "not supported by the in_memory backend; use notification_backend.kind: jetstream or remove it")
	}
	if s.Topic == nil {
		v.schema(s, "storage_policy", "needs a topic block: the policy applies to the stream of topic.base")
	}
	if sp.RetentionTime != nil {
		if _, err := ParseDuration(*sp.RetentionTime); err != nil {
			v.schema(s, "storage_policy.retention_time", "%s", err.Error())
		}
	}
	if sp.MaxMessages != nil && *sp.MaxMessages <= 0 {
		v.schema(s, "storage_policy.max_messages", "must be greater than 0, got %d", *sp.MaxMessages)
	}
	if sp.MaxSize != nil {
		if _, err := ParseSize(*sp.MaxSize); err != nil {
			v.schema(s, "storage_policy.max_size", "%s", err.Error())
		}
	}
}
