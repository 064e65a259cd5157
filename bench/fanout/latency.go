package main

import (
	"bytes"
	"sync/atomic"
	"time"
)

// The latency mode (-rate R) publishes one notification at a time, R per
// second, each carrying the time it was published (sentMember, Unix
// nanoseconds, in the payload), and every subscriber records, for every
// notification it receives, the time from that publish to its arrival:
// the clients and the publisher share this process's clock.

// sentMember is the payload member holding the publish time.
const sentMember = `"sent_ns":`

// eachSent calls f with the publish time of every notification in p (a
// frame, or a message of one), in order.
func eachSent(p []byte, f func(ns int64)) {
	for {
		i := bytes.Index(p, []byte(sentMember))
		if i < 0 {
			return
		}
		p = p[i+len(sentMember):]
		var ns int64
		j := 0
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			ns = ns*10 + int64(p[j]-'0')
			j++
		}
		if j > 0 {
			f(ns)
		}
		p = p[j:]
	}
}

// The histogram's buckets: one per microsecond below fineLimit, one per
// millisecond from there to fineLimit + coarseBuckets ms; slower
// deliveries count in the last bucket (max keeps the true value).
const (
	fineLimit     = 100_000 // µs
	coarseBuckets = 60_000
)

// latHist is a lock-free histogram of delivery latencies, shared by
// every subscriber of a phase.
type latHist struct {
	buckets [fineLimit + coarseBuckets]atomic.Int64
	n       atomic.Int64
	max     atomic.Int64 // nanoseconds
}

// record adds one latency (negative ones count as 0).
func (h *latHist) record(d time.Duration) {
	d = max(d, 0)
	us := int64(d / time.Microsecond)
	i := us
	if us >= fineLimit {
		i = fineLimit + min((us-fineLimit)/1000, coarseBuckets-1)
	}
	h.buckets[i].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile returns the latency below which a fraction q of the recorded
// ones lie, to the bucket's lower bound (0 when nothing was recorded).
func (h *latHist) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n)+0.5) - 1
	rank = min(max(rank, 0), n-1)
	var seen int64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen > rank {
			if i < fineLimit {
				return time.Duration(i) * time.Microsecond
			}
			return time.Duration(fineLimit+(i-fineLimit)*1000) * time.Microsecond
		}
	}
	return time.Duration(h.max.Load())
}
