// Package jaq owns the runtime of JAQ-backed codecs (JAQ-native and
// protobuf): decoding a payload as a stream (the format's values, ON
// INGESTION on each in order, every object it yields one row, at most
// MaxMessages rows, the payload decoded as a whole or rejected as a
// whole), and emission (a row's JSON view through ON EMITTING, exactly
// one value, written by the format's writer in member order; a batch's
// members through ON EMITTING BATCH or the format's container). Every run
// happens on the extension workers, under a deadline, except the decode
// of a codec that walks JSON straight into rows (ON INGESTION a path such
// as '.', '.[]' or '.readings[]', package passthrough), which runs no
// program through gojq.
//
// It must not parse statements or payload syntax itself: formats come
// from package formats (or protobuf), programs from package program, the row
// conversions from package rowview. Its diagnostics name the codec, the
// cause and the zero-based input and output positions and never quote
// payload values; the evaluator's own message is logged at trace level.
package jaq

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec/jaq/formats"
	"github.com/herald-gateway/herald/codec/jaq/passthrough"
	"github.com/herald-gateway/herald/codec/jaq/program"
	"github.com/herald-gateway/herald/codec/jaq/rowview"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	"github.com/herald-gateway/herald/codec/values"
	"github.com/herald-gateway/herald/codec/workers"
)

// MaxMessages is the unfolding limit: the most messages one payload may
// decode into.
const MaxMessages = 65536

// LevelTrace is the slog level of the evaluator's messages, which may
// quote payload values.
const LevelTrace = slog.Level(-8)

// Format reads the values a payload holds and writes output values in
// one codec format.
type Format interface {
	// Read calls yield with each value of the payload in order.
	Read(payload []byte, yield func(v any) error) error
	// Append writes ON EMITTING's output as one payload.
	Append(dst []byte, v any, o formats.KeyOrder) ([]byte, error)
	// AppendBatchValue writes ON EMITTING BATCH's output as one payload.
	AppendBatchValue(dst []byte, v any, o formats.KeyOrder) ([]byte, error)
	// AppendContainer writes the members in the format's batch container.
	AppendContainer(dst []byte, members []any, o formats.KeyOrder) ([]byte, error)
}

// Native adapts a native format: a batch program's output is written like
// any single value.
func Native(f formats.Format) Format { return nativeFormat{f} }

type nativeFormat struct{ formats.Format }

func (n nativeFormat) AppendBatchValue(dst []byte, v any, o formats.KeyOrder) ([]byte, error) {
	return n.Format.Append(dst, v, o)
}

// Error is a decode or encode failure of a JAQ-backed codec. Input and
// Output are zero-based positions (-1 when they do not apply): the value
// of the payload, and the program output within that value's outputs; Row
// is the row being emitted (-1 on decode).
type Error struct {
	Codec  string
	Dir    types.Direction
	Input  int
	Output int
	Row    int
	Err    *values.Error
	cause  error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("codec ")
	b.WriteString(types.Quote(e.Codec))
	b.WriteString(": ")
	b.WriteString(e.Dir.String())
	if e.Row >= 0 {
		b.WriteString(", row " + strconv.Itoa(e.Row))
	}
	if e.Input >= 0 {
		b.WriteString(", input value " + strconv.Itoa(e.Input))
	}
	if e.Output >= 0 {
		b.WriteString(", output " + strconv.Itoa(e.Output))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the typed value error (for its code) and the underlying
// cause (workers.ErrBusy, a *program.RunError), when there is one.
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.Err, e.cause}
	}
	return []error{e.Err}
}

// Config describes a JAQ-backed codec.
type Config struct {
	Name   string
	Format Format
	Schema *types.Schema
	// Programs holds the compiled transformations by direction; nil for
	// an absent one.
	Programs [3]*program.Program
	// Pool runs every program; required.
	Pool *workers.Pool
	// Logger receives the evaluator's messages at LevelTrace; nil
	// discards them.
	Logger *slog.Logger
	// MaxSize bounds one encoded payload in bytes; 0 means unbounded.
	MaxSize int
}

// Codec decodes and encodes through JAQ transformations. It is safe for
// concurrent use.
type Codec struct {
	cfg    Config
	target *rowview.Target
	order  keyOrder
	// walk decodes JSON payloads straight into rows when ON INGESTION is
	// a path of member names, iterated at its end or not (path); rest[i]
	// is the program of the path after i names. nil otherwise.
	walk *passthrough.Decoder
	path passthrough.Path
	rest []*program.Program
}

