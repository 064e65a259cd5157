package jetstream

import (
	"time"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
)

// Subscribe joins the live fan-out of q.Stream (setting its stream and
// live feed up first, creating the stream if needed); see engine.Engine.
// The boundary is the last sequence this instance's feed has delivered,
// once the feed has read every notification this instance has had
// acknowledged.
func (e *Engine) Subscribe(ctx context.Context, q engine.Query, opts engine.SubscribeOptions) (*engine.Subscription, error) {
	if err := e.check(ctx, "subscribe"); err != nil {
		return nil, err
	}
	st, err := e.ensure(ctx, q.Stream)
	if err != nil {
		return nil, e.wrapSetup(ctx, "subscribe to "+q.Stream, err)
	}
	if f := st.feed.Load(); f != nil && e.cur().nc.IsConnected() {
		// Publishes acknowledged before this call are below the
		// boundary: PublishSeq does not wait for the feed to read them.
		// (Without a connection the feed cannot read them now; they
		// come live to this subscription once it can, as they would if
		// the wait ran out.)
		f.caughtUp(ctx, time.Now().Add(e.opts.RequestTimeout))
	}
	sub := e.hub.Subscribe(q, opts)
	if f := st.feed.Load(); f == nil || f.ended() {
		// The feed gave up while this subscription joined: it might have
		// missed the feed's EndStream.
		sub.Close()
		return nil, fmt.Errorf("jetstream: subscribe to %s: the live feed of stream %s stopped: %w", q.Stream, st.name, asUnavailable(errors.New("connection closed")))
	}
	return sub, nil
}

// LastSeq returns the last sequence of the stream of base stream, read
// from the server (0 when the stream does not exist).
func (e *Engine) LastSeq(ctx context.Context, stream string) (uint64, error) {
	if err := e.check(ctx, "last sequence"); err != nil {
		return 0, err
	}
	if err := checkStreamKey(stream); err != nil {
		return 0, fmt.Errorf("jetstream: last sequence: %w", err)
	}
	name := StreamName(stream)
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	s, err := e.cur().js.Stream(rctx, name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return 0, nil
	case err != nil:
		return 0, e.fail(ctx, "last sequence of stream "+name+" on "+e.where, err)
	}
	return s.CachedInfo().State.LastSeq, nil
}

