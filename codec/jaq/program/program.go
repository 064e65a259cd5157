// Package program owns herald's use of the jq language (github.com/itchyny/gojq):
// compiling the programs of JAQ-backed codecs once, running them with a
// context and an output cap, turning gojq's errors into fixed causes that
// never quote payload values, and recovering the member order of the
// objects a program builds (gojq keeps objects as Go maps and sorts their
// keys; jaq, whose behaviour herald follows, keeps declaration order).
//
// It must not read or write any payload format or know internal schemas:
// callers hand it values of the gojq value model (nil, bool, int, float64,
// *big.Int, json.Number, string, []any, map[string]any) and get such
// values back. Programs get no environment, no input/inputs and no module
// loader.
//
// Where gojq differs from jaq (the engine Nervix embeds, whose behaviour
// the spec describes), herald decides as follows (docs/codecs.md):
//
//   - Object member order: gojq sorts keys; herald writes objects in the
//     order of the program's object literals, then the internal schema's
//     order (Order). Iterating an object (.[], to_entries, keys) still
//     runs in sorted key order, so unfolding an object yields its members
//     in key order where jaq keeps document order.
//   - Numbers: values enter as json.Number (text formats), int, *big.Int
//     or float64, so a number passed through keeps its value. gojq
//     computes floor, round, ceil and some divisions as floats where jaq
//     yields integers; an integral float is accepted for an integer field.
//   - gojq has no byte strings and no non-string keys: YAML !!binary and
//     CBOR byte strings read as padded base64 text, non-string keys are
//     refused when read.
//   - keys_unsorted, $__loc__, input_filename, ascii and debug/stderr do
//     not exist (a compile error); input and inputs are refused; env and
//     $ENV are empty; halt ends a program's outputs, halt_error is an
//     error; a negative limit is an error; ltrimstr on a non-string is an
//     error where jq returns the input.
//   - Error messages: gojq's quote values, so they are replaced by a fixed
//     cause and kept for trace-level logs (RunError.Detail).
package program

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/itchyny/gojq"
)

// CompileError is a program that does not parse or compile. Offset is the
// byte offset in the program text the error belongs to.
type CompileError struct {
	Offset int
	Msg    string
}

// Error implements error.
func (e *CompileError) Error() string { return e.Msg }

// Program is a compiled jq program. It is safe for concurrent use.
type Program struct {
	text  string
	code  *gojq.Code
	order *Order
	fast  fastNode // nil: the program runs through gojq
}

// Compile parses and compiles a program. The error is a *CompileError
// whose offset points at the token (or the undefined name) at fault.
func Compile(text string) (*Program, error) {
	q, err := gojq.Parse(text)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			off := pe.Offset - len(pe.Token)
			if off < 0 {
				off = 0
			}
			return nil, &CompileError{Offset: off, Msg: err.Error()}
		}
		return nil, &CompileError{Msg: err.Error()}
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, &CompileError{Offset: locate(text, err.Error()), Msg: err.Error()}
	}
	return &Program{text: text, code: code, order: collectOrder(q), fast: compileFast(q)}, nil
}

// locate finds where a compile error's subject (an undefined function
// "name/arity" or variable "$name") first appears in the program, or 0.
func locate(text, msg string) int {
	var name string
	if strings.HasPrefix(msg, "input(s)/0") {
		name = "input"
	} else if i := strings.LastIndex(msg, ": "); i >= 0 {
		name = msg[i+2:]
	}
	if j := strings.IndexByte(name, '/'); j >= 0 {
		name = name[:j]
	}
	if name == "" {
		return 0
	}
	for from := 0; ; {
		k := strings.Index(text[from:], name)
		if k < 0 {
			return 0
		}
		k += from
		end := k + len(name)
		before := k == 0 || !identChar(text[k-1])
		after := end >= len(text) || !identChar(text[end])
		if before && after {
			return k
		}
		from = k + 1
	}
}

