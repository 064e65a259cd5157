package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
)

// MetadataBase is the stream metadata key that marks a stream as
// herald's; its value is the topic base. Admin operations act only on
// streams that carry it.
const MetadataBase = "herald_base"

// minDuplicateWindow is the shortest duplicate window herald sets on its
// streams.
const minDuplicateWindow = 30 * time.Second

// streamMaxConsumers is the consumer limit herald sets on its streams:
// each herald instance holds one consumer per stream for its live feed,
// plus one per replay in progress. (nats-server applies a default of
// 1,000 consumers per stream unless the stream sets its own limit.)
const streamMaxConsumers = 100_000

// streamState is one stream as this engine uses it: set up once (created
// if missing, live feed started), then shared by every call on its base.
//
// The event type of records without their own (a message without the
// Herald-Event-Type header) is not kept here but read from the engine's
// settings each time (eventTypeOf), so that a stream adopted by a schema
// on reload takes its event type at once, in the live feed as in history.
type streamState struct {
	base string
	name string

	ready chan struct{} // closed when setup has finished
	err   error         // setup's error; set before ready is closed
	feed  atomic.Pointer[feed]
}

// settings are the engine's stream settings: the default policy and the
// configured streams by base. A settings value is never modified once
// published in Engine.conf; ConfigureStreams replaces it whole.
type settings struct {
	defaults StreamPolicy // with its defaults filled in
	specs    map[string]StreamSpec
}

// newSettings returns the settings of defaults and streams.
func newSettings(defaults StreamPolicy, streams []StreamSpec) *settings {
	s := &settings{defaults: defaults.withDefaults(), specs: make(map[string]StreamSpec, len(streams))}
	for _, spec := range streams {
		s.specs[spec.Base] = spec
	}
	return s
}

// with returns a copy of s with defaults (filled in) and streams added
// or replaced by base.
func (s *settings) with(defaults StreamPolicy, streams []StreamSpec) *settings {
	n := &settings{defaults: defaults.withDefaults(), specs: maps.Clone(s.specs)}
	if n.specs == nil {
		n.specs = map[string]StreamSpec{}
	}
	for _, spec := range streams {
		n.specs[spec.Base] = spec
	}
	return n
}

// policyOf returns the effective policy of a base: the defaults, then the
// configured schema's storage policy.
func (s *settings) policyOf(base string) StreamPolicy {
	p := s.defaults
	if spec, ok := s.specs[base]; ok {
		p = spec.Policy.apply(p)
	}
	return p
}

// policyOf returns the effective policy of a base under the current
// settings.
func (e *Engine) policyOf(base string) StreamPolicy { return e.conf.Load().policyOf(base) }

// eventTypeOf returns the event type records of a base carry by default:
// its schema's name, or the base itself.
func (e *Engine) eventTypeOf(base string) string {
	if s, ok := e.conf.Load().specs[base]; ok && s.EventType != "" {
		return s.EventType
	}
	return base
}

// duplicateWindow is the window within which the server deduplicates
// publishes by Nats-Msg-Id: long enough to cover every retry of one
// Publish, short because the server keeps every id of the window.
func (e *Engine) duplicateWindow(maxAge time.Duration) time.Duration {
	w := max(2*e.opts.PublishTimeout, minDuplicateWindow)
	if maxAge > 0 && w > maxAge {
		w = maxAge
	}
	return w
}

// limit maps a "no limit" value (<= 0) to JetStream's -1.
func limit(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
}

