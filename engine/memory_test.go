package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/engine/enginetest"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// waitFor bounds the waits of these tests; it is a deadline, not a delay.
const waitFor = 10 * time.Second

func TestMemoryConformance(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		return engine.NewMemory(engine.MemoryOptions{
			MaxHistoryPerTopic: enginetest.MinHistoryPerSubject,
			MaxTopics:          enginetest.MinSubjects,
		})
	})
}

// note builds a notification of stream base with one identifier token.
func note(base, value string) *notification.Notification {
	tokens := []string{base, "od", value}
	return &notification.Notification{
		EventType:   base,
		Subject:     topic.Encode(tokens),
		Tokens:      tokens,
		Identifier:  map[string]string{"class": "od", "step": value},
		Payload:     []byte(`{}`),
		ContentType: "application/json",
	}
}

// all matches every record of base.
func all(base string) engine.Query {
	return engine.Query{Stream: base, Filter: &notification.Filter{
		Pattern: topic.Pattern{topic.Literal(base), topic.Any(), topic.Any()},
	}}
}

var everything = engine.Range{ToSeq: math.MaxUint64}

func mustPublish(t testing.TB, e engine.Engine, n *notification.Notification) uint64 {
	t.Helper()
	seq, _, err := e.Publish(context.Background(), n)
	if err != nil {
		t.Fatalf("Publish(%s): %v", n.Subject, err)
	}
	return seq
}

func readAll(t testing.TB, e engine.Engine, q engine.Query, r engine.Range, page int) []uint64 {
	t.Helper()
	h, err := e.History(context.Background(), q, r)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	defer h.Close()
	out := []uint64{}
	for {
		recs, done, err := h.Next(context.Background(), page)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		for _, r := range recs {
			out = append(out, r.Seq)
		}
		if done {
			return out
		}
	}
}

func TestMemoryDefaults(t *testing.T) {
	m := engine.NewMemory(engine.MemoryOptions{})
	defer m.Close()
	mustPublish(t, m, note("mars", "1"))
	mustPublish(t, m, note("mars", "1"))
	mustPublish(t, m, note("mars", "2"))
	if got, want := readAll(t, m, all("mars"), everything, 10), []uint64{2, 3}; !slices.Equal(got, want) {
		t.Errorf("history %v, want %v (one record per subject by default)", got, want)
	}
	if got := m.Topics(); got != 2 {
		t.Errorf("Topics = %d, want 2", got)
	}
}

// op is one step of a memory scenario: publish a record of stream with
// identifier value subj, delete (stream, seq), or wipe stream.
type op struct {
	kind   string // "pub", "del", "wipe"
	stream string
	subj   string
	seq    uint64
}

func pub(stream, subj string) op       { return op{kind: "pub", stream: stream, subj: subj} }
func del(stream string, seq uint64) op { return op{kind: "del", stream: stream, seq: seq} }
func wipe(stream string) op            { return op{kind: "wipe", stream: stream} }

