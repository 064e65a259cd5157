package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/engine/enginetest"
	"github.com/herald-gateway/herald/notification"
)

// TestConformance runs the engine conformance suite on the embedded
// server, one fresh server and data directory per property.
func TestConformance(t *testing.T) {
	enginetest.Run(t, func(t *testing.T) engine.Engine {
		return open(t, testOptions(t))
	})
}

// TestRestartKeepsHistory: an engine reopened on the same data directory
// finds every notification with its sequence and time, and goes on
// counting.
func TestRestartKeepsHistory(t *testing.T) {
	o := testOptions(t)
	e, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	type pub struct {
		seq uint64
		at  time.Time
	}
	var pubs []pub
	for i := range 50 {
		seq, at, err := e.Publish(context.Background(), note("mars", "od", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, pub{seq, at})
	}
	for i := range 3 {
		mustPublish(t, e, note("gen", strconv.Itoa(i)))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = open(t, o)
	if got, err := e.LastSeq(context.Background(), "mars"); err != nil || got != 50 {
		t.Fatalf("LastSeq after restart = %d, %v; want 50", got, err)
	}
	recs := readAll(t, e, query("mars", "od", "*"), engine.Range{FromSeq: 0, ToSeq: 50}, 7)
	if len(recs) != len(pubs) {
		t.Fatalf("history after restart has %d records, want %d", len(recs), len(pubs))
	}
	for i, r := range recs {
		if r.Seq != pubs[i].seq || !r.Time.Equal(pubs[i].at) || string(r.Payload) != fmt.Sprintf(`{"n":"od/%d"}`, i) {
			t.Errorf("record %d: seq %d time %v payload %s; want seq %d time %v", i, r.Seq, r.Time, r.Payload, pubs[i].seq, pubs[i].at)
		}
	}
	if got := seqs(readAll(t, e, query("gen", "*"), everything, 10)); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("generic stream after restart: %v", got)
	}
	sub, err := e.Subscribe(context.Background(), query("mars", "*", "*"), engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Boundary() != 50 {
		t.Errorf("boundary after restart %d, want 50", sub.Boundary())
	}
	if seq := mustPublish(t, e, note("mars", "od", "x")); seq != 51 {
		t.Errorf("next sequence %d, want 51", seq)
	}
	select {
	case r := <-sub.C():
		if r.Seq != 51 {
			t.Errorf("live %d, want 51", r.Seq)
		}
	case <-time.After(wait):
		t.Fatal("no live record after restart")
	}
}

// streamConfig returns a stream's configuration straight from the server.
func streamConfig(t *testing.T, e *Engine, name string) jetstream.StreamConfig {
	t.Helper()
	s, err := e.cur().js.Stream(context.Background(), name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return s.CachedInfo().Config
}

// TestStreamPolicy: storage policies become stream limits when the
// stream is created, and a later change is applied, except what the
// server refuses, which is logged and kept.
func TestStreamPolicy(t *testing.T) {
	age, msgs, size, one, yes := time.Hour, int64(1000), int64(1<<20), int64(1), true
	o := testOptions(t)
	o.Defaults = StreamPolicy{MaxMsgs: -1, MaxBytes: -1}
	o.Streams = []StreamSpec{
		{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxAge: &age, MaxMsgs: &msgs, MaxBytes: &size, MaxMsgsPerSubject: &one, Compression: &yes}},
		{Base: "Weather_v2", EventType: "weather"},
	}
	e := open(t, o)
	c := streamConfig(t, e, "MARS")
	if c.MaxAge != age || c.MaxMsgs != msgs || c.MaxBytes != size || c.MaxMsgsPerSubject != 1 ||
		c.Compression != jetstream.S2Compression || !slices.Equal(c.Subjects, []string{"mars", "mars.>"}) ||
		c.Metadata[MetadataBase] != "mars" || !c.AllowDirect || c.Duplicates != minDuplicateWindow || c.Storage != jetstream.FileStorage {
		t.Errorf("MARS config %+v", c)
	}
	w := streamConfig(t, e, "WEATHER_V2")
	if !slices.Equal(w.Subjects, []string{"Weather_v2", "Weather_v2.>"}) || w.MaxMsgsPerSubject != 1 || w.MaxAge != 0 || w.MaxMsgs != -1 {
		t.Errorf("WEATHER_V2 config %+v", w)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	age2, no, many := 2*time.Hour, false, int64(-1)
	o.Streams[0].Policy = PolicyOverride{MaxAge: &age2, MaxMsgs: &msgs, MaxBytes: &size, MaxMsgsPerSubject: &many, Compression: &no}
	o.Defaults.Storage = StorageMemory // the server refuses to change the storage type
	log, logs := newLogCapture()
	o.Logger = log
	e = open(t, o)
	c = streamConfig(t, e, "MARS")
	if c.MaxAge != age2 || c.Compression != jetstream.NoCompression || c.MaxMsgsPerSubject != -1 || c.Storage != jetstream.FileStorage || c.MaxMsgs != msgs {
		t.Errorf("MARS config after reconcile %+v", c)
	}
	changed, refused := map[string]bool{}, map[string]bool{}
	for _, r := range logs() {
		if r.attrs["stream"] != "MARS" {
			continue
		}
		switch r.msg {
		case "stream configuration changed":
			changed[r.attrs["field"]] = true
		case "the server refused a stream configuration change; keeping the current value":
			refused[r.attrs["field"]] = true
		}
	}
	for _, f := range []string{"max_age", "compression", "max_msgs_per_subject"} {
		if !changed[f] {
			t.Errorf("change of %s not logged (changed %v)", f, changed)
		}
	}
	if !refused["storage"] || changed["storage"] {
		t.Errorf("refused storage change not logged (refused %v, changed %v)", refused, changed)
	}
}

// TestDefaultKeepsNewestPerSubject: without allow_duplicates a stream
// keeps one notification per subject, as Aviso does.
func TestDefaultKeepsNewestPerSubject(t *testing.T) {
	o := testOptions(t)
	o.Defaults = StreamPolicy{}
	e := open(t, o)
	mustPublish(t, e, note("mars", "od", "1"))
	mustPublish(t, e, note("mars", "od", "2"))
	mustPublish(t, e, note("mars", "od", "1"))
	if got := seqs(readAll(t, e, query("mars", "*", "*"), everything, 10)); !slices.Equal(got, []uint64{2, 3}) {
		t.Errorf("history %v, want [2 3]", got)
	}
}

// TestAdminOnlyHeraldStreams: admin operations never touch a stream
// herald does not manage, and report unknown streams and sequences as
// not found.
func TestAdminOnlyHeraldStreams(t *testing.T) {
	e := open(t, testOptions(t))
	ctx := context.Background()
	if _, err := e.cur().js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.cur().js.Publish(ctx, "other.x", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		mustPublish(t, e, note("mars", "od", strconv.Itoa(i)))
		mustPublish(t, e, note("gen", strconv.Itoa(i)))
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"WipeStream(other)", e.WipeStream(ctx, "other")},
		{"WipeStream(nosuch)", e.WipeStream(ctx, "nosuch")},
		{"Delete(other, 1)", e.Delete(ctx, "other", 1)},
		{"Delete(nosuch, 1)", e.Delete(ctx, "nosuch", 1)},
		{"Delete(mars, 0)", e.Delete(ctx, "mars", 0)},
		{"Delete(mars, 4)", e.Delete(ctx, "mars", 4)},
	} {
		if !errors.Is(c.err, engine.ErrNotFound) {
			t.Errorf("%s = %v, want ErrNotFound", c.name, c.err)
		}
	}
	for _, seq := range []uint64{2, 1} { // a middle one, then the first one
		if err := e.Delete(ctx, "MARS", seq); err != nil {
			t.Errorf("Delete(MARS, %d): %v", seq, err)
		}
		if err := e.Delete(ctx, "mars", seq); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("second Delete(mars, %d) = %v, want ErrNotFound", seq, err)
		}
	}
	if err := e.WipeAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"MARS", "GEN"} {
		s, err := e.cur().js.Stream(ctx, name)
		if err != nil || s.CachedInfo().State.Msgs != 0 || s.CachedInfo().State.LastSeq != 3 {
			t.Errorf("%s after WipeAll: %+v, %v", name, s.CachedInfo().State, err)
		}
	}
	if s, err := e.cur().js.Stream(ctx, "OTHER"); err != nil || s.CachedInfo().State.Msgs != 3 {
		t.Errorf("foreign stream touched by WipeAll: %+v, %v", s.CachedInfo().State, err)
	}
	mustPublish(t, e, note("gen", "x"))
	if err := e.WipeStream(ctx, "GEN"); err != nil {
		t.Errorf("WipeStream(GEN): %v", err)
	}
}

