package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/geo"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/notification"
)

// batchOf builds n notifications of base whose payloads name their index
// (readIndex reads it back).
func batchOf(base string, n int) []*notification.Notification {
	out := make([]*notification.Notification, n)
	for i := range out {
		out[i] = note(base, "od", strconv.Itoa(i%7), strconv.Itoa(i))
	}
	return out
}

// readIndex returns the index batchOf gave a stored notification.
func readIndex(t *testing.T, r *engine.Record) int {
	t.Helper()
	i, err := strconv.Atoi(r.Tokens[len(r.Tokens)-1])
	if err != nil {
		t.Fatalf("record %d: subject %s", r.Seq, r.Subject)
	}
	return i
}

// checkIncreasing fails the test unless the stored results of each
// stream have increasing sequences in batch order.
func checkIncreasing(t *testing.T, ns []*notification.Notification, res []engine.BatchResult) {
	t.Helper()
	last := map[string]uint64{}
	for i, r := range res {
		if r.Err != nil {
			continue
		}
		b := ns[i].Base()
		if r.Seq <= last[b] {
			t.Fatalf("result %d (stream %s): sequence %d after %d", i, b, r.Seq, last[b])
		}
		last[b] = r.Seq
	}
}

// TestPublishBatchOrder: a batch spanning three streams (two configured,
// one schema-less created on the way), longer than the window, is
// stored in order: each stream's sequences are dense and follow the
// batch order, and history reads the notifications back in that order.
func TestPublishBatchOrder(t *testing.T) {
	e := open(t, testOptions(t))
	ctx := context.Background()
	bases := []string{"mars", "diss", "mars", "gen", "mars"}
	var ns []*notification.Notification
	for i := range 3*batchWindow + 17 {
		ns = append(ns, note(bases[i%len(bases)], "od", strconv.Itoa(i)))
	}
	res := e.PublishBatch(ctx, ns)
	if len(res) != len(ns) {
		t.Fatalf("%d results for %d notifications", len(res), len(ns))
	}
	want := map[string]uint64{}
	for i, r := range res {
		b := ns[i].Base()
		want[b]++
		if r.Err != nil || r.Seq != want[b] {
			t.Fatalf("result %d (%s) = %d, %v; want sequence %d", i, b, r.Seq, r.Err, want[b])
		}
	}
	checkIncreasing(t, ns, res)
	for _, b := range []string{"mars", "diss", "gen"} {
		recs := readAll(t, e, engine.Query{Stream: b}, everything, 100)
		var subjects []string
		for _, n := range ns {
			if n.Base() == b {
				subjects = append(subjects, n.Subject)
			}
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Subject)
		}
		if !slices.Equal(got, subjects) {
			t.Errorf("stream %s: history %d subjects, want the batch's %d in order", b, len(got), len(subjects))
		}
	}
	// Small batches and a batch of one.
	for _, n := range []int{1, 2, batchWindow} {
		ns := batchOf("diss", n)
		res := e.PublishBatch(ctx, ns)
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("batch of %d: result %d: %v", n, i, r.Err)
			}
		}
		checkIncreasing(t, ns, res)
	}
	if res := e.PublishBatch(ctx, nil); len(res) != 0 {
		t.Errorf("empty batch: %d results", len(res))
	}
}

