package program

import (
	"encoding/json"
	"math/big"
	"sort"

	"github.com/itchyny/gojq"
)

// The fast path: programs made only of the forms most codecs use run
// natively on the value instead of through gojq's interpreter. The forms,
// recognised on gojq's syntax tree at compile time, are
//
//	.                         identity
//	.a  ."a"  .["a"]          object member (null on null, an error on
//	                          anything but an object or null)
//	.[]                       iteration (array elements in order, object
//	                          values in key order, an error otherwise)
//	.a.b[].c …                any chain of the two above
//	{a: P, "b": P, c}         object construction whose values are
//	                          single-valued fast programs (paths without
//	                          iteration, or nested constructions)
//	select(P)                 P single-valued; false and null are falsy
//	select(P == C)  != too    C a literal (string, number, true, false,
//	                          null) on either side; jq's equality
//	                          (gojq.Compare), so 1 == 1.0
//	A | B                     pipes of all of these
//
// Anything else (including ?, slices, numeric indexes, variables and
// function definitions) runs through gojq. Outputs, their order and
// whether a run fails are the same as gojq's (the property test and
// FuzzFastPath compare both); only the evaluator's message, which is
// logged at trace level, may be worded differently.

// fastNode is a compiled fast-path program.
type fastNode interface {
	run(v any, yield func(any) error) error
}

// fastErr is an evaluation error of the fast path (a jq runtime error).
type fastErr struct{ msg string }

func (e *fastErr) Error() string { return e.msg }

// Step is one step of a path program: a member name, or iteration.
type Step struct {
	Key  string
	Iter bool
}

// Path returns the steps of a program that is a plain path (., .a.b,
// .[], .a[] …; the identity has no steps) and whether it is one.
func (p *Program) Path() ([]Step, bool) {
	if pn, ok := p.fast.(*pathNode); ok {
		return pn.steps, true
	}
	return nil, false
}

// Fast reports whether the program takes the fast path.
func (p *Program) Fast() bool { return p.fast != nil }

// compileFast recognises a fast-path program; nil when q is anything else.
func compileFast(q *gojq.Query) fastNode {
	if q == nil || q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 {
		return nil
	}
	return fastQuery(q)
}

func fastQuery(q *gojq.Query) fastNode {
	if q == nil || q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
		return nil
	}
	if q.Term != nil {
		if q.Left != nil || q.Right != nil {
			return nil
		}
		return fastTerm(q.Term)
	}
	if q.Op != gojq.OpPipe || q.Left == nil || q.Right == nil {
		return nil
	}
	l, r := fastQuery(q.Left), fastQuery(q.Right)
	if l == nil || r == nil {
		return nil
	}
	// a pipe of paths is one path
	if lp, ok := l.(*pathNode); ok {
		if rp, ok := r.(*pathNode); ok {
			return &pathNode{steps: append(append([]Step{}, lp.steps...), rp.steps...)}
		}
	}
	return &pipeNode{l, r}
}

// indexKey returns the member name of a string index (.a, ."a", .["a"]).
func indexKey(ix *gojq.Index) (string, bool) {
	if ix == nil || ix.IsSlice || ix.End != nil {
		return "", false
	}
	switch {
	case ix.Name != "" && ix.Str == nil && ix.Start == nil:
		return ix.Name, true
	case ix.Name == "" && ix.Str != nil && ix.Str.Queries == nil && ix.Start == nil:
		return ix.Str.Str, true
	case ix.Name == "" && ix.Str == nil && ix.Start != nil:
		q := ix.Start
		if q.Term != nil && q.Left == nil && q.Right == nil && q.Term.Type == gojq.TermTypeString &&
			q.Term.Str != nil && q.Term.Str.Queries == nil && len(q.Term.SuffixList) == 0 && len(q.Patterns) == 0 {
			return q.Term.Str.Str, true
		}
	}
	return "", false
}

