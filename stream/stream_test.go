package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/jetstream/jetstreamtest"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/stream"
	"github.com/herald-gateway/herald/topic"
)

// wait bounds every wait on a condition; it is a deadline, never a delay.
const wait = 10 * time.Second

// engines runs fn against both engines, each new and empty.
func engines(t *testing.T, fn func(t *testing.T, e engine.Engine)) {
	t.Run("memory", func(t *testing.T) {
		e := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 1000, MaxTopics: 1000})
		t.Cleanup(func() { _ = e.Close() })
		fn(t, e)
	})
	t.Run("jetstream", func(t *testing.T) {
		fn(t, jetstreamtest.Open(t, []jetstream.StreamSpec{{Base: "s", EventType: "s"}}, nil))
	})
}

// note builds a notification of stream "s" with key k.
func note(k string) *notification.Notification {
	tokens := []string{"s", k}
	return &notification.Notification{EventType: "s", Subject: topic.Encode(tokens), Tokens: tokens,
		Identifier: map[string]string{"k": k}, Payload: []byte(`{}`), ContentType: "application/json"}
}

// publish stores n notifications with keys k1, k2, ...
func publish(t *testing.T, e engine.Engine, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if _, _, err := e.Publish(context.Background(), note("k"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// all is a query matching every record of stream "s".
var all = engine.Query{Stream: "s", Filter: &notification.Filter{Pattern: topic.Pattern{topic.Literal("s"), topic.Any()}}}

// sink records what the runner hands it, one string per call.
type sink struct {
	mu     sync.Mutex
	calls  []string
	change chan struct{}
	// block, when set, is waited for in every Record call.
	block chan struct{}
	// failAt makes the n-th call (1-based) fail, as a gone client would,
	// or with failErr when set.
	failAt  int
	failErr error
	dues    []time.Time
	// flushes records Flush calls too.
	flushes bool
}

func newSink() *sink { return &sink{change: make(chan struct{}, 1)} }

func (s *sink) add(c string) error {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	n := len(s.calls)
	s.mu.Unlock()
	select {
	case s.change <- struct{}{}:
	default:
	}
	if s.failAt == n {
		if s.failErr != nil {
			return s.failErr
		}
		return errors.New("client gone")
	}
	return nil
}

func (s *sink) Open(o stream.Opening) error { return s.add(fmt.Sprintf("open@%d", o.Boundary)) }
func (s *sink) Record(rec *engine.Record, ph stream.Phase) error {
	if s.block != nil {
		<-s.block
	}
	name := "live"
	if ph == stream.History {
		name = "hist"
	}
	return s.add(fmt.Sprintf("%s:%d", name, rec.Seq))
}
func (s *sink) Flush() error {
	if s.flushes {
		return s.add("flush")
	}
	return nil
}
func (s *sink) Heartbeat() error   { return s.add("beat") }
func (s *sink) HistoryDone() error { return s.add("done") }
func (s *sink) Due(t time.Time) {
	s.mu.Lock()
	s.dues = append(s.dues, t)
	s.mu.Unlock()
}

// got returns the calls so far without heartbeats.
func (s *sink) got() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		if c != "beat" {
			out = append(out, c)
		}
	}
	return strings.Join(out, " ")
}

// waitFor waits until the calls (without heartbeats) are want.
func (s *sink) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(wait)
	for s.got() != want {
		select {
		case <-s.change:
		case <-deadline:
			t.Fatalf("sink calls %q, want %q", s.got(), want)
		}
	}
}

// start runs a stream in the background and returns its end's channel.
func start(ctx context.Context, e engine.Engine, spec stream.Spec, s *sink) <-chan stream.End {
	ch := make(chan stream.End, 1)
	go func() { ch <- stream.Run(ctx, e, &spec, s) }()
	return ch
}

func endOf(t *testing.T, ch <-chan stream.End) stream.End {
	t.Helper()
	select {
	case end := <-ch:
		return end
	case <-time.After(wait):
		t.Fatal("the stream did not end")
		return stream.End{}
	}
}

func seq(v uint64) *uint64 { return &v }