// varied are notifications that use every part of the wire form: awkward
// token values, identifier header, content type, an event type other than
// the base's, spatial metadata, an empty payload, the bare base.
func varied(t *testing.T) []*notification.Notification {
	t.Helper()
	var out []*notification.Notification
	for _, c := range awkward {
		n := note("gen", c.value)
		n.Identifier = map[string]string{"k": c.value, "other": "x y"}
		out = append(out, n)
	}
	poly, err := geo.NewPolygon([]geo.Point{{Lat: 0, Lon: 0}, {Lat: 0, Lon: 10}, {Lat: 10, Lon: 10}, {Lat: 0, Lon: 0}})
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := geo.NewPointCloud([]geo.Point{{Lat: 1, Lon: 2}, {Lat: -3.5, Lon: 4.25}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	a := note("mars", "od", "enfo", "1")
	a.Geometry = poly
	b := note("mars", "od", "enfo", "2")
	b.Geometry = cloud
	c := note("mars", "rd", "oper", "3")
	c.EventType = "other_type"
	c.ContentType = "text/plain"
	c.Payload = []byte("plain text\r\n")
	d := note("mars", "rd", "oper", "4")
	d.Payload = []byte{}
	e := &notification.Notification{EventType: "alerts", Subject: "alerts", Tokens: []string{"alerts"},
		Payload: []byte(`"hello"`), ContentType: "application/cbor"}
	return append(out, a, b, c, d, e, note("diss", "x"))
}

// TestPublishBatchSameAsPublish: notifications stored by a batch are
// stored exactly as Publish stores them (subject, payload and every
// header but the unique Nats-Msg-Id), and read back the same through
// History and the live feed.
func TestPublishBatchSameAsPublish(t *testing.T) {
	one := open(t, testOptions(t))
	batch := open(t, testOptions(t))
	ctx := context.Background()
	ns := varied(t)
	bases := []string{"gen", "mars", "diss", "alerts"}
	subscribe := func(e *Engine) map[string]*engine.Subscription {
		subs := map[string]*engine.Subscription{}
		for _, b := range bases {
			s, err := e.Subscribe(ctx, engine.Query{Stream: b}, engine.SubscribeOptions{QueueSize: 100})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			subs[b] = s
		}
		return subs
	}
	liveOne, liveBatch := subscribe(one), subscribe(batch)
	var seqOne []uint64
	for _, n := range ns {
		seqOne = append(seqOne, mustPublish(t, one, n))
	}
	res := batch.PublishBatch(ctx, ns)
	for i, r := range res {
		if r.Err != nil || r.Seq != seqOne[i] {
			t.Fatalf("batch result %d = %d, %v; Publish stored it as %d", i, r.Seq, r.Err, seqOne[i])
		}
	}
	ids := map[string]bool{}
	for i, n := range ns {
		name := StreamName(n.Base())
		a, b := rawMsg(t, one, name, seqOne[i]), rawMsg(t, batch, name, res[i].Seq)
		if a.Subject != b.Subject || string(a.Data) != string(b.Data) {
			t.Errorf("notification %d: batch stored %q %q, Publish %q %q", i, b.Subject, b.Data, a.Subject, a.Data)
		}
		for _, m := range []*jetstream.RawStreamMsg{a, b} {
			id := m.Header.Get(nats.MsgIdHdr)
			if id == "" || ids[id] {
				t.Errorf("notification %d: Nats-Msg-Id %q missing or not unique", i, id)
			}
			ids[id] = true
		}
		ha, hb := maps.Clone(a.Header), maps.Clone(b.Header)
		for _, h := range []string{nats.MsgIdHdr, "Nats-Time-Stamp"} { // the direct get adds the stored time
			delete(ha, h)
			delete(hb, h)
		}
		if fmt.Sprint(ha) != fmt.Sprint(hb) {
			t.Errorf("notification %d: batch headers %v, Publish headers %v", i, hb, ha)
		}
	}
	same := func(what string, a, b *engine.Record) {
		t.Helper()
		show := func(r *engine.Record) string {
			c := r.Notification
			c.Geometry = nil
			return fmt.Sprintf("%d %+v %s %q", r.Seq, c, r.Geometry.CanonicalJSON(), r.Geometry.Metadata())
		}
		if show(a) != show(b) {
			t.Errorf("%s: batch record %s, Publish record %s", what, show(b), show(a))
		}
	}
	for _, b := range bases {
		ra := readAll(t, one, engine.Query{Stream: b}, everything, 100)
		rb := readAll(t, batch, engine.Query{Stream: b}, everything, 100)
		if len(ra) != len(rb) {
			t.Fatalf("stream %s: batch history %d records, Publish history %d", b, len(rb), len(ra))
		}
		for i := range ra {
			same("history of "+b+" #"+strconv.Itoa(i), ra[i], rb[i])
			la, lb := next(t, liveOne[b]), next(t, liveBatch[b])
			same("live "+b+" #"+strconv.Itoa(i), la, lb)
		}
	}
}

// rawMsg reads a stored message.
func rawMsg(t *testing.T, e *Engine, stream string, seq uint64) *jetstream.RawStreamMsg {
	t.Helper()
	s, err := e.cur().js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(context.Background(), seq)
	if err != nil {
		t.Fatalf("stream %s sequence %d: %v", stream, seq, err)
	}
	return m
}

// next reads the next live record.
func next(t *testing.T, s *engine.Subscription) *engine.Record {
	t.Helper()
	select {
	case r := <-s.C():
		return r
	case <-s.Done():
		t.Fatalf("subscription ended: %v", s.Err())
	case <-time.After(wait):
		t.Fatal("no live record before the deadline")
	}
	return nil
}

// TestPublishBatchRefusal: streams limited to 5 notifications with
// discard new refuse the 6th notification of their base in the middle
// of a batch. Results are exact: what was sent before the refusal came
// back keeps its actual outcome, nothing is sent after it.
func TestPublishBatchRefusal(t *testing.T) {
	o := testOptions(t)
	o.Defaults.Discard = DiscardNew
	five := int64(5)
	for _, b := range []string{"small", "tiny"} {
		o.Streams = append(o.Streams, StreamSpec{Base: b, EventType: b, Policy: PolicyOverride{MaxMsgs: &five}})
	}
	e := open(t, o)
	ctx := context.Background()
	isRefusal := func(err error) bool {
		var api *jetstream.APIError
		return errors.As(err, &api) && strings.Contains(api.Description, "maximum messages") && !errors.Is(err, ErrNotSent) &&
			!errors.Is(err, engine.ErrUnavailable) && !errors.Is(err, engine.ErrUnknownOutcome)
	}
	mixed := func(n int, other string) []*notification.Notification {
		var ns []*notification.Notification
		for i := range n {
			base := "mars"
			if i%3 == 1 {
				base = other
			}
			ns = append(ns, note(base, "od", strconv.Itoa(i)))
		}
		return ns
	}

	// Within one window everything is sent before the first answer
	// comes back: mars is stored, small after its 5th refused.
	ns := mixed(40, "small")
	res := e.PublishBatch(ctx, ns)
	seq := map[string]uint64{}
	for i, r := range res {
		b := ns[i].Base()
		if b == "small" && seq[b] == 5 {
			if !isRefusal(r.Err) || r.Seq != 0 {
				t.Errorf("result %d (small) = %d, %v; want the server's refusal", i, r.Seq, r.Err)
			}
			continue
		}
		seq[b]++
		if r.Err != nil || r.Seq != seq[b] {
			t.Errorf("result %d (%s) = %d, %v; want stored as %d", i, b, r.Seq, r.Err, seq[b])
		}
	}
	t.Logf("result 16: %v", res[16].Err)

	// One stream, full, longer than the window: the first window is
	// refused, the rest not sent.
	ns = batchOf("small", 2*batchWindow+10)
	res = e.PublishBatch(ctx, ns)
	for i, r := range res {
		if i < batchWindow && !isRefusal(r.Err) || i >= batchWindow && (!errors.Is(r.Err, ErrNotSent) || !isRefusalCause(r.Err)) || r.Seq != 0 {
			t.Fatalf("full stream: result %d = %d, %v", i, r.Seq, r.Err)
		}
	}
	t.Logf("result %d: %v", batchWindow, res[batchWindow].Err)

	// Two streams, longer than the window: the answers of two streams
	// interleave in any order, so the window may have moved on before
	// the refusal arrived; every result is checked against the streams.
	ns = mixed(3*batchWindow, "tiny")
	res = e.PublishBatch(ctx, ns)
	const refused = 3*5 + 1 // the 6th "tiny"
	sawNotSent := false
	for i, r := range res {
		switch {
		case i < refused:
			if r.Err != nil {
				t.Fatalf("result %d = %v; want stored", i, r.Err)
			}
		case errors.Is(r.Err, ErrNotSent):
			sawNotSent = true
			if !strings.Contains(r.Err.Error(), "(notification "+strconv.Itoa(refused)+")") || !isRefusalCause(r.Err) {
				t.Fatalf("result %d = %v; want not sent after %d", i, r.Err, refused)
			}
		case sawNotSent:
			t.Fatalf("result %d = %d, %v after a notification not sent", i, r.Seq, r.Err)
		case ns[i].Base() == "tiny":
			if !isRefusal(r.Err) {
				t.Fatalf("result %d (tiny) = %d, %v; want the server's refusal", i, r.Seq, r.Err)
			}
		case r.Err != nil:
			t.Fatalf("result %d (mars) = %v; want stored", i, r.Err)
		}
	}
	if !sawNotSent {
		t.Error("every notification was sent")
	}
	checkIncreasing(t, ns, res)
	stored := map[string]uint64{}
	for _, b := range []string{"mars", "tiny"} {
		for _, r := range readAll(t, e, engine.Query{Stream: b}, everything, 500) {
			stored[r.Subject] = r.Seq
		}
	}
	for i, r := range res {
		if got, ok := stored[ns[i].Subject]; ok != (r.Err == nil) || got != r.Seq {
			t.Fatalf("result %d = %d, %v; the stream has %d, %v", i, r.Seq, r.Err, got, ok)
		}
	}
}

// isRefusalCause reports whether err wraps the server's refusal of a
// full stream.
func isRefusalCause(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && strings.Contains(api.Description, "maximum messages")
}

// TestPublishBatchInvalid: a notification refused before sending stops
// the batch there; those before it are stored.
func TestPublishBatchInvalid(t *testing.T) {
	e := open(t, testOptions(t))
	ns := batchOf("mars", 5)
	ns[3] = note("mars", "od", strings.Repeat("x", maxSubjectLen))
	res := e.PublishBatch(context.Background(), ns)
	for i, r := range res {
		switch {
		case i < 3:
			if r.Err != nil || r.Seq != uint64(i+1) {
				t.Errorf("result %d = %d, %v; want stored as %d", i, r.Seq, r.Err, i+1)
			}
		case i == 3:
			if !errors.Is(r.Err, ErrTooLong) || !errors.Is(r.Err, engine.ErrInvalid) || errors.Is(r.Err, ErrNotSent) {
				t.Errorf("result 3 = %v, want ErrTooLong", r.Err)
			}
		default:
			if !errors.Is(r.Err, ErrNotSent) || !errors.Is(r.Err, ErrTooLong) {
				t.Errorf("result %d = %v, want not sent after the too long one", i, r.Err)
			}
		}
	}
	bad := []*notification.Notification{note("mars", "od", "1"), {EventType: "x", Payload: []byte("{}")}, note("Bad.Base", "x")}
	res = e.PublishBatch(context.Background(), bad)
	if res[0].Err != nil || res[1].Err == nil || !errors.Is(res[2].Err, ErrNotSent) {
		t.Errorf("batch with a notification without base: %+v", res)
	}
	res = e.PublishBatch(context.Background(), []*notification.Notification{note("Bad.Base", "x")})
	if !errors.Is(res[0].Err, ErrInvalidName) {
		t.Errorf("invalid base: %v, want ErrInvalidName", res[0].Err)
	}
}

// TestPublishBatchDeletedStream: a stream deleted behind the engine's
// back is created again, as Publish does, and the batch is stored in it.
func TestPublishBatchDeletedStream(t *testing.T) {
	e := open(t, testOptions(t))
	ctx := context.Background()
	mustPublish(t, e, note("mars", "od", "first"))
	if err := e.cur().js.DeleteStream(ctx, "MARS"); err != nil {
		t.Fatal(err)
	}
	ns := batchOf("mars", 20)
	res := e.PublishBatch(ctx, ns)
	for i, r := range res {
		if r.Err != nil || r.Seq != uint64(i+1) {
			t.Fatalf("result %d = %d, %v; want stored as %d in the new stream", i, r.Seq, r.Err, i+1)
		}
	}
	if c := streamConfig(t, e, "MARS"); c.Metadata[MetadataBase] != "mars" {
		t.Errorf("recreated stream config %+v", c)
	}
}

// TestPublishBatchNoAck: publishes that nobody acknowledges (the stream
// is gone and a plain subscriber, which never answers, listens on its
// subjects) end with ErrUnknownOutcome after their attempts, each sent
// again once; those after the window are not sent.
func TestPublishBatchNoAck(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	e := openURL(t, s.ClientURL(), func(o *Options) {
		o.RequestTimeout = 200 * time.Millisecond
		o.PublishAttempts = 2
		o.PublishTimeout = 5 * time.Second
	})
	ctx := context.Background()
	mustPublish(t, e, note("mars", "od", "first"))
	if err := e.cur().js.DeleteStream(ctx, "MARS"); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var mu sync.Mutex
	received := map[string]int{}
	sub, err := nc.Subscribe("mars.>", func(m *nats.Msg) {
		mu.Lock()
		received[m.Header.Get(nats.MsgIdHdr)]++
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ns := batchOf("mars", batchWindow+5)
	began := time.Now()
	res := e.PublishBatch(ctx, ns)
	t.Logf("took %s; result 0: %v; result %d: %v", time.Since(began), res[0].Err, batchWindow, res[batchWindow].Err)
	for i, r := range res {
		switch {
		case i < batchWindow:
			if !errors.Is(r.Err, engine.ErrUnknownOutcome) || errors.Is(r.Err, engine.ErrUnavailable) || r.Seq != 0 {
				t.Fatalf("result %d = %d, %v; want ErrUnknownOutcome", i, r.Seq, r.Err)
			}
		default:
			if !errors.Is(r.Err, ErrNotSent) || !errors.Is(r.Err, engine.ErrUnavailable) || errors.Is(r.Err, engine.ErrUnknownOutcome) {
				t.Fatalf("result %d = %v; want not sent (unavailable)", i, r.Err)
			}
		}
	}
	testkit.WaitFor(t, wait, "the subscriber to receive both attempts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range received {
			n += c
		}
		return n >= 2*batchWindow
	})
	mu.Lock()
	defer mu.Unlock()
	if len(received) != batchWindow {
		t.Errorf("the subscriber received %d distinct messages, want %d", len(received), batchWindow)
	}
	for id, c := range received {
		if c != 2 {
			t.Errorf("message %s received %d times, want 2", id, c)
			break
		}
	}
}

// TestPublishBatchContext: ctx bounds the whole batch: the notifications
// in flight when it ends have an unknown outcome, the others were not
// sent; a batch with an ended context sends nothing.
func TestPublishBatchContext(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	e := openURL(t, s.ClientURL(), nil)
	ctx := context.Background()
	mustPublish(t, e, note("mars", "od", "first"))
	if err := e.cur().js.DeleteStream(ctx, "MARS"); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Subscribe("mars.>", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	res := e.PublishBatch(short, batchOf("mars", batchWindow+5))
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("PublishBatch took %s with a 300 ms context", d)
	}
	for i, r := range res {
		unknown := errors.Is(r.Err, engine.ErrUnknownOutcome)
		if !errors.Is(r.Err, context.DeadlineExceeded) || unknown != (i < batchWindow) || errors.Is(r.Err, ErrNotSent) == (i < batchWindow) {
			t.Fatalf("result %d = %v; want the deadline, %s", i, r.Err, map[bool]string{true: "unknown outcome", false: "not sent"}[i < batchWindow])
		}
	}
	ended, cancel2 := context.WithCancel(ctx)
	cancel2()
	for i, r := range e.PublishBatch(ended, batchOf("mars", 3)) {
		if !errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, engine.ErrUnknownOutcome) {
			t.Errorf("ended context: result %d = %v", i, r.Err)
		}
	}
	closed := open(t, testOptions(t))
	closed.Close()
	for i, r := range closed.PublishBatch(ctx, batchOf("mars", 2)) {
		if !errors.Is(r.Err, engine.ErrClosed) {
			t.Errorf("closed engine: result %d = %v", i, r.Err)
		}
	}
}

// TestPublishBatchUnavailable: with the server out of reach before the
// batch, every notification fails with ErrUnavailable within the publish
// timeout and nothing is sent; once it is back, a batch is stored.
func TestPublishBatchUnavailable(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	e := openURL(t, "nats://"+px.Addr(), nil)
	ctx := context.Background()
	mustPublish(t, e, note("mars", "od", "first"))
	px.Down()
	testkit.WaitFor(t, wait, "the engine to notice the lost connection", func() bool { return e.Ready(ctx) != nil })
	began := time.Now()
	res := e.PublishBatch(ctx, batchOf("mars", 10))
	if d := time.Since(began); d > e.opts.PublishTimeout+time.Second {
		t.Errorf("PublishBatch took %s, more than the publish timeout %s", d, e.opts.PublishTimeout)
	}
	t.Logf("result 0: %v", res[0].Err)
	t.Logf("result 1: %v", res[1].Err)
	for i, r := range res {
		if !errors.Is(r.Err, engine.ErrUnavailable) || errors.Is(r.Err, engine.ErrUnknownOutcome) || errors.Is(r.Err, ErrNotSent) != (i > 0) {
			t.Errorf("result %d = %v; want ErrUnavailable (not sent)", i, r.Err)
		}
	}
	px.Up()
	testkit.WaitFor(t, wait, "readiness after the connection is back", func() bool { return e.Ready(ctx) == nil })
	ns := batchOf("mars", 10)
	for i, r := range e.PublishBatch(ctx, ns) {
		if r.Err != nil || r.Seq != uint64(i+2) {
			t.Errorf("after the outage: result %d = %d, %v; want %d", i, r.Seq, r.Err, i+2)
		}
	}
	if got := len(readAll(t, e, engine.Query{Stream: "mars"}, everything, 100)); got != 11 {
		t.Errorf("mars holds %d notifications, want 11", got)
	}
}

// TestPublishBatchConnectionLost: the connection is cut while the first
// window is sent and nobody answers: the notifications sent end with
// ErrUnknownOutcome as soon as the loss is noticed and the resends fail,
// not after the acknowledgement timeout; the others were not sent. Once
// the connection is back, a batch is stored (the stream, deleted for the
// test, is created again).
func TestPublishBatchConnectionLost(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	e := openURL(t, "nats://"+px.Addr(), func(o *Options) { o.RequestTimeout = 20 * time.Second })
	ctx := context.Background()
	mustPublish(t, e, note("mars", "od", "first"))
	if err := e.cur().js.DeleteStream(ctx, "MARS"); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	arrived := make(chan struct{})
	var once sync.Once
	sub, err := nc.Subscribe("mars.>", func(*nats.Msg) { once.Do(func() { close(arrived) }) })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	done := make(chan []engine.BatchResult, 1)
	began := time.Now()
	go func() { done <- e.PublishBatch(ctx, batchOf("mars", batchWindow+5)) }()
	select {
	case <-arrived:
	case <-time.After(wait):
		t.Fatal("nothing sent")
	}
	px.Down()
	var res []engine.BatchResult
	select {
	case res = <-done:
	case <-time.After(wait):
		t.Fatal("PublishBatch did not return")
	}
	if d := time.Since(began); d > e.opts.RequestTimeout/2 {
		t.Errorf("PublishBatch took %s: the loss was noticed by the acknowledgement timeout", d)
	}
	// The cut may come while the first window is still being sent: those
	// sent have an unknown outcome, the others were not sent.
	sent := slices.IndexFunc(res, func(r engine.BatchResult) bool { return errors.Is(r.Err, ErrNotSent) })
	t.Logf("result 0: %v; %d sent", res[0].Err, sent)
	if sent < 1 || sent > batchWindow {
		t.Fatalf("%d sent", sent)
	}
	for i, r := range res {
		if i < sent && (!errors.Is(r.Err, engine.ErrUnknownOutcome) || errors.Is(r.Err, engine.ErrUnavailable)) ||
			i >= sent && (!errors.Is(r.Err, ErrNotSent) || !errors.Is(r.Err, engine.ErrUnavailable) || errors.Is(r.Err, engine.ErrUnknownOutcome)) {
			t.Fatalf("result %d = %v", i, r.Err)
		}
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	px.Up()
	testkit.WaitFor(t, wait, "readiness after the connection is back", func() bool { return e.Ready(ctx) == nil })
	for i, r := range e.PublishBatch(ctx, batchOf("mars", 10)) {
		if r.Err != nil || r.Seq != uint64(i+1) {
			t.Fatalf("after the outage: result %d = %d, %v; want %d in the stream created again", i, r.Seq, r.Err, i+1)
		}
	}
}

// outageBatch publishes a long batch on e in the background and stops
// the server s once at least 1,000 of it are stored (read on the
// watching engine w); it returns the batch and a function that waits for
// its results.
func outageBatch(t *testing.T, e, w *Engine, stop func(), n int) ([]*notification.Notification, func() []engine.BatchResult) {
	t.Helper()
	ns := batchOf("mars", n)
	done := make(chan []engine.BatchResult, 1)
	go func() { done <- e.PublishBatch(context.Background(), ns) }()
	deadline := time.Now().Add(wait)
	for {
		if seq, err := w.LastSeq(context.Background(), "mars"); err == nil && seq >= 1000 {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the batch ended before the server stopped: %v", firstErr(res, nil))
		case <-time.After(5 * time.Millisecond): // polling, with a deadline
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for 1,000 stored")
		}
	}
	stop()
	return ns, func() []engine.BatchResult {
		select {
		case res := <-done:
			return res
		case <-time.After(4 * wait):
			// The rest of the batch (up to tens of thousands, across the
			// outage) under the race detector on a loaded machine took
			// more than 30 s once.
			t.Fatal("PublishBatch did not return")
			return nil
		}
	}
}

// storedIndexes reads which batch indexes mars holds, and under which
// sequences; an index stored twice fails the test.
func storedIndexes(t *testing.T, e *Engine) map[int]uint64 {
	t.Helper()
	out := map[int]uint64{}
	for _, r := range readAll(t, e, engine.Query{Stream: "mars"}, everything, 1000) {
		i := readIndex(t, r)
		if s, dup := out[i]; dup {
			t.Fatalf("notification %d stored twice: sequences %d and %d", i, s, r.Seq)
		}
		out[i] = r.Seq
	}
	return out
}

// TestPublishBatchOutage stops an external server in the middle of a
// batch and keeps it down until the batch has given up: every result
// that says stored is stored under its sequence, every one that says
// not sent is not stored, and the rest have an unknown outcome; the
// stored ones have increasing sequences. Once the server is back, a
// batch is stored again.
func TestPublishBatchOutage(t *testing.T) {
	dir, port := t.TempDir(), testkit.FreePort(t)
	s := runServer(t, dir, port, nil)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	e := openURL(t, url, nil)
	w := openURL(t, url, nil)
	ns, results := outageBatch(t, e, w, func() { stopServer(s) }, 50_000)
	res := results()
	var stored, unknown, notSent int
	for i, r := range res {
		switch {
		case r.Err == nil:
			stored++
		case errors.Is(r.Err, engine.ErrUnknownOutcome):
			unknown++
		case errors.Is(r.Err, engine.ErrUnavailable):
			notSent++
		default:
			t.Fatalf("result %d: %v; want stored, ErrUnknownOutcome or ErrUnavailable", i, r.Err)
		}
	}
	t.Logf("%d stored, %d unknown, %d not sent; first unknown: %v", stored, unknown, notSent, firstErr(res, engine.ErrUnknownOutcome))
	if stored < 500 || notSent == 0 {
		t.Errorf("%d stored, %d not sent: the server did not stop in the middle", stored, notSent)
	}
	checkIncreasing(t, ns, res)
	s = runServer(t, dir, port, nil)
	ctx := context.Background()
	testkit.WaitFor(t, wait, "readiness after the restart", func() bool { return e.Ready(ctx) == nil })
	got := storedIndexes(t, e)
	for i, r := range res {
		seq, ok := got[i]
		switch {
		case r.Err == nil && (!ok || seq != r.Seq):
			t.Fatalf("result %d says stored as %d; the stream has it: %v as %d", i, r.Seq, ok, seq)
		case r.Err != nil && !errors.Is(r.Err, engine.ErrUnknownOutcome) && ok:
			t.Fatalf("result %d says not stored (%v); the stream has it as %d", i, r.Err, seq)
		}
	}
	again := batchOf("mars", 3*batchWindow)
	res = e.PublishBatch(ctx, again)
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("after the outage: result %d: %v", i, r.Err)
		}
	}
	checkIncreasing(t, again, res)
}

