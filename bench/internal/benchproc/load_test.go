package benchproc

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestClosedLoop checks that every call is counted and measured once,
// with distinct indexes from 0, latencies sorted, and that the first
// error ends the load.
func TestClosedLoop(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	l, err := ClosedLoop(context.Background(), 4, 50*time.Millisecond, func(i int) error {
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
		time.Sleep(time.Millisecond) // the operation's own duration
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(seen)
	if l.Ops == 0 || l.Ops != len(seen) || len(l.Lat) != l.Ops || !slices.IsSorted(l.Lat) || l.Lat[0] < time.Millisecond {
		t.Fatalf("%d ops, %d calls, %d latencies (first %v)", l.Ops, len(seen), len(l.Lat), l.Lat)
	}
	for k, i := range seen {
		if i != k {
			t.Fatalf("call indexes %v, want 0..%d", seen, len(seen)-1)
		}
	}
	if l.Rate() <= 0 || Pct(l.Lat, 0.99) < Pct(l.Lat, 0.5) {
		t.Fatalf("rate %v, p50 %v, p99 %v", l.Rate(), Pct(l.Lat, .5), Pct(l.Lat, .99))
	}

	boom := errors.New("boom")
	if _, err := ClosedLoop(context.Background(), 3, time.Minute, func(i int) error {
		if i == 5 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) {
		t.Fatalf("a failing call: %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ClosedLoop(ctx, 2, time.Minute, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context: %v", err)
	}
}

// TestPctAndInts checks quantiles of sorted latencies and the flag list.
func TestPctAndInts(t *testing.T) {
	lat := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if Pct(lat, .5) != 6 || Pct(lat, .99) != 10 || Pct(lat, 0) != 1 || Pct(nil, .5) != 0 {
		t.Fatalf("quantiles %v %v %v", Pct(lat, .5), Pct(lat, .99), Pct(lat, 0))
	}
	if got, err := Ints("1, 16,64"); err != nil || !slices.Equal(got, []int{1, 16, 64}) {
		t.Fatalf("Ints = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,,2", "x", "-3"} {
		if _, err := Ints(bad); err == nil {
			t.Errorf("Ints(%q) gave no error", bad)
		}
	}
}