func TestMemoryLimits(t *testing.T) {
	cases := []struct {
		name       string
		opts       engine.MemoryOptions
		ops        []op
		want       map[string][]uint64
		wantTopics int
	}{
		{
			name: "fifo of 1",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 1},
			ops:  []op{pub("mars", "a"), pub("mars", "b"), pub("mars", "a")},
			want: map[string][]uint64{"mars": {2, 3}}, wantTopics: 2,
		},
		{
			name: "fifo of 3",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 3},
			ops: []op{pub("mars", "a"), pub("mars", "a"), pub("mars", "b"), pub("mars", "a"),
				pub("mars", "a"), pub("mars", "b"), pub("mars", "a")},
			want: map[string][]uint64{"mars": {3, 4, 5, 6, 7}}, wantTopics: 2,
		},
		{
			name: "fifo of 40 (shifted by reslicing)",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 40},
			ops:  repeat(pub("mars", "a"), 45),
			want: map[string][]uint64{"mars": seqs(6, 45)}, wantTopics: 1,
		},
		{
			name: "evicts the subject whose newest record is oldest",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 3},
			ops: []op{pub("mars", "a"), pub("mars", "b"), pub("mars", "c"), pub("mars", "a"),
				pub("mars", "d"), pub("mars", "e")},
			// d evicts b (newest 2); e evicts c (newest 3), not a (newest 4).
			want: map[string][]uint64{"mars": {1, 4, 5, 6}}, wantTopics: 3,
		},
		{
			name: "evicts across streams",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 2},
			ops:  []op{pub("mars", "a"), pub("diss", "x"), pub("mars", "a"), pub("mars", "b")},
			want: map[string][]uint64{"mars": {1, 2, 3}, "diss": {}}, wantTopics: 2,
		},
		{
			name: "evicted subjects come back",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 2},
			ops: []op{pub("diss", "x"), pub("mars", "a"), pub("mars", "b"), pub("diss", "x"),
				pub("mars", "a")},
			// b evicts diss x; diss x comes back evicting a; a comes back
			// evicting b.
			want: map[string][]uint64{"mars": {3}, "diss": {2}}, wantTopics: 2,
		},
		{
			name: "deleting the newest record makes a subject older",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 3},
			ops: []op{pub("mars", "a"), pub("mars", "b"), pub("mars", "a"), pub("mars", "c"),
				del("mars", 3), pub("mars", "d")},
			want: map[string][]uint64{"mars": {2, 4, 5}}, wantTopics: 3,
		},
		{
			name: "deleting a subject's last record frees its place",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 2},
			ops:  []op{pub("mars", "a"), pub("mars", "b"), del("mars", 1), pub("mars", "c")},
			want: map[string][]uint64{"mars": {2, 3}}, wantTopics: 2,
		},
		{
			name: "wiping a stream frees its places",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 2},
			ops: []op{pub("diss", "x"), pub("mars", "a"), wipe("MARS"), pub("mars", "b"),
				pub("mars", "c")},
			// c evicts diss x: the wipe freed mars a's place.
			want: map[string][]uint64{"mars": {2, 3}, "diss": {}}, wantTopics: 2,
		},
		{
			name: "many evictions compact the index",
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 1, MaxTopics: 5},
			ops:  cycle("mars", 500, 7),
			want: map[string][]uint64{"mars": seqs(496, 500)}, wantTopics: 5,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := engine.NewMemory(c.opts)
			defer m.Close()
			ctx := context.Background()
			for i, o := range c.ops {
				var err error
				switch o.kind {
				case "pub":
					_, _, err = m.Publish(ctx, note(o.stream, o.subj))
				case "del":
					err = m.Delete(ctx, o.stream, o.seq)
				case "wipe":
					err = m.WipeStream(ctx, o.stream)
				}
				if err != nil {
					t.Fatalf("op %d %+v: %v", i, o, err)
				}
			}
			for stream, want := range c.want {
				if got := readAll(t, m, all(stream), everything, 3); !slices.Equal(got, want) {
					t.Errorf("%s history %v, want %v", stream, got, want)
				}
			}
			if got := m.Topics(); got != c.wantTopics {
				t.Errorf("Topics = %d, want %d", got, c.wantTopics)
			}
		})
	}
}

func repeat(o op, n int) []op {
	out := make([]op, n)
	for i := range out {
		out[i] = o
	}
	return out
}

// cycle publishes n records on subjects 0..k-1 in turn.
func cycle(stream string, n, k int) []op {
	out := make([]op, n)
	for i := range out {
		out[i] = pub(stream, fmt.Sprint(i%k))
	}
	return out
}