func identChar(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// Text returns the program as written.
func (p *Program) Text() string { return p.text }

// Order returns the member order of the program's object literals.
func (p *Program) Order() *Order { return p.order }

// RunError is a program evaluation error. Error returns a fixed cause;
// the evaluator's own message, which may quote values, is kept for
// trace-level logs only (Detail).
type RunError struct {
	// Timeout is set when the run was cancelled by its deadline.
	Timeout bool
	// Cancelled is set when the run was cancelled by its caller.
	Cancelled bool
	detail    string
}

// Error implements error with a cause that never quotes a value.
func (e *RunError) Error() string {
	switch {
	case e.Timeout:
		return "program did not finish before its deadline and was cancelled"
	case e.Cancelled:
		return "program run was cancelled"
	}
	return "program evaluation failed (the evaluator's message is logged at trace level)"
}

// Detail returns the evaluator's message, which may quote payload values:
// log it at trace level only.
func (e *RunError) Detail() string { return e.detail }

// ErrStop is returned by a yield function to end a run early without an
// error.
var ErrStop = errors.New("stop")

// Run runs the program on v and calls yield with each output in order.
// It stops at the first error (a *RunError, or yield's own error) or when
// yield returns ErrStop. ctx cancels a running program.
func (p *Program) Run(ctx context.Context, v any, yield func(any) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &RunError{detail: fmt.Sprint("panic: ", r)}
		}
	}()
	if p.fast != nil {
		return p.runFast(ctx, v, yield)
	}
	iter := p.code.RunWithContext(ctx, v)
	for {
		out, ok := iter.Next()
		if !ok {
			return nil
		}
		if e, isErr := out.(error); isErr {
			var he *gojq.HaltError
			if errors.As(e, &he) && he.Value() == nil {
				return nil // halt: the program ends its outputs
			}
			switch {
			case errors.Is(e, context.DeadlineExceeded):
				return &RunError{Timeout: true, detail: e.Error()}
			case errors.Is(e, context.Canceled):
				return &RunError{Cancelled: true, detail: e.Error()}
			}
			return &RunError{detail: e.Error()}
		}
		if err := yield(out); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
}

// runFast runs a fast-path program, with Run's contract.
func (p *Program) runFast(ctx context.Context, v any, yield func(any) error) error {
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return &RunError{Timeout: true, detail: err.Error()}
		}
		return &RunError{Cancelled: true, detail: err.Error()}
	}
	err := p.fast.run(v, yield)
	var fe *fastErr
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return &RunError{detail: fe.msg}
	case errors.Is(err, ErrStop):
		return nil
	}
	return err
}

// Order is the member order of the object literals of one or more
// programs. An object is written in the order of the first literal whose
// key set equals the object's; other objects rank their keys: the
// preferred names first (the internal schema's fields, in order), then the
// keys in the order of their first appearance in a literal, then the rest
// in lexical order. A nil *Order ranks by preferred names and lexical
// order only.
type Order struct {
	sets [][]string
	rank map[string]int
}

// Merge returns an order holding the literals of o and then of others.
func (o *Order) Merge(others ...*Order) *Order {
	m := &Order{rank: map[string]int{}}
	for _, x := range append([]*Order{o}, others...) {
		if x == nil {
			continue
		}
		for _, s := range x.sets {
			m.add(s)
		}
	}
	return m
}

func (o *Order) add(keys []string) {
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			return // a literal with a repeated key says nothing about order
		}
		seen[k] = true
	}
	for _, k := range keys {
		if _, ok := o.rank[k]; !ok {
			o.rank[k] = len(o.rank)
		}
	}
	o.sets = append(o.sets, keys)
}

// Keys returns the keys of m in writing order. preferred ranks names ahead
// of the literals' order (nil for none).
func (o *Order) Keys(m map[string]any, preferred map[string]int) []string {
	if o != nil {
	sets:
		for _, s := range o.sets {
			if len(s) != len(m) {
				continue
			}
			for _, k := range s {
				if _, ok := m[k]; !ok {
					continue sets
				}
			}
			return s
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	const none = int(^uint(0) >> 1)
	rank := func(k string) (int, int) {
		if r, ok := preferred[k]; ok {
			return 0, r
		}
		if o != nil {
			if r, ok := o.rank[k]; ok {
				return 1, r
			}
		}
		return 2, none
	}
	sort.Slice(keys, func(i, j int) bool {
		ci, ri := rank(keys[i])
		cj, rj := rank(keys[j])
		if ci != cj {
			return ci < cj
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

var (
	objectType      = reflect.TypeOf((*gojq.Object)(nil))
	constObjectType = reflect.TypeOf((*gojq.ConstObject)(nil))
)

// collectOrder walks the syntax tree and records the static key list of
// every object literal in source order. Dynamic keys ((expr): v, or
// interpolated strings) are left out.
func collectOrder(q *gojq.Query) *Order {
	o := &Order{rank: map[string]int{}}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			switch v.Type() {
			case objectType:
				obj := v.Interface().(*gojq.Object)
				var keys []string
				for _, kv := range obj.KeyVals {
					switch {
					case kv.Key != "":
						keys = append(keys, strings.TrimPrefix(kv.Key, "$"))
					case kv.KeyString != nil && kv.KeyString.Queries == nil:
						keys = append(keys, kv.KeyString.Str)
					}
				}
				o.add(keys)
			case constObjectType:
				obj := v.Interface().(*gojq.ConstObject)
				var keys []string
				for _, kv := range obj.KeyVals {
					if kv.Key != "" {
						keys = append(keys, kv.Key)
					} else {
						keys = append(keys, kv.KeyString)
					}
				}
				o.add(keys)
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(q))
	return o
}
