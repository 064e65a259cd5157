// Package enginetest is the conformance suite of engine.Engine: the same
// test functions run against every backend (in-memory, JetStream) so that
// they behave alike where the design says they must: dense per-stream
// sequences, history ranges and paging, filtering, the replay/live
// boundary, live fan-out with overflow policies, deletion, wipes and
// closing. It only imports engine, notification and topic, and is meant
// to be imported from _test.go files only.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/geo"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// Requirements on the engines the suite runs against. Each engine passed
// to Run must be new and empty, and must be configured to keep at least
// MinHistoryPerSubject records per exact subject and at least MinSubjects
// subjects, so that no record the suite publishes is evicted (the
// in-memory engine keeps 1 record per subject by default; its own limits
// are tested separately).
const (
	MinHistoryPerSubject = 1000
	MinSubjects          = 1000
)

// waitFor bounds every wait of the suite; it is a deadline, never a
// delay: the suite waits on channels and returns as soon as they are
// ready.
const waitFor = 10 * time.Second

// Run runs the conformance suite, one subtest per property. newEngine is
// called once per subtest and must return a new, empty engine that meets
// the requirements above (MinHistoryPerSubject, MinSubjects); the suite
// closes it when the subtest ends (a second Close by the factory's own
// cleanup must be harmless).
func Run(t *testing.T, newEngine func(t *testing.T) engine.Engine) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, e engine.Engine)
	}{
		{"PublishDenseSequences", testPublishDenseSequences},
		{"ConcurrentPublishDense", testConcurrentPublishDense},
		{"EmptyStream", testEmptyStream},
		{"HistoryFromSeq", testHistoryFromSeq},
		{"HistoryFromTime", testHistoryFromTime},
		{"HistoryPaging", testHistoryPaging},
		{"HistoryFilters", testHistoryFilters},
		{"SubscribeBoundary", testSubscribeBoundary},
		{"LiveOnlyAfterSubscribe", testLiveOnlyAfterSubscribe},
		{"SeveralSubscribers", testSeveralSubscribers},
		{"OverflowClosesSlowSubscriber", testOverflowClosesSlowSubscriber},
		{"DropOnOverflowCountsDrops", testDropOnOverflowCountsDrops},
		{"OwnerClose", testOwnerClose},
		{"Delete", testDelete},
		{"WipeStream", testWipeStream},
		{"SeqAfter", testSeqAfter},
		{"WipeAll", testWipeAll},
		{"CloseEndsSubscriptions", testCloseEndsSubscriptions},
		{"RecordTooLarge", testRecordTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			t.Cleanup(func() { _ = e.Close() })
			tc.fn(t, e)
		})
	}
}

// ---- fixtures ----

// The two streams of the suite. mars subjects follow an Aviso-like
// key_order: class, expver, domain, date, time, stream, step; diss
// subjects: destination, class, date, time, step (the destination holds a
// '.' that the subject percent-encodes).
const (
	mars = "mars"
	diss = "diss"
)

// marsRec describes one mars notification.
type marsRec struct {
	class, stream string
	step          int
	geo           *geo.Geometry
}

// Two geometries: geoNorth lies at latitudes 40..50, geoSouth at 10..20.
var (
	geoNorth = polygon(40, 0, 50, 10)
	geoSouth = polygon(10, 0, 20, 10)
)

// polygon returns a rectangular polygon geometry.
func polygon(minLat, minLon, maxLat, maxLon float64) *geo.Geometry {
	return &geo.Geometry{
		Kind: geo.PolygonGeometry,
		Points: []geo.Point{
			{Lat: minLat, Lon: minLon}, {Lat: minLat, Lon: maxLon},
			{Lat: maxLat, Lon: maxLon}, {Lat: maxLat, Lon: minLon},
			{Lat: minLat, Lon: minLon},
		},
		BBox: geo.BBox{MinLat: minLat, MinLon: minLon, MaxLat: maxLat, MaxLon: maxLon},
	}
}

// marsNote builds a realistic mars notification.
func marsNote(r marsRec) *notification.Notification {
	id := map[string]string{
		"class": r.class, "expver": "0001", "domain": "g", "date": "20250706",
		"time": "1200", "stream": r.stream, "step": strconv.Itoa(r.step),
	}
	tokens := []string{mars, id["class"], id["expver"], id["domain"], id["date"], id["time"], id["stream"], id["step"]}
	return &notification.Notification{
		EventType:   mars,
		Subject:     topic.Encode(tokens),
		Tokens:      tokens,
		Identifier:  id,
		Geometry:    r.geo,
		Payload:     []byte(fmt.Sprintf(`{"step":%d,"class":%q}`, r.step, r.class)),
		ContentType: "application/json",
	}
}

// dissNote builds a realistic diss notification for the given step.
func dissNote(step int) *notification.Notification {
	id := map[string]string{
		"destination": "ecmwf.de", "class": "od", "date": "20250706", "time": "0000",
		"step": strconv.Itoa(step),
	}
	tokens := []string{diss, id["destination"], id["class"], id["date"], id["time"], id["step"]}
	return &notification.Notification{
		EventType:   diss,
		Subject:     topic.Encode(tokens),
		Tokens:      tokens,
		Identifier:  id,
		Payload:     []byte(`{"location":"s3://bucket/key"}`),
		ContentType: "application/json",
	}
}

// pattern builds a pattern from tokens, "*" being a wildcard.
func pattern(tokens ...string) topic.Pattern {
	p := make(topic.Pattern, len(tokens))
	for i, v := range tokens {
		if v == "*" {
			p[i] = topic.Any()
		} else {
			p[i] = topic.Literal(v)
		}
	}
	return p
}