// SeqAfter returns the first sequence of the stream named after stream
// (uppercased) stored strictly after t, 0 if none or if the stream does
// not exist. It asks the server for the first message at or after t plus
// one nanosecond (a message get by start time, nats-server 2.11 and
// later).
func (e *Engine) SeqAfter(ctx context.Context, stream string, t time.Time) (uint64, error) {
	if err := e.check(ctx, "sequence after a time"); err != nil {
		return 0, err
	}
	if err := checkStreamKey(stream); err != nil {
		return 0, fmt.Errorf("jetstream: sequence after a time: %w", err)
	}
	if t.After(maxStoredTime) {
		return 0, nil // nothing can be stored that late
	}
	at := t.Add(time.Nanosecond)
	if at.Before(minStoredTime) {
		at = minStoredTime
	}
	name := StreamName(stream)
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	body, _ := json.Marshal(struct {
		StartTime time.Time `json:"start_time"`
		NoHeaders bool      `json:"no_hdr"`
	}{at.UTC(), true})
	op := "first sequence of stream " + name + " after " + t.UTC().Format(time.RFC3339Nano)
	reply, err := e.cur().nc.RequestWithContext(rctx, "$JS.API.STREAM.MSG.GET."+name, body)
	if err != nil {
		return 0, e.fail(ctx, op+" on "+e.where, err)
	}
	var resp struct {
		Message *struct {
			Seq uint64 `json:"seq"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return 0, fmt.Errorf("jetstream: %s: invalid answer from %s: %w", op, e.where, err)
	}
	switch {
	case resp.Error != nil && (resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound || resp.Error.ErrorCode == jetstream.JSErrCodeStreamNotFound):
		return 0, nil
	case resp.Error != nil:
		return 0, e.fail(ctx, op+" on "+e.where, resp.Error)
	case resp.Message == nil:
		return 0, fmt.Errorf("jetstream: %s: %s answered without a message", op, e.where)
	}
	return resp.Message.Seq, nil
}

// owned returns the stream named after key (uppercased) if herald
// manages it: it carries the herald marker, or it is one of the
// configured streams. Anything else is engine.ErrNotFound.
func (e *Engine) owned(ctx context.Context, l *link, key, op string) (jetstream.Stream, error) {
	name := StreamName(key)
	s, err := l.js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("jetstream: %s: stream %s: %w", op, name, engine.ErrNotFound)
	}
	if err != nil {
		return nil, e.fail(ctx, op+": stream "+name+" on "+e.where, err)
	}
	if _, ok := s.CachedInfo().Config.Metadata[MetadataBase]; !ok && !e.configured(name) {
		return nil, fmt.Errorf("jetstream: %s: stream %s is not managed by herald (no %s metadata): %w", op, name, MetadataBase, engine.ErrNotFound)
	}
	return s, nil
}

// configured reports whether a stream name belongs to a configured base.
func (e *Engine) configured(name string) bool {
	for base := range e.conf.Load().specs {
		if StreamName(base) == name {
			return true
		}
	}
	return false
}

// Delete removes notification seq from the stream named after stream
// uppercased (Aviso's admin endpoints, docs/api.md); engine.ErrNotFound when
// the stream is missing (or not herald's) or does not hold seq, an error
// wrapping ErrInvalidName, without asking the server, when stream cannot name
// a JetStream stream.
func (e *Engine) Delete(ctx context.Context, stream string, seq uint64) (err error) {
	defer e.observe(engine.OpDeleteMessage, time.Now(), &err)
	if err := e.check(ctx, "delete"); err != nil {
		return err
	}
	if err := checkStreamKey(stream); err != nil {
		return fmt.Errorf("jetstream: delete: %w", err)
	}
	op := fmt.Sprintf("delete %s@%d", stream, seq)
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	l := e.cur()
	s, err := e.owned(rctx, l, stream, op)
	if err != nil {
		return err
	}
	if seq == 0 || seq > s.CachedInfo().State.LastSeq {
		return fmt.Errorf("jetstream: %s: stream %s has no sequence %d: %w", op, StreamName(stream), seq, engine.ErrNotFound)
	}
	// The server reports a missing message with different errors
	// depending on where it is and on the deployment; ask first.
	if _, err := s.GetMsg(rctx, seq); errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("jetstream: %s: %w", op, engine.ErrNotFound)
	} else if err != nil {
		return e.fail(ctx, op+" on "+e.where, err)
	}
	// The client library reports a failed deletion as text only, so the
	// request is made here to tell "no such message" apart.
	body, _ := json.Marshal(struct {
		Seq     uint64 `json:"seq"`
		NoErase bool   `json:"no_erase"`
	}{seq, true})
	reply, err := l.nc.RequestWithContext(rctx, "$JS.API.STREAM.MSG.DELETE."+StreamName(stream), body)
	if err != nil {
		return e.fail(ctx, op+" on "+e.where, err)
	}
	var resp struct {
		Success bool                `json:"success"`
		Error   *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return fmt.Errorf("jetstream: %s: invalid answer from %s: %w", op, e.where, err)
	}
	switch {
	case resp.Error != nil && (resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound || resp.Error.ErrorCode == errCodeSequenceNotFound ||
		resp.Error.ErrorCode == errCodeDeleteFailed && strings.Contains(resp.Error.Description, "no message found")):
		return fmt.Errorf("jetstream: %s: %w", op, engine.ErrNotFound)
	case resp.Error != nil:
		return e.fail(ctx, op+" on "+e.where, resp.Error)
	case !resp.Success:
		return fmt.Errorf("jetstream: %s: %s did not confirm the deletion", op, e.where)
	}
	return nil
}

// JetStream error codes for deleting a sequence the stream does not hold
// (JSSequenceNotFoundErrF), and for a failed deletion
// (JSStreamMsgDeleteFailedF), which says "no message found" when the
// message was already removed.
const (
	errCodeSequenceNotFound jetstream.ErrorCode = 10043
	errCodeDeleteFailed     jetstream.ErrorCode = 10057
)

// WipeStream purges the stream named after stream uppercased, keeping its
// configuration and sequence counter; engine.ErrNotFound when it is
// missing or not herald's, an error wrapping ErrInvalidName, without
// asking the server, when stream cannot name a JetStream stream.
func (e *Engine) WipeStream(ctx context.Context, stream string) (err error) {
	defer e.observe(engine.OpWipeStream, time.Now(), &err)
	if err := e.check(ctx, "wipe stream"); err != nil {
		return err
	}
	if err := checkStreamKey(stream); err != nil {
		return fmt.Errorf("jetstream: wipe stream: %w", err)
	}
	op := "wipe stream " + stream
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	s, err := e.owned(rctx, e.cur(), stream, op)
	if err != nil {
		return err
	}
	if err := s.Purge(rctx); err != nil {
		return e.fail(ctx, op+" on "+e.where, err)
	}
	return nil
}

// WipeAll purges every herald stream of the account: those carrying the
// herald marker and the configured ones. Other streams are never touched.
func (e *Engine) WipeAll(ctx context.Context) (err error) {
	defer e.observe(engine.OpWipeAll, time.Now(), &err)
	if err := e.check(ctx, "wipe all"); err != nil {
		return err
	}
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	l := e.cur()
	var names []string
	list := l.js.ListStreams(rctx)
	for info := range list.Info() {
		if _, ok := info.Config.Metadata[MetadataBase]; ok || e.configured(info.Config.Name) {
			names = append(names, info.Config.Name)
		}
	}
	if err := list.Err(); err != nil {
		return e.fail(ctx, "wipe all: list streams on "+e.where, err)
	}
	var errs []error
	for _, name := range names {
		s, err := l.js.Stream(rctx, name)
		if err == nil {
			err = s.Purge(rctx)
		}
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			errs = append(errs, e.fail(ctx, "wipe all: purge stream "+name+" on "+e.where, err))
		}
	}
	return errors.Join(errs...)
}
