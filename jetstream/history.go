package jetstream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
)

// historyChunk bounds one pull request of a history reader; larger pages
// take several requests. Up to two are outstanding (the page being read
// and the next), which bounds the messages buffered for a reader.
const historyChunk = 1024

// maxStoredTime is the latest time NATS can represent (int64 nanoseconds
// since the Unix epoch, in 2262).
var maxStoredTime = time.Unix(0, math.MaxInt64)

// minStoredTime is the earliest time NATS can represent (in 1677).
var minStoredTime = time.Unix(0, math.MinInt64)

// maxPageRecoveries bounds the consumer re-creations within one page.
const maxPageRecoveries = 2

// History opens a reader over the stored records of q.Stream within r
// that match q. It reads through an ordered consumer (ephemeral, no acks,
// in memory) with the narrowest subject filter the query's pattern
// allows, started at r.FromSeq or at r.FromTime; records above r.ToSeq or
// after r.ToTime end the read. Each Next asks the server for at most the
// page size and returns the records that also pass the constraints and
// spatial filter. A stream that does not exist reads as empty.
func (e *Engine) History(ctx context.Context, q engine.Query, r engine.Range) (engine.HistoryReader, error) {
	if err := e.check(ctx, "history"); err != nil {
		return nil, err
	}
	if err := checkBase(q.Stream); err != nil {
		return nil, fmt.Errorf("jetstream: history: %w", err)
	}
	h := &history{e: e, q: q, r: r}
	switch {
	case r.ToSeq == 0,
		// NATS keeps times as int64 nanoseconds: a start time past their
		// range (year 2262) would wrap around and replay everything, yet
		// nothing can be stored that late.
		r.FromTime.After(maxStoredTime),
		r.FromTime.IsZero() && r.FromSeq > r.ToSeq,
		!r.FromTime.IsZero() && !r.ToTime.IsZero() && r.FromTime.After(r.ToTime):
		h.done = true
		return h, nil
	}
	filter, ok := historyFilter(q)
	if !ok {
		h.done = true
		return h, nil
	}
	at := r.FromTime
	if at.Before(minStoredTime) {
		// Before 1678 wraps the other way: every stored record is later,
		// so read from the first sequence.
		at = time.Time{}
	}
	h.from = start{seq: max(r.FromSeq, 1), at: at}
	h.rd = newReader(e, StreamName(q.Stream), filter, "replay", 2*historyChunk)
	if err := h.open(ctx, h.from); err != nil {
		h.Close()
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return &history{e: e, done: true}, nil
		}
		return nil, e.fail(ctx, fmt.Sprintf("history of stream %s (filter %q) on %s", StreamName(q.Stream), filter, e.where), err)
	}
	return h, nil
}

// historyFilter returns the subject filter of a query ("" for the whole
// stream) and false when the query cannot match anything in its stream.
func historyFilter(q engine.Query) (string, bool) {
	if q.Filter == nil || len(q.Filter.Pattern) == 0 {
		return "", true
	}
	p := q.Filter.Pattern
	if p[0].Wildcard {
		return "", true
	}
	if p[0].Value != q.Stream {
		return "", false
	}
	return wireFilter(p), true
}

// history is the JetStream HistoryReader.
type history struct {
	e    *Engine
	q    engine.Query
	r    engine.Range
	rd   *reader
	from start  // where the read began
	last uint64 // last stream sequence read
	done bool
}

// open (re)creates the consumer at from; a consumer with nothing to
// deliver ends the read.
func (h *history) open(ctx context.Context, from start) error {
	info, err := h.rd.create(ctx, from)
	if err != nil {
		return err
	}
	if info.NumPending == 0 {
		h.finish()
	}
	return nil
}

// finish ends the read and releases the consumer.
func (h *history) finish() {
	h.done = true
	if h.rd != nil {
		h.rd.close()
		h.rd = nil
	}
}

// Next implements engine.HistoryReader: it reads at most limit stored
// records and returns those that match.
func (h *history) Next(ctx context.Context, limit int) (_ []*engine.Record, _ bool, err error) {
	if h.e != nil {
		defer h.e.observe(engine.OpGetBatch, time.Now(), &err)
		if err := h.e.check(ctx, "history"); err != nil {
			return nil, false, err
		}
	}
	if h.done {
		return nil, true, nil
	}
	if limit <= 0 {
		return nil, false, fmt.Errorf("jetstream: history: page size %d, want > 0", limit)
	}
	var out []*engine.Record
	for read := 0; read < limit && !h.done; {
		n, err := h.page(ctx, min(limit-read, historyChunk), &out)
		if err != nil {
			return nil, false, h.e.fail(ctx, "history of stream "+StreamName(h.q.Stream)+" on "+h.e.where, err)
		}
		read += n
	}
	return out, h.done, nil
}

