package jetstream

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/herald-gateway/herald/topic"
)

// Defaults of Options; the Aviso ones are Aviso's config defaults
// (docs/configuration.md).
const (
	// DefaultConnectTimeout bounds one startup connection attempt
	// (timeout_seconds).
	DefaultConnectTimeout = 30 * time.Second
	// DefaultConnectAttempts is the number of startup connection attempts
	// (retry_attempts).
	DefaultConnectAttempts = 3
	// DefaultReconnectDelay is the pause between startup attempts and
	// between reconnection attempts (reconnect_delay_ms).
	DefaultReconnectDelay = 2 * time.Second
	// DefaultMaxReconnects is the number of reconnection attempts of one
	// burst of the client library after a lost connection when
	// Options.MaxReconnects is 0. The configuration never leaves it 0:
	// max_reconnect_attempts unset or 0 means unlimited (-1), as in
	// aviso-server 0.13.
	DefaultMaxReconnects = 5
	// DefaultMaxRedialDelay caps the pause between the engine's own
	// re-dials once the client library has given up reconnecting (the
	// pauses start at ReconnectDelay and double). It also bounds how long
	// herald may stay unavailable after the server is back (the cap plus
	// a dial), which is why it is short: a refused dial costs the server
	// next to nothing, and the client library itself retries every
	// ReconnectDelay (2 s by default) during its bursts.
	DefaultMaxRedialDelay = 3 * time.Second
	// DefaultPublishAttempts is the number of publish attempts
	// (publish_retry_attempts).
	DefaultPublishAttempts = 5
	// DefaultPublishRetryBase is the first pause between publish attempts,
	// doubled after each (publish_retry_base_delay_ms).
	DefaultPublishRetryBase = 150 * time.Millisecond
	// DefaultRequestTimeout bounds one JetStream API call, one publish
	// attempt and one history page.
	DefaultRequestTimeout = 5 * time.Second
	// DefaultPublishTimeout bounds a whole Publish, retries included.
	DefaultPublishTimeout = 15 * time.Second
	// DefaultPublishConns is the number of connections single publishes
	// are spread over (the engine's main connection included).
	DefaultPublishConns = 4
	// DefaultFeedHeartbeat is the idle heartbeat of each live feed
	// consumer; a feed that hears nothing for three heartbeats and a
	// second recreates its consumer.
	DefaultFeedHeartbeat = time.Second
	// DefaultDataDir is the embedded server's store directory.
	DefaultDataDir = "./data/jetstream"
)

// Storage types, retention policies and discard policies of StreamPolicy
// (the values of the config keys storage_type, retention_policy and
// discard_policy).
const (
	// StorageFile stores a stream on disk (the default).
	StorageFile = "file"
	// StorageMemory keeps a stream in the server's memory.
	StorageMemory = "memory"

	// RetentionLimits keeps notifications until a limit removes them
	// (the default, and the only policy under which replay works fully).
	RetentionLimits = "limits"
	// RetentionInterest removes a notification once every consumer has
	// seen it; herald's own live feed is a consumer, so replay then finds
	// little.
	RetentionInterest = "interest"
	// RetentionWorkQueue removes a notification once one consumer has
	// seen it; it cannot serve herald's replay consumers, and the
	// configuration refuses it, as
	// aviso-server 0.13 does. The engine still maps it, for programs
	// that build Options themselves.
	RetentionWorkQueue = "workqueue"

	// DiscardOld removes the oldest notifications when a limit is reached
	// (the default).
	DiscardOld = "old"
	// DiscardNew refuses new notifications when a limit is reached.
	DiscardNew = "new"
)