func seqs(from, to uint64) []uint64 {
	out := []uint64{}
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func TestMemoryCaseInsensitiveDeleteAndWipe(t *testing.T) {
	ctx := context.Background()
	m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 10})
	defer m.Close()
	mustPublish(t, m, note("mars", "1"))
	mustPublish(t, m, note("mars", "2"))
	mustPublish(t, m, note("Mars", "1"))

	steps := []struct {
		name    string
		call    func() error
		wantErr error
		want    map[string][]uint64
	}{
		{"delete upper case", func() error { return m.Delete(ctx, "MARS", 1) }, nil,
			// Neither name is exact: "Mars" sorts before "mars".
			map[string][]uint64{"mars": {1, 2}, "Mars": {}}},
		{"delete again falls through to the other stream", func() error { return m.Delete(ctx, "MARS", 1) }, nil,
			map[string][]uint64{"mars": {2}, "Mars": {}}},
		{"nothing left", func() error { return m.Delete(ctx, "mArS", 1) }, engine.ErrNotFound,
			map[string][]uint64{"mars": {2}, "Mars": {}}},
		{"exact name first", func() error { mustPublish(t, m, note("Mars", "3")); return m.Delete(ctx, "mars", 2) }, nil,
			map[string][]uint64{"mars": {}, "Mars": {2}}},
		{"wipe unknown", func() error { return m.WipeStream(ctx, "nothing") }, engine.ErrNotFound,
			map[string][]uint64{"mars": {}, "Mars": {2}}},
	}
	for _, s := range steps {
		if err := s.call(); !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
			t.Fatalf("%s: error %v, want %v", s.name, err, s.wantErr)
		}
		for stream, want := range s.want {
			if got := readAll(t, m, all(stream), everything, 10); !slices.Equal(got, want) {
				t.Errorf("%s: %s history %v, want %v", s.name, stream, got, want)
			}
		}
	}
	mustPublish(t, m, note("mars", "9"))
	mustPublish(t, m, note("Mars", "9"))
	if err := m.WipeStream(ctx, "MARS"); err != nil {
		t.Fatalf("WipeStream: %v", err)
	}
	for _, stream := range []string{"mars", "Mars"} {
		if got := readAll(t, m, all(stream), everything, 10); len(got) != 0 {
			t.Errorf("%s after wipe: %v", stream, got)
		}
	}
	// Wiped streams hold nothing: wiping them again finds nothing, as
	// aviso-server 0.13 answers (404 on the endpoint).
	if err := m.WipeStream(ctx, "mars"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("WipeStream of a wiped stream: %v, want ErrNotFound", err)
	}
	// LastSeq reads the exact stream.
	for stream, want := range map[string]uint64{"mars": 3, "Mars": 3, "MARS": 0} {
		if got, err := m.LastSeq(ctx, stream); err != nil || got != want {
			t.Errorf("LastSeq(%s) = %d, %v; want %d", stream, got, err, want)
		}
	}
}

