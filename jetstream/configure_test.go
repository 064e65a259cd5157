package jetstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/notification"
)

// configure calls ConfigureStreams with a deadline.
func configure(e *Engine, defaults StreamPolicy, streams ...StreamSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return e.ConfigureStreams(ctx, defaults, streams)
}

// noteOf builds a notification of event type et on base.
func noteOf(et, base string, tokens ...string) *notification.Notification {
	n := note(base, tokens...)
	n.EventType = et
	return n
}

// TestConfigureStreamsAdds: an added event type's stream exists, with its
// policy, when ConfigureStreams returns; a notification published right
// after goes to it, reaches a watcher live and reads back with the event
// type of the new spec (its base differs from its name).
func TestConfigureStreamsAdds(t *testing.T) {
	o := testOptions(t)
	e := open(t, o)
	ctx := context.Background()
	if _, err := e.cur().js.Stream(ctx, "VENUS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("VENUS before: %v", err)
	}
	ten, age := int64(10), time.Hour
	if err := configure(e, o.Defaults, StreamSpec{Base: "venus", EventType: "planet", Policy: PolicyOverride{MaxMsgs: &ten, MaxAge: &age}}); err != nil {
		t.Fatal(err)
	}
	c := streamConfig(t, e, "VENUS")
	if c.MaxMsgs != 10 || c.MaxAge != time.Hour || c.MaxMsgsPerSubject != -1 || c.Metadata[MetadataBase] != "venus" ||
		!slices.Equal(c.Subjects, []string{"venus", "venus.>"}) || c.Storage != jetstream.FileStorage {
		t.Errorf("VENUS config %+v", c)
	}
	e.mu.RLock()
	st := e.streams["venus"]
	e.mu.RUnlock()
	if st == nil || st.feed.Load() == nil {
		t.Fatal("the added stream has no live feed")
	}
	sub, err := e.Subscribe(ctx, query("venus", "*"), engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if seq := mustPublish(t, e, noteOf("planet", "venus", "a")); seq != 1 {
		t.Fatalf("first sequence of the added stream %d", seq)
	}
	select {
	case r := <-sub.C():
		if r.Seq != 1 || r.EventType != "planet" {
			t.Errorf("live record %d of %s", r.Seq, r.EventType)
		}
	case <-time.After(wait):
		t.Fatal("no live record on the added stream")
	}
	recs := readAll(t, e, query("venus", "*"), everything, 10)
	if len(recs) != 1 || recs[0].EventType != "planet" {
		t.Fatalf("history of the added stream %+v", recs)
	}
	// The spec's event type is the base's default: no header needed.
	s, err := e.cur().js.Stream(ctx, "VENUS")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Header.Get(HeaderEventType); v != "" {
		t.Errorf("stored with %s %q: the publish did not see the new spec", HeaderEventType, v)
	}
	// The other streams are as they were.
	if c := streamConfig(t, e, "MARS"); c.MaxMsgs != -1 || c.MaxAge != 0 {
		t.Errorf("MARS changed: %+v", c)
	}
}

// TestConfigureStreamsReconciles: a changed storage policy is applied to
// the existing stream (limits enforced at once), and its live feed goes
// on.
func TestConfigureStreamsReconciles(t *testing.T) {
	o := testOptions(t)
	e := open(t, o)
	ctx := context.Background()
	sub, err := e.Subscribe(ctx, query("mars", "*", "*"), engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range 5 {
		mustPublish(t, e, note("mars", "od", strconv.Itoa(i)))
	}
	three, age := int64(3), 2*time.Hour
	if err := configure(e, o.Defaults, StreamSpec{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three, MaxAge: &age}}); err != nil {
		t.Fatal(err)
	}
	c := streamConfig(t, e, "MARS")
	if c.MaxMsgs != 3 || c.MaxAge != 2*time.Hour || c.Duplicates != minDuplicateWindow || c.MaxMsgsPerSubject != -1 {
		t.Errorf("MARS config %+v", c)
	}
	if got := seqs(readAll(t, e, query("mars", "*", "*"), everything, 10)); !slices.Equal(got, []uint64{3, 4, 5}) {
		t.Errorf("MARS history after max_messages 3: %v", got)
	}
	if seq := mustPublish(t, e, note("mars", "od", "x")); seq != 6 {
		t.Errorf("next sequence %d", seq)
	}
	for want := uint64(1); want <= 6; want++ {
		select {
		case r := <-sub.C():
			if r.Seq != want {
				t.Fatalf("live %d, want %d", r.Seq, want)
			}
		case <-time.After(wait):
			t.Fatalf("live %d missing", want)
		}
	}
	if e.policyOf("mars").MaxMsgs != 3 {
		t.Errorf("engine policy of mars %+v", e.policyOf("mars"))
	}
	// Back to the defaults, and a change of the defaults reaches the
	// schema-less streams created afterwards.
	d := o.Defaults
	d.MaxBytes = 1 << 20
	if err := configure(e, d, StreamSpec{Base: "mars", EventType: "mars"}); err != nil {
		t.Fatal(err)
	}
	if c := streamConfig(t, e, "MARS"); c.MaxMsgs != -1 || c.MaxAge != 0 || c.MaxBytes != 1<<20 {
		t.Errorf("MARS config back to the defaults %+v", c)
	}
	mustPublish(t, e, note("gen", "a"))
	if c := streamConfig(t, e, "GEN"); c.MaxBytes != 1<<20 {
		t.Errorf("schema-less stream created after the reload: %+v", c)
	}
	if c := streamConfig(t, e, "DISS"); c.MaxBytes != -1 {
		t.Errorf("DISS, not reconfigured, changed: %+v", c)
	}
}

// TestConfigureStreamsRefuses: a change JetStream cannot apply, or a
// value it refuses, changes nothing at all (neither the other specs'
// streams nor the engine's settings), and the error names the event
// type, the stream and the setting.
func TestConfigureStreamsRefuses(t *testing.T) {
	o := testOptions(t)
	e := open(t, o)
	ctx := context.Background()
	mustPublish(t, e, note("mars", "od", "1"))
	before := map[string]jetstream.StreamConfig{"MARS": streamConfig(t, e, "MARS"), "DISS": streamConfig(t, e, "DISS")}
	three, tiny := int64(3), 10*time.Millisecond
	memory, workqueue, replicated := o.Defaults, o.Defaults, o.Defaults
	memory.Storage, workqueue.Retention, replicated.Replicas = StorageMemory, RetentionWorkQueue, 3
	for _, c := range []struct {
		name     string
		defaults StreamPolicy
		specs    []StreamSpec
		want     []string // in the message
		settings []string // StreamRefusal.Setting, in order
	}{
		{"storage type", memory,
			[]StreamSpec{{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}}, {Base: "venus", EventType: "venus"}, {Base: "diss", EventType: "dissemination"}},
			[]string{"event type mars (stream MARS): storage cannot change from File to Memory: JetStream cannot change the storage type of an existing stream (notification_backend.jetstream.storage_type)",
				"event type dissemination (stream DISS): storage cannot change from File to Memory"},
			[]string{"storage", "storage"}},
		{"retention to workqueue", workqueue,
			[]StreamSpec{{Base: "venus", EventType: "venus"}, {Base: "mars", EventType: "mars"}},
			[]string{"event type mars (stream MARS): retention cannot change from Limits to WorkQueue: JetStream cannot change the retention policy of an existing stream to or from workqueue (notification_backend.jetstream.retention_policy)"},
			[]string{"retention"}},
		{"replicas on the embedded server", replicated,
			[]StreamSpec{{Base: "venus", EventType: "venus"}, {Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}}},
			[]string{"event type venus (stream VENUS): num_replicas 3: the embedded nats-server is not clustered",
				"event type mars (stream MARS): num_replicas cannot change from 1 to 3: the embedded nats-server is not clustered"},
			[]string{"num_replicas", "num_replicas"}},
		{"max age under 100ms", o.Defaults,
			[]StreamSpec{{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}}, {Base: "diss", EventType: "diss", Policy: PolicyOverride{MaxAge: &tiny}}},
			[]string{"event type diss (stream DISS): max_age cannot change from 0s to 10ms: JetStream needs a max age of at least 100ms, or none (retention_time)"},
			[]string{"max_age"}},
		{"unknown storage type", StreamPolicy{Storage: "tape"},
			[]StreamSpec{{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}}},
			[]string{`default stream policy: storage type "tape": use "file" or "memory"`, `event type mars (stream MARS): storage type "tape"`},
			[]string{"policy", "policy"}},
		{"bases of one stream", o.Defaults,
			[]StreamSpec{{Base: "venus", EventType: "a"}, {Base: "Venus", EventType: "b"}},
			[]string{`event type b (stream VENUS): topic bases "venus" and "Venus" both map to stream VENUS`},
			[]string{"subjects"}},
		{"existing stream of another case", o.Defaults,
			[]StreamSpec{{Base: "Mars", EventType: "mars2"}},
			[]string{`event type mars2 (stream MARS): subjects cannot change from [mars mars.>] to [Mars Mars.>]: stream MARS exists on embedded nats-server`, `does not hold the subjects of topic base "Mars"`},
			[]string{"subjects"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := configure(e, c.defaults, c.specs...)
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, engine.ErrInvalid) {
				t.Fatalf("err = %v, want a *RefusedError", err)
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			var settings []string
			for _, r := range re.Refusals {
				settings = append(settings, r.Setting)
			}
			if !slices.Equal(settings, c.settings) {
				t.Errorf("refused settings %v, want %v", settings, c.settings)
			}
			for name, cfg := range before {
				if got := streamConfig(t, e, name); fmt.Sprint(got) != fmt.Sprint(cfg) {
					t.Errorf("%s changed:\n%+v\nwas\n%+v", name, got, cfg)
				}
			}
			for _, name := range []string{"VENUS", "Venus"} {
				if _, err := e.cur().js.Stream(ctx, name); !errors.Is(err, jetstream.ErrStreamNotFound) {
					t.Errorf("stream %s created: %v", name, err)
				}
			}
			if p := e.policyOf("mars"); p != o.Defaults.withDefaults() {
				t.Errorf("engine policy of mars changed: %+v", p)
			}
			if et := e.eventTypeOf("venus"); et != "venus" {
				t.Errorf("engine spec of venus installed: %s", et)
			}
		})
	}
	if seq := mustPublish(t, e, note("mars", "od", "2")); seq != 2 {
		t.Errorf("MARS after the refusals: sequence %d", seq)
	}
}