func checkEnd(t *testing.T, end stream.End, reason stream.Reason, resume uint64) {
	t.Helper()
	if end.Reason != reason || end.ResumeFrom != resume {
		t.Fatalf("end %v resume %d (%s, %v), want %v resume %d", end.Reason, end.ResumeFrom, end.Message, end.Err, reason, resume)
	}
}

func TestReplay(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		publish(t, e, 1, 5)
		for _, c := range []struct {
			name    string
			cursors stream.Cursors
			cap     int
			want    string
			reason  stream.Reason
			resume  uint64
		}{
			{"all", stream.Cursors{FromSeq: seq(0)}, 0, "open@5 hist:1 hist:2 hist:3 hist:4 hist:5 done", stream.EndOfStream, 0},
			{"from", stream.Cursors{FromSeq: seq(4)}, 0, "open@5 hist:4 hist:5 done", stream.EndOfStream, 0},
			{"to", stream.Cursors{FromSeq: seq(2), ToSeq: seq(3)}, 0, "open@5 hist:2 hist:3 done", stream.EndOfStream, 0},
			{"past the end", stream.Cursors{FromSeq: seq(9)}, 0, "open@5 done", stream.EndOfStream, 0},
			{"cap with more", stream.Cursors{FromSeq: seq(1)}, 3, "open@5 hist:1 hist:2 hist:3", stream.HistoryLimit, 4},
			{"cap exactly", stream.Cursors{FromSeq: seq(1)}, 5, "open@5 hist:1 hist:2 hist:3 hist:4 hist:5 done", stream.EndOfStream, 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				s := newSink()
				end := stream.Run(context.Background(), e, &stream.Spec{Query: all, Mode: stream.Replay, Cursors: c.cursors, HistoryCap: c.cap, PageSize: 2}, s)
				checkEnd(t, end, c.reason, c.resume)
				if s.got() != c.want {
					t.Fatalf("calls %q, want %q", s.got(), c.want)
				}
			})
		}
	})
}

// TestWatchHistoryThenLive checks the hand-over at the boundary and a
// shutdown stop with its resume point.
func TestWatchHistoryThenLive(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		publish(t, e, 1, 3)
		s := newSink()
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ch := start(ctx, e, stream.Spec{Query: all, Cursors: stream.Cursors{FromSeq: seq(2)}, PageSize: 1}, s)
		s.waitFor(t, "open@3 hist:2 hist:3 done")
		publish(t, e, 4, 5)
		s.waitFor(t, "open@3 hist:2 hist:3 done live:4 live:5")
		cancel(&stream.Stop{Reason: stream.Shutdown})
		end := endOf(t, ch)
		checkEnd(t, end, stream.Shutdown, 6)
		if !end.Delivered {
			t.Fatal("Delivered false")
		}
	})
}

