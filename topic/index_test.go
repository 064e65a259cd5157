package topic

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// collect returns the subjects p matches in x, as "subject=value", sorted.
func collect(x *Index[int], p Pattern) []string {
	var out []string
	x.Match(p, func(tokens []string, v int) bool {
		out = append(out, fmt.Sprintf("%s=%d", Encode(tokens), v))
		return true
	})
	sort.Strings(out)
	return out
}

// nodes counts the trie nodes below the root.
func nodes[V any](n *node[V]) int {
	c := 0
	for _, k := range n.kids {
		c += 1 + nodes(k)
	}
	return c
}

func toks(s string) []string {
	t, err := decode(s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestIndexPutGetLen(t *testing.T) {
	x := NewIndex[int]()
	if x.Len() != 0 {
		t.Fatalf("new index Len = %d", x.Len())
	}
	x.Put(toks("w.north.1"), 1)
	x.Put(toks("w.north.2"), 2)
	x.Put(toks("w.south.1"), 3)
	x.Put(toks("w.north"), 4)
	x.Put(toks("w.north.1"), 10) // replace
	if x.Len() != 4 {
		t.Fatalf("Len = %d, want 4", x.Len())
	}
	tests := []struct {
		subject string
		v       int
		ok      bool
	}{
		{"w.north.1", 10, true},
		{"w.north.2", 2, true},
		{"w.south.1", 3, true},
		{"w.north", 4, true},
		{"w", 0, false},
		{"w.south", 0, false},
		{"w.north.3", 0, false},
		{"w.north.1.x", 0, false},
		{"x", 0, false},
	}
	for _, tt := range tests {
		v, ok := x.Get(toks(tt.subject))
		if v != tt.v || ok != tt.ok {
			t.Errorf("Get(%s) = %d, %v; want %d, %v", tt.subject, v, ok, tt.v, tt.ok)
		}
	}
	if v, ok := x.Get(nil); ok || v != 0 {
		t.Errorf("Get(nil) = %d, %v on an index without the empty subject", v, ok)
	}
	x.Put(nil, 7)
	if v, ok := x.Get(nil); !ok || v != 7 || x.Len() != 5 {
		t.Errorf("after Put(nil): Get(nil) = %d, %v, Len %d", v, ok, x.Len())
	}
}

func TestIndexPutCopiesTokens(t *testing.T) {
	x := NewIndex[int]()
	in := []string{"w", "a.b", "c"}
	x.Put(in, 1)
	in[1] = "changed"
	if _, ok := x.Get([]string{"w", "a.b", "c"}); !ok {
		t.Fatal("Put kept the caller's slice")
	}
	got := collect(x, Pattern{Literal("w"), Any(), Any()})
	if want := []string{"w.a%2Eb.c=1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Match = %q, want %q", got, want)
	}
}

func TestIndexMatch(t *testing.T) {
	x := NewIndex[int]()
	for i, s := range []string{
		"w.north.20250706.0",
		"w.north.20250706.12",
		"w.north.20250707.0",
		"w.south.20250706.0",
		"w.south.20250707.12",
		"w.north.20250706",
		"w.north",
		"w",
		"w.1%2E5.x.0",
		"v.north.20250706.0",
	} {
		x.Put(toks(s), i)
	}
	tests := []struct {
		pattern Pattern
		want    []string
	}{
		{pat("w.north.20250706.0"), []string{"w.north.20250706.0=0"}},
		{pat("w.north.*.0"), []string{"w.north.20250706.0=0", "w.north.20250707.0=2"}},
		{pat("w.*.20250706.*"), []string{"w.north.20250706.0=0", "w.north.20250706.12=1", "w.south.20250706.0=3"}},
		{pat("w.*.*.12"), []string{"w.north.20250706.12=1", "w.south.20250707.12=4"}},
		{pat("w.*.*.*"), []string{
			"w.1%2E5.x.0=8", "w.north.20250706.0=0", "w.north.20250706.12=1", "w.north.20250707.0=2",
			"w.south.20250706.0=3", "w.south.20250707.12=4"}},
		{pat("*.north.20250706.0"), []string{"v.north.20250706.0=9", "w.north.20250706.0=0"}},
		{pat("w.*.*"), []string{"w.north.20250706=5"}},
		{pat("w.*"), []string{"w.north=6"}},
		{pat("w"), []string{"w=7"}},
		{pat("*"), []string{"w=7"}},
		{Pattern{Literal("w"), Literal("1.5"), Any(), Any()}, []string{"w.1%2E5.x.0=8"}},
		{Pattern{Literal("w"), Literal("1%2E5"), Any(), Any()}, nil},
		{pat("w.east.*.*"), nil},
		{pat("w.*.*.*.*"), nil},
		{pat("x.*"), nil},
		{Pattern{}, nil},
	}
	for _, tt := range tests {
		if got := collect(x, tt.pattern); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Match(%s) = %q, want %q", tt.pattern.Display(), got, tt.want)
		}
	}
}

