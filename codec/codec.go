// Package codec is herald's codec core: it compiles a codec definition of
// the catalog into a Codec that decodes payloads of its wire format into
// rows of an Arrow record batch of the internal schema, and encodes rows
// into payloads and batch containers. The type system (types), the value
// rules (values), the statement language (ddl), the entity catalog
// (catalog), binding (bind), evolution verdicts (evolve), the batch builder
// (rows) and one package per wire format (wire/…) live below it, with
// the JAQ-backed codecs under jaq (their runtime): the jq programs
// (jaq/program), the JSON view of rows (jaq/rowview), the JAQ-native
// payload formats (jaq/formats) and the direct JSON-to-rows decoder of
// pass-through programs (jaq/passthrough); protobuf resources and
// descriptors (resource, protobuf); and the bounded extension workers
// every program runs on (workers).
//
// It imports no other herald package and must not know about HTTP,
// engines or notifications; callers hand it bytes and Arrow batches.
package codec

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/jaq"
	"github.com/herald-gateway/herald/codec/jaq/formats"
	"github.com/herald-gateway/herald/codec/jaq/program"
	"github.com/herald-gateway/herald/codec/protobuf"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	wavro "github.com/herald-gateway/herald/codec/wire/avro"
	wcbor "github.com/herald-gateway/herald/codec/wire/cbor"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
	wsyslog "github.com/herald-gateway/herald/codec/wire/syslog"
	"github.com/herald-gateway/herald/codec/workers"
)

// Decoder decodes one payload into rows appended to a batch builder and
// returns how many rows it added. On error it adds none.
type Decoder interface {
	Decode(payload []byte, b *rows.Builder) (int, error)
}

// Encoder appends row i of a record batch to dst as one payload.
type Encoder interface {
	AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error)
}

// BatchEncoder appends rows as one batch container payload. It returns how
// many of the rows (a prefix) the container holds: formats whose container
// needs a shared header (SYSLOG) stop at the first row that differs, and
// the caller starts a new container from there.
type BatchEncoder interface {
	AppendBatch(dst []byte, rec arrow.RecordBatch, rows []int) ([]byte, int, error)
}

// ContextDecoder is a Decoder whose decode can be cancelled. JAQ-backed
// codecs implement it: their programs run on the extension workers, and
// the caller waits.
type ContextDecoder interface {
	Decoder
	DecodeContext(ctx context.Context, payload []byte, b *rows.Builder) (int, error)
}

// ContextEncoder is an Encoder and BatchEncoder whose encode can be
// cancelled (JAQ-backed codecs).
type ContextEncoder interface {
	AppendRowContext(ctx context.Context, dst []byte, rec arrow.RecordBatch, i int) ([]byte, error)
	AppendBatchContext(ctx context.Context, dst []byte, rec arrow.RecordBatch, rows []int) ([]byte, int, error)
}

// StoredDecoder is a Decoder that can also decode a payload of exactly
// one record straight into the stored row encoding of package store,
// without a batch: the bytes store.Encoder.AppendRow writes for the row
// Decode would add, with the same validation and the same errors. Plain
// WIRE JSON decoders implement it (a payload there is one object).
type StoredDecoder interface {
	Decoder
	// DecodeStored appends the stored row of payload to dst; on error
	// dst is returned unchanged.
	DecodeStored(dst, payload []byte) ([]byte, error)
	// StoredValue returns internal column k's value in the row the last
	// successful DecodeStored appended, in the stored encoding (a null
	// as the stored null); it aliases that row.
	StoredValue(k int) []byte
}

// ErrBusy is the error (matched with errors.Is) of a payload that a
// JAQ-backed codec refused because the extension workers could not take
// it now: it was not judged. The HTTP layer answers 503 with Retry-After;
// an emitter keeps its rows and retries.
var ErrBusy = workers.ErrBusy

// Options tune a compiled codec.
type Options struct {
	// MaxSize bounds one encoded payload in bytes (the emitter's MAX
	// SIZE); 0 means unbounded.
	MaxSize int
	// Now is the clock a SYSLOG codec takes the year of RFC 3164
	// timestamps from; nil means time.Now.
	Now func() time.Time
	// Workers is the extension worker pool JAQ-backed codecs run their
	// programs on; share one per process. nil gives the codec a pool of
	// its own with the default size and deadline.
	Workers *workers.Pool
	// Logger receives the jq evaluator's messages at trace level
	// (jaq.LevelTrace); nil discards them.
	Logger *slog.Logger
	// Resources are the resources a protobuf codec compiles from; nil
	// means the catalog's.
	Resources *resource.Set
}

// Codec is a compiled codec: a wire format bound to an internal schema.
// It is safe for concurrent use; decoders are per goroutine (NewDecoder).
type Codec struct {
	Name   string
	Format types.Format
	Schema *types.Schema
	Plan   *bind.Plan
	// Encoder writes one row per payload.
	Encoder Encoder
	// Batch writes the format's batch container.
	Batch BatchEncoder
	// EncodeErr is set when the codec can decode but not encode (a SYSLOG
	// target schema without facility, severity or message, a JAQ codec
	// without ON EMITTING); Encoder and Batch are nil then.
	EncodeErr error
	// DecodeErr is set when the codec cannot decode (a JAQ codec without
	// ON INGESTION); its decoder then fails every payload with it.
	DecodeErr error

	newDecoder func() Decoder
}