// New returns a codec for cfg.
func New(cfg Config) *Codec {
	c := &Codec{cfg: cfg, target: rowview.NewTarget(cfg.Schema)}
	var o *program.Order
	if p := cfg.Programs[types.Emitting]; p != nil {
		o = p.Order()
	}
	if p := cfg.Programs[types.EmittingBatch]; p != nil {
		o = o.Merge(p.Order())
	}
	c.order = keyOrder{o: o, preferred: rowview.Preferred(cfg.Schema)}
	if nf, ok := cfg.Format.(nativeFormat); ok && formats.IsJSON(nf.Format) && cfg.Programs[types.Ingestion] != nil {
		c.walkPath(cfg.Programs[types.Ingestion])
	}
	return c
}

// walkPath sets the codec up to walk JSON when ON INGESTION is a path of
// member names ending with an iteration or not: the path, and for each
// level the program of the rest of the path (for values the walk hands
// back).
func (c *Codec) walkPath(prog *program.Program) {
	steps, ok := prog.Path()
	if !ok {
		return
	}
	var p passthrough.Path
	for i, s := range steps {
		switch {
		case s.Iter && i == len(steps)-1:
			p.Iter = true
		case s.Iter:
			return
		default:
			p.Keys = append(p.Keys, s.Key)
		}
	}
	rest := []*program.Program{prog}
	for level := 1; level <= len(p.Keys); level++ {
		var parts []string
		for _, k := range p.Keys[level:] {
			q, _ := json.Marshal(k)
			parts = append(parts, ".["+string(q)+"]")
		}
		if p.Iter {
			parts = append(parts, ".[]")
		}
		text := "."
		if len(parts) > 0 {
			text = strings.Join(parts, " | ")
		}
		rp, err := program.Compile(text)
		if err != nil || !rp.Fast() {
			return
		}
		rest = append(rest, rp)
	}
	c.walk, c.path, c.rest = passthrough.New(c.cfg.Schema), p, rest
}

// Walks reports whether the codec decodes JSON payloads straight into
// rows (ON INGESTION '.', '.[]', '.a.b', '.a.b[]' … on JAQ-native JSON).
func (c *Codec) Walks() bool { return c.walk != nil }

type keyOrder struct {
	o         *program.Order
	preferred map[string]int
}

func (k keyOrder) Keys(m map[string]any) []string { return k.o.Keys(m, k.preferred) }

// trace logs the library or evaluator message an error keeps aside (it
// may quote payload values) at trace level.
func (c *Codec) trace(ctx context.Context, dir types.Direction, row, in, out int, err error) {
	var d interface{ Detail() string }
	if c.cfg.Logger == nil || !errors.As(err, &d) {
		return
	}
	c.cfg.Logger.Log(ctx, LevelTrace, "jaq codec failure detail", "codec", c.cfg.Name, "transformation", dir.String(),
		"row", row, "input", in, "output", out, "detail", d.Detail())
}

func (c *Codec) fail(dir types.Direction, row, in, out int, e *values.Error, cause error) *Error {
	return &Error{Codec: c.cfg.Name, Dir: dir, Row: row, Input: in, Output: out, Err: e, cause: cause}
}

// runErr turns a program failure into an Error and logs the evaluator's
// message at trace level.
func (c *Codec) runErr(ctx context.Context, dir types.Direction, row, in, out int, err error) error {
	var re *program.RunError
	if !errors.As(err, &re) {
		return err
	}
	c.trace(ctx, dir, row, in, out, err)
	code := values.CodeProgram
	if re.Timeout {
		code = values.CodeTimeout
	}
	return c.fail(dir, row, in, out, values.Errorf(code, "", re.Error()), re)
}

func (c *Codec) busy(dir types.Direction, err error) error {
	if errors.Is(err, workers.ErrBusy) {
		return c.fail(dir, -1, -1, -1, values.Errorf(values.CodeBusy, "", err.Error()), err)
	}
	return err
}

// CanDecode reports whether the codec declares ON INGESTION.
func (c *Codec) CanDecode() bool { return c.cfg.Programs[types.Ingestion] != nil }

// CanEncode reports whether the codec declares ON EMITTING.
func (c *Codec) CanEncode() bool { return c.cfg.Programs[types.Emitting] != nil }

// Decode decodes one payload; see DecodeContext.
func (c *Codec) Decode(payload []byte, b *rows.Builder) (int, error) {
	return c.DecodeContext(context.Background(), payload, b)
}

