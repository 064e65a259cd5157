package cowmap

import (
	"strconv"
	"sync"
	"testing"
)

// TestMap: a value is computed once per key and then read back; past
// Max the map keeps no more entries but still answers, computing; many
// goroutines reading and writing at once see each key's value.
func TestMap(t *testing.T) {
	m := Map[string, string]{Max: 2}
	calls := 0
	get := func(k string) string {
		return m.Get(k, func() string { calls++; return "v" + k })
	}
	for range 3 {
		if v := get("a"); v != "va" {
			t.Fatalf("Get(a) = %q", v)
		}
	}
	if calls != 1 {
		t.Errorf("computed %d times for one key, want once", calls)
	}
	get("b")
	if v := get("c"); v != "vc" || m.Len() != 2 {
		t.Errorf("past Max: Get(c) = %q with %d entries, want vc with 2", v, m.Len())
	}
	if get("c"); calls != 4 {
		t.Errorf("past Max a key was computed %d times in all, want 4 (c each time)", calls)
	}

	var zero Map[int, string]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := (i + g) % 50
				if v := zero.Get(k, func() string { return strconv.Itoa(k) }); v != strconv.Itoa(k) {
					t.Errorf("Get(%d) = %q", k, v)
					return
				}
			}
		})
	}
	wg.Wait()
	if zero.Len() != 50 {
		t.Errorf("%d entries, want 50", zero.Len())
	}
}