// NewDecoder returns a decoder for this codec; it is not safe for
// concurrent use.
func (c *Codec) NewDecoder() Decoder { return c.newDecoder() }

// NewBuilder returns a batch builder for the codec's internal schema.
func (c *Codec) NewBuilder(mem memory.Allocator) *rows.Builder {
	return rows.NewBuilder(mem, c.Schema)
}

// Compile compiles codec name of cat.
func Compile(cat *catalog.Catalog, name string, opts Options) (*Codec, error) {
	p, err := cat.Plan(name)
	if err != nil {
		return nil, err
	}
	if opts.Resources == nil {
		opts.Resources = cat.Resources()
	}
	ps, _ := cat.ProtoSchema(name)
	return compilePlan(p, opts, ps)
}

func compilePlan(p *bind.Plan, opts Options, ps *protobuf.Schema) (*Codec, error) {
	c := &Codec{Name: p.Codec.Name, Format: p.Codec.Format, Schema: p.Schema, Plan: p}
	if p.Codec.Jaq != nil {
		return compileJaq(c, p, opts, ps)
	}
	switch p.Codec.Format {
	case types.JSON:
		enc := wjson.NewEncoder(p)
		enc.MaxSize = opts.MaxSize
		c.Encoder, c.Batch = enc, enc
		c.newDecoder = func() Decoder { return wjson.NewDecoder(p) }
	case types.CBOR:
		enc := wcbor.NewEncoder(p)
		enc.MaxSize = opts.MaxSize
		c.Encoder, c.Batch = enc, enc
		dec, err := wcbor.NewDecoder(p)
		if err != nil {
			return nil, fmt.Errorf("codec %s: %w", types.Quote(p.Codec.Name), err)
		}
		c.newDecoder = func() Decoder { return dec }
	case types.AVRO:
		ac, err := wavro.New(p)
		if err != nil {
			return nil, err
		}
		ac.MaxSize = opts.MaxSize
		c.Encoder, c.Batch = ac, ac
		c.newDecoder = func() Decoder { return ac }
	case types.SYSLOG:
		sc := wsyslog.New(p)
		sc.MaxSize = opts.MaxSize
		sc.Now = opts.Now
		if c.EncodeErr = wsyslog.EncodeError(p); c.EncodeErr == nil {
			c.Encoder, c.Batch = sc, sc
		}
		c.newDecoder = func() Decoder { return sc }
	default:
		return nil, fmt.Errorf("codec %s: wire format %s is not supported", types.Quote(p.Codec.Name), p.Codec.Format)
	}
	return c, nil
}

// compileJaq compiles a JAQ-native or protobuf codec: its programs, its
// format and the runtime that runs them on the extension workers.
func compileJaq(c *Codec, p *bind.Plan, opts Options, ps *protobuf.Schema) (*Codec, error) {
	cd := p.Codec
	var progs [3]*program.Program
	for d, prog := range cd.Jaq.Programs {
		if !prog.Set {
			continue
		}
		jp, err := program.Compile(prog.Text)
		if err != nil {
			return nil, fmt.Errorf("codec %s: %s program does not compile: %w", types.Quote(cd.Name), types.Direction(d), err)
		}
		progs[d] = jp
	}
	var f jaq.Format
	if cd.Proto != nil {
		if ps == nil {
			var err error
			if ps, err = protobuf.Build(opts.Resources, cd.Proto, progs[types.EmittingBatch] != nil); err != nil {
				return nil, fmt.Errorf("codec %s: %w", types.Quote(cd.Name), err)
			}
		}
		f = protobuf.NewFormat(ps)
	} else {
		nf := formats.For(cd.Format)
		if nf == nil {
			return nil, fmt.Errorf("codec %s: %s is not a JAQ-native format", types.Quote(cd.Name), cd.Format)
		}
		f = jaq.Native(nf)
	}
	pool := opts.Workers
	if pool == nil {
		pool = workers.New(workers.Config{})
	}
	jc := jaq.New(jaq.Config{Name: cd.Name, Format: f, Schema: p.Schema, Programs: progs, Pool: pool, Logger: opts.Logger, MaxSize: opts.MaxSize})
	if jc.CanEncode() {
		c.Encoder, c.Batch = jc, jc
	} else {
		c.EncodeErr = fmt.Errorf("codec %s declares no ON EMITTING transformation, so it cannot encode", types.Quote(cd.Name))
	}
	if !jc.CanDecode() {
		c.DecodeErr = fmt.Errorf("codec %s declares no ON INGESTION transformation, so it cannot decode", types.Quote(cd.Name))
	}
	c.newDecoder = func() Decoder { return jc }
	return c, nil
}