func fastTerm(t *gojq.Term) fastNode {
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeIndex:
		var steps []Step
		if t.Type == gojq.TermTypeIndex {
			k, ok := indexKey(t.Index)
			if !ok {
				return nil
			}
			steps = append(steps, Step{Key: k})
		}
		for _, s := range t.SuffixList {
			switch {
			case s.Optional:
				return nil
			case s.Iter && s.Index == nil:
				steps = append(steps, Step{Iter: true})
			case !s.Iter && s.Index != nil:
				k, ok := indexKey(s.Index)
				if !ok {
					return nil
				}
				steps = append(steps, Step{Key: k})
			default:
				return nil
			}
		}
		return &pathNode{steps: steps}
	case gojq.TermTypeQuery:
		if len(t.SuffixList) > 0 {
			return nil
		}
		return fastQuery(t.Query)
	case gojq.TermTypeObject:
		if len(t.SuffixList) > 0 || t.Object == nil {
			return nil
		}
		return fastObject(t.Object)
	case gojq.TermTypeFunc:
		if len(t.SuffixList) > 0 || t.Func == nil || t.Func.Name != "select" || len(t.Func.Args) != 1 {
			return nil
		}
		return fastSelect(t.Func.Args[0])
	}
	return nil
}

// single reports whether n yields exactly one value (or fails).
func single(n fastNode) bool {
	switch n := n.(type) {
	case *pathNode:
		for _, s := range n.steps {
			if s.Iter {
				return false
			}
		}
		return true
	case *objectNode:
		return true
	}
	return false
}

func fastObject(o *gojq.Object) fastNode {
	n := &objectNode{}
	seen := map[string]bool{}
	for _, kv := range o.KeyVals {
		var key string
		switch {
		case kv.Key != "" && kv.KeyString == nil && kv.KeyQuery == nil:
			if kv.Key[0] == '$' {
				return nil // a variable
			}
			key = kv.Key
		case kv.Key == "" && kv.KeyString != nil && kv.KeyString.Queries == nil && kv.KeyQuery == nil && kv.Val != nil:
			key = kv.KeyString.Str
		default:
			return nil
		}
		if seen[key] {
			return nil
		}
		seen[key] = true
		var val fastNode
		if kv.Val == nil {
			val = &pathNode{steps: []Step{{Key: key}}}
		} else if val = fastQuery(kv.Val); val == nil || !single(val) {
			return nil
		}
		n.keys = append(n.keys, key)
		n.vals = append(n.vals, val)
	}
	return n
}

func fastSelect(q *gojq.Query) fastNode {
	if q == nil || len(q.Patterns) > 0 || q.Meta != nil || len(q.FuncDefs) > 0 {
		return nil
	}
	if q.Term != nil {
		if c := fastQuery(q); c != nil && single(c) {
			return &selectNode{cond: c}
		}
		return nil
	}
	if (q.Op != gojq.OpEq && q.Op != gojq.OpNe) || q.Left == nil || q.Right == nil {
		return nil
	}
	eq := q.Op == gojq.OpEq
	if c, ok := constant(q.Right); ok {
		if l := fastQuery(q.Left); l != nil && single(l) {
			return &selectNode{cond: l, cmp: true, eq: eq, c: c}
		}
	}
	if c, ok := constant(q.Left); ok {
		if r := fastQuery(q.Right); r != nil && single(r) {
			return &selectNode{cond: r, cmp: true, eq: eq, c: c}
		}
	}
	return nil
}

