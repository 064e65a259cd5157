package codec

import (
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/herald-gateway/herald/codec/protobuf"
	"github.com/herald-gateway/herald/codec/resource"
	"github.com/herald-gateway/herald/codec/workers"
)

// B7: JAQ-backed codecs. Each group measures herald next to its
// reference in one run; ratios come from one `go test -bench` invocation.
//
//	go test ./codec -run '^$' -bench 'B7' -benchtime 20x -count 3
//
// JSONUnfold decodes the same 256 rows of the notification schema
// (without the image) three ways: WIRE JSON, one object per payload (the
// reference); JAQ JSON with ON INGESTION '.', one object per payload; and
// JAQ JSON with ON INGESTION '.[]' unfolding one payload holding all 256
// rows. The difference is the cost of jq (the JSON value model, the
// program run and the typed decode of its outputs). Since the JAQ fast
// paths '.' and '.[]' decode JSON straight into rows;
// the *_gojq variants run the same programs through gojq on the built
// value (the path before), and select_object is a fast-path program that
// runs natively on the built value. ProtobufDecode decodes
// a message into rows through a protobuf codec with ON INGESTION '.'
// against proto.Unmarshal of the same bytes into a dynamicpb message (the
// parse alone).

// cpuRate runs f (a benchmark body of b.N iterations of rows rows) and
// reports rows per second of the process's CPU time (user and system,
// the garbage collector's included): on a machine shared with other
// work the wall-clock rate swings with the load, the CPU cost much less.
func cpuRate(b *testing.B, rows int, f func()) {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	t0 := cpu()
	f()
	if d := cpu() - t0; d > 0 {
		b.ReportMetric(float64(rows*b.N)/d.Seconds(), "cpu-rows/s")
	}
}

func jaqBenchCodec(b *testing.B, format, progs string, res *resource.Set) *Codec {
	c := jaqCodec(b, benchSmall+"CREATE CODEC c FROM "+format+" TO SCHEMA notification WITH JAQ TRANSFORMATIONS "+progs, res, workers.New(workers.Config{Workers: 1}))
	return c
}

