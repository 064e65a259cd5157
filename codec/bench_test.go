package codec

import (
	stdjson "encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/ast"
	fx "github.com/fxamacker/cbor/v2"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/linkedin/goavro/v2"

	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/types"
	wavro "github.com/herald-gateway/herald/codec/wire/avro"
	wcbor "github.com/herald-gateway/herald/codec/wire/cbor"
)

// B6: codec core throughput. Each benchmark group decodes (or encodes) the
// same batch with herald and with the references in one run; ratios are
// computed from the ns/op of one `go test -bench` invocation.
//
//	go test ./codec -run '^$' -bench 'B6' -benchtime 20x -count 3

// The spec's notification schema, exactly, and a variant without the
// 3×224×224 image for per-row costs.
const benchSpec = `CREATE SCHEMA notification (
  user_id U32, created_at DATETIME, payload STRING OPTIONAL, cpu_last_64 ARRAY<F32, 64>,
  image ARRAY<F32, 3, 224, 224>, detections VEC<ARRAY<F32, 6>> OPTIONAL);`
const benchSmall = `CREATE SCHEMA notification (
  user_id U32, created_at DATETIME, payload STRING OPTIONAL, cpu_last_64 ARRAY<F32, 64>,
  detections VEC<ARRAY<F32, 6>> OPTIONAL);`

func benchWire(format string, image bool) string {
	img := ""
	if image {
		img = "image array,"
	}
	imgA := ""
	if image {
		imgA = "image ARRAY,"
	}
	switch format {
	case "AVRO":
		return `CREATE WIRE AVRO SCHEMA w (user_id LONG, created_at STRING, payload STRING OPTIONAL, cpu_last_64 ARRAY, ` + imgA + ` detections ARRAY OPTIONAL);
CREATE CODEC c FROM WIRE AVRO SCHEMA w TO SCHEMA notification ENCODE created_at AS RFC3339`
	}
	return `CREATE WIRE ` + format + ` SCHEMA w (user_id integer, created_at string, payload string OPTIONAL, cpu_last_64 array, ` + img + ` detections array OPTIONAL);
CREATE CODEC c FROM WIRE ` + format + ` SCHEMA w TO SCHEMA notification ENCODE created_at AS RFC3339`
}

// notificationStruct is the typed Go struct sonic decodes into.
type notificationStruct struct {
	UserID     uint32                `json:"user_id"`
	CreatedAt  time.Time             `json:"created_at"`
	Payload    *string               `json:"payload,omitempty"`
	CPU        [64]float32           `json:"cpu_last_64"`
	Image      *[3][224][224]float32 `json:"image,omitempty"`
	Detections [][6]float32          `json:"detections,omitempty"`
}

type benchCase struct {
	name     string
	rows     int
	schema   string
	image    bool
	json     [][]byte
	cbor     [][]byte
	avro     [][]byte
	jsonC    *Codec
	cborC    *Codec
	avroC    *Codec
	batch    arrow.RecordBatch
	jsonSize int64
}

