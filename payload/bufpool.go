package payload

import (
	"math/bits"
	"sync"
)

// bufferPool is the Arrow allocator of the batches a notify decodes: it
// recycles the buffers a released batch frees, so that decoding one
// record does not allocate its column buffers afresh each time (with
// Arrow's Go allocator, a one-record batch of five columns is eleven
// buffer allocations, the largest share of what a typed payload added
// to a notify). Buffers are kept by power-of-two size class from 64 B
// to 64 KiB, at most maxPooled per class; larger ones, and any beyond
// that, are left to the garbage collector as Arrow's Go allocator
// leaves them all. Allocate returns zeroed memory, as make does. It is
// safe for concurrent use.
type bufferPool struct {
	classes [poolClasses]bufferClass
}

// bufferClass is the free list of one size class.
type bufferClass struct {
	mu   sync.Mutex
	free [][]byte
}

const (
	poolMinShift = 6  // the smallest class: 64 bytes
	poolClasses  = 11 // up to 64 KiB
	maxPooled    = 256
)

// poolClass returns the class of an n-byte buffer (n > 0) and whether
// one exists.
func poolClass(n int) (int, bool) {
	c := max(bits.Len(uint(n-1)), poolMinShift) - poolMinShift
	return c, c < poolClasses
}

// Allocate implements memory.Allocator.
func (p *bufferPool) Allocate(size int) []byte {
	if size <= 0 {
		return []byte{}
	}
	c, ok := poolClass(size)
	if !ok {
		return make([]byte, size)
	}
	cl := &p.classes[c]
	cl.mu.Lock()
	if n := len(cl.free); n > 0 {
		b := cl.free[n-1]
		cl.free[n-1] = nil
		cl.free = cl.free[:n-1]
		cl.mu.Unlock()
		b = b[:size]
		clear(b)
		return b
	}
	cl.mu.Unlock()
	return make([]byte, size, 1<<(c+poolMinShift))
}

// Reallocate implements memory.Allocator: the bytes of b are kept, the
// rest is zeroed.
func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free implements memory.Allocator: a buffer of a class's exact
// capacity goes back to its free list.
func (p *bufferPool) Free(b []byte) {
	n := cap(b)
	if n == 0 {
		return
	}
	c, ok := poolClass(n)
	if !ok || n != 1<<(c+poolMinShift) {
		return
	}
	cl := &p.classes[c]
	cl.mu.Lock()
	if len(cl.free) < maxPooled {
		cl.free = append(cl.free, b[:0])
	}
	cl.mu.Unlock()
}
