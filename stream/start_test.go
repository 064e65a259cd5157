package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/stream"
)

// startIdle runs a stream with stream.Start and returns its end's
// channel; a second call of done fails the test.
func startIdle(t *testing.T, ctx context.Context, e engine.Engine, spec stream.Spec, s *sink) <-chan stream.End {
	ch := make(chan stream.End, 2)
	stream.Start(ctx, e, &spec, s, func(end stream.End) {
		ch <- end
		if len(ch) > 1 {
			t.Error("done called twice")
		}
	})
	return ch
}

// runners counts the goroutines running a stream's code.
func runners() int { return testkit.Goroutines("stream.(*runner)") }

// TestStartIdle: a stream run by Start delivers its live records in
// order, in bursts as Run does, with no goroutine left while it has
// nothing to deliver; its context's end, with a Stop or without, ends it
// and calls done once.
func TestStartIdle(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		s := newSink()
		s.flushes = true
		ch := startIdle(t, ctx, e, stream.Spec{Query: all, QueueSize: 100}, s)
		s.waitFor(t, "open@0")
		testkit.WaitFor(t, wait, "no goroutine for the idle stream", func() bool { return runners() == 0 })
		publish(t, e, 1, 1)
		s.waitFor(t, "open@0 live:1 flush")
		testkit.WaitFor(t, wait, "no goroutine for the idle stream", func() bool { return runners() == 0 })
		publish(t, e, 2, 3)
		testkit.WaitFor(t, wait, "records 2 and 3", func() bool {
			return strings.HasPrefix(s.got(), "open@0 live:1 flush live:2") && strings.Contains(s.got(), "live:3")
		})
		testkit.WaitFor(t, wait, "no goroutine for the idle stream", func() bool { return runners() == 0 })
		cancel(&stream.Stop{Reason: stream.Shutdown})
		checkEnd(t, endOf(t, ch), stream.Shutdown, 4)

		ctx, cancel = context.WithCancelCause(context.Background())
		s = newSink()
		ch = startIdle(t, ctx, e, stream.Spec{Query: all}, s)
		s.waitFor(t, "open@3")
		cancel(nil)
		checkEnd(t, endOf(t, ch), stream.ClientGone, 0)
		testkit.WaitFor(t, wait, "no goroutine once the streams ended", func() bool { return runners() == 0 })
	})
}

// TestStartEnds: a stream run by Start ends for its maximum duration, for
// an engine that ends its subscription (a client too slow: overflow,
// after every record the queue held) and for a sink that fails, as Run
// does.
func TestStartEnds(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		t.Run("max duration", func(t *testing.T) {
			last, _ := e.LastSeq(context.Background(), "s")
			s := newSink()
			ch := startIdle(t, context.Background(), e, stream.Spec{Query: all, MaxDuration: 50 * time.Millisecond}, s)
			checkEnd(t, endOf(t, ch), stream.MaxDuration, last+1)
			if s.got() != fmt.Sprintf("open@%d", last) {
				t.Fatalf("calls %q", s.got())
			}
		})
		t.Run("overflow", func(t *testing.T) {
			last, _ := e.LastSeq(context.Background(), "s")
			s := newSink()
			s.block = make(chan struct{})
			ch := startIdle(t, context.Background(), e, stream.Spec{Query: all, QueueSize: 2}, s)
			s.waitFor(t, fmt.Sprintf("open@%d", last))
			publish(t, e, 1, 8)
			close(s.block)
			end := endOf(t, ch)
			if end.Reason != stream.Overflow || !errors.Is(end.Err, engine.ErrOverflow) {
				t.Fatalf("end %v %v", end.Reason, end.Err)
			}
			got := strings.Fields(s.got())
			if want := fmt.Sprintf("live:%d", end.ResumeFrom-1); got[len(got)-1] != want {
				t.Fatalf("resume %d after %v", end.ResumeFrom, got)
			}
		})
		t.Run("sink fails", func(t *testing.T) {
			last, _ := e.LastSeq(context.Background(), "s")
			s := newSink()
			s.failAt = 3
			ch := startIdle(t, context.Background(), e, stream.Spec{Query: all}, s)
			s.waitFor(t, fmt.Sprintf("open@%d", last))
			publish(t, e, 1, 1)
			s.waitFor(t, fmt.Sprintf("open@%d live:%d", last, last+1))
			publish(t, e, 2, 2)
			checkEnd(t, endOf(t, ch), stream.ClientGone, 0)
		})
		testkit.WaitFor(t, wait, "no goroutine once the streams ended", func() bool { return runners() == 0 })
	})
}