// marsPattern returns a mars pattern with class and stream fixed unless
// "*", every other position a wildcard.
func marsPattern(class, stream string) topic.Pattern {
	return pattern(mars, class, "*", "*", "*", "*", stream, "*")
}

// stepPos is the position of the step token in mars subjects.
const stepPos = 7

// intBetween is a test constraint: an integer token within [lo, hi].
type intBetween struct{ lo, hi int }

func (c intBetween) Match(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && c.lo <= n && n <= c.hi
}

// minLat is a test spatial filter: the geometry lies at or north of a
// latitude.
type minLat float64

func (f minLat) Match(g *geo.Geometry) bool {
	return g != nil && g.BBox.MinLat >= float64(f)
}

// query builds a query of stream with the given filter parts.
func query(stream string, p topic.Pattern, cs []notification.TokenConstraint, sp geo.SpatialFilter) engine.Query {
	return engine.Query{Stream: stream, Filter: &notification.Filter{Pattern: p, Constraints: cs, Spatial: sp}}
}

// marsAll matches every mars record; dissAll every diss record.
var (
	marsAll = query(mars, marsPattern("*", "*"), nil, nil)
	dissAll = query(diss, pattern(diss, "*", "*", "*", "*", "*"), nil, nil)
)

// stepBetween is a constraint on the mars step.
func stepBetween(lo, hi int) []notification.TokenConstraint {
	return []notification.TokenConstraint{{Pos: stepPos, Field: "step", Constraint: intBetween{lo, hi}}}
}

// published is what Publish returned for one notification.
type published struct {
	n   *notification.Notification
	seq uint64
	at  time.Time
}

// publish stores n and fails the test on error.
func publish(t *testing.T, e engine.Engine, n *notification.Notification) published {
	t.Helper()
	seq, at, err := e.Publish(t.Context(), n)
	if err != nil {
		t.Fatalf("Publish(%s): %v", n.Subject, err)
	}
	return published{n: n, seq: seq, at: at}
}

// publishMars stores the mars records in order.
func publishMars(t *testing.T, e engine.Engine, recs ...marsRec) []published {
	t.Helper()
	out := make([]published, len(recs))
	for i, r := range recs {
		out[i] = publish(t, e, marsNote(r))
	}
	return out
}

// steps returns n mars records on distinct subjects (steps 0..n-1).
func steps(n int) []marsRec {
	out := make([]marsRec, n)
	for i := range out {
		out[i] = marsRec{class: "od", stream: "enfo", step: i}
	}
	return out
}