// TestConfigureStreamsKeepsWhatStartupKept: a change the server cannot
// apply that the running configuration already asked for (startup logged
// and kept it) does not block another change: it is logged and kept
// again, as at startup.
func TestConfigureStreamsKeepsWhatStartupKept(t *testing.T) {
	o := testOptions(t)
	e, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	o.Defaults.Storage = StorageMemory // the file streams stay on file
	log, logs := newLogCapture()
	o.Logger = log
	e = open(t, o)
	three := int64(3)
	if err := configure(e, o.Defaults, StreamSpec{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}}); err != nil {
		t.Fatal(err)
	}
	if c := streamConfig(t, e, "MARS"); c.MaxMsgs != 3 || c.Storage != jetstream.FileStorage {
		t.Errorf("MARS %+v", c)
	}
	kept := 0
	for _, r := range logs() {
		if strings.HasPrefix(r.msg, "JetStream cannot apply this stream configuration change") && r.attrs["stream"] == "MARS" && r.attrs["field"] == "storage" {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("the kept storage type was logged %d times, want once", kept)
	}
	// An added event type gets the memory store it asks for.
	if err := configure(e, o.Defaults, StreamSpec{Base: "venus", EventType: "venus"}); err != nil {
		t.Fatal(err)
	}
	if c := streamConfig(t, e, "VENUS"); c.Storage != jetstream.MemoryStorage {
		t.Errorf("VENUS %+v", c)
	}
}