// DecodeContext decodes one payload into rows of b on the extension
// workers: ON INGESTION runs on every value the payload holds, in order,
// and every object it yields becomes one row. A malformed value, a
// program error, an output that is not an object or does not fit the
// schema, or more than MaxMessages messages rejects the whole payload: no
// row of it is kept. It returns the number of rows added. A codec that
// walks JSON (Walks) runs no program through gojq, so it decodes on the
// caller's goroutine, as the WIRE codecs do, and is never busy.
func (c *Codec) DecodeContext(ctx context.Context, payload []byte, b *rows.Builder) (int, error) {
	prog := c.cfg.Programs[types.Ingestion]
	if prog == nil {
		return 0, c.fail(types.Ingestion, -1, -1, -1, values.Errorf(values.CodeNoProgram, "", "the codec declares no ON INGESTION transformation, so it cannot decode"), nil)
	}
	r := &ingest{c: c, prog: prog, b: b}
	if c.walk != nil {
		r.ctx = ctx
		if err := r.decode(payload); err != nil {
			return 0, err
		}
		return r.n, nil
	}
	err := c.cfg.Pool.Do(ctx, func(ctx context.Context) error {
		r.ctx = ctx
		return r.decode(payload)
	})
	if err != nil {
		return 0, c.busy(types.Ingestion, err)
	}
	return r.n, nil
}

// ingest is one payload's decode: it runs ON INGESTION on the payload's
// values (or takes the rows a walk yields) and counts rows and inputs. It
// is the passthrough.Handler of a walk.
type ingest struct {
	c     *Codec
	ctx   context.Context
	prog  *program.Program
	b     *rows.Builder
	n     int // rows added
	input int // the payload value being decoded
}

func (r *ingest) decode(payload []byte) error {
	c := r.c
	mark := r.b.Mark()
	var err error
	if c.walk != nil {
		err = c.walk.Decode(payload, r.b, c.path, r)
	} else {
		err = c.cfg.Format.Read(payload, func(v any) error {
			if err := r.Rest(0, v); err != nil {
				return err
			}
			r.Next()
			return nil
		})
	}
	if err != nil {
		r.b.Rollback(mark)
		r.n = 0
		var ve *values.Error
		if errors.As(err, &ve) && !isJaqErr(err) {
			c.trace(r.ctx, types.Ingestion, -1, r.input, -1, err)
			return c.fail(types.Ingestion, -1, r.input, -1, ve, nil)
		}
		return err
	}
	return nil
}

// Rest runs the program on one payload value (level 0), or the rest of a
// walked path on a value it reached; every output becomes a row.
func (r *ingest) Rest(level int, v any) error {
	prog := r.prog
	if level > 0 {
		prog = r.c.rest[level]
	}
	out := 0
	err := prog.Run(r.ctx, v, func(o any) error {
		if err := r.Output(out); err != nil {
			return err
		}
		if err := r.Row(out, o); err != nil {
			return err
		}
		out++
		return nil
	})
	if err != nil {
		return r.c.runErr(r.ctx, types.Ingestion, -1, r.input, -1, err)
	}
	return nil
}

// Output counts one more output, refusing one past MaxMessages.
func (r *ingest) Output(out int) error {
	if r.n == MaxMessages {
		return r.c.fail(types.Ingestion, -1, r.input, out, values.Errorf(values.CodeTooManyMessages, "",
			"the payload unfolds into more than "+strconv.Itoa(MaxMessages)+" messages"), nil)
	}
	r.n++
	return nil
}

// Row decodes output out into a row.
func (r *ingest) Row(out int, v any) error {
	if e := r.c.target.Append(r.b, v); e != nil {
		return r.Invalid(out, e)
	}
	return nil
}

// Invalid is the failure of output out to fit the schema.
func (r *ingest) Invalid(out int, e *values.Error) error {
	return r.c.fail(types.Ingestion, -1, r.input, out, e, nil)
}

// Next moves on to the payload's next value.
func (r *ingest) Next() { r.input++ }