func TestWatchEnds(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		t.Run("client gone", func(t *testing.T) {
			s := newSink()
			ctx, cancel := context.WithCancel(context.Background())
			ch := start(ctx, e, stream.Spec{Query: all}, s)
			s.waitFor(t, "open@0")
			cancel()
			checkEnd(t, endOf(t, ch), stream.ClientGone, 0)
		})
		t.Run("stop before start", func(t *testing.T) {
			s := newSink()
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(&stream.Stop{Reason: stream.Shutdown})
			checkEnd(t, stream.Run(ctx, e, &stream.Spec{Query: all}, s), stream.Shutdown, 1)
			if s.got() != "open@0" {
				t.Fatalf("calls %q", s.got())
			}
		})
		t.Run("max duration", func(t *testing.T) {
			s := newSink()
			end := stream.Run(context.Background(), e, &stream.Spec{Query: all, MaxDuration: 50 * time.Millisecond}, s)
			checkEnd(t, end, stream.MaxDuration, 1)
		})
		t.Run("stop with a message", func(t *testing.T) {
			s := newSink()
			ctx, cancel := context.WithCancelCause(context.Background())
			ch := start(ctx, e, stream.Spec{Query: all, MaxDuration: time.Hour}, s)
			s.waitFor(t, "open@0")
			cancel(&stream.Stop{Reason: stream.SchemaChanged, Message: "reloaded"})
			end := endOf(t, ch)
			checkEnd(t, end, stream.SchemaChanged, 1)
			if end.Message != "reloaded" {
				t.Fatalf("message %q", end.Message)
			}
		})
		t.Run("heartbeats", func(t *testing.T) {
			s := newSink()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start(ctx, e, stream.Spec{Query: all, Heartbeat: 10 * time.Millisecond}, s)
			deadline := time.After(wait)
			for {
				s.mu.Lock()
				beats := strings.Count(strings.Join(s.calls, " "), "beat")
				first := len(s.calls) > 1 && s.calls[0] == "open@0" && s.calls[1] == "beat"
				s.mu.Unlock()
				if beats >= 3 {
					if !first {
						t.Fatalf("the first heartbeat does not follow the opening: %v", s.calls)
					}
					return
				}
				select {
				case <-s.change:
				case <-deadline:
					t.Fatalf("heartbeats %d", beats)
				}
			}
		})
		t.Run("sink overflow", func(t *testing.T) {
			s := newSink()
			s.failAt, s.failErr = 3, &stream.OverflowError{ResumeFrom: 2, Message: "queue full"}
			last, _ := e.LastSeq(context.Background(), "s")
			ch := start(context.Background(), e, stream.Spec{Query: all}, s)
			s.waitFor(t, fmt.Sprintf("open@%d", last))
			publish(t, e, 1, 2)
			end := endOf(t, ch)
			checkEnd(t, end, stream.Overflow, 2)
			if end.Message != "queue full" {
				t.Fatalf("message %q", end.Message)
			}
		})
		t.Run("sink error", func(t *testing.T) {
			s := newSink()
			s.failAt = 2
			last, _ := e.LastSeq(context.Background(), "s")
			ch := start(context.Background(), e, stream.Spec{Query: all}, s)
			s.waitFor(t, fmt.Sprintf("open@%d", last))
			publish(t, e, 1, 1)
			checkEnd(t, endOf(t, ch), stream.ClientGone, 0)
		})
	})
}

// TestOverflowAndLag checks the two ends of a client that does not keep
// up, and that each resume point loses nothing.
func TestOverflowAndLag(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		t.Run("overflow", func(t *testing.T) {
			s := newSink()
			s.block = make(chan struct{})
			ch := start(context.Background(), e, stream.Spec{Query: all, QueueSize: 2}, s)
			s.waitFor(t, "open@0")
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
		t.Run("lagging", func(t *testing.T) {
			last, _ := e.LastSeq(context.Background(), "s")
			s := newSink()
			s.block = make(chan struct{})
			ch := start(context.Background(), e, stream.Spec{Query: all, MaxLag: 50 * time.Millisecond}, s)
			s.waitFor(t, fmt.Sprintf("open@%d", last))
			publish(t, e, 1, 3)
			// The first record is handed over at once; the others wait
			// while the client is stuck, longer than the lag limit.
			time.Sleep(100 * time.Millisecond) // the lag being measured, not a wait for a condition
			close(s.block)
			end := endOf(t, ch)
			checkEnd(t, end, stream.Lagging, last+2)
			if s.got() != fmt.Sprintf("open@%d live:%d", last, last+1) {
				t.Fatalf("calls %q", s.got())
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.dues) != 1 {
				t.Fatalf("%d due times, want 1", len(s.dues))
			}
		})
	})
}

// oddKeys selects records whose key number is odd.
type oddKeys struct{}

func (oddKeys) Match(rec *engine.Record) bool {
	n, _ := strconv.Atoi(strings.TrimPrefix(rec.Identifier["k"], "k"))
	return n%2 == 1
}

// everyOther keeps every second selected record.
type everyOther struct{ n int }

func (s *everyOther) Keep() bool { s.n++; return s.n%2 == 1 }