// seqRange returns from, from+1, …, to (empty when to < from).
func seqRange(from, to uint64) []uint64 {
	out := []uint64{}
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// seqsOf returns the sequences of records.
func seqsOf(recs []*engine.Record) []uint64 {
	out := make([]uint64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// pages reads a history to the end and returns its pages; a final empty
// page that only reports done is left out.
func pages(t *testing.T, e engine.Engine, q engine.Query, r engine.Range, size int) [][]*engine.Record {
	t.Helper()
	h, err := e.History(t.Context(), q, r)
	if err != nil {
		t.Fatalf("History(%+v): %v", r, err)
	}
	defer h.Close()
	var out [][]*engine.Record
	for range 100000 {
		recs, done, err := h.Next(t.Context(), size)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if len(recs) > size {
			t.Fatalf("Next(%d) returned %d records", size, len(recs))
		}
		if !done || len(recs) > 0 {
			out = append(out, recs)
		}
		if done {
			recs, done, err := h.Next(t.Context(), size)
			if err != nil || !done || len(recs) != 0 {
				t.Fatalf("Next after done = %d records, %v, %v; want none, true, nil", len(recs), done, err)
			}
			return out
		}
	}
	t.Fatalf("history of %s never reported done", q.Stream)
	return nil
}

// history reads a history to the end with the given page size.
func history(t *testing.T, e engine.Engine, q engine.Query, r engine.Range, size int) []*engine.Record {
	t.Helper()
	var out []*engine.Record
	for _, p := range pages(t, e, q, r, size) {
		out = append(out, p...)
	}
	return out
}

// historySeqs reads a whole history and returns its sequences.
func historySeqs(t *testing.T, e engine.Engine, q engine.Query, r engine.Range) []uint64 {
	t.Helper()
	return seqsOf(history(t, e, q, r, 100))
}

// everything is a range over the whole stream.
var everything = engine.Range{ToSeq: math.MaxUint64}

// checkSeqs fails the test when got differs from want.
func checkSeqs(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	if got == nil {
		got = []uint64{}
	}
	if want == nil {
		want = []uint64{}
	}
	if slices.Equal(got, want) {
		return
	}
	if len(got)+len(want) <= 40 {
		t.Errorf("%s: sequences %v, want %v", what, got, want)
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: %d sequences, want %d; first difference at index %d: got %v, want %v",
		what, len(got), len(want), i, got[i:min(i+5, len(got))], want[i:min(i+5, len(want))])
}

// subscribe joins the live fan-out and fails the test on error.
func subscribe(t *testing.T, e engine.Engine, q engine.Query, opts engine.SubscribeOptions) *engine.Subscription {
	t.Helper()
	s, err := e.Subscribe(t.Context(), q, opts)
	if err != nil {
		t.Fatalf("Subscribe(%s): %v", q.Stream, err)
	}
	t.Cleanup(s.Close)
	return s
}

// receive reads n live records from s, failing the test if they do not
// arrive before the deadline or if the subscription ends.
func receive(t *testing.T, s *engine.Subscription, n int) []*engine.Record {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	out := make([]*engine.Record, 0, n)
	for len(out) < n {
		select {
		case r := <-s.C():
			out = append(out, r)
		case <-s.Done():
			t.Fatalf("subscription ended after %d of %d records: %v", len(out), n, s.Err())
		case <-deadline.C:
			t.Fatalf("received %d of %d live records (%v) before the deadline", len(out), n, seqsOf(out))
		}
	}
	return out
}

// expectLive checks that the next live records of s have exactly the
// sequences want; it fails as soon as one differs.
func expectLive(t *testing.T, what string, s *engine.Subscription, want []uint64) {
	t.Helper()
	deadline := time.NewTimer(waitFor)
	defer deadline.Stop()
	for i, w := range want {
		select {
		case r := <-s.C():
			if r.Seq != w {
				t.Fatalf("%s: live record %d has sequence %d, want %d (expected %d records from %d)",
					what, i, r.Seq, w, len(want), want[0])
			}
		case <-s.Done():
			t.Fatalf("%s: subscription ended after %d of %d records: %v", what, i, len(want), s.Err())
		case <-deadline.C:
			t.Fatalf("%s: received %d of %d live records before the deadline; next wanted %d", what, i, len(want), w)
		}
	}
}

// waitDone waits for s to be ended by the engine and returns its error.
func waitDone(t *testing.T, s *engine.Subscription) error {
	t.Helper()
	select {
	case <-s.Done():
		return s.Err()
	case <-time.After(waitFor):
		t.Fatalf("subscription not ended before the deadline")
		return nil
	}
}

// notDone fails the test if s has been ended.
func notDone(t *testing.T, s *engine.Subscription) {
	t.Helper()
	select {
	case <-s.Done():
		t.Fatalf("subscription ended: %v", s.Err())
	default:
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Err() = %v, want nil", err)
	}
}

// lastSeq returns the stream's last sequence, failing the test on error.
func lastSeq(t *testing.T, e engine.Engine, stream string) uint64 {
	t.Helper()
	s, err := e.LastSeq(t.Context(), stream)
	if err != nil {
		t.Fatalf("LastSeq(%s): %v", stream, err)
	}
	return s
}

// ---- tests ----

// testPublishDenseSequences: each stream counts 1, 2, 3, … independently,
// timestamps are UTC and non-decreasing, and history returns the records
// as published.
func testPublishDenseSequences(t *testing.T, e engine.Engine) {
	plan := []struct {
		n       *notification.Notification
		wantSeq uint64
	}{
		{marsNote(marsRec{"od", "enfo", 0, geoNorth}), 1},
		{dissNote(0), 1},
		{marsNote(marsRec{"od", "enfo", 6, nil}), 2},
		{marsNote(marsRec{"od", "enfo", 6, nil}), 3},
		{dissNote(6), 2},
		{dissNote(12), 3},
		{marsNote(marsRec{"rd", "oper", 12, geoSouth}), 4},
	}
	last := map[string]time.Time{}
	pubs := map[string][]published{}
	for i, p := range plan {
		got := publish(t, e, p.n)
		if got.seq != p.wantSeq {
			t.Errorf("publish %d (%s): seq %d, want %d", i, p.n.Subject, got.seq, p.wantSeq)
		}
		if got.at.IsZero() || got.at.Location() != time.UTC {
			t.Errorf("publish %d: time %v, want a UTC time", i, got.at)
		}
		if got.at.Before(last[p.n.Base()]) {
			t.Errorf("publish %d: time %v before the previous %v", i, got.at, last[p.n.Base()])
		}
		last[p.n.Base()] = got.at
		pubs[p.n.Base()] = append(pubs[p.n.Base()], got)
	}
	for _, c := range []struct {
		stream string
		want   uint64
	}{{mars, 4}, {diss, 3}, {"nothing", 0}} {
		if got := lastSeq(t, e, c.stream); got != c.want {
			t.Errorf("LastSeq(%s) = %d, want %d", c.stream, got, c.want)
		}
	}
	for stream, q := range map[string]engine.Query{mars: marsAll, diss: dissAll} {
		recs := history(t, e, q, everything, 100)
		want := pubs[stream]
		if len(recs) != len(want) {
			t.Fatalf("history of %s: %v, want %d records", stream, seqsOf(recs), len(want))
		}
		for i, r := range recs {
			checkRecord(t, r, want[i])
		}
	}
}

// testRecordTooLarge: both engines bound one stored record at 1 MiB
// (NATS's default max_payload, which the in-memory engine applies too):
// CheckSize and Publish refuse a larger record with a *TooLargeError
// giving both sizes, store nothing, and a batch stops at it; a record
// well under the limit is stored.
func testRecordTooLarge(t *testing.T, e engine.Engine) {
	if _, ok := e.(engine.SizeChecker); !ok {
		t.Fatal("the engine does not implement engine.SizeChecker")
	}
	big := marsNote(marsRec{"od", "enfo", 1, geoNorth})
	big.Payload = []byte(`"` + strings.Repeat("x", 1<<20) + `"`)
	ok := marsNote(marsRec{"od", "enfo", 2, nil})
	ok.Payload = []byte(`"` + strings.Repeat("x", 1<<19) + `"`)
	var te *engine.TooLargeError
	if err := engine.CheckSize(e, big); !errors.As(err, &te) || te.Limit != 1<<20 || te.Size <= 1<<20+2 {
		t.Fatalf("CheckSize: %v, want a *TooLargeError of more than %d bytes over 1048576", err, 1<<20+2)
	}
	want := te.Error()
	if err := engine.CheckSize(e, ok); err != nil {
		t.Fatalf("CheckSize under the limit: %v", err)
	}
	if _, _, err := e.Publish(context.Background(), big); !errors.As(err, &te) || te.Error() != want || !errors.Is(err, engine.ErrTooLarge) {
		t.Fatalf("Publish: %v, want %s", err, want)
	}
	results := engine.PublishAll(context.Background(), e, []*notification.Notification{ok, big})
	if results[0].Err != nil || results[0].Seq != 1 || !errors.Is(results[1].Err, engine.ErrTooLarge) {
		t.Fatalf("PublishAll: %+v", results)
	}
	if got := lastSeq(t, e, mars); got != 1 {
		t.Fatalf("LastSeq after the refusals: %d, want 1", got)
	}
}

// checkRecord compares a stored record with what was published.
func checkRecord(t *testing.T, r *engine.Record, p published) {
	t.Helper()
	n := p.n
	switch {
	case r.Seq != p.seq:
		t.Errorf("record seq %d, want %d", r.Seq, p.seq)
	case !r.Time.Equal(p.at):
		t.Errorf("record %d: time %v, want %v", r.Seq, r.Time, p.at)
	case r.EventType != n.EventType, r.Subject != n.Subject, r.ContentType != n.ContentType:
		t.Errorf("record %d: %q %q %q, want %q %q %q", r.Seq, r.EventType, r.Subject, r.ContentType,
			n.EventType, n.Subject, n.ContentType)
	case !slices.Equal(r.Tokens, n.Tokens):
		t.Errorf("record %d: tokens %q, want %q", r.Seq, r.Tokens, n.Tokens)
	case string(r.Payload) != string(n.Payload):
		t.Errorf("record %d: payload %s, want %s", r.Seq, r.Payload, n.Payload)
	case !maps.Equal(r.Identifier, n.Identifier):
		t.Errorf("record %d: identifier %v, want %v", r.Seq, r.Identifier, n.Identifier)
	case !reflect.DeepEqual(r.Geometry, n.Geometry):
		t.Errorf("record %d: geometry %+v, want %+v", r.Seq, r.Geometry, n.Geometry)
	}
}

// testConcurrentPublishDense: concurrent publishers on two streams get
// every sequence of 1..N exactly once per stream, and timestamps do not
// decrease with the sequence.
func testConcurrentPublishDense(t *testing.T, e engine.Engine) {
	const workers, each = 8, 40
	var (
		mu   sync.Mutex
		seqs = map[string][]uint64{}
		wg   sync.WaitGroup
		errs = make(chan error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := marsNote(marsRec{"od", "enfo", w*each + i, nil})
				if (w+i)%2 == 1 {
					n = dissNote(w*each + i)
				}
				seq, _, err := e.Publish(context.Background(), n)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				seqs[n.Base()] = append(seqs[n.Base()], seq)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Publish: %v", err)
	}
	for stream, q := range map[string]engine.Query{mars: marsAll, diss: dissAll} {
		got := slices.Sorted(slices.Values(seqs[stream]))
		checkSeqs(t, stream+" publish results", got, seqRange(1, uint64(len(got))))
		recs := history(t, e, q, everything, 100)
		checkSeqs(t, stream+" history", seqsOf(recs), got)
		for i := 1; i < len(recs); i++ {
			if recs[i].Time.Before(recs[i-1].Time) {
				t.Errorf("%s: record %d time %v before record %d time %v", stream,
					recs[i].Seq, recs[i].Time, recs[i-1].Seq, recs[i-1].Time)
			}
		}
	}
}

// testEmptyStream: an empty stream has last sequence 0, its subscription
// boundary is 0, and its history is empty.
func testEmptyStream(t *testing.T, e engine.Engine) {
	if got := lastSeq(t, e, mars); got != 0 {
		t.Errorf("LastSeq = %d, want 0", got)
	}
	s := subscribe(t, e, marsAll, engine.SubscribeOptions{})
	if s.Boundary() != 0 {
		t.Errorf("Boundary = %d, want 0", s.Boundary())
	}
	checkSeqs(t, "ToSeq 0", historySeqs(t, e, marsAll, engine.Range{}), nil)
	checkSeqs(t, "unbounded", historySeqs(t, e, marsAll, everything), nil)
	// ToSeq 0 reads nothing even once the stream has records.
	publishMars(t, e, steps(2)...)
	checkSeqs(t, "ToSeq 0 after publish", historySeqs(t, e, marsAll, engine.Range{}), nil)
	expectLive(t, "live", s, []uint64{1, 2})
}

// testHistoryFromSeq: start and end sequences are inclusive; a start past
// the end reads nothing; other streams never appear.
func testHistoryFromSeq(t *testing.T, e engine.Engine) {
	for i, r := range steps(10) {
		publishMars(t, e, r)
		if i%3 == 0 {
			publish(t, e, dissNote(i))
		}
	}
	last := lastSeq(t, e, mars)
	if last != 10 {
		t.Fatalf("LastSeq = %d, want 10", last)
	}
	cases := []struct {
		name string
		r    engine.Range
		want []uint64
	}{
		{"from 0", engine.Range{FromSeq: 0, ToSeq: last}, seqRange(1, 10)},
		{"from 1", engine.Range{FromSeq: 1, ToSeq: last}, seqRange(1, 10)},
		{"from middle", engine.Range{FromSeq: 4, ToSeq: last}, seqRange(4, 10)},
		{"from last", engine.Range{FromSeq: 10, ToSeq: last}, []uint64{10}},
		{"past the end", engine.Range{FromSeq: 11, ToSeq: last}, nil},
		{"far past the end", engine.Range{FromSeq: 1000, ToSeq: math.MaxUint64}, nil},
		{"to middle", engine.Range{FromSeq: 3, ToSeq: 7}, seqRange(3, 7)},
		{"single", engine.Range{FromSeq: 5, ToSeq: 5}, []uint64{5}},
		{"to before from", engine.Range{FromSeq: 8, ToSeq: 5}, nil},
		{"to 0", engine.Range{FromSeq: 1, ToSeq: 0}, nil},
		{"unbounded", engine.Range{ToSeq: math.MaxUint64}, seqRange(1, 10)},
	}
	for _, c := range cases {
		checkSeqs(t, c.name, historySeqs(t, e, marsAll, c.r), c.want)
	}
}

// testHistoryFromTime: FromTime starts at the first record with
// Time >= FromTime (instead of FromSeq), ToTime ends after the last with
// Time <= ToTime.
func testHistoryFromTime(t *testing.T, e engine.Engine) {
	pubs := publishMars(t, e, steps(10)...)
	ts := func(i int) time.Time { return pubs[i-1].at }
	// want returns the sequences whose time lies within [from, to]
	// (zero bounds are open).
	want := func(from, to time.Time) []uint64 {
		var out []uint64
		for _, p := range pubs {
			if (from.IsZero() || !p.at.Before(from)) && (to.IsZero() || !p.at.After(to)) {
				out = append(out, p.seq)
			}
		}
		return out
	}
	cases := []struct {
		name     string
		from, to time.Time
		fromSeq  uint64
		toSeq    uint64
	}{
		{name: "from first", from: ts(1), toSeq: 10},
		{name: "from before first", from: ts(1).Add(-time.Hour), toSeq: 10},
		{name: "from middle", from: ts(5), toSeq: 10},
		{name: "from last", from: ts(10), toSeq: 10},
		{name: "from after last", from: ts(10).Add(time.Nanosecond), toSeq: 10},
		{name: "from a later day", from: ts(10).Add(24 * time.Hour), toSeq: 10},
		{name: "from year 2999", from: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), toSeq: 10},
		{name: "from year 1000", from: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), toSeq: 10},
		{name: "from replaces from_seq", from: ts(3), fromSeq: 9, toSeq: 10},
		{name: "to middle", to: ts(5), toSeq: 10},
		{name: "to year 2999", to: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), toSeq: 10},
		{name: "to before first", to: ts(1).Add(-time.Nanosecond), toSeq: 10},
		{name: "from and to", from: ts(3), to: ts(7), toSeq: 10},
		{name: "from time, to seq", from: ts(2), toSeq: 6},
	}
	for _, c := range cases {
		w := want(c.from, c.to)
		w = slices.DeleteFunc(w, func(s uint64) bool { return s > c.toSeq })
		r := engine.Range{FromSeq: c.fromSeq, FromTime: c.from, ToSeq: c.toSeq, ToTime: c.to}
		checkSeqs(t, c.name, historySeqs(t, e, marsAll, r), w)
	}
}

// testHistoryPaging: Next returns exactly max records per page while more
// remain.
func testHistoryPaging(t *testing.T, e engine.Engine) {
	publishMars(t, e, steps(10)...)
	cases := []struct {
		size int
		r    engine.Range
		want [][]uint64
	}{
		{1, everything, [][]uint64{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}}},
		{3, everything, [][]uint64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10}}},
		{5, everything, [][]uint64{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}},
		{10, everything, [][]uint64{seqRange(1, 10)}},
		{100, everything, [][]uint64{seqRange(1, 10)}},
		{2, engine.Range{FromSeq: 4, ToSeq: 8}, [][]uint64{{4, 5}, {6, 7}, {8}}},
		{4, engine.Range{FromSeq: 11, ToSeq: math.MaxUint64}, nil},
	}
	for _, c := range cases {
		var got [][]uint64
		for _, p := range pages(t, e, marsAll, c.r, c.size) {
			got = append(got, seqsOf(p))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("size %d, range %+v: pages %v, want %v", c.size, c.r, got, c.want)
		}
	}
}