// streamConfig is the configuration herald wants for a base's stream (Aviso's
// backends, docs/operations.md): subjects <base> and <base>.>, the policy's
// limits, deduplication, direct gets, and the herald marker.
func (e *Engine) streamConfig(base string, p StreamPolicy) jetstream.StreamConfig {
	cfg := jetstream.StreamConfig{
		Name:              StreamName(base),
		Description:       "herald notifications of topic base " + base,
		Subjects:          []string{base, base + ".>"},
		MaxConsumers:      streamMaxConsumers,
		MaxMsgs:           limit(p.MaxMsgs),
		MaxBytes:          limit(p.MaxBytes),
		MaxAge:            p.MaxAge,
		MaxMsgsPerSubject: limit(p.MaxMsgsPerSubject),
		Replicas:          p.Replicas,
		Duplicates:        e.duplicateWindow(p.MaxAge),
		AllowDirect:       true,
		Metadata:          map[string]string{MetadataBase: base},
	}
	switch p.Storage {
	case StorageMemory:
		cfg.Storage = jetstream.MemoryStorage
	default:
		cfg.Storage = jetstream.FileStorage
	}
	switch p.Retention {
	case RetentionInterest:
		cfg.Retention = jetstream.InterestPolicy
	case RetentionWorkQueue:
		cfg.Retention = jetstream.WorkQueuePolicy
	default:
		cfg.Retention = jetstream.LimitsPolicy
	}
	if p.Discard == DiscardNew {
		cfg.Discard = jetstream.DiscardNew
	}
	if p.Compression {
		cfg.Compression = jetstream.S2Compression
	}
	return cfg
}

// change is one difference between a stream's configuration and the one
// herald wants.
type change struct {
	field, from, to string
	apply           func(*jetstream.StreamConfig)
}

// diff lists what must change in cur to give it want's herald-managed
// settings. Subjects and metadata are only ever added to.
func diff(cur, want jetstream.StreamConfig) []change {
	var out []change
	add := func(field string, from, to any, apply func(*jetstream.StreamConfig)) {
		f, t := fmt.Sprint(from), fmt.Sprint(to)
		if f != t {
			out = append(out, change{field: field, from: f, to: t, apply: apply})
		}
	}
	var missing []string
	for _, s := range want.Subjects {
		if !slices.Contains(cur.Subjects, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		out = append(out, change{field: "subjects", from: fmt.Sprint(cur.Subjects), to: fmt.Sprint(append(slices.Clone(cur.Subjects), missing...)),
			apply: func(c *jetstream.StreamConfig) {
				for _, s := range missing {
					if !slices.Contains(c.Subjects, s) {
						c.Subjects = append(slices.Clone(c.Subjects), s)
					}
				}
			}})
	}
	add("max_msgs", limit(cur.MaxMsgs), want.MaxMsgs, func(c *jetstream.StreamConfig) { c.MaxMsgs = want.MaxMsgs })
	add("max_bytes", limit(cur.MaxBytes), want.MaxBytes, func(c *jetstream.StreamConfig) { c.MaxBytes = want.MaxBytes })
	add("max_age", cur.MaxAge, want.MaxAge, func(c *jetstream.StreamConfig) { c.MaxAge = want.MaxAge })
	add("max_msgs_per_subject", limit(cur.MaxMsgsPerSubject), want.MaxMsgsPerSubject,
		func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = want.MaxMsgsPerSubject })
	add("num_replicas", max(cur.Replicas, 1), want.Replicas, func(c *jetstream.StreamConfig) { c.Replicas = want.Replicas })
	add("compression", cur.Compression, want.Compression, func(c *jetstream.StreamConfig) { c.Compression = want.Compression })
	add("discard", cur.Discard, want.Discard, func(c *jetstream.StreamConfig) { c.Discard = want.Discard })
	add("retention", cur.Retention, want.Retention, func(c *jetstream.StreamConfig) { c.Retention = want.Retention })
	add("storage", cur.Storage, want.Storage, func(c *jetstream.StreamConfig) { c.Storage = want.Storage })
	add("duplicate_window", cur.Duplicates, want.Duplicates, func(c *jetstream.StreamConfig) { c.Duplicates = want.Duplicates })
	add("max_consumers", cur.MaxConsumers, want.MaxConsumers, func(c *jetstream.StreamConfig) { c.MaxConsumers = want.MaxConsumers })
	add("allow_direct", cur.AllowDirect, want.AllowDirect, func(c *jetstream.StreamConfig) { c.AllowDirect = want.AllowDirect })
	for k, v := range want.Metadata {
		if cur.Metadata[k] != v {
			out = append(out, change{field: "metadata." + k, from: strconv.Quote(cur.Metadata[k]), to: strconv.Quote(v),
				apply: func(c *jetstream.StreamConfig) {
					m := maps.Clone(c.Metadata)
					if m == nil {
						m = map[string]string{}
					}
					m[k] = v
					c.Metadata = m
				}})
		}
	}
	return out
}

