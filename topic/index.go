package topic

// smallKids is the child count up to which a node finds a child by a linear
// scan; above it the node keeps a map from token to child position.
const smallKids = 8

// Index maps decoded subjects (token lists) to values and finds the stored
// subjects that match a Pattern without looking at the others: a literal
// pattern position descends directly to one child, a wildcard position
// visits every child of the current node, and subjects of another length
// are never reached.
//
// An Index is not safe for concurrent use; callers serialise access (a
// sync.RWMutex around it is enough: Get, Len and Match only read). The zero
// value is not usable; call NewIndex.
type Index[V any] struct {
	root  node[V]
	count int
}

// node is one trie position. Children are kept in a slice, so that
// wildcard positions iterate quickly, plus a map from token to slice
// position once there are more than smallKids of them.
type node[V any] struct {
	key  string
	kids []*node[V]
	pos  map[string]int // nil while len(kids) <= smallKids
	// has reports whether a subject ends here; tokens is its private copy
	// of the subject (never modified) and val its value.
	has    bool
	tokens []string
	val    V
}

// NewIndex returns an empty index.
func NewIndex[V any]() *Index[V] {
	return &Index[V]{}
}

// Len returns the number of stored subjects.
func (x *Index[V]) Len() int { return x.count }

// Put stores v under the decoded subject tokens, replacing any value
// already stored there. The index keeps its own copy of tokens.
func (x *Index[V]) Put(tokens []string, v V) {
	n := &x.root
	for _, t := range tokens {
		c := n.child(t)
		if c == nil {
			c = n.add(t)
		}
		n = c
	}
	if !n.has {
		n.has = true
		n.tokens = append([]string(nil), tokens...)
		x.count++
	}
	n.val = v
}

// Get returns the value stored under the decoded subject tokens and
// whether there is one.
func (x *Index[V]) Get(tokens []string) (V, bool) {
	n := &x.root
	for _, t := range tokens {
		if n = n.child(t); n == nil {
			var zero V
			return zero, false
		}
	}
	return n.val, n.has
}

// Delete removes the subject tokens and reports whether it was stored.
// Trie nodes left without subjects and children are freed.
func (x *Index[V]) Delete(tokens []string) bool {
	path := make([]*node[V], 1, len(tokens)+1)
	path[0] = &x.root
	n := &x.root
	for _, t := range tokens {
		if n = n.child(t); n == nil {
			return false
		}
		path = append(path, n)
	}
	if !n.has {
		return false
	}
	var zero V
	n.has, n.tokens, n.val = false, nil, zero
	x.count--
	for i := len(path) - 1; i > 0; i-- {
		c := path[i]
		if c.has || len(c.kids) > 0 {
			break
		}
		path[i-1].remove(c.key)
	}
	return true
}

// Match calls fn for every stored subject that p matches (same length,
// equal at every literal position), in no particular order, until fn
// returns false. The tokens passed to fn are the index's copy of the
// subject: fn may keep them but must not modify them, and must not modify
// the index.
func (x *Index[V]) Match(p Pattern, fn func(tokens []string, v V) bool) {
	x.root.match(p, fn)
}

// match visits the subjects below n that match the rest of the pattern p;
// it returns false when fn asked to stop.
func (n *node[V]) match(p Pattern, fn func([]string, V) bool) bool {
	for len(p) > 0 && !p[0].Wildcard {
		if n = n.child(p[0].Value); n == nil {
			return true
		}
		p = p[1:]
	}
	if len(p) == 0 {
		if n.has {
			return fn(n.tokens, n.val)
		}
		return true
	}
	rest := p[1:]
	for _, c := range n.kids {
		if !c.match(rest, fn) {
			return false
		}
	}
	return true
}

// child returns the child for token t, or nil.
func (n *node[V]) child(t string) *node[V] {
	if n.pos != nil {
		if i, ok := n.pos[t]; ok {
			return n.kids[i]
		}
		return nil
	}
	for _, c := range n.kids {
		if c.key == t {
			return c
		}
	}
	return nil
}

// add appends a new child for token t, which must not exist yet.
func (n *node[V]) add(t string) *node[V] {
	c := &node[V]{key: t}
	n.kids = append(n.kids, c)
	switch {
	case n.pos != nil:
		n.pos[t] = len(n.kids) - 1
	case len(n.kids) > smallKids:
		n.pos = make(map[string]int, 2*len(n.kids))
		for i, k := range n.kids {
			n.pos[k.key] = i
		}
	}
	return c
}

// remove deletes the child for token t (which must exist) by moving the
// last child into its place.
func (n *node[V]) remove(t string) {
	i := -1
	if n.pos != nil {
		i = n.pos[t]
		delete(n.pos, t)
	} else {
		for j, c := range n.kids {
			if c.key == t {
				i = j
				break
			}
		}
	}
	last := len(n.kids) - 1
	if i != last {
		n.kids[i] = n.kids[last]
		if n.pos != nil {
			n.pos[n.kids[i].key] = i
		}
	}
	n.kids[last] = nil
	n.kids = n.kids[:last]
	if len(n.kids) == 0 {
		n.kids, n.pos = nil, nil
	}
}
