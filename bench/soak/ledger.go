package main

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The notifications of a soak are numbered n = 0, 1, 2, … in the order
// they are sent; n decides the identifier, so every receiver can tell
// from n alone whether its filter selects the notification.
var classes = [4]string{"a", "b", "c", "d"}

// classOf and stepOf are notification n's identifier values.
func classOf(n int) string { return classes[n%4] }
func stepOf(n int) int     { return (n / 4) % 24 }

// Notify outcomes recorded in the ledger.
const (
	unsent    uint8 = iota
	accepted        // 200: stored
	refused         // 4xx: never stored
	uncertain       // anything else (503, a timeout): maybe stored
)

// ledger records the outcome of every notify by n.
type ledger struct {
	mu      sync.Mutex
	outcome []uint8
}

func (l *ledger) set(n int, o uint8) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.outcome) <= n {
		l.outcome = append(l.outcome, unsent)
	}
	l.outcome[n] = o
}

// snapshot returns a copy of the outcomes so far.
func (l *ledger) snapshot() []uint8 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uint8(nil), l.outcome...)
}

// receiver is what one watcher or subscription received, written only by
// its own goroutine and read once that goroutine has stopped (or, for
// progress, through the atomic count).
type receiver struct {
	name  string
	match func(n int) bool
	seen  []uint64 // bit n: notification n was delivered
	dups  int
	// lastSeq is the last stream sequence delivered (the resume point).
	lastSeq uint64
	count   atomic.Int64
	// reconnects counts the times the stream was opened again.
	reconnects atomic.Int64
}

// deliver records notification n at stream sequence seq.
func (r *receiver) deliver(n int, seq uint64) {
	w := n / 64
	for len(r.seen) <= w {
		r.seen = append(r.seen, 0)
	}
	bit := uint64(1) << (n % 64)
	if r.seen[w]&bit != 0 {
		r.dups++
	} else {
		r.seen[w] |= bit
		r.count.Add(1)
	}
	if seq > r.lastSeq {
		r.lastSeq = seq
	}
}

func (r *receiver) has(n int) bool {
	w := n / 64
	return w < len(r.seen) && r.seen[w]&(uint64(1)<<(n%64)) != 0
}

// verdict is the comparison of what was delivered with what was stored.
type verdict struct {
	// Expected counts (receiver, notification) pairs that had to arrive:
	// accepted notifications the receiver's filter selects.
	Expected int
	// Delivered counts the distinct pairs that arrived, Lost the expected
	// ones that did not, Duplicated the repeats, Phantom deliveries of
	// notifications that were refused (4xx) or never sent, and
	// UncertainDelivered deliveries of notifications whose notify ended
	// without an answer (neither expected nor wrong).
	Delivered, Lost, Duplicated, Phantom, UncertainDelivered int
	// Worst names a receiver with losses and its first lost n.
	Worst string
	// Losers lists up to ten receivers with losses: how many each lost
	// and the lost n in ranges (at most five).
	Losers []string
	// LosingReceivers counts the receivers with at least one loss.
	LosingReceivers int
}

// judge compares every receiver with the ledger.
func judge(outcomes []uint8, rs []*receiver) verdict {
	var v verdict
	for _, r := range rs {
		v.Duplicated += r.dups
		firstLost := -1
		var lost []int
		for n, o := range outcomes {
			sel := r.match(n)
			got := r.has(n)
			switch {
			case o == accepted && sel:
				v.Expected++
				if got {
					v.Delivered++
				} else {
					v.Lost++
					lost = append(lost, n)
					if firstLost < 0 {
						firstLost = n
					}
				}
			case got && o == uncertain:
				v.UncertainDelivered++
			case got:
				v.Phantom++
			}
		}
		for n := len(outcomes); n < len(r.seen)*64; n++ {
			if r.has(n) {
				v.Phantom++
			}
		}
		if firstLost >= 0 && v.Worst == "" {
			v.Worst = fmt.Sprintf("%s lost n=%d (class %s, step %d) among others", r.name, firstLost, classOf(firstLost), stepOf(firstLost))
		}
		if len(lost) > 0 {
			v.LosingReceivers++
			if len(v.Losers) < 10 {
				v.Losers = append(v.Losers, fmt.Sprintf("%s lost %d: %s", r.name, len(lost), ranges(lost, 5)))
			}
		}
	}
	return v
}