func isJaqErr(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// one runs a program that must yield exactly one value.
func (c *Codec) one(ctx context.Context, dir types.Direction, row int, v any) (any, error) {
	var out any
	n := 0
	err := c.cfg.Programs[dir].Run(ctx, v, func(o any) error {
		n++
		if n > 1 {
			return c.fail(dir, row, -1, -1, values.Errorf(values.CodeSeveralOutputs, "", dir.String()+" yielded more than one value: it must yield exactly one"), nil)
		}
		out = o
		return nil
	})
	if err != nil {
		return nil, c.runErr(ctx, dir, row, -1, -1, err)
	}
	if n == 0 {
		return nil, c.fail(dir, row, -1, -1, values.Errorf(values.CodeNoOutput, "", dir.String()+" yielded no value: it must yield exactly one"), nil)
	}
	return out, nil
}

func (c *Codec) member(ctx context.Context, rec arrow.RecordBatch, i int) (any, error) {
	view, err := rowview.Row(rec, i, c.cfg.Schema)
	if err != nil {
		var ve *values.Error
		if errors.As(err, &ve) {
			return nil, c.fail(types.Emitting, i, -1, -1, ve, nil)
		}
		return nil, err
	}
	return c.one(ctx, types.Emitting, i, view)
}

func (c *Codec) wrote(ctx context.Context, dir types.Direction, row int, err error) error {
	var ve *values.Error
	if errors.As(err, &ve) && !isJaqErr(err) {
		c.trace(ctx, dir, row, -1, -1, err)
		return c.fail(dir, row, -1, -1, ve, nil)
	}
	return err
}

func (c *Codec) bound(dir types.Direction, row, n int) error {
	if c.cfg.MaxSize > 0 && n > c.cfg.MaxSize {
		return c.fail(dir, row, -1, -1, values.Errorf(values.CodeTooLarge, "", "encoded payload exceeds the size bound of "+strconv.Itoa(c.cfg.MaxSize)+" bytes"), nil)
	}
	return nil
}

// AppendRow encodes row i; see AppendRowContext.
func (c *Codec) AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	return c.AppendRowContext(context.Background(), dst, rec, i)
}

// AppendRowContext appends row i of rec as one payload: the row's JSON
// view through ON EMITTING, which must yield exactly one value, written
// in the codec's format. It runs on the extension workers.
func (c *Codec) AppendRowContext(ctx context.Context, dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	if !c.CanEncode() {
		return dst, c.fail(types.Emitting, i, -1, -1, values.Errorf(values.CodeNoProgram, "", "the codec declares no ON EMITTING transformation, so it cannot encode"), nil)
	}
	start := len(dst)
	out := dst
	err := c.cfg.Pool.Do(ctx, func(ctx context.Context) error {
		v, err := c.member(ctx, rec, i)
		if err != nil {
			return err
		}
		if out, err = c.cfg.Format.Append(dst, v, c.order); err != nil {
			return c.wrote(ctx, types.Emitting, i, err)
		}
		return c.bound(types.Emitting, i, len(out)-start)
	})
	if err != nil {
		return dst[:start], c.busy(types.Emitting, err)
	}
	return out, nil
}

// AppendBatch encodes rows as one batch; see AppendBatchContext.
func (c *Codec) AppendBatch(dst []byte, rec arrow.RecordBatch, rowIdx []int) ([]byte, int, error) {
	return c.AppendBatchContext(context.Background(), dst, rec, rowIdx)
}

// AppendBatchContext appends the rows as one batch payload: each row
// contributes the value ON EMITTING yields for it, and the members, in
// order, go through ON EMITTING BATCH (which must yield exactly one value)
// or into the format's batch container. It returns the number of rows
// written (all).
func (c *Codec) AppendBatchContext(ctx context.Context, dst []byte, rec arrow.RecordBatch, rowIdx []int) ([]byte, int, error) {
	if !c.CanEncode() {
		return dst, 0, c.fail(types.Emitting, -1, -1, -1, values.Errorf(values.CodeNoProgram, "", "the codec declares no ON EMITTING transformation, so it cannot encode"), nil)
	}
	start := len(dst)
	out := dst
	err := c.cfg.Pool.Do(ctx, func(ctx context.Context) error {
		members := make([]any, 0, len(rowIdx))
		for _, i := range rowIdx {
			v, err := c.member(ctx, rec, i)
			if err != nil {
				return err
			}
			members = append(members, v)
		}
		var err error
		if c.cfg.Programs[types.EmittingBatch] != nil {
			v, err := c.one(ctx, types.EmittingBatch, -1, members)
			if err != nil {
				return err
			}
			if out, err = c.cfg.Format.AppendBatchValue(dst, v, c.order); err != nil {
				return c.wrote(ctx, types.EmittingBatch, -1, err)
			}
		} else if out, err = c.cfg.Format.AppendContainer(dst, members, c.order); err != nil {
			return c.wrote(ctx, types.Emitting, -1, err)
		}
		return c.bound(types.EmittingBatch, -1, len(out)-start)
	})
	if err != nil {
		return dst[:start], 0, c.busy(types.Emitting, err)
	}
	return out, len(rowIdx), nil
}
