package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// consumerInactiveThreshold is how long the server keeps a consumer
// nobody pulls from (herald deletes its consumers itself; this only
// cleans up after a crash).
const consumerInactiveThreshold = 2 * time.Minute

// reader reads one stream in sequence order through an ephemeral,
// unacknowledged, memory-stored pull consumer that it can recreate from
// any sequence: an ordered consumer whose resets are explicit, so that the
// live feed knows when one happened. The live feed and the history reader
// build on it. Messages and the server's status replies arrive on msgs.
//
// A reader is used by one goroutine at a time.
type reader struct {
	e      *Engine
	stream string
	filter string // subject filter; "" for the whole stream
	prefix string // consumer name prefix

	capacity int

	// l, inbox, sub and msgs belong to the current consumer: each
	// consumer replies on its own inbox, so that the late status replies
	// of a replaced consumer (409 Consumer Deleted, 408, ...) never reach
	// its successor, and pull requests go out on the connection that
	// holds that inbox (a connection the supervisor has replaced is
	// closed: its pulls fail, which makes the reader recreate its
	// consumer on the current one).
	l     *link
	inbox string
	sub   *nats.Subscription
	msgs  chan *nats.Msg

	name    string // current consumer, "" when none
	serial  int
	cseq    uint64 // last consumer sequence received from the current consumer
	pending int    // messages still owed by the outstanding pull requests
}

// start says where a consumer begins: at a stream sequence, or at the
// first message stored at or after a time.
type start struct {
	seq uint64
	at  time.Time
}

// newReader returns a reader without a consumer; capacity bounds the sum
// of the outstanding pull batches.
func newReader(e *Engine, stream, filter, kind string, capacity int) *reader {
	return &reader{
		e:        e,
		stream:   stream,
		filter:   filter,
		prefix:   "herald_" + kind + "_" + nuid.Next(),
		capacity: capacity,
	}
}

// create replaces the current consumer (if any) with a new one starting
// at from, on the current connection, and returns its info (NumPending
// counts the messages it will deliver so far). Messages of the old
// consumer still queued are dropped.
//
// The subject filter goes in the request body only (FilterSubjects), not
// in the API subject as the client library puts a single FilterSubject:
// a filter is as long as the subjects it selects, and the request's
// protocol line must stay within the server's max_control_line.
func (r *reader) create(ctx context.Context, from start) (*jetstream.ConsumerInfo, error) {
	r.drop()
	r.serial++
	cfg := jetstream.ConsumerConfig{
		Name:              r.prefix + "_" + strconv.Itoa(r.serial),
		AckPolicy:         jetstream.AckNonePolicy,
		ReplayPolicy:      jetstream.ReplayInstantPolicy,
		InactiveThreshold: consumerInactiveThreshold,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if r.filter != "" {
		cfg.FilterSubjects = []string{r.filter}
	}
	switch {
	case !from.at.IsZero():
		t := from.at
		cfg.DeliverPolicy = jetstream.DeliverByStartTimePolicy
		cfg.OptStartTime = &t
	case from.seq > 1:
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = from.seq
	default:
		cfg.DeliverPolicy = jetstream.DeliverAllPolicy
	}
	l := r.e.cur()
	msgs := make(chan *nats.Msg, r.capacity+16)
	inbox := l.nc.NewInbox()
	sub, err := l.nc.ChanSubscribe(inbox, msgs)
	if err != nil {
		return nil, fmt.Errorf("subscribe to a reply inbox: %w", err)
	}
	rctx, cancel := r.e.requestContext(ctx)
	defer cancel()
	c, err := l.js.CreateConsumer(rctx, r.stream, cfg)
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	r.l, r.inbox, r.sub, r.msgs = l, inbox, sub, msgs
	r.name, r.cseq, r.pending = cfg.Name, 0, 0
	return c.CachedInfo(), nil
}

// drop unsubscribes from the current consumer's inbox and deletes the
// consumer in the background.
func (r *reader) drop() {
	if r.name == "" {
		return
	}
	name := r.name
	_ = r.sub.Unsubscribe()
	r.name, r.pending, r.sub, r.msgs = "", 0, nil, nil
	r.e.background(func(ctx context.Context) {
		_ = r.e.cur().js.DeleteConsumer(ctx, r.stream, name)
	})
}

// close deletes the consumer.
func (r *reader) close() { r.drop() }

// pullRequest is the body of a JetStream pull request.
type pullRequest struct {
	Batch     int           `json:"batch"`
	Expires   time.Duration `json:"expires,omitempty"`
	NoWait    bool          `json:"no_wait,omitempty"`
	Heartbeat time.Duration `json:"idle_heartbeat,omitempty"`
}

// pull asks the current consumer for up to batch messages. With noWait
// the server delivers only what is stored and ends with a 404 status if
// it delivered fewer than batch; otherwise it waits up to expires (ending
// with a 408 status) and sends an idle heartbeat every heartbeat.
func (r *reader) pull(req pullRequest) error {
	if r.name == "" {
		return errors.New("no consumer")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	subject := "$JS.API.CONSUMER.MSG.NEXT." + r.stream + "." + r.name
	if err := r.l.nc.PublishRequest(subject, r.inbox, body); err != nil {
		return err
	}
	r.pending += req.Batch
	return nil
}

// Kinds of messages arriving on a reader's inbox.
type msgKind uint8

const (
	// kindMsg is a stored message.
	kindMsg msgKind = iota
	// kindHeartbeat is an idle heartbeat or flow-control status (100).
	kindHeartbeat
	// kindNoMessages ends a no-wait request that found nothing more (404).
	kindNoMessages
	// kindExpired ends a request that expired or could not be served
	// (408), carrying the count it did not deliver.
	kindExpired
	// kindLost means the consumer is gone or moved (409 consumer deleted,
	// leadership change, ...); it must be recreated.
	kindLost
	// kindOther is any other status; an error.
	kindOther
)

// classify tells what an inbox message is. For kindExpired and kindLost
// it returns the number of messages the request will no longer deliver.
func classify(m *nats.Msg) (msgKind, int) {
	if len(m.Data) > 0 || m.Header == nil {
		return kindMsg, 0
	}
	status := m.Header.Get("Status")
	if status == "" {
		return kindMsg, 0
	}
	left, _ := strconv.Atoi(m.Header.Get("Nats-Pending-Messages"))
	switch status {
	case "100":
		return kindHeartbeat, 0
	case "404":
		return kindNoMessages, 0
	case "408":
		return kindExpired, left
	case "409":
		return kindLost, left
	}
	return kindOther, 0
}

// statusError describes an unexpected status reply.
func statusError(m *nats.Msg) error {
	return fmt.Errorf("unexpected status %s %q", m.Header.Get("Status"), m.Header.Get("Description"))
}

// meta is what the engine needs from a delivered message's metadata.
type meta struct {
	stream   uint64 // stream sequence
	consumer uint64 // consumer sequence
	pending  uint64 // messages left for the consumer after this one
	at       time.Time
}

// metadata parses a delivered message's reply subject.
func metadata(m *nats.Msg) (meta, error) {
	md, err := m.Metadata()
	if err != nil {
		return meta{}, err
	}
	return meta{stream: md.Sequence.Stream, consumer: md.Sequence.Consumer, pending: md.NumPending, at: md.Timestamp}, nil
}

// accept checks that a delivered message is the next one of the current
// consumer (none was lost on the way) and counts it.
func (r *reader) accept(md meta) bool {
	if md.consumer != r.cseq+1 {
		return false
	}
	r.cseq = md.consumer
	if r.pending > 0 {
		r.pending--
	}
	return true
}
