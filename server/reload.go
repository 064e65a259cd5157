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

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/metrics"
	"github.com/herald-gateway/herald/stream"
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
// *ReloadError); otherwise the new
// Runtime is swapped in, the backend's streams are created or reconciled,
// and the open streams of removed and changed event types end
// (schema_removed, schema_changed with a resume id); a compatible payload
// schema change ends only the streams that asked for a format, a forced
// breaking one all of them. Streams of unchanged
// event types keep delivering; requests in flight finish with the
// settings they started with. One reload runs at a time.
func (s *Server) Reload(ctx context.Context, opts ReloadOptions) (*ReloadReport, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	trigger := opts.Trigger
	if trigger == "" {
		trigger = "reload"
	}
	rep, err := s.reload(ctx, opts)
	s.countReload(err)
	if err != nil {
		var re *ReloadError
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

// reloadPlan is a checked reload: the new configuration and Runtime, and
// what changes.
type reloadPlan struct {
	old      *Runtime
	cfg      *configs.Config
	rt       *Runtime
	diff     configDiff
	payloads []PayloadChange
}

// reload runs the four steps of a reload: load the file, check it against
// the running configuration (nothing is touched until all checks pass),
// build what the backend needs, and apply.
func (s *Server) reload(ctx context.Context, opts ReloadOptions) (*ReloadReport, error) {
	cfg, err := s.loadConfig()
	if err != nil {
		return nil, err
	}
	p, err := s.checkReload(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := s.buildStreams(ctx, p); err != nil {
		return nil, err
	}
	s.activateSchemas(ctx, p.rt)
	return s.applyReload(p), nil
}

// loadConfig reads and validates the configuration file again.
func (s *Server) loadConfig() (*configs.Config, error) {
	if s.opts.ConfigPath == "" {
		return nil, &ReloadError{Code: ReloadInvalid, Message: "herald was started without a configuration file to reload"}
	}
	cfg, err := configs.Load(s.opts.ConfigPath, s.opts.Env)
	if err != nil {
		return nil, &ReloadError{Code: ReloadInvalid, Message: fmt.Sprintf("config %s:\n%v", s.opts.ConfigPath, err)}
	}
	return cfg, nil
}

// checkReload judges cfg against the running configuration: settings not
// declared reloadable must not change, the new Runtime must build, and a
// payload schema change must keep stored records readable (unless
// forced).
func (s *Server) checkReload(cfg *configs.Config, opts ReloadOptions) (*reloadPlan, error) {
	old := s.Runtime()
	if refused := fixedChanges(old.Config, cfg); len(refused) > 0 {
		return nil, &ReloadError{Code: ReloadRefused, Refused: refused,
			Message: "these settings cannot change while herald runs (restart it to apply them); nothing was applied: " + strings.Join(refused, ", ")}
	}
	rt, err := NewRuntime(cfg, s.runtimeOptions(), old)
	if err != nil {
		return nil, &ReloadError{Code: ReloadInvalid, Message: fmt.Sprintf("config %s:\n%v", s.opts.ConfigPath, err)}
	}
	payloads := payloadChanges(old.Registry, rt.Registry)
	if breaking(payloads) {
		msg, refused := breakingMessage(payloads)
		if !opts.Force {
			return nil, &ReloadError{Code: ReloadRefused, Refused: refused, Message: msg}
		}
		for i := range payloads {
			payloads[i].Forced = !payloads[i].Compatible
		}
		s.log.Warn("configuration reload forced over breaking payload schema changes: the records stored under the previous schemas are read with the schema that wrote them and projected onto the new ones by field name",
			"trigger", opts.Trigger, "config", s.opts.ConfigPath, "breaks", refused)
	}
	return &reloadPlan{old: old, cfg: cfg, rt: rt, diff: diffConfigs(old.Config, cfg), payloads: payloads}, nil
}

// buildStreams creates the backend streams of added event types and
// reconciles those whose storage changed; a change the backend cannot
// apply in place is refused by name, and nothing is applied.
func (s *Server) buildStreams(ctx context.Context, p *reloadPlan) error {
	d := p.diff
	sc, ok := s.eng.(streamConfigurer)
	if !ok || (len(d.added) == 0 && len(d.storage) == 0) {
		return nil
	}
	jo, err := JetStreamOptions(p.cfg)
	if err != nil {
		return &ReloadError{Code: ReloadInvalid, Message: fmt.Sprintf("config %s:\n%v", s.opts.ConfigPath, err)}
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
			return &ReloadError{Code: ReloadRefused, Refused: refused,
				Message: "the backend cannot apply these stream changes in place (restart on a new stream, or keep the current values); nothing was applied: " + strings.Join(refused, "; ")}
		}
		return fmt.Errorf("creating or reconciling the streams of %s: %w", strings.Join(append(d.added, d.storage...), ", "), err)
	}
	return nil
}

// applyReload swaps the new Runtime in and ends the open streams the
// change concerns.
func (s *Server) applyReload(p *reloadPlan) *ReloadReport {
	d, rt, old := p.diff, p.rt, p.old
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
	// Any payload schema change, compatible or forced, ends every stream
	// of the event type, the row view's too: a stream shows the records
	// in the schema it opened with, and a client learns of the new one
	// only by reconnecting (SSE ends with connection-closing reason
	// end_of_stream and cause schema_changed, which the aviso client
	// reconnects on; a WebSocket subscription ends with schema_changed).
	for _, c := range p.payloads {
		ended += s.h.EndStreams(c.EventType, stream.SchemaChanged)
	}
	if old.ECPDS != nil && old.ECPDS != rt.ECPDS {
		retired := old.ECPDS
		time.AfterFunc(ecpdsRetireDelay, retired.Close)
	}
	return &ReloadReport{
		Fingerprint: rt.Fingerprint, Previous: old.Fingerprint,
		Added: d.added, Removed: d.removed, Changed: d.changed, StorageReconciled: d.storage,
		Settings: d.settings, PayloadSchemas: p.payloads, StreamsEnded: ended,
	}
}

// countReload counts a reload's outcome in the metrics: ok, refused (a
// *ReloadError with ReloadRefused) or error.
func (s *Server) countReload(err error) {
	if s.metrics == nil {
		return
	}
	var re *ReloadError
	switch {
	case err == nil:
		s.metrics.Reloaded(metrics.ReloadOK)
		s.describe(s.Runtime())
	case errors.As(err, &re) && re.Code == ReloadRefused:
		s.metrics.Reloaded(metrics.ReloadRefused)
	default:
		s.metrics.Reloaded(metrics.ReloadError)
	}
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
		{"session", old.Session, next.Session},
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
