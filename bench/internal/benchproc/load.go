package benchproc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Load is the outcome of a closed-loop load: the operations done, the
// time they took and their latencies, sorted.
type Load struct {
	Ops  int
	Took time.Duration
	Lat  []time.Duration
}

// Rate is the operations per second.
func (l Load) Rate() float64 { return float64(l.Ops) / l.Took.Seconds() }

// Pct returns the q-th quantile (0 to 1) of sorted latencies, 0 for none.
func Pct(lat []time.Duration, q float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	return lat[min(int(q*float64(len(lat))), len(lat)-1)]
}

// ClosedLoop runs op from c goroutines, each starting a new call as soon
// as its last one returned, until d has passed (calls under way finish),
// and measures each call; i counts the calls from 0. The first failing
// call ends the load with its error, and so does the end of ctx.
func ClosedLoop(ctx context.Context, c int, d time.Duration, op func(i int) error) (Load, error) {
	stop := time.Now().Add(d)
	var (
		next  atomic.Int64
		mu    sync.Mutex
		all   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	failed := make(chan struct{})
	var once sync.Once
	began := time.Now()
	for range c {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for time.Now().Before(stop) && ctx.Err() == nil {
				select {
				case <-failed:
					return
				default:
				}
				i := int(next.Add(1)) - 1
				t := time.Now()
				if err := op(i); err != nil {
					once.Do(func() { first = err; close(failed) })
					return
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	took := time.Since(began)
	if first != nil {
		return Load{}, first
	}
	if err := ctx.Err(); err != nil {
		return Load{}, err
	}
	slices.Sort(all)
	return Load{Ops: len(all), Took: took, Lat: all}, nil
}

// Ints parses a comma-separated list of positive integers (a flag's).
func Ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}