// firstErr returns the first result error matching target (any error
// when target is nil).
func firstErr(res []engine.BatchResult, target error) error {
	for _, r := range res {
		if r.Err != nil && (target == nil || errors.Is(r.Err, target)) {
			return r.Err
		}
	}
	return nil
}

// TestPublishBatchRestartResolves: a server restart in the middle of a
// batch, shorter than the retry budget, costs nothing: the notifications
// whose acknowledgement was lost are sent again, the server recognises
// those it had stored by their Nats-Msg-Id, and every notification is
// stored exactly once, in batch order.
func TestPublishBatchRestartResolves(t *testing.T) {
	dir, port := t.TempDir(), testkit.FreePort(t)
	s := runServer(t, dir, port, nil)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	mod := func(o *Options) {
		o.PublishAttempts = 100
		o.PublishTimeout = 20 * time.Second
	}
	e := openURL(t, url, mod)
	w := openURL(t, url, mod)
	const n = 20_000
	ns, results := outageBatch(t, e, w, func() {
		stopServer(s)
		s = runServer(t, dir, port, nil)
	}, n)
	res := results()
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("result %d: %v", i, r.Err)
		}
	}
	checkIncreasing(t, ns, res)
	got := storedIndexes(t, e)
	if len(got) != n {
		t.Errorf("the stream holds %d of the %d notifications", len(got), n)
	}
	for i, r := range res {
		if got[i] != r.Seq {
			t.Fatalf("result %d says %d; stored as %d", i, r.Seq, got[i])
		}
	}
}