// streamPlan is what reconciling one configured stream takes: the
// configuration herald wants for it, and the stream as the server has
// it with the changes it needs.
type streamPlan struct {
	spec    StreamSpec
	policy  StreamPolicy
	want    jetstream.StreamConfig
	exists  bool
	cur     jetstream.StreamConfig // the server's, when exists
	changes []change               // from cur to want, when exists
}

// planStream reads the stream of spec from the server and lists what
// must change in it to give it policy p. It changes nothing.
func (e *Engine) planStream(ctx context.Context, js jetstream.JetStream, spec StreamSpec, p StreamPolicy) (streamPlan, error) {
	pl := streamPlan{spec: spec, policy: p, want: e.streamConfig(spec.Base, p)}
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	s, err := js.Stream(rctx, pl.want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return pl, nil
	}
	if err != nil {
		return pl, fmt.Errorf("jetstream: stream %s (event type %s) on %s: %w", pl.want.Name, spec.EventType, e.where, e.classify(err))
	}
	pl.exists, pl.cur = true, s.CachedInfo().Config
	pl.changes = diff(pl.cur, pl.want)
	return pl, nil
}

// logCreated logs the creation of a configured stream.
func logCreated(log *slog.Logger, want jetstream.StreamConfig, p StreamPolicy) {
	log.Info("created stream", "subjects", want.Subjects, "max_age", want.MaxAge.String(), "max_msgs", want.MaxMsgs,
		"max_bytes", want.MaxBytes, "max_msgs_per_subject", want.MaxMsgsPerSubject, "storage", want.Storage.String(),
		"replicas", want.Replicas, "compression", p.Compression)
}

// logChanged logs applied stream configuration changes.
func logChanged(log *slog.Logger, changes []change) {
	for _, c := range changes {
		log.Info("stream configuration changed", "field", c.field, "from", c.from, "to", c.to)
	}
}

// reconcile creates a configured stream or brings an existing one to the
// configured policy (at startup). It logs every change and every change
// the server refuses, and goes on; it fails only when the stream cannot
// be created or the server cannot be reached. (ConfigureStreams, on
// reload, refuses instead what the server would refuse.)
func (e *Engine) reconcile(ctx context.Context, spec StreamSpec) error {
	p := e.policyOf(spec.Base)
	if err := p.check(); err != nil {
		return fmt.Errorf("jetstream: stream %s (event type %s): %w", StreamName(spec.Base), spec.EventType, err)
	}
	js := e.cur().js
	pl, err := e.planStream(ctx, js, spec, p)
	if err != nil {
		return err
	}
	want := pl.want
	log := e.log.With("stream", want.Name, "event_type", spec.EventType)
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	if !pl.exists {
		if _, err := js.CreateStream(rctx, want); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("jetstream: create stream %s (event type %s) on %s: %w", want.Name, spec.EventType, e.where, e.classify(err))
		}
		logCreated(log, want, p)
		return nil
	}
	cur, changes := pl.cur, pl.changes
	if len(changes) == 0 {
		log.Debug("stream configuration up to date")
		return nil
	}
	next := cur
	for _, c := range changes {
		c.apply(&next)
	}
	if _, err := js.UpdateStream(rctx, next); err == nil {
		logChanged(log, changes)
		return nil
	} else if unavailable(err) {
		return fmt.Errorf("jetstream: update stream %s on %s: %w", want.Name, e.where, e.classify(err))
	}
	// Something was refused: apply the changes one by one to find out
	// which, keeping the others.
	for _, c := range changes {
		try := cur
		c.apply(&try)
		if _, err := js.UpdateStream(rctx, try); err != nil {
			if unavailable(err) {
				return fmt.Errorf("jetstream: update stream %s on %s: %w", want.Name, e.where, e.classify(err))
			}
			log.Warn("the server refused a stream configuration change; keeping the current value",
				"field", c.field, "current", c.from, "wanted", c.to, "error", err)
			continue
		}
		cur = try
		logChanged(log, []change{c})
	}
	return nil
}

