package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"herald/configs"
	"herald/handlers"
	"herald/jetstream"
	"herald/metrics"
	"herald/stream"
)

// streamConfigurer is implemented by engines whose streams follow the
// schemas (the JetStream engine): after a reload it creates the streams
// of added event types and reconciles those whose storage changed, with
// the rules of startup.
type streamConfigurer interface {
	ConfigureStreams(ctx context.Context, defaults jetstream.StreamPolicy, streams []jetstream.StreamSpec) error
}

// ecpdsRetireDelay is how long a replaced ECPDS client keeps serving the
// requests that started before a reload.
const ecpdsRetireDelay = time.Minute

// Reload reads the configuration file again and applies it: an invalid
// file, one that changes settings that need a restart, or one that
// changes an event type's payload schema so that its stored records could
// not be read (unless opts.Force), changes nothing and says why (a
// *handlers.ReloadError); otherwise the new
// Runtime is swapped in, the backend's streams are created or reconciled,
// and the open streams of removed and changed event types end
// (schema_removed, schema_changed with a resume id); a compatible payload
// schema change ends only the streams that asked for a format, a forced
// breaking one all of them. Streams of unchanged
// event types keep delivering; requests in flight finish with the
// settings they started with. One reload runs at a time.
func (s *Server) Reload(ctx context.Context, opts handlers.ReloadOptions) (*handlers.ReloadReport, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	trigger := opts.Trigger
	if trigger == "" {
		trigger = "reload"
	}
	rep, err := s.reload(ctx, opts)
	s.countReload(err)
	if err != nil {
		var re *handlers.ReloadError
		if errors.As(err, &re) {
			s.log.Error("configuration reload refused; the running configuration stays", "trigger", trigger,
				"config", s.opts.ConfigPath, "code", re.Code, "error", re.Message, "refused", re.Refused,
				"fingerprint", s.Runtime().Fingerprint)
		} else {
			s.log.Error("configuration reload failed; the running configuration stays", "trigger", trigger,
				"config", s.opts.ConfigPath, "error", err, "fingerprint", s.Runtime().Fingerprint)
		}
		return nil, err
	}
	s.log.Info("configuration reloaded", "trigger", trigger, "config", s.opts.ConfigPath,
		"fingerprint", rep.Fingerprint, "previous_fingerprint", rep.Previous, "added", rep.Added, "removed", rep.Removed,
		"changed", rep.Changed, "storage_reconciled", rep.StorageReconciled, "settings_changed", rep.Settings,
		"payload_schemas", payloadSummary(rep.PayloadSchemas), "streams_ended", rep.StreamsEnded)
	return rep, nil
}

func (s *Server) reload(ctx context.Context, opts handlers.ReloadOptions) (*handlers.ReloadReport, error) {
	if s.opts.ConfigPath == "" {
		return nil, &handlers.ReloadError{Code: handlers.ReloadInvalid, Message: "herald was started without a configuration file to reload"}
	}
	old := s.Runtime()
	cfg, err := configs.Load(s.opts.ConfigPath, s.opts.Env)
	if err != nil {
		return nil, &handlers.ReloadError{Code: handlers.ReloadInvalid, Message: fmt.Sprintf("config %s:\n%v", s.opts.ConfigPath, err)}
	}
	if refused := fixedChanges(old.Config, cfg); len(refused) > 0 {
		return nil, &handlers.ReloadError{Code: handlers.ReloadRefused, Refused: refused,
			Message: "these settings cannot change while herald runs (restart it to apply them); nothing was applied: " + strings.Join(refused, ", ")}
	}
	rt, err := NewRuntime(cfg, s.runtimeOptions(), old)
	if err != nil {
		return nil, &handlers.ReloadError{Code: handlers.ReloadInvalid, Message: fmt.Sprintf("config %s:\n%v", s.opts.ConfigPath, err)}
	}
	payloads := payloadChanges(old.Registry, rt.Registry)
	if breaking(payloads) {
		msg, refused := breakingMessage(payloads)
		if !opts.Force {
			return nil, &handlers.ReloadError{Code: handlers.ReloadRefused, Refused: refused, Message: msg}
		}
		for i := range payloads {
			payloads[i].Forced = !payloads[i].Compatible
		}
		s.log.Warn("configuration reload forced over breaking payload schema changes: the records stored under the previous schemas that the new ones cannot read are delivered with a null payload and the reason in heraldpayloaderror",
			"trigger", opts.Trigger, "config", s.opts.ConfigPath, "breaks", refused)
	}
	d := diffConfigs(old.Config, cfg)
	if sc, ok := s.eng.(streamConfigurer); ok && (len(d.added) > 0 || len(d.storage) > 0) {
		jo, err := jetstream.OptionsFromConfig(cfg)
		if err != nil {
			return nil, &handlers.ReloadError{Code: handlers.ReloadInvalid, Message: fmt.Sprintf("config %s:\n%v", s.opts.ConfigPath, err)}
		}
		var specs []jetstream.StreamSpec
		for _, spec := range jo.Streams {
			if slices.Contains(d.added, spec.EventType) || slices.Contains(d.storage, spec.EventType) {
				specs = append(specs, spec)
			}
		}
		if err := sc.ConfigureStreams(ctx, jo.Defaults, specs); err != nil {
			// A change JetStream cannot apply in place changed nothing:
			// refused like a fixed setting, by name.
			var re *jetstream.RefusedError
			if errors.As(err, &re) {
				refused := make([]string, len(re.Refusals))
				for i, r := range re.Refusals {
					refused[i] = r.String()
				}
				return nil, &handlers.ReloadError{Code: handlers.ReloadRefused, Refused: refused,
					Message: "the backend cannot apply these stream changes in place (restart on a new stream, or keep the current values); nothing was applied: " + strings.Join(refused, "; ")}
			}
			return nil, fmt.Errorf("creating or reconciling the streams of %s: %w", strings.Join(append(d.added, d.storage...), ", "), err)
		}
	}
	// The new settings first, so that a client reconnecting at once after
	// its stream ended finds the new schema.
	s.h.Apply(rt.Handlers)
	s.install(rt)
	ended := 0
	for _, name := range d.removed {
		ended += s.h.EndStreams(name, stream.SchemaRemoved)
	}
	for _, name := range d.changed {
		ended += s.h.EndStreams(name, stream.SchemaChanged)
	}
	// A compatible payload schema change ends the streams that asked for
	// a format (their codec's output follows the schema); the row view's
	// keep the schema they opened with, which reads the new records by
	// name. A forced breaking change ends them all.
	for _, c := range payloads {
		if c.Compatible {
			ended += s.h.EndFormatStreams(c.EventType, stream.SchemaChanged)
		} else {
			ended += s.h.EndStreams(c.EventType, stream.SchemaChanged)
		}
	}
	if old.ECPDS != nil && old.ECPDS != rt.ECPDS {
		retired := old.ECPDS
		time.AfterFunc(ecpdsRetireDelay, retired.Close)
	}
	return &handlers.ReloadReport{
		Fingerprint: rt.Fingerprint, Previous: old.Fingerprint,
		Added: d.added, Removed: d.removed, Changed: d.changed, StorageReconciled: d.storage,
		Settings: d.settings, PayloadSchemas: payloads, StreamsEnded: ended,
	}, nil
}