func TestMemoryInvalidCalls(t *testing.T) {
	ctx := context.Background()
	m := engine.NewMemory(engine.MemoryOptions{})
	defer m.Close()
	for name, n := range map[string]*notification.Notification{
		"nil":       nil,
		"no tokens": {Subject: "x"},
		"no base":   {Tokens: []string{""}},
	} {
		if _, _, err := m.Publish(ctx, n); err == nil {
			t.Errorf("Publish(%s) succeeded", name)
		}
	}
	h, err := m.History(ctx, all("mars"), everything)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Next(ctx, 0); err == nil {
		t.Error("Next(0) succeeded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := m.Publish(cancelled, note("mars", "1")); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish with a cancelled context = %v", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestMemoryReaderUnderRemoval: a reader keeps its position by sequence,
// so deletions, compactions, evictions and wipes between pages never make
// it repeat, skip live records or panic, and it never passes ToSeq.
func TestMemoryReaderUnderRemoval(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		opts   engine.MemoryOptions
		n      int
		toSeq  uint64
		change func(m *engine.Memory)
		want   []uint64 // after the first page of 10 (1..10)
	}{
		{
			name: "deletions and compaction", n: 300, toSeq: 300,
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 1000, MaxTopics: 1000},
			change: func(m *engine.Memory) {
				for s := uint64(5); s <= 250; s++ {
					if err := m.Delete(ctx, "mars", s); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: seqs(251, 300),
		},
		{
			name: "evictions", n: 100, toSeq: 100,
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 1, MaxTopics: 100},
			change: func(m *engine.Memory) {
				for i := range 80 {
					mustPublish(t, m, note("diss", fmt.Sprint(i)))
				}
			},
			want: seqs(81, 100),
		},
		{
			name: "wipe", n: 50, toSeq: 50,
			opts:   engine.MemoryOptions{MaxHistoryPerTopic: 1000},
			change: func(m *engine.Memory) { _ = m.WipeStream(ctx, "mars") },
			want:   []uint64{},
		},
		{
			name: "publishes beyond ToSeq", n: 30, toSeq: 20,
			opts: engine.MemoryOptions{MaxHistoryPerTopic: 1000},
			change: func(m *engine.Memory) {
				for i := range 100 {
					mustPublish(t, m, note("mars", fmt.Sprint(1000+i)))
				}
			},
			want: seqs(11, 20),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := engine.NewMemory(c.opts)
			defer m.Close()
			for i := range c.n {
				mustPublish(t, m, note("mars", fmt.Sprint(i)))
			}
			h, err := m.History(ctx, all("mars"), engine.Range{ToSeq: c.toSeq})
			if err != nil {
				t.Fatal(err)
			}
			first, _, err := h.Next(ctx, 10)
			if err != nil || len(first) != 10 || first[0].Seq != 1 || first[9].Seq != 10 {
				t.Fatalf("first page: %d records, %v", len(first), err)
			}
			c.change(m)
			got := []uint64{}
			for {
				recs, done, err := h.Next(ctx, 7)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					got = append(got, r.Seq)
				}
				if done {
					break
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("rest %v, want %v", got, c.want)
			}
		})
	}
}

// TestMemoryConcurrentChurn runs publishers, deleters, wipers and readers
// together (for the race detector): every page is in ascending order and
// within its range.
func TestMemoryConcurrentChurn(t *testing.T) {
	ctx := context.Background()
	m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 3, MaxTopics: 50})
	defer m.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := []string{"mars", "diss"}[w%2]
			for i := range 500 {
				seq, _, err := m.Publish(ctx, note(stream, fmt.Sprint(i%97)))
				if err != nil {
					errs <- err
					return
				}
				if i%5 == 0 {
					_ = m.Delete(ctx, stream, seq-1)
				}
				if i%200 == 199 {
					_ = m.WipeStream(ctx, stream)
				}
			}
		}()
	}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := []string{"mars", "diss"}[w%2]
			for range 50 {
				to, err := m.LastSeq(ctx, stream)
				if err != nil {
					errs <- err
					return
				}
				h, err := m.History(ctx, all(stream), engine.Range{FromSeq: to / 2, ToSeq: to})
				if err != nil {
					errs <- err
					return
				}
				var last uint64
				for done := false; !done; {
					var recs []*engine.Record
					recs, done, err = h.Next(ctx, 5)
					if err != nil {
						errs <- err
						return
					}
					for _, r := range recs {
						if r.Seq <= last || r.Seq > to || r.Seq < to/2 {
							errs <- fmt.Errorf("record %d after %d, range %d..%d", r.Seq, last, to/2, to)
							return
						}
						last = r.Seq
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := m.Topics(); got > 50 {
		t.Errorf("Topics = %d, want at most 50", got)
	}
}

// blockedPublish starts publishing the records of values to mars in a
// goroutine and returns a channel of the sequences Publish returned.
func blockedPublish(ctx context.Context, t *testing.T, m *engine.Memory, values ...string) <-chan uint64 {
	out := make(chan uint64, len(values))
	go func() {
		defer close(out)
		for _, v := range values {
			seq, _, err := m.Publish(ctx, note("mars", v))
			if err != nil {
				t.Errorf("Publish: %v", err)
				return
			}
			out <- seq
		}
	}()
	return out
}

func recvSeq(t *testing.T, what string, c <-chan *engine.Record) uint64 {
	t.Helper()
	select {
	case r := <-c:
		return r.Seq
	case <-time.After(waitFor):
		t.Fatalf("%s: nothing before the deadline", what)
		return 0
	}
}

func recvReturned(t *testing.T, c <-chan uint64) uint64 {
	t.Helper()
	select {
	case s, ok := <-c:
		if !ok {
			t.Fatal("publisher stopped")
		}
		return s
	case <-time.After(waitFor):
		t.Fatal("Publish did not return before the deadline")
		return 0
	}
}

func notReturned(t *testing.T, c <-chan uint64) {
	t.Helper()
	select {
	case s := <-c:
		t.Fatalf("Publish of %d returned while its subscriber is full", s)
	default:
	}
}

// TestMemoryBlockOnOverflow: a BlockOnOverflow subscriber holds back the
// stream's publishes until it reads, loses nothing, and does not block
// history reads, other streams or other subscribers meanwhile.
func TestMemoryBlockOnOverflow(t *testing.T) {
	ctx := context.Background()
	m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 100})
	defer m.Close()
	slow, _ := m.Subscribe(ctx, all("mars"), engine.SubscribeOptions{QueueSize: 2, Overflow: engine.BlockOnOverflow})
	observer, _ := m.Subscribe(ctx, all("mars"), engine.SubscribeOptions{QueueSize: 100})
	returned := blockedPublish(ctx, t, m, "a", "b", "c", "d", "e")
	for want := uint64(1); want <= 2; want++ {
		if got := recvReturned(t, returned); got != want {
			t.Fatalf("returned %d, want %d", got, want)
		}
	}
	// The observer has record 3, so its publish has dispatched it and
	// now waits for the slow subscriber's room.
	for want := uint64(1); want <= 3; want++ {
		if got := recvSeq(t, "observer", observer.C()); got != want {
			t.Fatalf("observer got %d, want %d", got, want)
		}
	}
	notReturned(t, returned)
	// Other work goes on meanwhile.
	if got := readAll(t, m, all("mars"), everything, 2); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("history while blocked %v, want [1 2 3]", got)
	}
	if got := mustPublish(t, m, note("diss", "x")); got != 1 {
		t.Errorf("diss publish %d, want 1", got)
	}
	late, err := m.Subscribe(ctx, all("mars"), engine.SubscribeOptions{})
	if err != nil || late.Boundary() != 3 {
		t.Fatalf("Subscribe while blocked: boundary %d, %v; want 3", late.Boundary(), err)
	}
	// Reading makes room: everything arrives, in order.
	for want := uint64(1); want <= 5; want++ {
		if got := recvSeq(t, "slow", slow.C()); got != want {
			t.Fatalf("slow got %d, want %d", got, want)
		}
	}
	for want := uint64(3); want <= 5; want++ {
		if got := recvReturned(t, returned); got != want {
			t.Fatalf("returned %d, want %d", got, want)
		}
	}
	if slow.Dropped() != 0 || slow.Err() != nil {
		t.Errorf("Dropped %d, Err %v; want 0, nil", slow.Dropped(), slow.Err())
	}
}