// ensure returns the stream of base, set up: created if missing (with the
// default policy, for a schema-less base) and its live feed running.
// Concurrent calls for one base share one setup. Its errors are not
// prefixed; callers wrap them with wrapSetup.
func (e *Engine) ensure(ctx context.Context, base string) (*streamState, error) {
	if err := checkBase(base); err != nil {
		return nil, err
	}
	for {
		e.mu.RLock()
		st, stopping := e.streams[base], e.stopping
		e.mu.RUnlock()
		if st != nil && !stopping {
			select {
			case <-st.ready:
				if f := st.feed.Load(); st.err == nil && f != nil && !f.ended() {
					return st, nil
				}
			default:
			}
		}
		e.mu.Lock()
		if e.stopping {
			e.mu.Unlock()
			return nil, engine.ErrClosed
		}
		st = e.streams[base]
		if st == nil {
			st = &streamState{base: base, name: StreamName(base), ready: make(chan struct{})}
			e.streams[base] = st
			e.wg.Add(1)
			go e.setup(st)
		}
		e.mu.Unlock()
		select {
		case <-st.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if st.err != nil {
			return nil, st.err
		}
		if f := st.feed.Load(); f != nil && !f.ended() {
			return st, nil
		}
		// The feed has ended (the connection was closed): set up again.
		e.mu.Lock()
		if e.streams[base] == st {
			delete(e.streams, base)
		}
		e.mu.Unlock()
	}
}

// setup opens (or creates) a stream and starts its feed; on failure the
// state is forgotten so that the next call tries again.
func (e *Engine) setup(st *streamState) {
	defer e.wg.Done()
	defer close(st.ready)
	if err := e.open(st); err != nil {
		st.err = err
		e.mu.Lock()
		if e.streams[st.base] == st {
			delete(e.streams, st.base)
		}
		e.mu.Unlock()
	}
}

// open is setup's work.
func (e *Engine) open(st *streamState) error {
	ctx, cancel := e.requestContext(e.ctx)
	defer cancel()
	js := e.cur().js
	s, err := js.Stream(ctx, st.name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		cfg := e.streamConfig(st.base, e.policyOf(st.base))
		s, err = js.CreateStream(ctx, cfg)
		switch {
		case errors.Is(err, jetstream.ErrStreamNameAlreadyInUse):
			s, err = js.Stream(ctx, st.name) // created meanwhile by another instance
		case err == nil:
			e.log.Info("created stream", "stream", st.name, "subjects", cfg.Subjects, "max_msgs_per_subject", cfg.MaxMsgsPerSubject)
		}
	}
	if err != nil {
		return fmt.Errorf("open stream %s on %s: %w", st.name, e.where, e.classify(err))
	}
	info := s.CachedInfo()
	if !slices.Contains(info.Config.Subjects, st.base+".>") {
		return fmt.Errorf("stream %s exists on %s but does not hold the subjects of topic base %q (its subjects are %v): another base that differs only in case, or a stream herald does not manage",
			st.name, e.where, st.base, info.Config.Subjects)
	}
	if !slices.Contains(info.Config.Subjects, st.base) {
		// A stream created by Aviso holds <base>.> only; schema-less
		// notifications without identifier use the bare base.
		cfg := info.Config
		cfg.Subjects = append(slices.Clone(cfg.Subjects), st.base)
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			e.log.Warn("cannot add the bare base subject to the stream", "stream", st.name, "subject", st.base, "error", err)
		}
	}
	if _, err := e.startFeed(ctx, st, info.State.LastSeq); err != nil {
		return fmt.Errorf("start the live feed of stream %s on %s: %w", st.name, e.where, e.classify(err))
	}
	return nil
}

// afterReconnect asks every live feed to recreate its consumer.
func (e *Engine) afterReconnect() {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, st := range e.streams {
		if f := st.feed.Load(); f != nil {
			f.reconnected()
		}
	}
}
