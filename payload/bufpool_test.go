package payload

import (
	"bytes"
	"testing"
)

// TestBufferPool: a freed buffer is handed out again for its size class,
// zeroed; Reallocate keeps the bytes and zeroes what it adds; buffers
// of no class (too large, or not of a class's capacity) are not kept;
// a class keeps at most maxPooled buffers.
func TestBufferPool(t *testing.T) {
	var p bufferPool
	a := p.Allocate(40)
	if len(a) != 40 || cap(a) != 64 || !bytes.Equal(a, make([]byte, 40)) {
		t.Fatalf("Allocate(40): len %d cap %d %v", len(a), cap(a), a)
	}
	for i := range a {
		a[i] = 0xff
	}
	p.Free(a)
	b := p.Allocate(64)
	if &b[0] != &a[0] || len(b) != 64 || !bytes.Equal(b, make([]byte, 64)) {
		t.Fatalf("Allocate(64) after Free: reused %v, len %d, %v", &b[0] == &a[0], len(b), b)
	}
	copy(b, "abc")
	r := p.Reallocate(10, b[:3])
	if &r[0] != &b[0] || string(r[:3]) != "abc" || !bytes.Equal(r[3:], make([]byte, 7)) {
		t.Fatalf("Reallocate within capacity: %q", r)
	}
	r[5] = 1
	g := p.Reallocate(100, r[:5])
	if len(g) != 100 || cap(g) != 128 || string(g[:3]) != "abc" || !bytes.Equal(g[3:], make([]byte, 97)) {
		t.Fatalf("Reallocate beyond capacity: len %d cap %d %q", len(g), cap(g), g[:8])
	}
	if c := p.Allocate(64); &c[0] != &b[0] {
		t.Fatal("Reallocate did not free the buffer it outgrew")
	}
	big := p.Allocate(1 << 20)
	p.Free(big)
	odd := make([]byte, 100)
	p.Free(odd)
	for c := range p.classes {
		for _, f := range p.classes[c].free {
			if &f[:1][0] == &big[0] || &f[:1][0] == &odd[0] {
				t.Fatalf("class %d kept a buffer of capacity %d", c, cap(f))
			}
		}
	}
	if n := len(p.Allocate(0)); n != 0 {
		t.Fatalf("Allocate(0) has length %d", n)
	}
	for range maxPooled + 10 {
		p.Free(make([]byte, 256))
	}
	if c, _ := poolClass(256); len(p.classes[c].free) != maxPooled {
		t.Fatalf("class of 256 B keeps %d buffers, want %d", len(p.classes[c].free), maxPooled)
	}
}
