package jetstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
)

// Limits of nats-server's stream configuration check (checkStreamCfg)
// that herald's policy values can run into.
const (
	// minMaxAge is the shortest max age JetStream accepts (0 is none).
	minMaxAge = 100 * time.Millisecond
	// maxReplicas is the highest replica count JetStream accepts.
	maxReplicas = 5
)

// StreamRefusal is one reason why ConfigureStreams refused a
// configuration.
type StreamRefusal struct {
	// EventType and Stream name the schema and its JetStream stream;
	// both are empty for the default policy.
	EventType, Stream string
	// Setting is the stream setting, by the name the logs give it
	// (storage, retention, num_replicas, max_age, subjects), or "policy"
	// for a policy value the engine cannot map at all.
	Setting string
	// Current and Wanted are the stream's value and the configuration's,
	// when both exist.
	Current, Wanted string
	// Reason says why it cannot be applied, and what to do.
	Reason string
}

// String describes the refusal.
func (r StreamRefusal) String() string {
	var b strings.Builder
	if r.Stream == "" {
		b.WriteString("default stream policy: ")
	} else {
		fmt.Fprintf(&b, "event type %s (stream %s): ", r.EventType, r.Stream)
	}
	switch {
	case r.Current != "" && r.Wanted != "":
		fmt.Fprintf(&b, "%s cannot change from %s to %s: ", r.Setting, r.Current, r.Wanted)
	case r.Wanted != "":
		fmt.Fprintf(&b, "%s %s: ", r.Setting, r.Wanted)
	}
	b.WriteString(r.Reason)
	return b.String()
}

// RefusedError is a ConfigureStreams that changed nothing: a stream of
// the configuration would need a change JetStream cannot apply, or a
// value the engine cannot map. errors.Is(err, engine.ErrInvalid) holds.
type RefusedError struct {
	// Refusals lists every refused setting, in the order of the specs.
	Refusals []StreamRefusal
}

// Error lists the refusals.
func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		parts[i] = r.String()
	}
	return "jetstream: stream configuration refused, no stream was changed: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, engine.ErrInvalid) hold.
func (e *RefusedError) Is(target error) bool { return target == engine.ErrInvalid }

// configKeys names the configuration keys behind the stream settings
// that may be refused, for the refusals' reasons.
var configKeys = map[string]string{
	"storage":      "notification_backend.jetstream.storage_type",
	"retention":    "notification_backend.jetstream.retention_policy",
	"num_replicas": "notification_backend.jetstream.replicas",
	"max_age":      "retention_time",
	"subjects":     "topic.base",
}