// filterData is the data set of the filter tests; the comments give each
// record's mars sequence.
var filterData = []marsRec{
	{"od", "enfo", 0, geoNorth},  // 1
	{"od", "enfo", 6, nil},       // 2
	{"od", "oper", 12, geoSouth}, // 3
	{"rd", "enfo", 12, geoNorth}, // 4
	{"od", "enfo", 24, geoSouth}, // 5
	{"od", "enfo", 6, nil},       // 6: same subject as 2
	{"rd", "oper", 0, geoNorth},  // 7
	{"x.y", "enfo", 18, nil},     // 8: a reserved character in a token
}

// filterCases are the queries of the filter tests with their matches in
// filterData.
var filterCases = []struct {
	name string
	q    engine.Query
	want []uint64
}{
	{"all", marsAll, seqRange(1, 8)},
	{"class", query(mars, marsPattern("od", "*"), nil, nil), []uint64{1, 2, 3, 5, 6}},
	{"class and stream", query(mars, marsPattern("od", "enfo"), nil, nil), []uint64{1, 2, 5, 6}},
	{"exact subject", query(mars, pattern(mars, "od", "0001", "g", "20250706", "1200", "enfo", "6"), nil, nil), []uint64{2, 6}},
	{"reserved character", query(mars, marsPattern("x.y", "*"), nil, nil), []uint64{8}},
	{"no such value", query(mars, marsPattern("zz", "*"), nil, nil), nil},
	{"shorter pattern", query(mars, pattern(mars, "*", "*", "*", "*", "*", "*"), nil, nil), nil},
	{"constraint", query(mars, marsPattern("*", "*"), stepBetween(6, 12), nil), []uint64{2, 3, 4, 6}},
	{"constraint beyond tokens", query(mars, marsPattern("*", "*"),
		[]notification.TokenConstraint{{Pos: 9, Field: "x", Constraint: intBetween{0, 100}}}, nil), nil},
	{"spatial", query(mars, marsPattern("*", "*"), nil, minLat(30)), []uint64{1, 4, 7}},
	{"class and spatial", query(mars, marsPattern("od", "*"), nil, minLat(30)), []uint64{1}},
	{"constraint and spatial", query(mars, marsPattern("*", "*"), stepBetween(1, 100), minLat(30)), []uint64{4}},
}

