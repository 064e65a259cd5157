package jetstreamtest

import (
	"context"
	"testing"

	"herald/jetstream"
	"herald/notification"
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
