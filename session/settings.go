package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/stream"
)

// Defaults of a session's limits; the config file's defaults (the
// session block of package configs) are these values.
const (
	// DefaultMaxSubscriptions is the most open subscriptions a session
	// may hold.
	DefaultMaxSubscriptions = 32
	// DefaultMaxProducers is the most open producers a session may hold.
	DefaultMaxProducers = 32
	// DefaultMaxProducerBytes bounds the bytes of batches a session has
	// sent and not yet had answered (32 MiB).
	DefaultMaxProducerBytes = 32 << 20
	// DefaultProducerCredit is the batches a producer may have in flight.
	DefaultProducerCredit = 16
	// DefaultProducerMaxBatch is the most elements of one producer batch.
	DefaultProducerMaxBatch = 1000
	// DefaultQueueFrames bounds the frames of the session's outbound
	// queue of events frames, shared by its subscriptions. It is high
	// enough that DefaultQueueBytes is the bound that binds when frames
	// are small (one event each, at low rates).
	DefaultQueueFrames = 1024
	// DefaultQueueBytes bounds the bytes of the frames of that queue
	// (1 MiB); an empty queue takes one frame of any size.
	DefaultQueueBytes = 1 << 20
	// DefaultMaxFrameEvents is the most events one outgoing frame carries.
	DefaultMaxFrameEvents = 256
	// DefaultMaxFrameBytes bounds every frame the server sends (4 MiB).
	DefaultMaxFrameBytes = 4 << 20
	// DefaultBlockingTimeout bounds how long a BLOCKING subscription may
	// hold back its delivery (and its publishers) before it ends with
	// overflow.
	DefaultBlockingTimeout = time.Second
	// DefaultMaxSessionsPerUser bounds the sessions of one authenticated
	// user.
	DefaultMaxSessionsPerUser = 64
)

// Deps are what sessions need from the server that runs them, shared by
// all of its sessions.
type Deps struct {
	// Engine stores and streams notifications.
	Engine engine.Engine
	// Settings returns the settings in force. Each request reads them
	// once, when it starts; a session keeps the Limits it opened with.
	Settings func() *Settings
	// Streams is the server's set of running streams. A session joins it
	// (so that a shutdown ends it), and so do its subscriptions and
	// producers (so that a reload ends those of an event type).
	Streams *stream.Set
	// Counters count the server's sessions.
	Counters *Counters
	// Observer is told what sessions do; nil records nothing.
	Observer Observer
	// Log receives what sessions log.
	Log *slog.Logger
	// Now returns the current time.
	Now func() time.Time
	// Version is the server's version, in the welcome.
	Version string
	// Tracing traces notifies, producer batches and deliveries; its zero
	// value (tracing off) records nothing and stores no trace context.
	Tracing engine.Tracing
}

// Settings are what the configuration decides for sessions; a reload
// replaces them as a whole.
type Settings struct {
	// Registry holds the compiled schemas.
	Registry *notification.Registry
	// Policy decides who may read and write each event type; the zero
	// value (auth disabled) makes every stream public.
	Policy auth.Policy
	// Authenticate verifies the credentials of an auth request (an
	// Authorization header value); nil when authentication is disabled.
	Authenticate func(ctx context.Context, authorization string) (*auth.Identity, *auth.Error)
	// Destinations runs the ECPDS destination check of a subscription
	// for a user, on its processed filter (sessionID names the session in
	// logs): nil when the user may read it. A nil Destinations passes
	// every subscription.
	Destinations func(ctx context.Context, sc *notification.Schema, filter *notification.Filter, id *auth.Identity, sessionID string) *auth.Error
	// Streams bound the streams of subscriptions and replays (the
	// watch_endpoint block); sessions ping instead of heartbeats.
	Streams stream.Limits
	// Limits are the limits of each session.
	Limits Limits
	// MaxRequestBytes is the largest frame a client may send
	// (max_body_bytes), announced in the welcome.
	MaxRequestBytes int64
}

// Limits are the limits of one session (the session block of the
// configuration), announced in its welcome (all but QueueBytes). Zero
// values take the defaults (WithDefaults).
type Limits struct {
	MaxSubscriptions   int
	MaxProducers       int
	MaxProducerBytes   int64
	ProducerCredit     int
	ProducerMaxBatch   int
	QueueFrames        int
	QueueBytes         int
	MaxFrameEvents     int
	MaxFrameBytes      int
	BlockingTimeout    time.Duration
	MaxSessionsPerUser int
}