// TestConfigureStreamsPartialFailure: when the server refuses a call
// after streams were changed, the error says which were, and the
// engine's settings stay as they were.
func TestConfigureStreamsPartialFailure(t *testing.T) {
	o := testOptions(t)
	e := open(t, o)
	ctx := context.Background()
	// A stream herald does not manage holds the subjects of base venus.
	if _, err := e.cur().js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"venus.>"}}); err != nil {
		t.Fatal(err)
	}
	three := int64(3)
	err := configure(e, o.Defaults,
		StreamSpec{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}},
		StreamSpec{Base: "venus", EventType: "planet"},
		StreamSpec{Base: "diss", EventType: "diss", Policy: PolicyOverride{MaxMsgs: &three}})
	if err == nil {
		t.Fatal("ConfigureStreams succeeded")
	}
	t.Log(err)
	for _, w := range []string{"create stream VENUS (event type planet)", "streams already changed: MARS (updated); not changed: DISS"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q: %v", w, err)
		}
	}
	if c := streamConfig(t, e, "MARS"); c.MaxMsgs != 3 {
		t.Errorf("MARS %+v", c)
	}
	if c := streamConfig(t, e, "DISS"); c.MaxMsgs != -1 {
		t.Errorf("DISS %+v", c)
	}
	if et := e.eventTypeOf("venus"); et != "venus" || e.policyOf("mars").MaxMsgs == 3 {
		t.Errorf("settings installed after a failure: %s %+v", et, e.policyOf("mars"))
	}
}

