package jetstream

import (
	"net"
	"time"

	"github.com/nats-io/nats.go"
)

// publishers are the connections a link's single publishes take turns
// on: its main connection first, then the extra ones (Options.PublishConns).
type publishers struct {
	conns []*nats.Conn
}

// publisher returns the connection for the next publish: the link's
// publishing connections take turns; one that is not connected (it is
// reconnecting on its own) is skipped, and the main connection is the
// last resort, so that a retry goes out as soon as that one is back.
func (l *link) publisher() *nats.Conn {
	p := l.pubs.Load()
	if p == nil {
		return l.nc
	}
	n := uint32(len(p.conns))
	i := l.turn.Add(1)
	for k := range n {
		if c := p.conns[(i+k)%n]; c.IsConnected() {
			return c
		}
	}
	return l.nc
}

// closeExtra closes the link's extra publishing connections.
func (l *link) closeExtra() {
	if p := l.pubs.Swap(nil); p != nil {
		for _, c := range p.conns[1:] {
			c.Close()
		}
	}
}

// addPublishers dials the extra publishing connections of l in the
// background (a slow dial holds no caller) and hands them to l once it
// has them all, unless l is no longer the current link or the engine is
// stopping: they are closed then. Until then, and if a dial fails, l
// publishes on the connections it has.
func (e *Engine) addPublishers(l *link) {
	extra := e.opts.PublishConns - 1
	if extra <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		conns := []*nats.Conn{l.nc}
		for range extra {
			c, err := e.dialPublisher()
			if err != nil {
				e.log.Debug("extra publishing connection not dialled; publishing on fewer", "server", e.where,
					"connections", len(conns), "error", err)
				break
			}
			conns = append(conns, c)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.stopping || e.cur() != l || l.nc.IsClosed() {
			for _, c := range conns[1:] {
				c.Close()
			}
			return
		}
		l.pubs.Store(&publishers{conns: conns})
	}()
}

// dialPublisher dials one extra publishing connection. It reconnects by
// itself without limit and signals nothing: the main connection's
// handlers speak for the link, and the link closes its extra
// connections when it is replaced or the engine stops.
func (e *Engine) dialPublisher() (*nats.Conn, error) {
	o := e.opts
	opts := []nats.Option{
		nats.Name("herald-publish"),
		nats.ReconnectWait(o.ReconnectDelay),
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1),
		nats.PingInterval(10 * time.Second),
		nats.MaxPingsOutstanding(3),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if !e.closed.Load() {
				e.log.Debug("NATS asynchronous error on a publishing connection", "server", e.where, "error", err)
			}
		}),
	}
	if o.NoReconnect {
		opts = append(opts, nats.NoReconnect())
	}
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
	}
	if e.srv != nil {
		return nats.Connect("", append(opts, nats.InProcessServer(e.srv))...)
	}
	opts = append(opts, nats.SetCustomDialer(&ctxDialer{ctx: e.ctx, d: net.Dialer{Timeout: o.ConnectTimeout}}), nats.Timeout(o.ConnectTimeout))
	return nats.Connect(o.URL, opts...)
}