func BenchmarkB7JSONUnfold(b *testing.B) {
	bc := newBenchCase(b, "noimage", false, 256)
	one := jaqBenchCodec(b, "JSON", "ON INGESTION '.' ON EMITTING '.'", nil)
	unfold := jaqBenchCodec(b, "JSON", "ON INGESTION '.[]' ON EMITTING '.'", nil)
	idx := make([]int, bc.rows)
	for i := range idx {
		idx[i] = i
	}
	container, _, err := unfold.Batch.AppendBatch(nil, bc.batch, idx)
	if err != nil {
		b.Fatal(err)
	}
	var singles [][]byte
	for i := range idx {
		p, err := one.Encoder.AppendRow(nil, bc.batch, i)
		if err != nil {
			b.Fatal(err)
		}
		singles = append(singles, p)
	}
	// the same programs written so that gojq runs them on the built value
	// (the path before the fast paths), and a fast-path program that is
	// not walked: select and object construction on the built value
	oneGojq := jaqBenchCodec(b, "JSON", "ON INGESTION 'if true then . else . end' ON EMITTING '.'", nil)
	unfoldGojq := jaqBenchCodec(b, "JSON", "ON INGESTION 'if true then .[] else empty end' ON EMITTING '.'", nil)
	const sel = `select(.user_id != 0) | {user_id, created_at, payload, cpu_last_64, detections}`
	selFast := jaqBenchCodec(b, "JSON", "ON INGESTION '"+sel+"' ON EMITTING '.'", nil)
	selGojq := jaqBenchCodec(b, "JSON", "ON INGESTION 'if true then ("+sel+") else empty end' ON EMITTING '.'", nil)
	decode := func(c *Codec, payloads [][]byte) func(b *testing.B) {
		return func(b *testing.B) { cpuRate(b, bc.rows, func() { bc.decodeInto(b, c, payloads) }) }
	}
	b.Run("wire_json", decode(bc.jsonC, bc.json))
	b.Run("jaq_json_per_payload", decode(one, singles))
	b.Run("jaq_json_unfold", decode(unfold, [][]byte{container}))
	b.Run("jaq_json_per_payload_gojq", decode(oneGojq, singles))
	b.Run("jaq_json_unfold_gojq", decode(unfoldGojq, [][]byte{container}))
	b.Run("jaq_json_select_object", decode(selFast, singles))
	b.Run("jaq_json_select_object_gojq", decode(selGojq, singles))
	b.Run("encode/wire_json", func(b *testing.B) {
		var buf []byte
		for range b.N {
			buf = buf[:0]
			for i := range idx {
				if buf, err = bc.jsonC.Encoder.AppendRow(buf, bc.batch, i); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, bc.rows)
	})
	b.Run("encode/jaq_json", func(b *testing.B) {
		var buf []byte
		for range b.N {
			buf = buf[:0]
			for i := range idx {
				if buf, err = one.Encoder.AppendRow(buf, bc.batch, i); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, bc.rows)
	})
}

const benchProto = `syntax = "proto3";
package b;
message Notification {
  uint32 user_id = 1;
  string created_at = 2;
  string payload = 3;
  repeated float cpu_last_64 = 4;
  repeated Detection detections = 5;
}
message Detection { repeated float box = 1; }
`

func BenchmarkB7ProtobufDecode(b *testing.B) {
	set := resource.NewSet()
	if err := set.Add("b", 1, resource.Files{"b.proto": []byte(benchProto)}); err != nil {
		b.Fatal(err)
	}
	c := jaqCodec(b, benchSmall+`CREATE CODEC c FROM PROTOBUF USING RESOURCE b VERSION 1 CONFIG {} MESSAGE 'b.Notification' TO SCHEMA notification
	  WITH JAQ TRANSFORMATIONS
	    ON INGESTION '.user_id //= 0 | .detections = ([.detections[]? | .box]) | if .detections == [] then del(.detections) end'
	    ON EMITTING '. + {detections: [.detections[]? | {box: .}]}'`, set, workers.New(workers.Config{Workers: 1}))
	bc := newBenchCase(b, "noimage", false, 256)
	var payloads [][]byte
	for i := 0; i < bc.rows; i++ {
		p, err := c.Encoder.AppendRow(nil, bc.batch, i)
		if err != nil {
			b.Fatal(err)
		}
		payloads = append(payloads, p)
	}
	// the rows read back as they were written
	bld := c.NewBuilder(memory.NewGoAllocator())
	for _, p := range payloads[:3] {
		if _, err := c.NewDecoder().Decode(p, bld); err != nil {
			b.Fatal(err)
		}
	}
	bld.Release()
	b.Run("herald_rows", func(b *testing.B) { bc.decodeInto(b, c, payloads) })
	ps, err := protobuf.Build(set, c.Plan.Codec.Proto, false)
	if err != nil {
		b.Fatal(err)
	}
	desc := ps.Message
	b.Run("proto_unmarshal_dynamicpb", func(b *testing.B) {
		b.SetBytes(size(payloads))
		for range b.N {
			for _, p := range payloads {
				m := dynamicpb.NewMessage(desc)
				if err := proto.Unmarshal(p, m); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, bc.rows)
	})
}

// BenchmarkB7JSONFastPaths decodes the same 256 rows
// with schema-based WIRE JSON and with the JAQ JSON codecs in turn within
// every iteration, timing each by the process's CPU time, and reports each
// JAQ codec's rate as a ratio to WIRE JSON's: interleaved, the two see the
// same machine, which on a shared machine matters more than anything.
//
//	go test ./codec -run '^$' -bench 'B7JSONFastPaths' -benchtime 200x -count 3
func BenchmarkB7JSONFastPaths(b *testing.B) {
	bc := newBenchCase(b, "noimage", false, 256)
	idx := make([]int, bc.rows)
	for i := range idx {
		idx[i] = i
	}
	one := jaqBenchCodec(b, "JSON", "ON INGESTION '.' ON EMITTING '.'", nil)
	unfold := jaqBenchCodec(b, "JSON", "ON INGESTION '.[]' ON EMITTING '.'", nil)
	container, _, err := unfold.Batch.AppendBatch(nil, bc.batch, idx)
	if err != nil {
		b.Fatal(err)
	}
	var singles [][]byte
	for i := range idx {
		p, err := one.Encoder.AppendRow(nil, bc.batch, i)
		if err != nil {
			b.Fatal(err)
		}
		singles = append(singles, p)
	}
	const sel = `select(.user_id != 0) | {user_id, created_at, payload, cpu_last_64, detections}`
	cases := []struct {
		name     string
		c        *Codec
		payloads [][]byte
	}{
		{"wire_json", bc.jsonC, bc.json},
		{"per_payload", one, singles},
		{"unfold", unfold, [][]byte{container}},
		{"per_payload_gojq", jaqBenchCodec(b, "JSON", "ON INGESTION 'if true then . else . end' ON EMITTING '.'", nil), singles},
		{"unfold_gojq", jaqBenchCodec(b, "JSON", "ON INGESTION 'if true then .[] else empty end' ON EMITTING '.'", nil), [][]byte{container}},
		{"select_object", jaqBenchCodec(b, "JSON", "ON INGESTION '"+sel+"' ON EMITTING '.'", nil), singles},
		{"select_object_gojq", jaqBenchCodec(b, "JSON", "ON INGESTION 'if true then ("+sel+") else empty end' ON EMITTING '.'", nil), singles},
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	spent := make([]time.Duration, len(cases))
	decs := make([]Decoder, len(cases))
	for i, c := range cases {
		decs[i] = c.c.NewDecoder()
	}
	mem := memory.NewGoAllocator()
	b.ResetTimer()
	for range b.N {
		for i, c := range cases {
			t0 := cpu()
			bld := c.c.NewBuilder(mem)
			for _, p := range c.payloads {
				if _, err := decs[i].Decode(p, bld); err != nil {
					b.Fatal(err)
				}
			}
			rec, err := bld.NewRecordBatch()
			if err != nil {
				b.Fatal(err)
			}
			rec.Release()
			bld.Release()
			spent[i] += cpu() - t0
		}
	}
	for i, c := range cases {
		if spent[i] <= 0 {
			continue
		}
		rate := float64(bc.rows*b.N) / spent[i].Seconds()
		if i == 0 {
			b.ReportMetric(rate, "wire_json-cpu-rows/s")
			continue
		}
		b.ReportMetric(spent[0].Seconds()/spent[i].Seconds(), c.name+"/wire")
	}
}