func newBenchCase(b *testing.B, name string, image bool, rows int) *benchCase {
	schema := benchSmall
	if image {
		schema = benchSpec
	}
	bc := &benchCase{name: name, rows: rows, schema: schema, image: image}
	bc.jsonC = compileDefs(b, schema+benchWire("JSON", image), "c")
	bc.cborC = compileDefs(b, schema+benchWire("CBOR", image), "c")
	bc.avroC = compileDefs(b, schema+benchWire("AVRO", image), "c")
	r := rand.New(rand.NewPCG(1, 2))
	bld := bc.jsonC.NewBuilder(memory.NewGoAllocator())
	defer bld.Release()
	for i := 0; i < rows; i++ {
		bld.BeginRow()
		bld.Col(0).U32.Append(r.Uint32())
		bld.Col(1).TS.Append(arrow.Timestamp(1790237700123456789 + int64(i)*1e9))
		if i%3 == 0 {
			bld.Col(2).Str.AppendNull()
		} else {
			bld.Col(2).Str.Append("forecast step " + strconv.Itoa(i) + " for region europe is ready")
		}
		c := bld.Col(3)
		c.FSL.Append(true)
		for j := 0; j < 64; j++ {
			c.Elem.F32.Append(r.Float32() * 100)
		}
		next := 4
		if image {
			c := bld.Col(4)
			c.FSL.Append(true)
			for j := 0; j < 3; j++ {
				c.Elem.FSL.Append(true)
				for k := 0; k < 224; k++ {
					c.Elem.Elem.FSL.Append(true)
					for l := 0; l < 224; l++ {
						c.Elem.Elem.Elem.F32.Append(r.Float32())
					}
				}
			}
			next = 5
		}
		d := bld.Col(next)
		d.List.Append(true)
		for j, n := 0, r.IntN(8); j < n; j++ {
			d.Elem.FSL.Append(true)
			for k := 0; k < 6; k++ {
				d.Elem.Elem.F32.Append(r.Float32() * 640)
			}
		}
		if err := bld.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	var err error
	if bc.batch, err = bld.NewRecordBatch(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < rows; i++ {
		j, err1 := bc.jsonC.Encoder.AppendRow(nil, bc.batch, i)
		c, err2 := bc.cborC.Encoder.AppendRow(nil, bc.batch, i)
		a, err3 := bc.avroC.Encoder.AppendRow(nil, bc.batch, i)
		if err1 != nil || err2 != nil || err3 != nil {
			b.Fatal(err1, err2, err3)
		}
		bc.json, bc.cbor, bc.avro = append(bc.json, j), append(bc.cbor, c), append(bc.avro, a)
		bc.jsonSize += int64(len(j))
	}
	return bc
}

func size(ps [][]byte) int64 {
	var n int64
	for _, p := range ps {
		n += int64(len(p))
	}
	return n
}

func report(b *testing.B, rows int) {
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func (bc *benchCase) decodeInto(b *testing.B, c *Codec, payloads [][]byte) {
	bc.decodeWith(b, c, payloads, c.NewDecoder().Decode)
}

func (bc *benchCase) decodeWith(b *testing.B, c *Codec, payloads [][]byte, decode func([]byte, *rows.Builder) (int, error)) {
	b.SetBytes(size(payloads))
	mem := memory.NewGoAllocator()
	b.ResetTimer()
	for range b.N {
		bld := c.NewBuilder(mem)
		for _, p := range payloads {
			if _, err := decode(p, bld); err != nil {
				b.Fatal(err)
			}
		}
		rec, err := bld.NewRecordBatch()
		if err != nil {
			b.Fatal(err)
		}
		rec.Release()
		bld.Release()
	}
	report(b, bc.rows)
}

type nopVisitor struct{}

func (nopVisitor) OnNull() error                           { return nil }
func (nopVisitor) OnBool(bool) error                       { return nil }
func (nopVisitor) OnString(string) error                   { return nil }
func (nopVisitor) OnInt64(int64, stdjson.Number) error     { return nil }
func (nopVisitor) OnFloat64(float64, stdjson.Number) error { return nil }
func (nopVisitor) OnObjectBegin(int) error                 { return nil }
func (nopVisitor) OnObjectKey(string) error                { return nil }
func (nopVisitor) OnObjectEnd() error                      { return nil }
func (nopVisitor) OnArrayBegin(int) error                  { return nil }
func (nopVisitor) OnArrayEnd() error                       { return nil }

func benchCases(b *testing.B) []*benchCase {
	return []*benchCase{newBenchCase(b, "spec", true, 4), newBenchCase(b, "noimage", false, 256)}
}

func BenchmarkB6JSONDecode(b *testing.B) {
	for _, bc := range benchCases(b) {
		b.Run(bc.name+"/herald_arrow", func(b *testing.B) { bc.decodeInto(b, bc.jsonC, bc.json) })
		b.Run(bc.name+"/encoding_json_maps", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			for range b.N {
				out := make([]map[string]any, 0, len(bc.json))
				for _, p := range bc.json {
					var m map[string]any
					if err := stdjson.Unmarshal(p, &m); err != nil {
						b.Fatal(err)
					}
					out = append(out, m)
				}
				sinkMaps = out
			}
			report(b, bc.rows)
		})
		b.Run(bc.name+"/sonic_struct", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			for range b.N {
				out := make([]notificationStruct, len(bc.json))
				for i, p := range bc.json {
					if err := sonic.Unmarshal(p, &out[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
		b.Run(bc.name+"/jsontext_tokens", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			var dec jsontext.Decoder
			for range b.N {
				for _, p := range bc.json {
					dec.Reset(bytesReader(p))
					for {
						if _, err := dec.ReadToken(); err != nil {
							break
						}
					}
				}
			}
			report(b, bc.rows)
		})
		b.Run(bc.name+"/sonic_preorder_plus_checks", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			opts := &ast.VisitorOptions{OnlyNumber: true}
			for range b.N {
				for _, p := range bc.json {
					s := string(p)
					if !utf8.ValidString(s) || !sonic.Valid(p) {
						b.Fatal("invalid")
					}
					if err := ast.Preorder(s, nopVisitor{}, opts); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
	}
}

func BenchmarkB6JSONEncode(b *testing.B) {
	for _, bc := range benchCases(b) {
		idx := make([]int, bc.rows)
		maps := make([]map[string]any, bc.rows)
		structs := make([]notificationStruct, bc.rows)
		for i := range idx {
			idx[i] = i
			_ = stdjson.Unmarshal(bc.json[i], &maps[i])
			_ = sonic.Unmarshal(bc.json[i], &structs[i])
		}
		b.Run(bc.name+"/herald_arrow", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			var buf []byte
			for range b.N {
				buf = buf[:0]
				for i := range idx {
					var err error
					if buf, err = bc.jsonC.Encoder.AppendRow(buf, bc.batch, i); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
		b.Run(bc.name+"/encoding_json_maps", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			for range b.N {
				for i := range maps {
					if _, err := stdjson.Marshal(maps[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
		b.Run(bc.name+"/sonic_struct", func(b *testing.B) {
			b.SetBytes(bc.jsonSize)
			for range b.N {
				for i := range structs {
					if _, err := sonic.Marshal(&structs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
	}
}

// BenchmarkB6JSONEncodeAlternated: herald's encode and encoding/json of
// the maps alternated per iteration, so both sides run under the same load
// (on a shared machine the sequential sub-benchmarks above see different
// loads); it reports each side's median time per batch and the ratio of
// the medians (json/herald: how many times faster herald is).
//
//	go test ./codec -run '^$' -bench 'B6JSONEncodeAlternated' -benchtime 40x -count 3
func BenchmarkB6JSONEncodeAlternated(b *testing.B) {
	for _, bc := range benchCases(b) {
		maps := make([]map[string]any, bc.rows)
		for i := range maps {
			if err := stdjson.Unmarshal(bc.json[i], &maps[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(bc.name, func(b *testing.B) {
			var buf []byte
			var herald, std []time.Duration
			for range b.N {
				t0 := time.Now()
				buf = buf[:0]
				for i := range bc.rows {
					var err error
					if buf, err = bc.jsonC.Encoder.AppendRow(buf, bc.batch, i); err != nil {
						b.Fatal(err)
					}
				}
				t1 := time.Now()
				for i := range maps {
					if _, err := stdjson.Marshal(maps[i]); err != nil {
						b.Fatal(err)
					}
				}
				herald, std = append(herald, t1.Sub(t0)), append(std, time.Since(t1))
			}
			h, s := medianDuration(herald), medianDuration(std)
			b.ReportMetric(float64(h.Nanoseconds()), "herald-ns/batch")
			b.ReportMetric(float64(s.Nanoseconds()), "encoding_json-ns/batch")
			b.ReportMetric(float64(s)/float64(h), "ratio")
		})
	}
}

func medianDuration(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func BenchmarkB6CBORDecode(b *testing.B) {
	dm, err := fx.DecOptions{DefaultMapType: reflect.TypeOf(map[string]any(nil)), MaxArrayElements: 1 << 20}.DecMode()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range benchCases(b) {
		b.Run(bc.name+"/herald_arrow", func(b *testing.B) { bc.decodeInto(b, bc.cborC, bc.cbor) })
		// The previous decoder: the library's strict generic decode, then the build.
		b.Run(bc.name+"/herald_generic", func(b *testing.B) {
			dec := bc.cborC.NewDecoder().(*wcbor.Decoder)
			bc.decodeWith(b, bc.cborC, bc.cbor, dec.DecodeGeneric)
		})
		b.Run(bc.name+"/fxamacker_generic", func(b *testing.B) {
			b.SetBytes(size(bc.cbor))
			for range b.N {
				for _, p := range bc.cbor {
					var v any
					if err := dm.Unmarshal(p, &v); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
	}
}

func BenchmarkB6AVRODecode(b *testing.B) {
	for _, bc := range benchCases(b) {
		ac, err := goavro.NewCodec(wavro.Schema(bc.avroC.Plan))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name+"/herald_arrow", func(b *testing.B) { bc.decodeInto(b, bc.avroC, bc.avro) })
		b.Run(bc.name+"/goavro_generic", func(b *testing.B) {
			b.SetBytes(size(bc.avro))
			for range b.N {
				for _, p := range bc.avro {
					if _, _, err := ac.NativeFromBinary(p); err != nil {
						b.Fatal(err)
					}
				}
			}
			report(b, bc.rows)
		})
	}
}

var _ = types.JSON

// sinkMaps keeps the benchmark's decoded maps alive, so that the
// compiler cannot drop the work.
var sinkMaps []map[string]any
