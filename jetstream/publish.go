package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
)

// Publish stores n in its base's stream (created with the default policy
// if the base has no configured stream) and returns once JetStream has
// acknowledged it, with its stream sequence and stored time.
//
// The message carries a unique Nats-Msg-Id, so resending it after a
// failure where the server did not answer is deduplicated by the server,
// which then acknowledges the original sequence. Only such failures are
// retried (no responders, no connection while reconnecting, no answer in
// time, JetStream temporarily unavailable), up to Options.PublishAttempts
// times with exponential backoff from Options.PublishRetryBase, all within
// Options.PublishTimeout. When the server cannot be reached the error
// wraps engine.ErrUnavailable.
//
// The acknowledgement carries no time, so Publish then waits (within the
// same timeout) for this instance's live feed to read the sequence, which
// gives the exact stored time and also means that the notification has
// reached this instance's subscribers: a Subscribe made after Publish
// returns has a boundary at or above the sequence. If the feed cannot
// tell in time, the time is read back from the stream, and as a last
// resort (the notification was removed meanwhile) it is the current time.
func (e *Engine) Publish(ctx context.Context, n *notification.Notification) (_ uint64, _ time.Time, err error) {
	defer e.observe(engine.OpPublish, time.Now(), &err)
	deadline := time.Now().Add(e.opts.PublishTimeout)
	st, seq, err := e.store(ctx, n, deadline)
	if err != nil {
		return 0, time.Time{}, err
	}
	if f := st.feed.Load(); f != nil {
		f.noteAcked(seq)
		if at, ok := f.timeOf(ctx, seq, deadline); ok {
			return seq, at, nil
		}
	}
	return seq, e.storedTime(st, seq), nil
}

// Compile-time check: the engine can store a notification without
// finding out its stored time.
var _ engine.SeqPublisher = (*Engine)(nil)

// PublishSeq is Publish without the stored time: it returns as soon as
// JetStream has acknowledged n, with the same retries, deduplication and
// errors, without waiting for the live feed to read n back. Concurrent
// calls are pipelined: each sends its message and waits for its own
// acknowledgement, on one of the engine's publishing connections.
//
// Publish's promise to later subscriptions holds all the same: the live
// feed of the stream remembers the highest sequence acknowledged, and a
// Subscribe waits for the feed to read it before fixing its boundary
// (within Options.RequestTimeout, and only while connected: a
// notification the feed reads later is delivered live to the
// subscription instead of being part of its history).
func (e *Engine) PublishSeq(ctx context.Context, n *notification.Notification) (_ uint64, err error) {
	defer e.observe(engine.OpPublish, time.Now(), &err)
	st, seq, err := e.store(ctx, n, time.Now().Add(e.opts.PublishTimeout))
	if err != nil {
		return 0, err
	}
	if f := st.feed.Load(); f != nil {
		f.noteAcked(seq)
	}
	return seq, nil
}

// store is the common part of Publish and PublishSeq: it sends n to its
// base's stream (created if needed) and returns the stream and the
// sequence once JetStream has acknowledged n, retrying until deadline.
func (e *Engine) store(ctx context.Context, n *notification.Notification, deadline time.Time) (*streamState, uint64, error) {
	if err := e.check(ctx, "publish"); err != nil {
		return nil, 0, err
	}
	if n == nil || n.Base() == "" {
		return nil, 0, errors.New("jetstream: publish: notification has no topic base")
	}
	st, err := e.ensure(ctx, n.Base())
	if err != nil {
		return nil, 0, e.wrapSetup(ctx, "publish", err)
	}
	msg, err := message(n, st.name, e.eventTypeOf(st.base), nuid.Next())
	if err == nil {
		err = e.checkMsg(msg)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("jetstream: publish to stream %s: %w", st.name, err)
	}
	ack, err := e.publish(ctx, deadline, msg)
	if err != nil && errors.Is(err, nats.ErrNoResponders) && e.recreateMissing(ctx, st) {
		ack, err = e.publish(ctx, time.Now().Add(e.opts.PublishTimeout), msg)
	}
	if err != nil {
		return nil, 0, e.fail(ctx, "publish "+msg.Subject+" to stream "+st.name+" on "+e.where, err)
	}
	if ack.Stream != st.name {
		return nil, 0, fmt.Errorf("jetstream: publish %s: stored in stream %s, want %s", msg.Subject, ack.Stream, st.name)
	}
	return st, ack.Seq, nil
}

// Compile-time check: the engine bounds a record by the server's
// max_payload.
var _ engine.SizeChecker = (*Engine)(nil)

// maxPayloadLimiter names the limit of CheckSize in messages.
const maxPayloadLimiter = "the NATS server's max_payload"

// placeholderMsgID stands for a message's Nats-Msg-Id when CheckSize
// measures it: any NUID has its length.
var placeholderMsgID = strings.Repeat("0", msgIDLen)

// CheckSize implements engine.SizeChecker: the NATS message Publish
// would send for n, headers included, against the max_payload the
// server announced on the current connection (an external server's own
// setting; nats-server's default, 1 MiB, on the embedded one). A
// notification whose message cannot be built is left to Publish, which
// says why.
func (e *Engine) CheckSize(n *notification.Notification) error {
	if n == nil || n.Base() == "" {
		return nil
	}
	base := n.Base()
	msg, err := message(n, StreamName(base), e.eventTypeOf(base), placeholderMsgID)
	if err != nil {
		return nil
	}
	return e.checkMsg(msg)
}

