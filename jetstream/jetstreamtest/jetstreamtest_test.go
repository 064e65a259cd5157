package jetstreamtest

import (
	"context"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/jetstream"
	"github.com/herald-gateway/herald/notification"
)

func TestOpen(t *testing.T) {
	e := Open(t, []jetstream.StreamSpec{{Base: "mars", EventType: "mars"}}, nil)
	n := &notification.Notification{EventType: "mars", Subject: "mars.od", Tokens: []string{"mars", "od"}, Payload: []byte("{}")}
	for want := uint64(1); want <= 2; want++ {
		seq, _, err := e.Publish(context.Background(), n)
		if err != nil || seq != want {
			t.Fatalf("Publish = %d, %v; want %d", seq, err, want)
		}
	}
	if err := e.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestServerRestartKeepsStore(t *testing.T) {
	s := StartServer(t)
	e := Open(t, []jetstream.StreamSpec{{Base: "mars", EventType: "mars"}}, func(o *jetstream.Options) {
		o.URL = s.URL()
		o.MaxReconnects = -1
		o.ReconnectDelay = 20 * time.Millisecond
	})
	n := &notification.Notification{EventType: "mars", Subject: "mars.od", Tokens: []string{"mars", "od"}, Payload: []byte("{}")}
	if seq, _, err := e.Publish(context.Background(), n); err != nil || seq != 1 {
		t.Fatalf("Publish = %d, %v; want 1", seq, err)
	}
	s.Stop()
	s.Start()
	testkit.WaitFor(t, time.Minute, "the engine ready after the restart", func() bool { return e.Ready(context.Background()) == nil })
	if seq, _, err := e.Publish(context.Background(), n); err != nil || seq != 2 {
		t.Fatalf("Publish after the restart = %d, %v; want 2 (the store kept the first)", seq, err)
	}
}
