package session

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

// frameOf returns a queued frame of n bytes of no subscription.
func frameOf(n int) queued { return queued{data: bytes.Repeat([]byte("x"), n)} }

// checkLength fails unless q holds frames frames of size bytes.
func checkLength(t *testing.T, q *eventQueue, frames, size int) {
	t.Helper()
	if f, b := q.length(); f != frames || b != size {
		t.Fatalf("queue holds %d frames of %d bytes, want %d of %d", f, b, frames, size)
	}
}

// TestEventQueueAdmission: a frame fits while the queued bytes stay
// within the byte bound and the frames within the frame bound; an empty
// queue takes one frame of any size; a forced (final) frame always goes
// in; and a queue emptied by pop or purge holds no buffer.
func TestEventQueueAdmission(t *testing.T) {
	kicks := 0
	var q eventQueue
	q.init(4, 100, func() { kicks++ })

	// By bytes: 40 + 40 + 20 = 100 fits exactly; 30 more would not.
	for _, n := range []int{40, 40} {
		if ok, _ := q.tryPush(frameOf(n), false); !ok {
			t.Fatalf("a %d-byte frame refused", n)
		}
	}
	if ok, room := q.tryPush(frameOf(30), false); ok || room == nil {
		t.Fatalf("a 30-byte frame on 80 queued bytes of 100: admitted %v, room channel %v", ok, room)
	}
	if !q.full(30) || q.full(20) {
		t.Fatalf("full(30) %v, full(20) %v on 80 queued bytes of 100", q.full(30), q.full(20))
	}
	if ok, _ := q.tryPush(frameOf(20), false); !ok {
		t.Fatal("a 20-byte frame on 80 queued bytes of 100 refused")
	}
	checkLength(t, &q, 3, 100)
	if !q.full(1) {
		t.Fatal("a 1-byte frame fits in a queue at its byte bound")
	}

	// Taking a frame makes room by bytes, and wakes those waiting.
	_, room := q.tryPush(frameOf(30), false)
	if f, ok := q.pop(); !ok || len(f.data) != 40 {
		t.Fatalf("pop %d bytes, %v", len(f.data), ok)
	}
	select {
	case <-room:
	default:
		t.Fatal("pop did not signal room")
	}
	checkLength(t, &q, 2, 60)
	if ok, _ := q.tryPush(frameOf(41), false); ok {
		t.Fatal("a 41-byte frame on 60 queued bytes of 100 admitted")
	}
	if ok, _ := q.tryPush(frameOf(40), false); !ok {
		t.Fatal("a 40-byte frame on 60 queued bytes of 100 refused")
	}
	checkLength(t, &q, 3, 100)

	// A final frame goes in whatever the queue holds, and counts.
	if ok, _ := q.tryPush(queued{data: []byte("end"), final: true}, true); !ok {
		t.Fatal("a forced frame refused")
	}
	checkLength(t, &q, 4, 103)
	for range 4 {
		if _, ok := q.pop(); !ok {
			t.Fatal("a queued frame is missing")
		}
	}
	checkLength(t, &q, 0, 0)
	if q.frames != nil {
		t.Fatalf("an idle queue holds a buffer of %d frames", cap(q.frames))
	}

	// An empty queue takes one frame above the byte bound, then nothing
	// until it leaves.
	if q.full(500) {
		t.Fatal("an empty queue refuses a 500-byte frame")
	}
	if ok, _ := q.tryPush(frameOf(500), false); !ok {
		t.Fatal("an empty queue refused a 500-byte frame")
	}
	if ok, _ := q.tryPush(frameOf(1), false); ok {
		t.Fatal("a 1-byte frame admitted behind 500 bytes of a 100-byte queue")
	}
	checkLength(t, &q, 1, 500)
	q.pop()

	// By frames: four 1-byte frames fit, a fifth does not.
	for i := range 4 {
		if ok, _ := q.tryPush(frameOf(1), false); !ok {
			t.Fatalf("1-byte frame %d refused", i+1)
		}
	}
	if ok, _ := q.tryPush(frameOf(1), false); ok || !q.full(1) {
		t.Fatal("a fifth frame admitted in a queue of 4 frames")
	}
	checkLength(t, &q, 4, 4)

	// purge takes the frames of a subscription and their bytes.
	sub := &subscription{}
	for _, first := range []uint64{7, 8} {
		q.tryPush(queued{sub: sub, data: []byte("ev"), first: first, last: first}, true)
	}
	checkLength(t, &q, 6, 8)
	if first := q.purge(sub); first != 7 {
		t.Fatalf("purge returned %d, want 7", first)
	}
	checkLength(t, &q, 4, 4)
	other := &subscription{}
	for range 4 {
		q.pop()
	}
	q.tryPush(queued{sub: other, data: []byte("ev"), first: 9, last: 9}, false)
	q.purge(other)
	checkLength(t, &q, 0, 0)
	if q.frames != nil {
		t.Fatalf("a queue emptied by purge holds a buffer of %d frames", cap(q.frames))
	}
	if kicks != 13 {
		t.Fatalf("%d kicks, want one per queued frame (13)", kicks)
	}
}

// TestEventQueueWaitsForBytes: a pusher waits for room by bytes, gets in
// once a frame leaves, and gives up after its wait when none does.
func TestEventQueueWaitsForBytes(t *testing.T) {
	var q eventQueue
	q.init(1024, 100, func() {})
	q.tryPush(frameOf(90), false)
	if q.push(context.Background(), frameOf(20), 20*time.Millisecond) {
		t.Fatal("a 20-byte frame on 90 queued bytes of 100 admitted after the wait")
	}
	done := make(chan bool, 1)
	go func() { done <- q.push(context.Background(), frameOf(20), time.Minute) }()
	testkit.WaitFor(t, 10*time.Second, "the pusher to wait for room", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.roomCh != nil
	})
	q.pop()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("the waiting pusher was refused after room was made")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting pusher was not woken by pop")
	}
	checkLength(t, &q, 1, 20)

	// A cancelled context ends the wait.
	q.tryPush(frameOf(80), false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if q.push(ctx, frameOf(20), time.Minute) {
		t.Fatal("a push admitted on a full queue with its context ended")
	}
}