// testHistoryFilters: history returns exactly the records that pass the
// pattern, constraints and spatial filter, whatever the page size.
func testHistoryFilters(t *testing.T, e engine.Engine) {
	for i, r := range filterData {
		publishMars(t, e, r)
		publish(t, e, dissNote(i))
	}
	for _, c := range filterCases {
		for _, size := range []int{100, 3, 1} {
			checkSeqs(t, fmt.Sprintf("%s, page size %d", c.name, size),
				seqsOf(history(t, e, c.q, everything, size)), c.want)
		}
	}
}

// testSubscribeBoundary: with publishers running before, during and after
// Subscribe, history up to the boundary plus live records after it is
// exactly every matching record, once, in order, for subscriptions made
// at several moments; and a subscription made before the publishers
// started receives every record of the stream, in order.
func testSubscribeBoundary(t *testing.T, e engine.Engine) {
	q := query(mars, marsPattern("od", "*"), nil, nil)
	class := func(i int) string { return []string{"od", "rd"}[i%2] }
	var (
		mu      sync.Mutex
		matches []uint64 // sequences of published records that match q
		total   int
	)
	record := func(p published, c string) {
		mu.Lock()
		defer mu.Unlock()
		total++
		if c == "od" {
			matches = append(matches, p.seq)
		}
	}
	for i := range 20 {
		c := class(i)
		record(publish(t, e, marsNote(marsRec{c, "enfo", i, nil})), c)
	}
	const workers, each, subscriptions = 8, 150, 5
	queue := engine.SubscribeOptions{QueueSize: 2 * workers * each}
	everyRecord := subscribe(t, e, marsAll, queue)

	started := make(chan struct{})
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c := class(w + i)
				// Subjects repeat, to stay within MinSubjects.
				n := marsNote(marsRec{c, "enfo", 100 + (w*each+i)%100, nil})
				seq, at, err := e.Publish(context.Background(), n)
				if err != nil {
					errs <- err
					return
				}
				record(published{n: n, seq: seq, at: at}, c)
				if w == 0 && i == 4 {
					close(started)
				}
			}
		}()
	}
	select {
	case <-started:
	case <-time.After(waitFor):
		t.Fatal("publishers did not start")
	}
	// Subscribe at several moments, reading each history while the
	// publishers go on.
	subs := make([]*engine.Subscription, subscriptions)
	hists := make([][]uint64, subscriptions)
	for i := range subs {
		subs[i] = subscribe(t, e, q, queue)
		hists[i] = seqsOf(history(t, e, q, engine.Range{ToSeq: subs[i].Boundary()}, 7))
	}

	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(waitFor):
		t.Fatal("publishers did not finish")
	}
	close(errs)
	for err := range errs {
		t.Fatalf("Publish: %v", err)
	}
	all := slices.Sorted(slices.Values(matches))
	split := func(keep func(uint64) bool) []uint64 {
		return slices.DeleteFunc(slices.Clone(all), func(s uint64) bool { return !keep(s) })
	}
	expectLive(t, "every record", everyRecord, seqRange(21, uint64(total)))
	fence := publish(t, e, marsNote(marsRec{"od", "enfo", 9999, nil}))
	for i, s := range subs {
		b := s.Boundary()
		if b < 25 {
			t.Errorf("subscription %d: Boundary = %d, want at least 25", i, b)
		}
		checkSeqs(t, fmt.Sprintf("subscription %d (boundary %d) history", i, b), hists[i],
			split(func(s uint64) bool { return s <= b }))
		live := append(split(func(s uint64) bool { return s > b }), fence.seq)
		// The fence comes right after the last live record: nothing
		// else was queued.
		expectLive(t, fmt.Sprintf("subscription %d (boundary %d) live", i, b), s, live)
	}
}