// Options configure an Engine. The zero value of each field means its
// default; OptionsFromConfig builds them from herald's configuration.
type Options struct {
	// URL names an external NATS server or cluster (comma-separated URLs
	// for several seeds). Empty starts an embedded nats-server (Embedded).
	URL string
	// Token authenticates to the server (external or embedded).
	Token string
	// ConnectTimeout bounds one startup connection attempt.
	ConnectTimeout time.Duration
	// ConnectAttempts is the number of startup connection attempts;
	// ReconnectDelay separates them.
	ConnectAttempts int
	// ReconnectDelay is the pause between connection attempts, at startup
	// and after a lost connection, and the first pause between re-dials.
	ReconnectDelay time.Duration
	// NoReconnect disables the client library's reconnection: a lost
	// connection is not resumed; the engine re-dials a new one at once
	// and then with backoff, as after an exhausted burst, so it recovers
	// all the same. The configuration never sets it: like aviso-server
	// 0.13, herald accepts enable_auto_reconnect and ignores it.
	NoReconnect bool
	// MaxReconnects bounds the attempts of one reconnection burst of the
	// client library after a lost connection; negative means unlimited
	// (max_reconnect_attempts unset or 0, the config's default). Zero
	// means DefaultMaxReconnects. When a burst fails, the engine re-dials
	// (see MaxRedialDelay): it never gives up.
	MaxReconnects int
	// MaxRedialDelay caps the pause between the engine's re-dials after
	// the client library gave up (they start at ReconnectDelay and
	// double, with up to 10% jitter). Zero means DefaultMaxRedialDelay;
	// it is never below ReconnectDelay.
	MaxRedialDelay time.Duration
	// PublishAttempts is the number of attempts of one publish; only
	// failures where the server did not answer are retried.
	PublishAttempts int
	// PublishRetryBase is the first pause between publish attempts,
	// doubled after each one.
	PublishRetryBase time.Duration
	// PublishTimeout bounds a whole Publish, retries and the wait for the
	// stored timestamp included.
	PublishTimeout time.Duration
	// RequestTimeout bounds one JetStream API request, one publish
	// attempt and one history page.
	RequestTimeout time.Duration
	// PublishConns is the number of connections that Publish and
	// PublishSeq spread their messages over, taking turns: concurrent
	// publishes are pipelined on each (each waits for its own
	// acknowledgement), and the server reads the connections in
	// parallel. The engine's main connection is one of them; the others
	// carry nothing else. Zero means DefaultPublishConns; 1 publishes on
	// the main connection only.
	PublishConns int
	// FeedHeartbeat is the idle heartbeat of the live feed consumers.
	FeedHeartbeat time.Duration

	// Embedded configures the in-process server used when URL is empty.
	Embedded EmbeddedOptions

	// Defaults is the stream policy of every stream before its schema's
	// storage_policy is applied; lazily created (schema-less) streams use
	// it as is.
	Defaults StreamPolicy
	// Streams are the event types' streams, created or reconciled when the
	// engine opens (ConfigureStreams adds to them and replaces Defaults
	// on reload).
	Streams []StreamSpec

	// Logger receives the engine's logs; nil discards them.
	Logger *slog.Logger
	// Observer is told the engine's operations, reconnections and gaps
	// (metrics); nil records nothing.
	Observer Observer
}

// EmbeddedOptions configure the in-process nats-server.
type EmbeddedOptions struct {
	// DataDir is the file store directory (DefaultDataDir when empty).
	DataDir string
	// Listen is a loopback host:port on which the server accepts NATS
	// clients (for the nats CLI); empty means no port at all, the engine
	// then talks to the server in process only.
	Listen string
	// SyncAlways makes the server fsync every write before it
	// acknowledges it.
	SyncAlways bool
	// ServerName names the server (default "herald").
	ServerName string
}

// StreamSpec is the stream of one event type's topic base.
type StreamSpec struct {
	// Base is the topic base; the stream is named after it, uppercased.
	Base string
	// EventType is the schema owning the base; records rebuilt from the
	// stream carry it unless their message says otherwise.
	EventType string
	// Policy overrides Options.Defaults field by field: a nil field keeps
	// the default.
	Policy PolicyOverride
}

// StreamPolicy is the effective configuration of a stream.
type StreamPolicy struct {
	// MaxAge removes notifications older than it; 0 keeps them forever.
	MaxAge time.Duration
	// MaxMsgs bounds the notifications of the stream; <= 0 is unlimited.
	MaxMsgs int64
	// MaxBytes bounds the stream's size; <= 0 is unlimited.
	MaxBytes int64
	// MaxMsgsPerSubject bounds the notifications kept per exact subject:
	// 1 (Aviso's default, allow_duplicates: false) keeps only the newest;
	// -1 is unlimited. Zero means 1.
	MaxMsgsPerSubject int64
	// Compression stores messages S2-compressed.
	Compression bool
	// Storage is StorageFile (default) or StorageMemory.
	Storage string
	// Retention is RetentionLimits (default), RetentionInterest or
	// RetentionWorkQueue.
	Retention string
	// Discard is DiscardOld (default) or DiscardNew.
	Discard string
	// Replicas is the stream's replica count (default 1).
	Replicas int
}

// PolicyOverride is a schema's storage_policy: each non-nil field
// replaces the backend default.
type PolicyOverride struct {
	// MaxAge is retention_time.
	MaxAge *time.Duration
	// MaxMsgs is max_messages.
	MaxMsgs *int64
	// MaxBytes is max_size.
	MaxBytes *int64
	// MaxMsgsPerSubject is allow_duplicates: -1 when true, 1 when false.
	MaxMsgsPerSubject *int64
	// Compression is compression (S2 when true).
	Compression *bool
}

