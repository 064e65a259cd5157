package jetstream

import (
	"time"

	"github.com/herald-gateway/herald/engine"
)

// Observer is told what the engine does, for metrics: each backend
// operation (engine.OpObserver), each re-established connection (the
// client library reconnected, or the supervisor swapped in a re-dialled
// one), and each gap: a live feed that lost notifications it could not
// recover and ended its stream's subscriptions with engine.ErrGap. It
// must be cheap and safe for concurrent use.
type Observer interface {
	engine.OpObserver
	Reconnected()
	Gap(eventStream string)
}

// noObserver is the Observer of an engine opened without one.
type noObserver struct{ engine.NoOpObserver }

func (noObserver) Reconnected() {}
func (noObserver) Gap(string)   {}

// observe reports an operation started at start (a deferred call).
func (e *Engine) observe(op engine.Op, start time.Time, err *error) {
	engine.ObserveOp(e.opts.Observer, op, start, err)
}
