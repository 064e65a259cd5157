package engine

import (
	"context"

	"github.com/herald-gateway/herald/notification"
)

// SeqPublisher is implemented by engines that store a notification
// faster when the caller needs only its sequence: the stored time is not
// reported, so the engine need not find it out (the JetStream engine
// would otherwise wait for its live feed to read the notification back).
type SeqPublisher interface {
	// PublishSeq stores n as Publish does, with the same durability (it
	// returns only once the backend has accepted n) and the same promise
	// to later Subscribe calls (their Boundary is at or above the
	// returned sequence), and returns the sequence.
	PublishSeq(ctx context.Context, n *notification.Notification) (uint64, error)
}

// PublishSeq stores n with p and returns its sequence: through
// p.PublishSeq when p is a SeqPublisher, through p.Publish otherwise.
func PublishSeq(ctx context.Context, p Publisher, n *notification.Notification) (uint64, error) {
	if sp, ok := p.(SeqPublisher); ok {
		return sp.PublishSeq(ctx, n)
	}
	seq, _, err := p.Publish(ctx, n)
	return seq, err
}