// page reads want messages (fewer when the read ends), appending the
// matching records to out, and asks for the next page before it returns;
// it returns how many stored records it read.
func (h *history) page(ctx context.Context, want int, out *[]*engine.Record) (int, error) {
	got, recoveries := 0, 0
	retry := func(cause error) error {
		recoveries++
		if recoveries > maxPageRecoveries {
			return cause
		}
		from := h.from
		if h.last > 0 {
			from = start{seq: h.last + 1}
		}
		if err := h.open(ctx, from); err != nil {
			return fmt.Errorf("%w (recreating the consumer after: %w)", err, cause)
		}
		if h.done {
			return nil
		}
		return h.rd.pull(pullRequest{Batch: want - got, NoWait: true})
	}
	// A page prefetched by the previous call may already be on its way.
	if need := want - h.rd.pending; need > 0 {
		if err := h.rd.pull(pullRequest{Batch: need, NoWait: true}); err != nil {
			if err := retry(err); err != nil {
				return got, err
			}
		}
	}
	timer := time.NewTimer(h.e.opts.RequestTimeout)
	defer timer.Stop()
	for got < want && !h.done {
		// A message already waiting is taken without the select of
		// every case (a page is at most historyChunk messages, so the
		// contexts are still checked each page).
		var m *nats.Msg
		select {
		case m = <-h.rd.msgs:
		default:
			select {
			case <-ctx.Done():
				return got, ctx.Err()
			case <-h.e.ctx.Done():
				return got, engine.ErrClosed
			case <-timer.C:
				if err := retry(fmt.Errorf("no answer within %s: %w", h.e.opts.RequestTimeout, context.DeadlineExceeded)); err != nil {
					return got, err
				}
				timer.Reset(h.e.opts.RequestTimeout)
				continue
			case m = <-h.rd.msgs:
			}
		}
		switch kind, left := classify(m); kind {
		case kindMsg:
			md, err := metadata(m)
			if err != nil {
				return got, fmt.Errorf("message without JetStream metadata: %w", err)
			}
			if !h.rd.accept(md) {
				if err := retry(fmt.Errorf("consumer sequence %d after %d", md.consumer, h.rd.cseq)); err != nil {
					return got, err
				}
				continue
			}
			if md.stream > h.r.ToSeq || (!h.r.ToTime.IsZero() && md.at.After(h.r.ToTime)) {
				h.finish()
				break
			}
			got++
			h.last = md.stream
			h.take(m.Subject, m.Header, m.Data, md, out)
			if md.pending == 0 || md.stream == h.r.ToSeq {
				h.finish()
			} else {
				h.prefetch(want)
			}
		case kindHeartbeat:
		case kindNoMessages:
			h.finish()
		case kindExpired:
			// A request the server will not fill (408): ask again
			// for what is still missing.
			h.rd.pending = max(h.rd.pending-left, 0)
			if need := want - got - h.rd.pending; need > 0 {
				if err := h.rd.pull(pullRequest{Batch: need, NoWait: true}); err != nil {
					if err := retry(err); err != nil {
						return got, err
					}
				}
			}
		default:
			if err := retry(statusError(m)); err != nil {
				return got, err
			}
		}
	}
	if !h.done {
		h.prefetch(want)
	}
	return got, nil
}

// prefetch asks for the next page of want messages once fewer than want
// are owed, so that the server sends it while this one is read and
// handled: the server's consumer never waits for the reader's next
// request. A failure is retried by the next page.
func (h *history) prefetch(want int) {
	if h.rd.pending < want {
		_ = h.rd.pull(pullRequest{Batch: want, NoWait: true})
	}
}

// take rebuilds the record of a message and appends it to out if it
// matches the query; an undecodable message is logged and skipped.
func (h *history) take(subject string, hdr nats.Header, data []byte, md meta, out *[]*engine.Record) {
	rec, err := record(subject, hdr, data, md.stream, md.at, h.e.eventTypeOf(h.q.Stream))
	if err != nil {
		h.e.log.Warn("history: undecodable notification skipped", "stream", StreamName(h.q.Stream),
			"sequence", md.stream, "subject", subject, "error", err)
		return
	}
	if h.q.Match(rec) {
		*out = append(*out, rec)
	}
}

// Close implements engine.HistoryReader: it deletes the consumer.
func (h *history) Close() { h.finish() }
