package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/tracing"
)

// Tracing records notifies in a trace: a `publish <event_type>` span per
// notification, whose context the notification carries (its TraceParent
// and TraceState), and a `store <stream>` span for the backend's store.
// The zero value (nil Tracer, tracing off) records nothing and leaves
// notifications without trace context.
type Tracing struct {
	// Tracer records the spans; nil records nothing.
	Tracer *tracing.Tracer
	// Backend names the backend in store spans (configs.BackendInMemory,
	// configs.BackendJetStream); a remote one's store spans are of kind
	// client.
	Backend string
	// Remote says whether the backend is reached over the network.
	Remote bool
}

// Start starts the publish span of n, a child of the span in ctx (the
// request's, or the publisher's remote context), and stamps n with the
// span's trace context. bodySize is the size of n's part of the request.
// End the span with Done.
func (t Tracing) Start(ctx context.Context, n *notification.Notification, bodySize int) (context.Context, tracing.Publish) {
	ctx, span := t.Tracer.StartPublish(ctx, n.EventType, bodySize)
	if t.Tracer == nil {
		return ctx, span
	}
	n.TraceParent, n.TraceState = t.Tracer.Format(ctx)
	return ctx, span
}

// Publish stores n with p within a store span, a child of the publish
// span in ctx.
func (t Tracing) Publish(ctx context.Context, p Publisher, n *notification.Notification) (uint64, time.Time, error) {
	if t.Tracer == nil {
		return p.Publish(ctx, n)
	}
	sctx, span := t.Tracer.StartStore(ctx, t.Backend, n.Base(), 1, t.Remote)
	seq, at, err := p.Publish(sctx, n)
	tracing.End(span, err)
	return seq, at, err
}

// PublishSeq is Publish for a caller that needs only the sequence
// (PublishSeq: no wait for the stored time).
func (t Tracing) PublishSeq(ctx context.Context, p Publisher, n *notification.Notification) (uint64, error) {
	if t.Tracer == nil {
		return PublishSeq(ctx, p, n)
	}
	sctx, span := t.Tracer.StartStore(ctx, t.Backend, n.Base(), 1, t.Remote)
	seq, err := PublishSeq(sctx, p, n)
	tracing.End(span, err)
	return seq, err
}

// PublishAll is PublishAll within one store span for the whole batch, a
// child of the span in ctx (the request's: one store carries the
// notifications of many publish spans).
func (t Tracing) PublishAll(ctx context.Context, p Publisher, ns []*notification.Notification) []BatchResult {
	if t.Tracer == nil || len(ns) == 0 {
		return PublishAll(ctx, p, ns)
	}
	sctx, span := t.Tracer.StartStore(ctx, t.Backend, ns[0].Base(), len(ns), t.Remote)
	out := PublishAll(sctx, p, ns)
	var err error
	for _, r := range out {
		if r.Err != nil {
			err = r.Err
			break
		}
	}
	tracing.End(span, err)
	return out
}

// Done ends the publish span of a notification of eventType: stored
// under seq (its id, <event_type>@<seq>, is the span's message id), or
// not stored because of err.
func (t Tracing) Done(span tracing.Publish, eventType string, seq uint64, err error) {
	if t.Tracer == nil {
		return
	}
	id := ""
	if err == nil {
		var num [20]byte
		var b strings.Builder // one allocation
		b.Grow(len(eventType) + 1 + len(num))
		b.WriteString(eventType)
		b.WriteByte('@')
		b.Write(strconv.AppendUint(num[:0], seq, 10))
		id = b.String()
	}
	span.Done(id, err)
}

// PublishEach stores ns in order with p (PublishAll) and traces each: a
// publish span per notification, children of the span in ctx, and one
// store span for the whole batch. size returns the body size of the
// notification at an index.
func (t Tracing) PublishEach(ctx context.Context, p Publisher, ns []*notification.Notification, size func(i int) int) []BatchResult {
	if t.Tracer == nil {
		return PublishAll(ctx, p, ns)
	}
	spans := make([]tracing.Publish, len(ns))
	for i, n := range ns {
		_, spans[i] = t.Start(ctx, n, size(i))
	}
	out := t.PublishAll(ctx, p, ns)
	for i, r := range out {
		t.Done(spans[i], ns[i].EventType, r.Seq, r.Err)
	}
	return out
}