// countReload counts a reload's outcome in the metrics: ok, refused (a
// *handlers.ReloadError with ReloadRefused) or error.
func (s *Server) countReload(err error) {
	if s.metrics == nil {
		return
	}
	var re *handlers.ReloadError
	switch {
	case err == nil:
		s.metrics.Reloaded(metrics.ReloadOK)
		s.describe(s.Runtime())
	case errors.As(err, &re) && re.Code == handlers.ReloadRefused:
		s.metrics.Reloaded(metrics.ReloadRefused)
	default:
		s.metrics.Reloaded(metrics.ReloadError)
	}
}

// fixedChanges lists the settings that differ between old and next but
// cannot change while herald runs: the listener, the backend and its
// connection, the metrics listener, the log format and the log's OTLP
// export (compared by effect: a block with enabled false is no block,
// and keys it ignores change nothing). enable_auto_reconnect is not
// one: it is ignored.
func fixedChanges(old, next *configs.Config) []string {
	var out []string
	check := func(path string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			out = append(out, path)
		}
	}
	oa, na := old.Application, next.Application
	check("application.host", oa.Host, na.Host)
	check("application.port", oa.Port, na.Port)
	check("application.read_header_timeout_sec", oa.ReadHeaderTimeoutSec, na.ReadHeaderTimeoutSec)
	ob, nb := old.NotificationBackend, next.NotificationBackend
	check("notification_backend.kind", ob.Kind, nb.Kind)
	check("notification_backend.in_memory.max_history_per_topic", ob.InMemory.MaxHistoryPerTopic, nb.InMemory.MaxHistoryPerTopic)
	check("notification_backend.in_memory.max_topics", ob.InMemory.MaxTopics, nb.InMemory.MaxTopics)
	oj, nj := ob.JetStream, nb.JetStream
	const js = "notification_backend.jetstream."
	check(js+"nats_url", oj.NatsURL, nj.NatsURL)
	check(js+"token", oj.Token, nj.Token)
	check(js+"data_dir", oj.DataDir, nj.DataDir)
	check(js+"listen", oj.Listen, nj.Listen)
	check(js+"sync_always", oj.SyncAlways, nj.SyncAlways)
	check(js+"timeout_seconds", oj.TimeoutSeconds, nj.TimeoutSeconds)
	check(js+"retry_attempts", oj.RetryAttempts, nj.RetryAttempts)
	check(js+"max_reconnect_attempts", oj.MaxReconnectAttempts, nj.MaxReconnectAttempts)
	check(js+"reconnect_delay_ms", oj.ReconnectDelayMs, nj.ReconnectDelayMs)
	check(js+"publish_retry_attempts", oj.PublishRetryAttempts, nj.PublishRetryAttempts)
	check(js+"publish_retry_base_delay_ms", oj.PublishRetryBaseDelayMs, nj.PublishRetryBaseDelayMs)
	check("metrics", old.Metrics, next.Metrics)
	check("logging.format", old.Logging.Format, next.Logging.Format)
	oe, _ := old.Logging.Export()
	ne, _ := next.Logging.Export()
	check("logging.otlp", oe, ne)
	return out
}