// WithDefaults returns l with its zero values replaced by the defaults
// (the Default* constants of this package).
func (l Limits) WithDefaults() Limits {
	for _, d := range []struct {
		v   *int
		def int
	}{
		{&l.MaxSubscriptions, DefaultMaxSubscriptions},
		{&l.MaxProducers, DefaultMaxProducers},
		{&l.ProducerCredit, DefaultProducerCredit},
		{&l.ProducerMaxBatch, DefaultProducerMaxBatch},
		{&l.QueueFrames, DefaultQueueFrames},
		{&l.QueueBytes, DefaultQueueBytes},
		{&l.MaxFrameEvents, DefaultMaxFrameEvents},
		{&l.MaxFrameBytes, DefaultMaxFrameBytes},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if l.MaxProducerBytes <= 0 {
		l.MaxProducerBytes = DefaultMaxProducerBytes
	}
	if l.BlockingTimeout <= 0 {
		l.BlockingTimeout = DefaultBlockingTimeout
	}
	return l
}

// Observer is told what sessions do, for metrics. Every method must be
// cheap and safe for concurrent use.
type Observer interface {
	// SessionOpened and SessionClosed bracket one session.
	SessionOpened()
	SessionClosed()
	// DroppedRows: a DROPPING subscription discarded n events.
	DroppedRows(n int)
	// Notified: n notifications of sc's event type (sc nil: not known)
	// were stored (code "") or refused with the API error code, by a
	// notify request that took d or by a producer's batch (d 0).
	Notified(sc *notification.Schema, code string, n int, d time.Duration)
	// Stream returns the observer of the stream of a subscription or
	// replay of sc for user ("" when anonymous).
	Stream(sc *notification.Schema, user string) stream.Observer
}

// noObserver is the Observer of Deps without one.
type noObserver struct{}

func (noObserver) SessionOpened()                                            {}
func (noObserver) SessionClosed()                                            {}
func (noObserver) DroppedRows(int)                                           {}
func (noObserver) Notified(*notification.Schema, string, int, time.Duration) {}
func (noObserver) Stream(*notification.Schema, string) stream.Observer       { return nil }

// Counters count what the sessions of one server hold together: the
// sessions of each user (max_sessions_per_user), the sessions open, the
// subscriptions running, the events DROPPING subscriptions discarded and
// the frames queued on the sessions' control lanes. It is safe for
// concurrent use; the zero value is ready.
type Counters struct {
	mu    sync.Mutex
	users map[string]int
	open  atomic.Int64
	subs  atomic.Int64
	drops atomic.Uint64
	ctrl  atomic.Uint64
}

// Acquire counts a session of user unless limit (0: none) are counted
// already; release uncounts it (once, however often it is called).
func (c *Counters) Acquire(user string, limit int) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if limit > 0 && c.users[user] >= limit {
		return nil, false
	}
	if c.users == nil {
		c.users = map[string]int{}
	}
	c.users[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.users[user]--; c.users[user] <= 0 {
				delete(c.users, user)
			}
		})
	}, true
}

// Open returns the number of sessions open now.
func (c *Counters) Open() int { return int(c.open.Load()) }

// Subscriptions returns the number of subscriptions and replays whose
// stream is running now.
func (c *Counters) Subscriptions() int { return int(c.subs.Load()) }

// Dropped returns how many events DROPPING subscriptions have discarded.
func (c *Counters) Dropped() uint64 { return c.drops.Load() }

// ControlFrames returns how many frames (replies, welcomes, ends, …)
// sessions have queued on their control lanes, which the writer sends
// ahead of events frames.
func (c *Counters) ControlFrames() uint64 { return c.ctrl.Load() }

// UserLimitMessage says that user has reached limit open sessions
// (max_sessions_per_user): the upgrade's 429 and the auth request's
// LIMIT_EXCEEDED.
func UserLimitMessage(user string, limit int) string {
	return fmt.Sprintf("user '%s' already has %d open sessions (session.max_sessions_per_user)", user, limit)
}

// The codes of a request the API refuses as invalid, per endpoint, and
// of one too large to take (HTTP 413).
const (
	CodeInvalidNotification = "INVALID_NOTIFICATION_REQUEST"
	CodeInvalidWatch        = "INVALID_WATCH_REQUEST"
	CodeInvalidReplay       = "INVALID_REPLAY_REQUEST"
	CodeTooLarge            = "PAYLOAD_TOO_LARGE"
)

// ErrorCode classifies a parse, event-type or validation error of a
// request: the API error code, the message and its innermost detail,
// invalid being the code of an invalid request of its endpoint
// (CodeInvalidWatch…). The HTTP endpoints and sessions answer with
// these, so that a mistake gets the same code over both.
func ErrorCode(invalid string, err error) (code, msg, detail string) {
	var (
		pe *notification.ParseError
		ue *notification.UnknownEventTypeError
		ve *notification.ValidationError
		be *notification.BusyError
		te *engine.TooLargeError
	)
	switch {
	case errors.As(err, &te):
		return CodeTooLarge, te.Error(), te.Error()
	case errors.As(err, &be):
		return "BUSY", be.Error(), be.Error()
	case errors.As(err, &pe):
		return pe.Kind.Code(), pe.Error(), pe.Detail
	case errors.As(err, &ue):
		return "UNKNOWN_EVENT_TYPE", ue.Error(), ue.Error()
	case errors.As(err, &ve):
		return invalid, ve.Message, ve.Detail
	}
	return invalid, err.Error(), err.Error()
}