// apply returns p with the override's fields replaced.
func (o PolicyOverride) apply(p StreamPolicy) StreamPolicy {
	if o.MaxAge != nil {
		p.MaxAge = *o.MaxAge
	}
	if o.MaxMsgs != nil {
		p.MaxMsgs = *o.MaxMsgs
	}
	if o.MaxBytes != nil {
		p.MaxBytes = *o.MaxBytes
	}
	if o.MaxMsgsPerSubject != nil {
		p.MaxMsgsPerSubject = *o.MaxMsgsPerSubject
	}
	if o.Compression != nil {
		p.Compression = *o.Compression
	}
	return p
}

// withDefaults fills the zero fields of p.
func (p StreamPolicy) withDefaults() StreamPolicy {
	if p.MaxMsgsPerSubject == 0 {
		p.MaxMsgsPerSubject = 1
	}
	if p.Storage == "" {
		p.Storage = StorageFile
	}
	if p.Retention == "" {
		p.Retention = RetentionLimits
	}
	if p.Discard == "" {
		p.Discard = DiscardOld
	}
	if p.Replicas <= 0 {
		p.Replicas = 1
	}
	return p
}

// check reports a policy value the engine cannot map.
func (p StreamPolicy) check() error {
	switch p.Storage {
	case StorageFile, StorageMemory:
	default:
		return fmt.Errorf("storage type %q: use %q or %q", p.Storage, StorageFile, StorageMemory)
	}
	switch p.Retention {
	case RetentionLimits, RetentionInterest, RetentionWorkQueue:
	default:
		return fmt.Errorf("retention policy %q: use %q, %q or %q", p.Retention, RetentionLimits, RetentionInterest, RetentionWorkQueue)
	}
	switch p.Discard {
	case DiscardOld, DiscardNew:
	default:
		return fmt.Errorf("discard policy %q: use %q or %q", p.Discard, DiscardOld, DiscardNew)
	}
	if p.MaxAge < 0 {
		return fmt.Errorf("max age %s is negative", p.MaxAge)
	}
	return nil
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Observer == nil {
		o.Observer = noObserver{}
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.ConnectAttempts <= 0 {
		o.ConnectAttempts = DefaultConnectAttempts
	}
	if o.ReconnectDelay <= 0 {
		o.ReconnectDelay = DefaultReconnectDelay
	}
	if o.MaxReconnects == 0 {
		o.MaxReconnects = DefaultMaxReconnects
	}
	if o.MaxRedialDelay <= 0 {
		o.MaxRedialDelay = DefaultMaxRedialDelay
	}
	o.MaxRedialDelay = max(o.MaxRedialDelay, o.ReconnectDelay)
	if o.PublishAttempts <= 0 {
		o.PublishAttempts = DefaultPublishAttempts
	}
	if o.PublishRetryBase <= 0 {
		o.PublishRetryBase = DefaultPublishRetryBase
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = DefaultPublishTimeout
	}
	if o.FeedHeartbeat <= 0 {
		o.FeedHeartbeat = DefaultFeedHeartbeat
	}
	if o.PublishConns <= 0 {
		o.PublishConns = DefaultPublishConns
	}
	if o.Embedded.DataDir == "" {
		o.Embedded.DataDir = DefaultDataDir
	}
	if o.Embedded.ServerName == "" {
		o.Embedded.ServerName = "herald"
	}
	o.Defaults = o.Defaults.withDefaults()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// check validates the options after withDefaults.
func (o Options) check() error {
	if err := o.Defaults.check(); err != nil {
		return fmt.Errorf("default stream policy: %w", err)
	}
	seen := map[string]string{}
	for _, s := range o.Streams {
		if !topic.ValidBase(s.Base) {
			return fmt.Errorf("stream of event type %q: topic base %q must match %s", s.EventType, s.Base, topic.BaseRule)
		}
		name := StreamName(s.Base)
		if other, dup := seen[name]; dup {
			return fmt.Errorf("topic bases %q and %q both map to stream %s", other, s.Base, name)
		}
		seen[name] = s.Base
	}
	if l := o.Embedded.Listen; o.URL == "" && l != "" {
		host, _, err := net.SplitHostPort(l)
		if err != nil {
			return fmt.Errorf("embedded listen address %q: %w", l, err)
		}
		if !isLoopback(host) {
			return fmt.Errorf("embedded listen address %q: the embedded server listens on loopback only (127.0.0.1, ::1 or localhost); use an external NATS server to serve other hosts", l)
		}
	}
	return nil
}

// isLoopback reports whether host names the loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// StreamName is the JetStream stream of a topic base: the base
// ASCII-uppercased (as Aviso's backends do: Weather_v2 → WEATHER_V2).
func StreamName(base string) string {
	b := []byte(base)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
