// Package cowmap is a bounded map of values computed once and read
// often, whose reads take no lock: it is copied on each write.
package cowmap

import (
	"sync"
	"sync/atomic"
)

// Map maps keys to the values computed for them, at most Max entries
// (values of further keys are computed on each Get). Its zero value is
// an empty map keeping at most DefaultMax; it is safe for concurrent
// use and must not be copied after first use.
type Map[K comparable, V any] struct {
	// Max bounds the entries kept; 0 means DefaultMax.
	Max int

	m  atomic.Pointer[map[K]V]
	mu sync.Mutex // serialises the writers
}

// DefaultMax is the bound of a Map whose Max is 0.
const DefaultMax = 1024

// Get returns the value of k, computing it with compute the first time
// (and each time once the map is full). compute may run more than once
// for a key that concurrent Gets ask for at once.
func (c *Map[K, V]) Get(k K, compute func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	v := compute()
	c.mu.Lock()
	defer c.mu.Unlock()
	var old map[K]V
	if m := c.m.Load(); m != nil {
		old = *m
	}
	limit := c.Max
	if limit <= 0 {
		limit = DefaultMax
	}
	if len(old) >= limit {
		return v
	}
	next := make(map[K]V, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[k] = v
	c.m.Store(&next)
	return v
}

// Len is the number of entries kept.
func (c *Map[K, V]) Len() int {
	if m := c.m.Load(); m != nil {
		return len(*m)
	}
	return 0
}
