package engine

import (
	"context"
	"errors"

	"github.com/herald-gateway/herald/notification"
)

// BatchResult is the outcome of one notification of a batch.
type BatchResult struct {
	// Seq is the sequence it was stored under (0 when not stored).
	Seq uint64
	// Err is why it was not stored, nil when it was. An error wrapping
	// ErrUnknownOutcome means it may or may not have been stored.
	Err error
}

// ErrUnknownOutcome marks a publish whose outcome cannot be known: it was
// sent but no acknowledgement came (the connection was lost, or the
// acknowledgement timed out).
var ErrUnknownOutcome = errors.New("outcome unknown")

// BatchPublisher is implemented by engines that store a batch with
// pipelined acknowledgements (the JetStream engine's asynchronous
// publishes) instead of one round trip per notification.
type BatchPublisher interface {
	// PublishBatch stores ns in order and returns one result per
	// notification, in order. It returns when every notification has an
	// outcome.
	PublishBatch(ctx context.Context, ns []*notification.Notification) []BatchResult
}

// PublishAll stores ns in order with p: pipelined when p is a
// BatchPublisher, else one Publish after the other, stopping at the first
// failure (the rest are reported not stored, with that error).
func PublishAll(ctx context.Context, p Publisher, ns []*notification.Notification) []BatchResult {
	if bp, ok := p.(BatchPublisher); ok {
		return bp.PublishBatch(ctx, ns)
	}
	out := make([]BatchResult, len(ns))
	for i, n := range ns {
		seq, _, err := p.Publish(ctx, n)
		if err != nil {
			for j := i; j < len(ns); j++ {
				out[j].Err = err
			}
			return out
		}
		out[i].Seq = seq
	}
	return out
}
