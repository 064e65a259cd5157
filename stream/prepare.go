package stream

import (
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
)

// This file is the one way from a watch or replay request to a stream:
// SSE (package handlers) and WebSocket sessions (package session) both
// call Prepare, so that both check the same things in the same order and
// refuse a request with the same error. Each transport answers that
// error in its own terms (an HTTP status and body, a session reply); the
// access checks, which need package auth, are the transport's, run by
// Prepare in their place among the steps.

// Limits bound every stream of a server (the watch_endpoint block). Zero
// values mean none, as in Spec.
type Limits struct {
	// Heartbeat and MaxDuration apply to watches only.
	Heartbeat   time.Duration
	MaxDuration time.Duration
	// PageSize, PageDelay, QueueSize and MaxLag are Spec's.
	PageSize  int
	PageDelay time.Duration
	QueueSize int
	MaxLag    time.Duration
}

// Checks are a transport's access checks, which Prepare runs in their
// place among its steps. A nil check passes; a check's refusal is
// returned by Prepare as it is, for the transport to answer.
type Checks struct {
	// Read decides whether the client may read the event type; it runs
	// right after the event type is known, before anything else about
	// the request is judged.
	Read func(sc *notification.Schema) error
	// Destination decides whether the client may read what the
	// processed filter selects (the ECPDS destination check); it runs
	// last, once the request is otherwise valid.
	Destination func(sc *notification.Schema, filter *notification.Filter) error
}

// Prepared is a watch or replay request that Prepare accepted.
type Prepared struct {
	// Schema is the event type's schema.
	Schema *notification.Schema
	// View is the payload view asked for (nil: the default one).
	View *notification.View
	// Spec is the stream to run: the query, the cursors, the historical
	// cap, the WHERE predicate and the format, bounded by the limits.
	// The transport adds what is its own (an observer, sampling, an
	// overflow policy).
	Spec Spec
	// Batch is the request's batch option (nil: one frame per record),
	// BatchView the view its containers are in (the row view when the
	// request names no format).
	Batch     *Batch
	BatchView *notification.View
}

// Prepare checks a parsed watch (mode Watch) or replay (mode Replay)
// request and resolves it into the stream to run, in this order: the
// event type (reg.Lookup), checks.Read, the spatial identifier, the
// cursors, the identifier filter, the WHERE predicate, the payload view
// (the request's format) and the batch option, checks.Destination. The first step that fails
// ends it with its error: the registry's and the schema's typed errors,
// the cursors' *notification.ValidationError, a WHERE that does not
// compile as a *notification.ValidationError with the compiler's
// message, or a check's own refusal.
func Prepare(reg *notification.Registry, req *notification.Request, mode Mode, lim Limits, checks Checks) (*Prepared, error) {
	sc, err := reg.Lookup(req.EventType)
	if err != nil {
		return nil, err
	}
	if checks.Read != nil {
		if err := checks.Read(sc); err != nil {
			return nil, err
		}
	}
	if err := sc.CheckSpatial(req.Identifier); err != nil {
		return nil, err
	}
	cur, err := ParseCursors(CursorsOf(req), mode)
	if err != nil {
		return nil, err
	}
	filter, err := sc.Filter(req.Identifier, mode.Op())
	if err != nil {
		return nil, err
	}
	var where Predicate
	if req.Where != nil {
		w, err := sc.CompileWhere(*req.Where)
		if err != nil {
			return nil, &notification.ValidationError{Message: err.Error(), Detail: err.Error()}
		}
		where = wherePredicate{w}
	}
	format := ""
	if req.Format != nil {
		format = *req.Format
	}
	view, err := sc.View(format)
	if err != nil {
		return nil, err
	}
	batch, err := parseBatch(req.Batch, sc)
	if err != nil {
		return nil, err
	}
	var batchView *notification.View
	if batch != nil {
		batchView = view
		if batchView == nil {
			batchView = sc.Payload.Row()
		}
		if err := batchView.BatchErr(); err != nil {
			m := "batch is not available in format '" + batchView.Name() + "': " + err.Error()
			return nil, &notification.ValidationError{Field: "batch", Message: m, Detail: m}
		}
	}
	if checks.Destination != nil {
		if err := checks.Destination(sc, filter); err != nil {
			return nil, err
		}
	}
	spec := Spec{
		Query:      engine.Query{Stream: sc.Base, Filter: filter},
		Mode:       mode,
		Cursors:    cur,
		HistoryCap: sc.MaxHistorical,
		PageSize:   lim.PageSize,
		PageDelay:  lim.PageDelay,
		MaxLag:     lim.MaxLag,
		QueueSize:  lim.QueueSize,
		Where:      where,
		Format:     format,
	}
	if mode == Watch {
		spec.Heartbeat = lim.Heartbeat
		spec.MaxDuration = lim.MaxDuration
	}
	return &Prepared{Schema: sc, View: view, Spec: spec, Batch: batch, BatchView: batchView}, nil
}

// Topic is the stream's topic as the client sees it: its subject pattern
// with wildcards.
func (p *Prepared) Topic() string { return p.Spec.Query.Filter.Pattern.Display() }

// SetKey is the name the stream joins a Set under: its event type, marked
// when it asked for a payload format (FormatKey), so that a reload can
// end the streams of an event type, or only those that asked for a
// format.
func (p *Prepared) SetKey() string {
	if p.View == nil {
		return p.Schema.Name
	}
	return FormatKey(p.Schema.Name)
}

// FormatKey is the Set key of the streams of eventType that asked for a
// payload format (SetKey); the others join under eventType itself.
func FormatKey(eventType string) string { return eventType + "\x00format" }

// Renderer returns how the stream's records are rendered as CloudEvents
// with reg, in its payload view: the key of the rendering cached on each
// record (a record is rendered once per registry and view, however many
// streams share it) and the function that renders it.
func (p *Prepared) Renderer(reg *notification.Registry) (key any, render func(*engine.Record) ([]byte, error)) {
	view := p.View
	if view == nil {
		return reg, func(rec *engine.Record) ([]byte, error) {
			return reg.CloudEvent(&rec.Notification, rec.Seq, rec.Time)
		}
	}
	return viewKey{reg: reg, view: view}, func(rec *engine.Record) ([]byte, error) {
		return reg.CloudEventView(&rec.Notification, rec.Seq, rec.Time, view)
	}
}

// viewKey keys the cached rendering of a record in a payload view.
type viewKey struct {
	reg  *notification.Registry
	view *notification.View
}

// wherePredicate applies a compiled WHERE clause to records.
type wherePredicate struct{ w *notification.Where }

// Match implements Predicate.
func (p wherePredicate) Match(rec *engine.Record) bool { return p.w.Match(&rec.Notification) }