// TestReadyAndClose: Ready answers nil while the server is up and
// ErrClosed after Close; a second Close is harmless.
func TestReadyAndClose(t *testing.T) {
	e := open(t, testOptions(t))
	if err := e.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if e.Server() == nil || e.Hub() == nil {
		t.Fatal("embedded engine without server or hub")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Ready(context.Background()); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Ready after Close = %v, want ErrClosed", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestEmbeddedListen: with a listen address the embedded server accepts
// NATS clients on loopback (for the nats CLI), with the token; a
// non-loopback address is refused.
func TestEmbeddedListen(t *testing.T) {
	o := testOptions(t)
	o.Embedded.Listen = "0.0.0.0:0"
	if _, err := Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("Open with a public listen address = %v, want a loopback error", err)
	}
	o.Embedded.Listen = "127.0.0.1:0"
	o.Token = "s3cret"
	e := open(t, o)
	mustPublish(t, e, note("mars", "od", "1"))
	url := e.Server().ClientURL()
	if _, err := nats.Connect(url); err == nil {
		t.Error("connected without the token")
	}
	nc, err := nats.Connect(url, nats.Token("s3cret"))
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	s, err := js.Stream(context.Background(), "MARS")
	if err != nil || s.CachedInfo().State.Msgs != 1 {
		t.Fatalf("stream through the listener: %v", err)
	}
}

// TestConcurrentWatchersAndPublishers: many watchers with different
// filters and several concurrent publishers; every watcher receives
// exactly its matches, in order, and history agrees.
func TestConcurrentWatchersAndPublishers(t *testing.T) {
	e := open(t, testOptions(t))
	classes, kinds := []string{"od", "rd", "ea", "mc"}, []string{"enfo", "oper", "wave"}
	var queries []engine.Query
	queries = append(queries, query("mars", "*", "*", "*"), engine.Query{Stream: "mars"})
	for _, c := range classes {
		queries = append(queries, query("mars", c, "*", "*"))
		for _, k := range kinds {
			queries = append(queries, query("mars", c, k, "*"), query("mars", c, k, "7"))
		}
	}
	for _, k := range kinds {
		queries = append(queries, query("mars", "*", k, "*"))
	}
	subs := make([]*engine.Subscription, len(queries))
	for i, q := range queries {
		s, err := e.Subscribe(context.Background(), q, engine.SubscribeOptions{QueueSize: 10000})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		subs[i] = s
	}
	const publishers, each = 6, 120
	var (
		mu    sync.Mutex
		notes = map[uint64]*notification.Notification{}
		wg    sync.WaitGroup
		errs  = make(chan error, publishers)
	)
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := note("mars", classes[(p+i)%len(classes)], kinds[(p*7+i)%len(kinds)], strconv.Itoa(i%10))
				seq, _, err := e.Publish(context.Background(), n)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				notes[seq] = n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(notes) != publishers*each {
		t.Fatalf("%d distinct sequences, want %d", len(notes), publishers*each)
	}
	for i, q := range queries {
		var want []uint64
		for seq := uint64(1); seq <= publishers*each; seq++ {
			n := notes[seq]
			if q.Match(&engine.Record{Notification: *n, Seq: seq}) {
				want = append(want, seq)
			}
		}
		got := make([]uint64, 0, len(want))
		deadline := time.After(wait)
		for len(got) < len(want) {
			select {
			case r := <-subs[i].C():
				got = append(got, r.Seq)
			case <-subs[i].Done():
				t.Fatalf("watcher %d ended: %v", i, subs[i].Err())
			case <-deadline:
				t.Fatalf("watcher %d received %d of %d", i, len(got), len(want))
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("watcher %d (%v): live %v, want %v", i, q.Filter.Pattern.Display(), got, want)
		}
		if h := seqs(readAll(t, e, q, everything, 37)); !slices.Equal(h, want) {
			t.Errorf("query %d: history %v, want %v", i, h, want)
		}
	}
}