// ConfigureStreams applies a new stream configuration while the engine
// runs (a configuration reload): defaults becomes the default policy (of
// the given streams and of the schema-less streams created from now on),
// and the stream of each spec is created, or reconciled with its policy,
// with the mapping Open uses; then its live feed runs, so that a Publish
// to the spec's base made after ConfigureStreams returns goes to the
// stream and reaches the watchers. Streams not in streams are left alone;
// configured ones keep their specs.
//
// Unlike Open, which logs what the server refuses and goes on, it
// validates every spec first and changes nothing if one of them cannot be
// applied: a policy value the engine cannot map (as Open), a change
// JetStream cannot make to an existing stream (storage type, retention
// policy to or from workqueue), a value JetStream refuses (a max age
// under 100ms, more than 5 replicas, or more than one on the embedded
// server), or an existing stream that does not hold the base's subjects.
// The error is then a *RefusedError naming each event type, stream and
// setting. A change that the previous configuration already asked for
// (one Open logged and kept) is logged and kept again, not refused. If a
// server call fails once streams have been changed, the error says which
// ones were. Every request uses ctx; when the server cannot be reached the
// error wraps engine.ErrUnavailable.
func (e *Engine) ConfigureStreams(ctx context.Context, defaults StreamPolicy, streams []StreamSpec) error {
	const op = "configure streams"
	if err := e.check(ctx, op); err != nil {
		return err
	}
	e.configMu.Lock()
	defer e.configMu.Unlock()
	l := e.cur()
	if st := l.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("jetstream: %s: connection to %s is %s: %w", op, e.where, statusText(st), engine.ErrUnavailable)
	}
	old := e.conf.Load()
	next := old.with(defaults, streams)

	// Validate everything before changing anything.
	var refused []StreamRefusal
	if err := next.defaults.check(); err != nil {
		refused = append(refused, StreamRefusal{Setting: "policy", Reason: err.Error()})
	}
	seen := map[string]string{}
	var plans []streamPlan
	for _, spec := range streams {
		name := StreamName(spec.Base)
		refuse := func(setting, current, wanted, reason string) {
			refused = append(refused, StreamRefusal{EventType: spec.EventType, Stream: name, Setting: setting, Current: current, Wanted: wanted, Reason: reason})
		}
		if err := checkBase(spec.Base); err != nil {
			refuse("subjects", "", "", err.Error())
			continue
		}
		if other, dup := seen[name]; dup {
			refuse("subjects", "", "", fmt.Sprintf("topic bases %q and %q both map to stream %s", other, spec.Base, name))
			continue
		}
		seen[name] = spec.Base
		p := next.policyOf(spec.Base)
		if err := p.check(); err != nil {
			refuse("policy", "", "", err.Error())
			continue
		}
		pl, err := e.planStream(ctx, l.js, spec, p)
		if err != nil {
			return fmt.Errorf("%w; no stream was changed", e.failApply(ctx, err))
		}
		plans = append(plans, e.vet(pl, old, refuse))
	}
	if len(refused) > 0 {
		return &RefusedError{Refusals: refused}
	}
	if r := next.defaults.Retention; r != RetentionLimits && r != old.defaults.Retention {
		e.log.Warn("JetStream retention policy removes notifications once consumed: herald's own live feed consumes every notification, so replay may find nothing",
			"retention_policy", r)
	}

	// Apply, in the order of the specs.
	var done []string
	for i, pl := range plans {
		what, err := e.apply(ctx, l.js, pl)
		if err != nil {
			var pending []string
			for _, p := range plans[i+1:] {
				pending = append(pending, p.want.Name)
			}
			return fmt.Errorf("jetstream: %s: %w; %s", op, e.failApply(ctx, err), progress(done, pending))
		}
		if what != "" {
			done = append(done, pl.want.Name+" ("+what+")")
		}
	}

	// The new settings serve from here on: Publish, the live feeds and
	// History read them with one atomic load (they are never modified,
	// and writers are serialised by configMu), and a stream set up from
	// now on (ensure) is created with the new policy.
	e.conf.Store(next)
	for _, pl := range plans {
		if _, err := e.ensure(ctx, pl.spec.Base); err != nil {
			return fmt.Errorf("%w; %s", e.wrapSetup(ctx, op+": start the live feed of stream "+pl.want.Name, err), progress(done, nil))
		}
	}
	if len(done) > 0 {
		e.log.Info("streams configured", "changed", done)
	}
	return nil
}

// progress says which streams a failed ConfigureStreams had changed and
// which it had not reached.
func progress(done, pending []string) string {
	var b strings.Builder
	if len(done) == 0 {
		b.WriteString("no stream had been changed")
	} else {
		b.WriteString("streams already changed: " + strings.Join(done, ", "))
	}
	if len(pending) > 0 {
		b.WriteString("; not changed: " + strings.Join(pending, ", "))
	}
	return b.String()
}