// configDiff is what a reload changes, by event type and by setting.
type configDiff struct {
	added, removed, changed, storage, settings []string
}

// diffConfigs compares two configurations that differ in no fixed
// setting. Lists are sorted and never nil.
func diffConfigs(old, next *configs.Config) configDiff {
	d := configDiff{added: []string{}, removed: []string{}, changed: []string{}, storage: []string{}, settings: []string{}}
	olds, nexts := schemasByName(old), schemasByName(next)
	defaultsChanged := streamDefaults(old) != streamDefaults(next)
	for name, ns := range nexts {
		prev, ok := olds[name]
		if !ok {
			d.added = append(d.added, name)
			continue
		}
		if !reflect.DeepEqual(routing(prev), routing(ns)) {
			d.changed = append(d.changed, name)
		}
		if defaultsChanged || !reflect.DeepEqual(prev.StoragePolicy, ns.StoragePolicy) {
			d.storage = append(d.storage, name)
		}
		if !reflect.DeepEqual(prev.Auth, ns.Auth) {
			d.settings = append(d.settings, "notification_schema."+name+".auth")
		}
		if !reflect.DeepEqual(prev.MaxHistoricalNotifications, ns.MaxHistoricalNotifications) {
			d.settings = append(d.settings, "notification_schema."+name+".max_historical_notifications")
		}
	}
	for name := range olds {
		if _, ok := nexts[name]; !ok {
			d.removed = append(d.removed, name)
		}
	}
	oa, na := old.Application, next.Application
	oa.Host, oa.Port, oa.ReadHeaderTimeoutSec = na.Host, na.Port, na.ReadHeaderTimeoutSec
	for _, c := range []struct {
		path string
		a, b any
	}{
		{"application", oa, na},
		{"watch_endpoint", old.WatchEndpoint, next.WatchEndpoint},
		{"auth", old.Auth, next.Auth},
		{"ecpds", old.ECPDS, next.ECPDS},
		{"codecs", old.Codecs, next.Codecs},
		{"logging.level", old.Logging.Level, next.Logging.Level},
		{"notification_schema_strict", old.NotificationSchemaStrict, next.NotificationSchemaStrict},
	} {
		if !reflect.DeepEqual(c.a, c.b) {
			d.settings = append(d.settings, c.path)
		}
	}
	if defaultsChanged {
		d.settings = append(d.settings, "notification_backend.jetstream (stream defaults)")
	}
	for _, l := range [][]string{d.added, d.removed, d.changed, d.storage, d.settings} {
		sort.Strings(l)
	}
	return d
}

// schemasByName indexes a configuration's event types.
func schemasByName(c *configs.Config) map[string]*configs.Schema {
	m := make(map[string]*configs.Schema, len(c.NotificationSchema))
	for _, s := range c.NotificationSchema {
		m[s.Name] = s
	}
	return m
}

// schemaRouting is what decides where a notification is stored and how
// it is read: the effective base, the key order, the identifier fields
// with their handlers, and the payload rules. A change of any of them
// ends the event type's open streams with schema_changed.
type schemaRouting struct {
	Base     string
	KeyOrder []string
	Fields   []configs.IdentifierField
	Payload  *configs.Payload
}

// routing returns the routing of a schema, with the file positions left
// out.
func routing(s *configs.Schema) schemaRouting {
	r := schemaRouting{Base: s.Name, Payload: s.Payload}
	if s.Topic != nil {
		if s.Topic.Base != "" {
			r.Base = s.Topic.Base
		}
		r.KeyOrder = s.Topic.KeyOrder
	}
	for _, f := range s.Identifier {
		c := *f
		c.Line, c.Keys = 0, nil
		if c.Description != nil {
			c.Description = nil // documentation, not routing
		}
		r.Fields = append(r.Fields, c)
	}
	return r
}

// streamDefaults is the backend's stream policy that every stream starts
// from.
type streamPolicyKey struct {
	maxMessages, maxBytes, replicas  string
	retention, storage, policy, disc string
}

func streamDefaults(c *configs.Config) streamPolicyKey {
	j := c.NotificationBackend.JetStream
	p := func(v any) string { return fmt.Sprint(v) }
	k := streamPolicyKey{retention: j.RetentionTime, storage: j.StorageType, policy: j.RetentionPolicy, disc: j.DiscardPolicy}
	if j.MaxMessages != nil {
		k.maxMessages = p(*j.MaxMessages)
	}
	if j.MaxBytes != nil {
		k.maxBytes = p(*j.MaxBytes)
	}
	if j.Replicas != nil {
		k.replicas = p(*j.Replicas)
	}
	return k
}