func TestWhereAndSample(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		publish(t, e, 1, 6)
		s := newSink()
		end := stream.Run(context.Background(), e, &stream.Spec{Query: all, Mode: stream.Replay, Cursors: stream.Cursors{FromSeq: seq(1)}, Where: oddKeys{}, HistoryCap: 2}, s)
		// The cap counts selected records: 5 is the third.
		checkEnd(t, end, stream.HistoryLimit, 5)
		if s.got() != "open@6 hist:1 hist:3" {
			t.Fatalf("calls %q", s.got())
		}
		s = newSink()
		end = stream.Run(context.Background(), e, &stream.Spec{Query: all, Mode: stream.Replay, Cursors: stream.Cursors{FromSeq: seq(1)}, Where: oddKeys{}, Sample: &everyOther{}}, s)
		checkEnd(t, end, stream.EndOfStream, 0)
		if s.got() != "open@6 hist:1 hist:5 done" {
			t.Fatalf("calls %q", s.got())
		}
	})
}

// TestLiveFlushAfterUnselected: a burst whose last records the predicate
// leaves out is still flushed once the feed is empty (it once waited for
// the next selected record).
func TestLiveFlushAfterUnselected(t *testing.T) {
	engines(t, func(t *testing.T, e engine.Engine) {
		s := newSink()
		s.flushes = true
		s.block = make(chan struct{})
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ch := start(ctx, e, stream.Spec{Query: all, Where: oddKeys{}}, s)
		s.waitFor(t, "open@0")
		// k1 is selected and its Record waits until k2 (left out) is in
		// the feed too.
		publish(t, e, 1, 2)
		close(s.block)
		s.waitFor(t, "open@0 live:1 flush")
		cancel(&stream.Stop{Reason: stream.Shutdown})
		// Resumption starts after the last delivered record.
		checkEnd(t, endOf(t, ch), stream.Shutdown, 2)
	})
}

func TestSet(t *testing.T) {
	var set stream.Set
	a, leaveA := set.Join(context.Background(), "mars")
	b, leaveB := set.Join(context.Background(), "diss")
	defer leaveB()
	if n := set.End("mars", &stream.Stop{Reason: stream.SchemaRemoved}); n != 1 || set.Len() != 1 {
		t.Fatalf("ended %d, left %d", n, set.Len())
	}
	var stop *stream.Stop
	if !errors.As(context.Cause(a), &stop) || stop.Reason != stream.SchemaRemoved || b.Err() != nil {
		t.Fatalf("a %v b %v", context.Cause(a), b.Err())
	}
	leaveA()
	set.EndAll(&stream.Stop{Reason: stream.Shutdown})
	late, _ := set.Join(context.Background(), "mars")
	if !errors.As(context.Cause(b), &stop) || stop.Reason != stream.Shutdown || !errors.As(context.Cause(late), &stop) || stop.Reason != stream.Shutdown {
		t.Fatalf("b %v late %v", context.Cause(b), context.Cause(late))
	}
}

// TestSetJoinCancel: the cancel function JoinCancel returns ends the
// member's context with its owner's cause, which a later End of the set
// does not replace, and the set's Stop is the cause when the set ends it
// first; the member stays in the set until it leaves.
func TestSetJoinCancel(t *testing.T) {
	var set stream.Set
	unsubscribed := errors.New("unsubscribed")
	a, cancelA, leaveA := set.JoinCancel(context.Background(), "mars")
	b, cancelB, leaveB := set.JoinCancel(context.Background(), "mars")
	cancelA(unsubscribed)
	if context.Cause(a) != unsubscribed || b.Err() != nil || set.Len() != 2 {
		t.Fatalf("a %v, b %v, %d in the set", context.Cause(a), b.Err(), set.Len())
	}
	if n := set.End("mars", &stream.Stop{Reason: stream.SchemaChanged}); n != 2 || set.Len() != 0 {
		t.Fatalf("ended %d, left %d", n, set.Len())
	}
	cancelB(unsubscribed)
	var stop *stream.Stop
	if context.Cause(a) != unsubscribed || !errors.As(context.Cause(b), &stop) || stop.Reason != stream.SchemaChanged {
		t.Fatalf("a %v, b %v", context.Cause(a), context.Cause(b))
	}
	leaveA()
	leaveB()
	set.EndAll(&stream.Stop{Reason: stream.Shutdown})
	late, cancelLate, _ := set.JoinCancel(context.Background(), "mars")
	cancelLate(unsubscribed)
	if !errors.As(context.Cause(late), &stop) || stop.Reason != stream.Shutdown {
		t.Fatalf("late %v", context.Cause(late))
	}
}
