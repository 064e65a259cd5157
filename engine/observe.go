package engine

import (
	"errors"
	"time"
)

// Op is a backend operation as the metrics name it (Aviso's
// aviso_backend_operations_total `operation` label).
type Op uint8

// Backend operations.
const (
	// OpPublish stores one notification (each notification of a batch
	// counts as one).
	OpPublish Op = iota
	// OpGetBatch reads one history page.
	OpGetBatch
	// OpWipeStream removes the notifications of one stream.
	OpWipeStream
	// OpWipeAll removes every notification.
	OpWipeAll
	// OpDeleteMessage removes one notification.
	OpDeleteMessage
)

// Ops lists every operation, in order.
var Ops = [...]Op{OpPublish, OpGetBatch, OpWipeStream, OpWipeAll, OpDeleteMessage}

var opNames = [...]string{
	OpPublish: "publish", OpGetBatch: "get_batch", OpWipeStream: "wipe_stream",
	OpWipeAll: "wipe_all", OpDeleteMessage: "delete_message",
}

// String returns the operation's label.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "unknown"
}

// OpObserver is told the outcome and the caller-observed duration of
// each backend operation an engine performs (err nil: ok). Engines call
// it from the calling goroutine; it must be cheap and safe for
// concurrent use. A delete of a notification that does not exist is an
// ok operation (ErrNotFound is an answer, not a failure).
type OpObserver interface {
	BackendOp(op Op, d time.Duration, err error)
}

// NoOpObserver is the OpObserver that records nothing.
type NoOpObserver struct{}

// BackendOp implements OpObserver.
func (NoOpObserver) BackendOp(Op, time.Duration, error) {}

// ObserveOp reports the operation started at start to o with its
// outcome *err; engines defer it at the top of an operation.
func ObserveOp(o OpObserver, op Op, start time.Time, err *error) {
	e := *err
	if op == OpDeleteMessage && errors.Is(e, ErrNotFound) {
		e = nil
	}
	o.BackendOp(op, time.Since(start), e)
}