// TestParseAck: the fast path reads exactly what encoding/json reads, and
// leaves everything else to it.
func TestParseAck(t *testing.T) {
	for _, c := range []struct {
		in   string
		fast bool
	}{
		{`{"stream":"MARS","seq":1}`, true},
		{`{"stream":"MARS","seq":18446744073709551}`, true},
		{`{"stream":"MARS","seq":42,"duplicate":true}`, true},
		{`{"stream":"A-B_c","seq":9999999999999999999}`, true},
		{`{"stream":"MARS","seq":18446744073709551615}`, false}, // 20 digits
		{`{"stream":"MARS","seq":0}`, true},
		{`{"stream":"MARS","seq":01}`, false},
		{`{"stream":"MARS","seq":-1}`, false},
		{`{"stream":"MARS","seq":}`, false},
		{`{"stream":"","seq":1}`, false},
		{`{"stream":"M\"A","seq":1}`, false},
		{`{"stream":"M\\A","seq":1}`, false},
		{`{"stream":"MARS","domain":"hub","seq":7}`, false},
		{`{"stream":"MARS","seq":7,"duplicate":false}`, false},
		{`{"stream":"MARS","seq":7,"batch":"x","count":2}`, false},
		{`{"stream":"MARS","seq":7} `, false},
		{`{ "stream":"MARS","seq":7}`, false},
		{`{"stream":"MARS","seq":7`, false},
		{`{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"MARS","seq":0}`, false},
		{``, false},
	} {
		got, ok := parseAck([]byte(c.in))
		if ok != c.fast {
			t.Errorf("%s: fast path %v, want %v", c.in, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		var want pubAck
		if err := json.Unmarshal([]byte(c.in), &want); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got != want {
			t.Errorf("%s: fast path %+v, encoding/json %+v", c.in, got, want)
		}
	}
	m := &nats.Msg{Data: []byte(`{"stream":"MARS","domain":"hub","seq":7,"duplicate":true}`)}
	if ack, err := decodeAck(m); err != nil || ack.Stream != "MARS" || ack.Seq != 7 || !ack.Duplicate {
		t.Errorf("decodeAck of an acknowledgement with a domain = %+v, %v", ack, err)
	}
}