// testLiveOnlyAfterSubscribe: a subscription receives only what is
// published after it joined, and nothing of other streams.
func testLiveOnlyAfterSubscribe(t *testing.T, e engine.Engine) {
	publishMars(t, e, steps(5)...)
	publish(t, e, dissNote(0))
	s := subscribe(t, e, marsAll, engine.SubscribeOptions{})
	if s.Boundary() != 5 {
		t.Errorf("Boundary = %d, want 5", s.Boundary())
	}
	ds := subscribe(t, e, dissAll, engine.SubscribeOptions{})
	if ds.Boundary() != 1 {
		t.Errorf("diss Boundary = %d, want 1", ds.Boundary())
	}
	got := publishMars(t, e, marsRec{"od", "enfo", 0, nil}, marsRec{"rd", "oper", 3, nil}, marsRec{"od", "enfo", 0, nil})
	live := receive(t, s, len(got))
	checkSeqs(t, "mars", seqsOf(live), []uint64{6, 7, 8})
	for i, r := range live {
		checkRecord(t, r, got[i])
	}
	d := publish(t, e, dissNote(1))
	expectLive(t, "diss", ds, []uint64{d.seq})
	notDone(t, s)
}

// testSeveralSubscribers: subscribers with different filters each receive
// exactly their matches.
func testSeveralSubscribers(t *testing.T, e engine.Engine) {
	subs := make([]*engine.Subscription, len(filterCases))
	for i, c := range filterCases {
		subs[i] = subscribe(t, e, c.q, engine.SubscribeOptions{})
	}
	ds := subscribe(t, e, dissAll, engine.SubscribeOptions{})
	for i, r := range filterData {
		publishMars(t, e, r)
		if i%2 == 0 {
			publish(t, e, dissNote(i))
		}
	}
	for i, c := range filterCases {
		expectLive(t, c.name, subs[i], c.want)
	}
	expectLive(t, "diss", ds, []uint64{1, 2, 3, 4})
	// Once the first subscription (filterCases[0] matches every record)
	// has a fence record, every earlier delivery is complete: each
	// subscription then holds the fence if it matches, and nothing else.
	fence := publishMars(t, e, marsRec{"od", "enfo", 6, geoNorth})[0]
	fenceRec := &engine.Record{Notification: *fence.n, Seq: fence.seq, Time: fence.at}
	for i, c := range filterCases {
		if c.q.Match(fenceRec) {
			expectLive(t, c.name+" fence", subs[i], []uint64{fence.seq})
		}
		if n := subs[i].Len(); n != 0 {
			t.Errorf("%s: %d more records queued", c.name, n)
		}
	}
	if n := ds.Len(); n != 0 {
		t.Errorf("diss: %d more records queued", n)
	}
}