// ranges writes the ascending numbers ns as at most max ranges "a-b"
// (every one selected by the receiver's filter, so a range may skip
// numbers the filter does not select), then "…" if there are more.
func ranges(ns []int, max int) string {
	var b strings.Builder
	for i, k := 0, 0; i < len(ns); k++ {
		if k == max {
			b.WriteString(" …")
			break
		}
		j := i
		for j+1 < len(ns) && ns[j+1]-ns[j] <= 24 {
			j++
		}
		if k > 0 {
			b.WriteString(", ")
		}
		if j == i {
			fmt.Fprintf(&b, "%d", ns[i])
		} else {
			fmt.Fprintf(&b, "%d-%d (%d)", ns[i], ns[j], j-i+1)
		}
		i = j + 1
	}
	return b.String()
}

// latencies is a histogram of delivery latencies per minute of the run,
// with logarithmic buckets from 10 µs to about 100 s. Its minutes are
// allocated up front, so that recording takes no lock.
type latencies struct {
	start   time.Time
	minutes [][latBuckets]atomic.Int64
}

const (
	latBuckets = 200
	latBase    = 10 * time.Microsecond
	latFactor  = 1.0839 // 200 buckets reach 10 µs × 1.0839^200 ≈ 100 s
)

func newLatencies(start time.Time, d time.Duration) *latencies {
	return &latencies{start: start, minutes: make([][latBuckets]atomic.Int64, int(d/time.Minute)+2)}
}

func latBucket(d time.Duration) int {
	if d <= latBase {
		return 0
	}
	b := int(math.Log(float64(d)/float64(latBase)) / math.Log(latFactor))
	return min(b, latBuckets-1)
}

// bucketUpper is the upper bound of bucket b.
func bucketUpper(b int) time.Duration {
	return time.Duration(float64(latBase) * math.Pow(latFactor, float64(b+1)))
}

// add records one delivery's latency at time now; deliveries after the
// last minute allocated count in it.
func (l *latencies) add(now time.Time, d time.Duration) {
	m := min(max(int(now.Sub(l.start)/time.Minute), 0), len(l.minutes)-1)
	l.minutes[m][latBucket(d)].Add(1)
}

// minuteStats are one minute's delivery count and percentiles.
type minuteStats struct {
	Minute   int
	N        int64
	P50, P99 time.Duration
}

func (l *latencies) perMinute() []minuteStats {
	var out []minuteStats
	for m := range l.minutes {
		h := &l.minutes[m]
		var counts [latBuckets]int64
		var n int64
		for b := range h {
			counts[b] = h[b].Load()
			n += counts[b]
		}
		if n == 0 {
			continue
		}
		out = append(out, minuteStats{Minute: m, N: n, P50: quantile(counts[:], n, 0.50), P99: quantile(counts[:], n, 0.99)})
	}
	return out
}

func quantile(counts []int64, n int64, q float64) time.Duration {
	rank := int64(math.Ceil(q * float64(n)))
	var c int64
	for b, k := range counts {
		if c += k; c >= rank {
			return bucketUpper(b)
		}
	}
	return bucketUpper(len(counts) - 1)
}

// sample is one reading of herald's own metrics.
type sample struct {
	At                      time.Duration // since the start
	RSS, Heap               float64       // bytes
	Goroutines, OpenFiles   float64
	Delivered, Notified     int64 // totals so far
	Reconnects, NotifyFails int64
}

// slope fits a least-squares line to (t, v) over the samples at or after
// from and returns its slope as a percentage of the mean per minute.
func slope(ss []sample, from time.Duration, v func(sample) float64) (pctPerMin float64, n int) {
	var xs, ys []float64
	for _, s := range ss {
		if s.At >= from {
			xs = append(xs, s.At.Minutes())
			ys = append(ys, v(s))
		}
	}
	if len(xs) < 2 {
		return 0, len(xs)
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 || my == 0 {
		return 0, len(xs)
	}
	return 100 * (sxy / sxx) / my, len(xs)
}
