package jetstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/herald-gateway/herald/engine"
)

// ErrUnrecoverable marks a state the engine cannot leave by itself (the
// embedded nats-server has stopped, or has disabled JetStream after a
// storage failure): only restarting herald can help. Healthy returns an
// error wrapping it, and a liveness endpoint should then fail.
var ErrUnrecoverable = errors.New("backend failed beyond recovery")

// redialReminder is how often the supervisor repeats, while the server
// stays unreachable, that it is still re-dialling; each attempt is logged
// at debug level only.
const redialReminder = 5 * time.Minute

// supervise keeps the engine connected for its whole life. The client
// library reconnects by itself in bursts of Options.MaxReconnects
// attempts, Options.ReconnectDelay apart; when it gives up (or never
// tries: Options.NoReconnect, or the server closed the connection for a
// protocol error such as an over-long control line, which the client
// treats as final), the connection is closed and supervise re-dials a new
// one, forever, with capped exponential backoff, swaps it in for every
// user and asks the live feeds to recreate their consumers.
func (e *Engine) supervise() {
	defer e.wg.Done()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-e.lost:
		}
		for e.ctx.Err() == nil && e.cur().nc.IsClosed() {
			e.redial()
		}
	}
}

// redial dials until a connection is up and swapped in, or the engine
// stops. The first attempt is immediate (a connection the server closed
// for a protocol error comes back at once); the pause between the next
// ones starts at Options.ReconnectDelay and doubles up to
// Options.MaxRedialDelay, with up to 10% jitter so that many herald
// instances do not dial in step.
func (e *Engine) redial() {
	e.redialing.Store(true)
	defer e.redialing.Store(false)
	began := time.Now()
	reminded := began
	delay := e.opts.ReconnectDelay
	for attempt := 1; ; attempt++ {
		e.redials.Add(1)
		nc, err := e.dialOnce()
		if err == nil {
			var l *link
			if l, err = e.newLink(nc); err != nil {
				nc.Close()
			} else {
				if !e.swap(l) {
					nc.Close()
					return
				}
				e.addPublishers(l)
				e.log.Info("NATS connection re-established by re-dialling", "server", e.where,
					"url", redactURLs(nc.ConnectedUrl()), "attempts", attempt, "down_for", time.Since(began).Round(time.Millisecond).String())
				e.afterReconnect()
				return
			}
		}
		if e.ctx.Err() != nil {
			return
		}
		e.log.Debug("NATS re-dial failed", "server", e.where, "attempt", attempt, "retry_in", delay.String(), "error", err)
		if time.Since(reminded) >= redialReminder {
			reminded = time.Now()
			e.log.Warn("NATS server still unreachable; still re-dialling", "server", e.where, "attempts", attempt,
				"down_for", time.Since(began).Round(time.Second).String(), "retry_in", delay.String(), "error", err)
		}
		t := time.NewTimer(delay + rand.N(delay/10+1))
		select {
		case <-e.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, e.opts.MaxRedialDelay)
	}
}

// swap makes l the current connection, unless the engine is stopping,
// and wakes the calls waiting for it.
func (e *Engine) swap(l *link) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return false
	}
	if old := e.link.Swap(l); old != nil {
		old.closeExtra()
	}
	e.signalReconnect()
	return true
}

// ctxDialer dials TCP connections that give up when the engine stops, so
// that neither a re-dial nor a reconnection of the client library holds
// Shutdown for a whole connect timeout.
type ctxDialer struct {
	ctx context.Context
	d   net.Dialer
}

// Dial implements nats.CustomDialer.
func (c *ctxDialer) Dial(network, address string) (net.Conn, error) {
	return c.d.DialContext(c.ctx, network, address)
}

// Healthy reports whether the engine is alive, for a liveness endpoint:
// nil while it is connected; an error wrapping engine.ErrUnavailable
// while the server is unreachable and the engine is reconnecting by
// itself (it needs no restart: the endpoint should stay up); an error
// wrapping ErrUnrecoverable when it cannot recover without a restart (the
// embedded nats-server has stopped, or disabled JetStream after a
// storage failure); engine.ErrClosed once closed. It makes no request.
func (e *Engine) Healthy() error {
	if e.closed.Load() {
		return fmt.Errorf("jetstream: health: %w", engine.ErrClosed)
	}
	if e.srv != nil {
		if !e.srv.Running() {
			return fmt.Errorf("jetstream: health: the %s has stopped: %w", e.where, ErrUnrecoverable)
		}
		if !e.srv.JetStreamEnabled() {
			return fmt.Errorf("jetstream: health: the %s has disabled JetStream (see its log lines; a storage failure?): %w", e.where, ErrUnrecoverable)
		}
	}
	if st := e.cur().nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("jetstream: health: connection to %s is %s, reconnecting: %w", e.where, statusText(st), engine.ErrUnavailable)
	}
	return nil
}