func TestIndexMatchStop(t *testing.T) {
	x := NewIndex[int]()
	for i := range 20 {
		x.Put([]string{"w", fmt.Sprint(i), "x"}, i)
	}
	for _, stopAfter := range []int{1, 5, 20} {
		calls := 0
		x.Match(pat("w.*.*"), func([]string, int) bool {
			calls++
			return calls < stopAfter
		})
		if calls != stopAfter {
			t.Errorf("stop after %d: fn called %d times", stopAfter, calls)
		}
	}
}

func TestIndexDelete(t *testing.T) {
	x := NewIndex[int]()
	x.Put(toks("w.a.b.c"), 1)
	x.Put(toks("w.a.b"), 2)
	x.Put(toks("w.a.x.y"), 3)
	if n := nodes(&x.root); n != 6 { // w, a, b, c, x, y
		t.Fatalf("nodes = %d, want 6", n)
	}
	steps := []struct {
		del   string
		ok    bool
		len   int
		nodes int
	}{
		{"w.a", false, 3, 6},       // a prefix, not stored
		{"w.a.b.c.d", false, 3, 6}, // longer than stored
		{"w.q", false, 3, 6},       // absent
		{"w.a.b.c", true, 2, 5},    // c pruned, b kept (stored)
		{"w.a.b.c", false, 2, 5},   // already gone
		{"w.a.b", true, 1, 4},      // b pruned
		{"w.a.x.y", true, 0, 0},    // everything pruned
	}
	for _, s := range steps {
		if ok := x.Delete(toks(s.del)); ok != s.ok {
			t.Errorf("Delete(%s) = %v, want %v", s.del, ok, s.ok)
		}
		if x.Len() != s.len {
			t.Errorf("after Delete(%s): Len = %d, want %d", s.del, x.Len(), s.len)
		}
		if n := nodes(&x.root); n != s.nodes {
			t.Errorf("after Delete(%s): nodes = %d, want %d", s.del, n, s.nodes)
		}
	}
	if x.root.kids != nil || x.root.pos != nil {
		t.Errorf("root not emptied: %d kids", len(x.root.kids))
	}
	// The empty subject lives at the root and is never pruned.
	x.Put(nil, 5)
	x.Put(toks("w"), 6)
	if !x.Delete(nil) || x.Len() != 1 {
		t.Fatalf("Delete(nil) failed, Len %d", x.Len())
	}
	if v, ok := x.Get(toks("w")); !ok || v != 6 {
		t.Errorf("Get(w) = %d, %v after Delete(nil)", v, ok)
	}
}

// TestIndexWideNode covers nodes with more children than smallKids (map
// lookup) and deletions that move children around.
func TestIndexWideNode(t *testing.T) {
	x := NewIndex[int]()
	const n = 3 * smallKids
	for i := range n {
		x.Put([]string{"w", fmt.Sprint(i)}, i)
	}
	if x.root.kids[0].pos == nil {
		t.Fatal("wide node has no position map")
	}
	for i := 0; i < n; i += 3 {
		if !x.Delete([]string{"w", fmt.Sprint(i)}) {
			t.Fatalf("Delete(w.%d) = false", i)
		}
	}
	for i := range n {
		v, ok := x.Get([]string{"w", fmt.Sprint(i)})
		if want := i%3 != 0; ok != want || (ok && v != i) {
			t.Errorf("Get(w.%d) = %d, %v; want present=%v", i, v, ok, want)
		}
	}
	if got := len(collect(x, pat("w.*"))); got != n-n/3 {
		t.Errorf("Match(w.*) found %d, want %d", got, n-n/3)
	}
	for i := range n {
		x.Delete([]string{"w", fmt.Sprint(i)})
	}
	if x.Len() != 0 || nodes(&x.root) != 0 {
		t.Errorf("after deleting all: Len %d, nodes %d", x.Len(), nodes(&x.root))
	}
}