// testOverflowClosesSlowSubscriber: a subscriber that does not read is
// ended with ErrOverflow when its queue is full; Publish does not wait for
// it and the other subscribers receive everything.
func testOverflowClosesSlowSubscriber(t *testing.T, e engine.Engine) {
	const n, size = 50, 4
	slow := subscribe(t, e, marsAll, engine.SubscribeOptions{QueueSize: size})
	fast := subscribe(t, e, marsAll, engine.SubscribeOptions{QueueSize: 2 * n})
	done := make(chan error, 1)
	go func() {
		for _, r := range steps(n) {
			if _, _, err := e.Publish(context.Background(), marsNote(r)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Publish: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("Publish blocked on a slow subscriber")
	}
	if err := waitDone(t, slow); !errors.Is(err, engine.ErrOverflow) {
		t.Errorf("slow subscriber ended with %v, want ErrOverflow", err)
	}
	expectLive(t, "fast", fast, seqRange(1, n))
	notDone(t, fast)
	// What the slow subscriber still has buffered is the start of its
	// feed, without a hole.
	var got []uint64
drain:
	for len(got) <= size {
		select {
		case r := <-slow.C():
			got = append(got, r.Seq)
		default:
			break drain
		}
	}
	if len(got) > size || !slices.Equal(got, seqRange(1, uint64(len(got)))) {
		t.Errorf("slow subscriber buffered %v, want a prefix of 1..%d", got, size)
	}
	slow.Close()
	if err := slow.Err(); !errors.Is(err, engine.ErrOverflow) {
		t.Errorf("Err after Close = %v, want ErrOverflow", err)
	}
}

// testDropOnOverflowCountsDrops: a DropOnOverflow subscriber keeps the
// first QueueSize records, counts the others, and goes on once read.
func testDropOnOverflowCountsDrops(t *testing.T, e engine.Engine) {
	const size = 4
	q := query(mars, marsPattern("od", "*"), nil, nil)
	s := subscribe(t, e, q, engine.SubscribeOptions{QueueSize: size, Overflow: engine.DropOnOverflow})
	barrier := subscribe(t, e, marsAll, engine.SubscribeOptions{QueueSize: 100})
	publishMars(t, e, steps(10)...)
	// A record s does not match: once the barrier has it, every earlier
	// record has been offered to s.
	fence := publishMars(t, e, marsRec{"rd", "enfo", 0, nil})[0]
	expectLive(t, "barrier", barrier, seqRange(1, fence.seq))
	if got := s.Dropped(); got != 10-size {
		t.Errorf("Dropped = %d, want %d", got, 10-size)
	}
	expectLive(t, "kept", s, seqRange(1, size))
	if got := s.TakeDropped(); got != 10-size {
		t.Errorf("TakeDropped = %d, want %d", got, 10-size)
	}
	if got := s.Dropped(); got != 0 {
		t.Errorf("Dropped after TakeDropped = %d, want 0", got)
	}
	next := publishMars(t, e, marsRec{"od", "enfo", 1, nil})[0]
	expectLive(t, "after drops", s, []uint64{next.seq})
	if got := s.TakeDropped(); got != 0 {
		t.Errorf("TakeDropped = %d, want 0", got)
	}
	notDone(t, s)
}

// testOwnerClose: closing a subscription stops its delivery without
// ending it with an error; the others go on.
func testOwnerClose(t *testing.T, e engine.Engine) {
	a := subscribe(t, e, marsAll, engine.SubscribeOptions{})
	b := subscribe(t, e, marsAll, engine.SubscribeOptions{})
	publishMars(t, e, steps(2)...)
	expectLive(t, "a before close", a, []uint64{1, 2})
	a.Close()
	a.Close()
	notDone(t, a)
	publishMars(t, e, steps(3)...)
	expectLive(t, "b", b, seqRange(1, 5))
	select {
	case r := <-a.C():
		t.Errorf("closed subscription received %d", r.Seq)
	default:
	}
	notDone(t, a)
}

// testDelete: a deleted record leaves history, deleting it again or an
// unknown one is ErrNotFound, and sequences continue.
func testDelete(t *testing.T, e engine.Engine) {
	publishMars(t, e, steps(5)...)
	publish(t, e, dissNote(0))
	publish(t, e, dissNote(1))
	ctx := t.Context()
	if err := e.Delete(ctx, mars, 3); err != nil {
		t.Fatalf("Delete(mars, 3): %v", err)
	}
	checkSeqs(t, "after delete", historySeqs(t, e, marsAll, everything), []uint64{1, 2, 4, 5})
	for _, c := range []struct {
		stream string
		seq    uint64
	}{{mars, 3}, {mars, 6}, {mars, 1000}, {"nosuchstream", 1}} {
		if err := e.Delete(ctx, c.stream, c.seq); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("Delete(%s, %d) = %v, want ErrNotFound", c.stream, c.seq, err)
		}
	}
	if err := e.Delete(ctx, mars, 5); err != nil {
		t.Fatalf("Delete(mars, 5): %v", err)
	}
	checkSeqs(t, "diss untouched", historySeqs(t, e, dissAll, everything), []uint64{1, 2})
	if p := publishMars(t, e, steps(1)...)[0]; p.seq != 6 {
		t.Errorf("next seq %d, want 6", p.seq)
	}
	if got := lastSeq(t, e, mars); got != 6 {
		t.Errorf("LastSeq = %d, want 6", got)
	}
	checkSeqs(t, "after publish", historySeqs(t, e, marsAll, everything), []uint64{1, 2, 4, 6})
}

// testWipeStream: wiping a stream removes its records only; its counter
// keeps counting.
func testWipeStream(t *testing.T, e engine.Engine) {
	publishMars(t, e, steps(3)...)
	publish(t, e, dissNote(0))
	publish(t, e, dissNote(1))
	if err := e.WipeStream(t.Context(), mars); err != nil {
		t.Fatalf("WipeStream: %v", err)
	}
	checkSeqs(t, "mars", historySeqs(t, e, marsAll, everything), nil)
	checkSeqs(t, "diss", historySeqs(t, e, dissAll, everything), []uint64{1, 2})
	if got := lastSeq(t, e, mars); got != 3 {
		t.Errorf("LastSeq = %d, want 3", got)
	}
	if p := publishMars(t, e, steps(1)...)[0]; p.seq != 4 {
		t.Errorf("next seq %d, want 4", p.seq)
	}
	checkSeqs(t, "mars after publish", historySeqs(t, e, marsAll, everything), []uint64{4})
}

// testSeqAfter: the first sequence stored strictly after a time, which
// fixes the end of a replay with to_date; 0 after the last record and on
// a stream that holds nothing.
func testSeqAfter(t *testing.T, e engine.Engine) {
	ps := publishMars(t, e, steps(4)...)
	after := func(at time.Time) uint64 {
		t.Helper()
		seq, err := e.SeqAfter(t.Context(), mars, at)
		if err != nil {
			t.Fatalf("SeqAfter(%s): %v", at.Format(time.RFC3339Nano), err)
		}
		return seq
	}
	// What each answer must be, from the stored times themselves (two
	// records may share a timestamp).
	want := func(at time.Time) uint64 {
		for _, p := range ps {
			if p.at.After(at) {
				return p.seq
			}
		}
		return 0
	}
	for _, at := range []time.Time{ps[0].at.Add(-time.Second), ps[0].at, ps[1].at, ps[2].at.Add(-time.Nanosecond), ps[3].at, ps[3].at.Add(time.Hour)} {
		if got, w := after(at), want(at); got != w {
			t.Errorf("SeqAfter(%s) = %d, want %d", at.Format(time.RFC3339Nano), got, w)
		}
	}
	if got := after(ps[0].at.Add(-time.Second)); got != 1 {
		t.Errorf("SeqAfter(before everything) = %d, want 1", got)
	}
	if got := after(ps[3].at); got != 0 {
		t.Errorf("SeqAfter(the last record's time) = %d, want 0", got)
	}
	if got, err := e.SeqAfter(t.Context(), diss, ps[0].at.Add(-time.Hour)); err != nil || got != 0 {
		t.Errorf("SeqAfter on a stream holding nothing = %d, %v; want 0", got, err)
	}
}

// testWipeAll: wiping everything removes every record; counters keep
// counting.
func testWipeAll(t *testing.T, e engine.Engine) {
	publishMars(t, e, steps(3)...)
	publish(t, e, dissNote(0))
	publish(t, e, dissNote(1))
	s := subscribe(t, e, marsAll, engine.SubscribeOptions{})
	if err := e.WipeAll(t.Context()); err != nil {
		t.Fatalf("WipeAll: %v", err)
	}
	checkSeqs(t, "mars", historySeqs(t, e, marsAll, everything), nil)
	checkSeqs(t, "diss", historySeqs(t, e, dissAll, everything), nil)
	if p := publishMars(t, e, steps(1)...)[0]; p.seq != 4 {
		t.Errorf("next mars seq %d, want 4", p.seq)
	}
	if p := publish(t, e, dissNote(2)); p.seq != 3 {
		t.Errorf("next diss seq %d, want 3", p.seq)
	}
	expectLive(t, "live across wipe", s, []uint64{4})
}

// testCloseEndsSubscriptions: Close ends every subscription with
// ErrClosed and later calls fail with ErrClosed.
func testCloseEndsSubscriptions(t *testing.T, e engine.Engine) {
	publishMars(t, e, steps(2)...)
	a := subscribe(t, e, marsAll, engine.SubscribeOptions{})
	b := subscribe(t, e, dissAll, engine.SubscribeOptions{Overflow: engine.DropOnOverflow})
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, s := range map[string]*engine.Subscription{"mars": a, "diss": b} {
		if err := waitDone(t, s); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s subscription ended with %v, want ErrClosed", name, err)
		}
	}
	ctx := t.Context()
	calls := map[string]func() error{
		"Publish": func() error { _, _, err := e.Publish(ctx, marsNote(steps(1)[0])); return err },
		"Subscribe": func() error {
			s, err := e.Subscribe(ctx, marsAll, engine.SubscribeOptions{})
			if err == nil {
				s.Close()
			}
			return err
		},
		"LastSeq": func() error { _, err := e.LastSeq(ctx, mars); return err },
		"History": func() error {
			h, err := e.History(ctx, marsAll, everything)
			if err != nil {
				return err
			}
			defer h.Close()
			_, _, err = h.Next(ctx, 10)
			return err
		},
		"Delete":     func() error { return e.Delete(ctx, mars, 1) },
		"WipeStream": func() error { return e.WipeStream(ctx, mars) },
		"WipeAll":    func() error { return e.WipeAll(ctx) },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}