// TestMemoryBlockedPublishReleased: a publish waiting for a full
// BlockOnOverflow subscriber returns when the subscription is closed, the
// engine is closed, or the publisher's context ends (which ends the
// subscriber with ErrOverflow).
func TestMemoryBlockedPublishReleased(t *testing.T) {
	cases := []struct {
		name    string
		release func(m *engine.Memory, s *engine.Subscription, cancel context.CancelFunc)
		wantErr error // the subscription's Err afterwards
	}{
		{"subscription closed", func(_ *engine.Memory, s *engine.Subscription, _ context.CancelFunc) { s.Close() }, nil},
		{"engine closed", func(m *engine.Memory, _ *engine.Subscription, _ context.CancelFunc) { m.Close() }, engine.ErrClosed},
		{"publisher gave up", func(_ *engine.Memory, _ *engine.Subscription, cancel context.CancelFunc) { cancel() }, engine.ErrOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 100})
			defer m.Close()
			s, _ := m.Subscribe(ctx, all("mars"), engine.SubscribeOptions{QueueSize: 1, Overflow: engine.BlockOnOverflow})
			observer, _ := m.Subscribe(ctx, all("mars"), engine.SubscribeOptions{QueueSize: 100})
			returned := blockedPublish(ctx, t, m, "a", "b")
			recvReturned(t, returned)
			recvSeq(t, "observer", observer.C())
			recvSeq(t, "observer", observer.C())
			notReturned(t, returned)
			c.release(m, s, cancel)
			if got := recvReturned(t, returned); got != 2 {
				t.Errorf("returned %d, want 2", got)
			}
			if err := s.Err(); !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Errorf("Err = %v, want %v", err, c.wantErr)
			}
			// What the subscriber can still read is its feed up to the
			// release, without a hole.
			select {
			case r := <-s.C():
				if r.Seq != 1 {
					t.Errorf("buffered record %d, want 1", r.Seq)
				}
			default:
			}
			select {
			case r := <-s.C():
				t.Errorf("record %d after the release", r.Seq)
			default:
			}
		})
	}
}

func BenchmarkMemoryPublish(b *testing.B) {
	for _, subs := range []int{0, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 1, MaxTopics: 10000})
			defer m.Close()
			ctx := context.Background()
			for i := range subs {
				s, _ := m.Subscribe(ctx, engine.Query{Stream: "mars", Filter: &notification.Filter{
					Pattern: topic.Pattern{topic.Literal("mars"), topic.Any(), topic.Literal(fmt.Sprint(i % 16))},
				}}, engine.SubscribeOptions{Overflow: engine.DropOnOverflow, QueueSize: 1})
				_ = s
			}
			notes := make([]*notification.Notification, 20000)
			for i := range notes {
				notes[i] = note("mars", fmt.Sprint(i%len(notes)))
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, _, err := m.Publish(ctx, notes[i%len(notes)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMemoryHistory(b *testing.B) {
	m := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 1, MaxTopics: 10000})
	defer m.Close()
	for i := range 10000 {
		mustPublish(b, m, note("mars", fmt.Sprint(i)))
	}
	q := engine.Query{Stream: "mars", Filter: &notification.Filter{
		Pattern: topic.Pattern{topic.Literal("mars"), topic.Any(), topic.Literal("7")},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if got := readAll(b, m, q, everything, 100); len(got) != 1 {
			b.Fatalf("got %v", got)
		}
	}
}