// TestConfigureStreamsUnavailable: with the server out of reach,
// ConfigureStreams fails at once with engine.ErrUnavailable and changes
// nothing; with an ended context it sends nothing.
func TestConfigureStreamsUnavailable(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	px := testkit.NewProxy(t, s.Addr().String())
	e := openURL(t, "nats://"+px.Addr(), nil)
	px.Down()
	testkit.WaitFor(t, wait, "the engine to notice the lost connection", func() bool { return e.Ready(context.Background()) != nil })
	o := urlOptions(t, "nats://"+px.Addr(), nil)
	three := int64(3)
	spec := StreamSpec{Base: "mars", EventType: "mars", Policy: PolicyOverride{MaxMsgs: &three}}
	err := configure(e, o.Defaults, spec)
	t.Log(err)
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("ConfigureStreams while down = %v, want ErrUnavailable", err)
	}
	px.Up()
	testkit.WaitFor(t, wait, "readiness after the connection is back", func() bool { return e.Ready(context.Background()) == nil })
	if c := streamConfig(t, e, "MARS"); c.MaxMsgs != -1 {
		t.Errorf("MARS changed while down: %+v", c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.ConfigureStreams(ctx, o.Defaults, []StreamSpec{spec}); !errors.Is(err, context.Canceled) {
		t.Errorf("ConfigureStreams with an ended context = %v", err)
	}
	if err := configure(e, o.Defaults, spec); err != nil {
		t.Fatal(err)
	}
	if c := streamConfig(t, e, "MARS"); c.MaxMsgs != 3 {
		t.Errorf("MARS after the outage: %+v", c)
	}
}

// TestConfigureStreamsWhilePublishing: streams added and reconciled over
// and over while publishers and watchers use another stream: that
// stream loses nothing, every acknowledged notification is stored once
// and reaches its watchers once, in order, and the added streams serve
// at once.
func TestConfigureStreamsWhilePublishing(t *testing.T) {
	o := testOptions(t)
	e := open(t, o)
	h := newHarness(t, e)
	h.watch(e, "all", engine.Query{Stream: "mars"})
	h.watch(e, "od", query("mars", "od", "*", "*"))
	h.start(2)
	h.waitAcked(50)
	const rounds = 10
	for i := range rounds {
		n := int64(100 + i)
		base := "extra" + strconv.Itoa(i)
		if err := configure(e, o.Defaults,
			StreamSpec{Base: "diss", EventType: "diss", Policy: PolicyOverride{MaxMsgs: &n}},
			StreamSpec{Base: base, EventType: base}); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if seq := mustPublish(t, e, note(base, "x")); seq != 1 {
			t.Fatalf("round %d: added stream's first sequence %d", i, seq)
		}
	}
	h.waitAcked(50)
	h.check(e)
	h.mu.Lock()
	acked := slices.Clone(h.acked)
	h.mu.Unlock()
	slices.Sort(acked)
	stored := seqs(readAll(t, e, engine.Query{Stream: "mars"}, everything, 500))
	want := make([]uint64, len(acked))
	for i := range want {
		want[i] = uint64(i + 1)
	}
	if !slices.Equal(acked, want) || !slices.Equal(stored, want) {
		t.Errorf("%d acknowledged, %d stored; want both 1..%d%s", len(acked), len(stored), len(want), firstDiff(stored, want))
	}
	if c := streamConfig(t, e, "DISS"); c.MaxMsgs != 100+rounds-1 {
		t.Errorf("DISS max_msgs %d", c.MaxMsgs)
	}
	t.Logf("%d notifications acknowledged and stored during %d reconfigurations", len(acked), rounds)
}