// failApply classifies an error of apply: the engine closed, ctx ended,
// or the server unreachable (engine.ErrUnavailable).
func (e *Engine) failApply(ctx context.Context, err error) error {
	switch {
	case e.closed.Load():
		return fmt.Errorf("%w (%w)", err, engine.ErrClosed)
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return err
}

// vet checks a plan against what JetStream accepts and drops from it the
// changes that the server would refuse but that old already asked for
// (Open logged and kept them, and so does this); it calls refuse for the
// others.
func (e *Engine) vet(pl streamPlan, old *settings, refuse func(setting, current, wanted, reason string)) streamPlan {
	if !pl.exists {
		for _, c := range diff(jetstream.StreamConfig{}, pl.want) {
			if why := e.refusedValue(c.field, pl.want); why != "" {
				refuse(c.field, "", c.to, why)
			}
		}
		return pl
	}
	if !slices.Contains(pl.cur.Subjects, pl.spec.Base+".>") {
		refuse("subjects", fmt.Sprint(pl.cur.Subjects), fmt.Sprint(pl.want.Subjects),
			fmt.Sprintf("stream %s exists on %s but does not hold the subjects of topic base %q: another base that differs only in case, or a stream herald does not manage",
				pl.want.Name, e.where, pl.spec.Base))
		return pl
	}
	// What the previous configuration wanted for the base, when it had one.
	var before map[string]bool
	if _, ok := old.specs[pl.spec.Base]; ok {
		before = map[string]bool{}
		for _, c := range diff(e.streamConfig(pl.spec.Base, old.policyOf(pl.spec.Base)), pl.want) {
			before[c.field] = true // the wanted value changed
		}
	}
	kept := pl.changes[:0:0]
	for _, c := range pl.changes {
		why := e.refusedChange(c.field, pl.cur, pl.want)
		if why == "" {
			why = e.refusedValue(c.field, pl.want)
		}
		switch {
		case why == "":
			kept = append(kept, c)
		case before != nil && !before[c.field]:
			e.log.Warn("JetStream cannot apply this stream configuration change, which the previous configuration already asked for; keeping the current value",
				"stream", pl.want.Name, "event_type", pl.spec.EventType, "field", c.field, "current", c.from, "wanted", c.to, "reason", why)
		default:
			refuse(c.field, c.from, c.to, why)
		}
	}
	pl.changes = kept
	return pl
}

// refusedChange says why JetStream refuses to change field of an
// existing stream from cur to want (nats-server's configUpdateCheck), or
// returns "".
func (e *Engine) refusedChange(field string, cur, want jetstream.StreamConfig) string {
	switch field {
	case "storage":
		return "JetStream cannot change the storage type of an existing stream (" + configKeys[field] + "); keep the current one, or move the notifications to a new stream by hand"
	case "retention":
		if cur.Retention == jetstream.WorkQueuePolicy || want.Retention == jetstream.WorkQueuePolicy {
			return "JetStream cannot change the retention policy of an existing stream to or from workqueue (" + configKeys[field] + ")"
		}
	}
	return ""
}

// refusedValue says why JetStream refuses want's value of field in any
// stream, created or updated (nats-server's checkStreamCfg and
// standalone mode), or returns "".
func (e *Engine) refusedValue(field string, want jetstream.StreamConfig) string {
	switch field {
	case "max_age":
		if want.MaxAge > 0 && want.MaxAge < minMaxAge {
			return fmt.Sprintf("JetStream needs a max age of at least %s, or none (%s)", minMaxAge, configKeys[field])
		}
	case "num_replicas":
		if want.Replicas > maxReplicas {
			return fmt.Sprintf("JetStream keeps at most %d replicas (%s)", maxReplicas, configKeys[field])
		}
		if e.srv != nil && want.Replicas > 1 {
			return "the embedded nats-server is not clustered and keeps one replica only (" + configKeys[field] + ")"
		}
	}
	return ""
}

// apply creates the stream of a plan or applies its changes, and says
// which ("created", "updated" or "" for nothing to do). A stream created
// meanwhile (by a schema-less publish or another herald instance) is
// planned again and updated.
func (e *Engine) apply(ctx context.Context, js jetstream.JetStream, pl streamPlan) (string, error) {
	log := e.log.With("stream", pl.want.Name, "event_type", pl.spec.EventType)
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	if !pl.exists {
		_, err := js.CreateStream(rctx, pl.want)
		if err == nil {
			logCreated(log, pl.want, pl.policy)
			return "created", nil
		}
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return "", fmt.Errorf("create stream %s (event type %s) on %s: %w", pl.want.Name, pl.spec.EventType, e.where, e.classify(err))
		}
		if pl, err = e.planStream(ctx, js, pl.spec, pl.policy); err != nil {
			return "", err
		}
		if !pl.exists {
			return "", fmt.Errorf("create stream %s (event type %s) on %s: created and deleted meanwhile", pl.want.Name, pl.spec.EventType, e.where)
		}
		for _, c := range pl.changes {
			if why := cmp.Or(e.refusedChange(c.field, pl.cur, pl.want), e.refusedValue(c.field, pl.want)); why != "" {
				return "", fmt.Errorf("stream %s (event type %s) was created meanwhile on %s with %s %s: %s", pl.want.Name, pl.spec.EventType, e.where, c.field, c.from, why)
			}
		}
	}
	if len(pl.changes) == 0 {
		log.Debug("stream configuration up to date")
		return "", nil
	}
	next := pl.cur
	for _, c := range pl.changes {
		c.apply(&next)
	}
	if _, err := js.UpdateStream(rctx, next); err != nil {
		return "", fmt.Errorf("update stream %s (event type %s) on %s: %w", pl.want.Name, pl.spec.EventType, e.where, e.classify(err))
	}
	logChanged(log, pl.changes)
	return "updated", nil
}