// constant returns the value of a literal term: a string without
// interpolation, a number, true, false or null.
func constant(q *gojq.Query) (any, bool) {
	if q.Term == nil || q.Left != nil || q.Right != nil || len(q.Patterns) > 0 || len(q.Term.SuffixList) > 0 {
		return nil, false
	}
	t := q.Term
	switch t.Type {
	case gojq.TermTypeNull:
		return nil, true
	case gojq.TermTypeTrue:
		return true, true
	case gojq.TermTypeFalse:
		return false, true
	case gojq.TermTypeString:
		if t.Str != nil && t.Str.Queries == nil {
			return t.Str.Str, true
		}
	case gojq.TermTypeNumber:
		// the literal's value as gojq computes it
		return constValue(t.Number)
	case gojq.TermTypeUnary:
		if u := t.Unary; u != nil && u.Term != nil && u.Term.Type == gojq.TermTypeNumber && len(u.Term.SuffixList) == 0 {
			return constValue(t.String())
		}
	}
	return nil, false
}

// constValue evaluates a number literal with gojq itself, so that the
// fast path compares against exactly the value gojq would.
func constValue(num string) (any, bool) {
	q, err := gojq.Parse(num)
	if err != nil {
		return nil, false
	}
	v, ok := q.Run(nil).Next()
	if !ok {
		return nil, false
	}
	switch v.(type) {
	case int, float64, *big.Int, json.Number:
		return v, true
	}
	return nil, false
}

// pathNode is a chain of member indexes and iterations.
type pathNode struct{ steps []Step }

func (n *pathNode) run(v any, yield func(any) error) error {
	return walk(v, n.steps, yield)
}

func walk(v any, steps []Step, yield func(any) error) error {
	for i, s := range steps {
		if !s.Iter {
			var err error
			if v, err = member(v, s.Key); err != nil {
				return err
			}
			continue
		}
		rest := steps[i+1:]
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if err := walk(e, rest, yield); err != nil {
					return err
				}
			}
			return nil
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if err := walk(x[k], rest, yield); err != nil {
					return err
				}
			}
			return nil
		default:
			return &fastErr{"cannot iterate over: " + typeName(v)}
		}
	}
	return yield(v)
}

// one evaluates a single-valued path.
func (n *pathNode) one(v any) (any, error) {
	for _, s := range n.steps {
		var err error
		if v, err = member(v, s.Key); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func member(v any, key string) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x[key], nil
	}
	return nil, &fastErr{"expected an object but got: " + typeName(v)}
}

// sortedKeys returns the keys of m in the order gojq iterates an object.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, float64, *big.Int, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "value"
}

// oneOf evaluates a single-valued node.
func oneOf(n fastNode, v any) (any, error) {
	switch n := n.(type) {
	case *pathNode:
		return n.one(v)
	case *objectNode:
		return n.one(v)
	}
	panic("jq: oneOf on a node that is not single-valued")
}

// objectNode builds an object from single-valued members.
type objectNode struct {
	keys []string
	vals []fastNode
}

func (n *objectNode) one(v any) (any, error) {
	m := make(map[string]any, len(n.keys))
	for i, k := range n.keys {
		x, err := oneOf(n.vals[i], v)
		if err != nil {
			return nil, err
		}
		m[k] = x
	}
	return m, nil
}

func (n *objectNode) run(v any, yield func(any) error) error {
	m, err := n.one(v)
	if err != nil {
		return err
	}
	return yield(m)
}

// selectNode passes its input on when the condition holds.
type selectNode struct {
	cond fastNode
	cmp  bool // compare cond's value with c (eq: ==, else !=)
	eq   bool
	c    any
}

func (n *selectNode) run(v any, yield func(any) error) error {
	x, err := oneOf(n.cond, v)
	if err != nil {
		return err
	}
	var keep bool
	if n.cmp {
		keep = (gojq.Compare(x, n.c) == 0) == n.eq
	} else {
		keep = x != nil && x != false
	}
	if keep {
		return yield(v)
	}
	return nil
}

// pipeNode runs right on every output of left, depth first.
type pipeNode struct{ left, right fastNode }

func (n *pipeNode) run(v any, yield func(any) error) error {
	return n.left.run(v, func(x any) error { return n.right.run(x, yield) })
}