// checkMsg refuses a message larger than the server's max_payload (the
// client library would refuse it too, as a failed publish rather than
// the caller's mistake): a *engine.TooLargeError giving both sizes.
func (e *Engine) checkMsg(msg *nats.Msg) error {
	l := e.cur()
	if l == nil {
		return nil
	}
	limit := l.nc.MaxPayload()
	if limit <= 0 {
		return nil // not connected yet: the publish reports that
	}
	if size := msgSize(msg); int64(size) > limit {
		return &engine.TooLargeError{Size: size, Limit: int(limit), Limiter: maxPayloadLimiter}
	}
	return nil
}

// pubAck is JetStream's answer to a publish.
type pubAck struct {
	Stream    string              `json:"stream"`
	Seq       uint64              `json:"seq"`
	Duplicate bool                `json:"duplicate,omitempty"`
	Error     *jetstream.APIError `json:"error,omitempty"`
}

// publish sends msg until JetStream acknowledges it, retrying the
// failures retryable accepts, each attempt bounded by RequestTimeout and
// all of them by deadline; a retry waiting for its turn goes at once when
// the connection is re-established. (Plain requests with a timeout,
// rather than one context per attempt, keep the cost of a publish close
// to the raw client's.)
func (e *Engine) publish(ctx context.Context, deadline time.Time, msg *nats.Msg) (pubAck, error) {
	delay := e.opts.PublishRetryBase
	for attempt := 1; ; attempt++ {
		changed := e.nextReconnect()
		timeout := min(e.opts.RequestTimeout, time.Until(deadline))
		var (
			ack pubAck
			err error
		)
		if timeout <= 0 {
			err = fmt.Errorf("publish timeout %s reached: %w", e.opts.PublishTimeout, context.DeadlineExceeded)
		} else {
			var reply *nats.Msg
			if reply, err = e.cur().publisher().RequestMsg(msg, timeout); err == nil {
				var ok bool
				if ack, ok = parseAck(reply.Data); ok {
					// The usual acknowledgement, read without reflection.
				} else if err = json.Unmarshal(reply.Data, &ack); err != nil {
					err = fmt.Errorf("invalid publish acknowledgement %q: %w", reply.Data, err)
				} else if ack.Error != nil {
					err = ack.Error
				} else if ack.Stream == "" {
					err = fmt.Errorf("invalid publish acknowledgement %q", reply.Data)
				}
			}
		}
		if err == nil {
			if ack.Duplicate {
				e.log.Debug("publish retry deduplicated", "subject", msg.Subject, "sequence", ack.Seq)
			}
			return ack, nil
		}
		if ctx.Err() != nil || !retryable(err) || attempt >= e.opts.PublishAttempts || time.Until(deadline) <= delay {
			return pubAck{}, fmt.Errorf("after %d attempt(s): %w", attempt, err)
		}
		e.log.Debug("publish failed; retrying", "subject", msg.Subject, "attempt", attempt, "retry_in", delay.String(), "error", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return pubAck{}, fmt.Errorf("after %d attempt(s): %w (%w)", attempt, err, ctx.Err())
		case <-e.ctx.Done():
			t.Stop()
			return pubAck{}, fmt.Errorf("after %d attempt(s): %w", attempt, engine.ErrClosed)
		case <-changed:
			// A new connection: retry on it at once.
			t.Stop()
		case <-t.C:
		}
		delay *= 2
	}
}

// recreateMissing creates the stream of st again if it has been deleted
// behind the engine's back (nothing answers publishes to its subjects);
// the live feed then notices that the stream went back and restarts. It
// reports whether it created the stream.
func (e *Engine) recreateMissing(ctx context.Context, st *streamState) bool {
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	js := e.cur().js
	if _, err := js.Stream(rctx, st.name); !errors.Is(err, jetstream.ErrStreamNotFound) {
		return false
	}
	if _, err := js.CreateStream(rctx, e.streamConfig(st.base, e.policyOf(st.base))); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		e.log.Error("stream missing and not created again", "stream", st.name, "server", e.where, "error", err)
		return false
	}
	e.log.Warn("stream was deleted while herald was using it; created it again", "stream", st.name, "server", e.where)
	return true
}

// storedTime reads a message's stored time back from the stream; the
// current time if it cannot.
func (e *Engine) storedTime(st *streamState, seq uint64) time.Time {
	ctx, cancel := e.requestContext(context.Background())
	defer cancel()
	s, err := e.cur().js.Stream(ctx, st.name)
	var m *jetstream.RawStreamMsg
	if err == nil {
		m, err = s.GetMsg(ctx, seq)
	}
	if err != nil {
		e.log.Debug("stored time unavailable; using the current time", "stream", st.name, "sequence", seq, "error", err)
		return time.Now().UTC()
	}
	return m.Time.UTC()
}

// wrapSetup wraps an error of ensure with the operation.
func (e *Engine) wrapSetup(ctx context.Context, op string, err error) error {
	if e.closed.Load() {
		return fmt.Errorf("jetstream: %s: %w", op, engine.ErrClosed)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("jetstream: %s: %w", op, ctx.Err())
	}
	return fmt.Errorf("jetstream: %s: %w", op, err)
}