// TestIndexAgainstNaive runs random operations on an Index and on a map
// with linear Pattern.Match and compares every answer.
func TestIndexAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []string{"a", "b", "c.d", "*", ""}
	randTokens := func() []string {
		t := make([]string, rng.IntN(4))
		for i := range t {
			t[i] = vals[rng.IntN(len(vals))]
		}
		return t
	}
	x := NewIndex[int]()
	naive := map[string][]string{} // Encode is injective once the length is added
	for op := range 5000 {
		tk := randTokens()
		key := fmt.Sprintf("%d:%s", len(tk), Encode(tk))
		switch rng.IntN(4) {
		case 0, 1:
			x.Put(tk, op)
			naive[key] = tk
		case 2:
			_, had := naive[key]
			delete(naive, key)
			if got := x.Delete(tk); got != had {
				t.Fatalf("op %d: Delete(%q) = %v, want %v", op, tk, got, had)
			}
		case 3:
			p := make(Pattern, len(tk))
			for i, v := range tk {
				if rng.IntN(2) == 0 {
					p[i] = Any()
				} else {
					p[i] = Literal(v)
				}
			}
			want := 0
			for _, stored := range naive {
				if p.Match(stored) {
					want++
				}
			}
			got := 0
			x.Match(p, func(tokens []string, _ int) bool {
				if !p.Match(tokens) {
					t.Fatalf("op %d: Match(%s) reported %q", op, p.Display(), tokens)
				}
				got++
				return true
			})
			if got != want {
				t.Fatalf("op %d: Match(%s) found %d, want %d", op, p.Display(), got, want)
			}
		}
		if x.Len() != len(naive) {
			t.Fatalf("op %d: Len = %d, want %d", op, x.Len(), len(naive))
		}
	}
}

// benchSubjects returns 10,000 decoded subjects shaped like Aviso's
// (base, class, date, step, param; some values need encoding) and the
// pattern used by the match benchmarks: two literal positions, two
// wildcards, matching 100 subjects.
func benchSubjects() ([][]string, Pattern) {
	var subs [][]string
	for c := range 10 {
		for d := range 10 {
			for s := range 10 {
				for p := range 10 {
					subs = append(subs, []string{
						"mars",
						fmt.Sprintf("class%d", c),
						fmt.Sprintf("202507%02d", d+1),
						fmt.Sprint(s * 6),
						fmt.Sprintf("param.%d", p),
					})
				}
			}
		}
	}
	return subs, Pattern{Literal("mars"), Literal("class3"), Any(), Literal("12"), Any()}
}

func BenchmarkMatch10k(b *testing.B) {
	subs, p := benchSubjects()
	const want = 100

	b.Run("index", func(b *testing.B) {
		x := NewIndex[int]()
		for i, s := range subs {
			x.Put(s, i)
		}
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			x.Match(p, func([]string, int) bool { n++; return true })
			if n != want {
				b.Fatalf("matched %d, want %d", n, want)
			}
		}
	})

	b.Run("naive", func(b *testing.B) {
		encoded := make([]string, len(subs))
		for i, s := range subs {
			encoded[i] = Encode(s)
		}
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, e := range encoded {
				tokens, err := decode(e)
				if err == nil && p.Match(tokens) {
					n++
				}
			}
			if n != want {
				b.Fatalf("matched %d, want %d", n, want)
			}
		}
	})

	b.Run("naive_predecoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, s := range subs {
				if p.Match(s) {
					n++
				}
			}
			if n != want {
				b.Fatalf("matched %d, want %d", n, want)
			}
		}
	})
}

// naiveReplacer is the straightforward way to encode a token, the baseline
// for BenchmarkEncodeToken.
var naiveReplacer = strings.NewReplacer("%", "%25", ".", "%2E", "*", "%2A", ">", "%3E")

func BenchmarkEncodeToken(b *testing.B) {
	for _, in := range []string{"20250706", "1.45", "Zürich*>%.x"} {
		b.Run("EncodeToken/"+in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = EncodeToken(in)
			}
		})
		b.Run("naive_replacer/"+in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = naiveReplacer.Replace(in)
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	tokens := []string{"mars", "od", "0001", "g", "20260706", "0000", "enfo", "1.5", "param.2t"}
	want := "mars.od.0001.g.20260706.0000.enfo.1%2E5.param%2E2t"
	b.Run("Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if Encode(tokens) != want {
				b.Fatal("wrong subject")
			}
		}
	})
	b.Run("naive_join", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parts := make([]string, len(tokens))
			for i, t := range tokens {
				parts[i] = naiveReplacer.Replace(t)
			}
			if strings.Join(parts, ".") != want {
				b.Fatal("wrong subject")
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decode(want); err != nil {
				b.Fatal(err)
			}
		}
	})
}
