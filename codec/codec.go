// Package codec is herald's codec core: it compiles a codec definition of
// the catalog into a Codec that decodes payloads of its wire format into
// rows of an Arrow record batch of the internal schema, and encodes rows
// into payloads and batch containers. The type system (types), the value
// rules (values), the statement language (ddl), the entity catalog
// (catalog), binding (bind), evolution verdicts (evolve), the batch builder
// (rows) and one package per wire format (wire/…) live below it.
//
// It imports no other herald package and must not know about HTTP,
// engines or notifications; callers hand it bytes and Arrow batches.
package codec

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"herald/codec/bind"
	"herald/codec/catalog"
	"herald/codec/rows"
	"herald/codec/types"
	wavro "herald/codec/wire/avro"
	wcbor "herald/codec/wire/cbor"
	wjson "herald/codec/wire/json"
	wsyslog "herald/codec/wire/syslog"
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

// Options tune a compiled codec.
type Options struct {
	// MaxSize bounds one encoded payload in bytes (the emitter's MAX
	// SIZE); 0 means unbounded.
	MaxSize int
	// Now is the clock a SYSLOG codec takes the year of RFC 3164
	// timestamps from; nil means time.Now.
	Now func() time.Time
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
	// target schema without facility, severity or message); Encoder and
	// Batch are nil then.
	EncodeErr error

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
	return CompilePlan(p, opts)
}

// CompilePlan compiles a bound plan.
func CompilePlan(p *bind.Plan, opts Options) (*Codec, error) {
	c := &Codec{Name: p.Codec.Name, Format: p.Codec.Format, Schema: p.Schema, Plan: p}
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
