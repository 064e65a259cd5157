package handlers_test

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBatchReplay compares the records per second a replay delivers
// over loopback SSE in one frame per record (a CloudEvent each) against
// container frames (the batch option, up to 1000 records a container),
// for a small typed record in CBOR. A record's CloudEvent is rendered
// once and cached on the record, so after the first iteration the
// per-record path only copies cached bytes, while containers are encoded
// on every replay: run it with -benchtime 1x to see the first delivery.
func BenchmarkBatchReplay(b *testing.B) {
	const records = 2000
	s := startServer(b, typedConfig(b, typedDefs, ""), nil)
	for lo := 1; lo <= records; lo += 500 {
		var batch strings.Builder
		batch.WriteString(`{"notifications":[`)
		for i := lo; i < lo+500; i++ {
			if i > lo {
				batch.WriteByte(',')
			}
			batch.WriteString(`{"event_type":"r_json","identifier":{},"payload":` +
				strings.Replace(readingLine, `"step":12`, `"step":`+strconv.Itoa(i%360), 1) + `}`)
		}
		batch.WriteString(`]}`)
		resp, err := http.Post(s.URL+"/api/v1/notifications", "application/json", strings.NewReader(batch.String()))
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("batch notify: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	counts := regexp.MustCompile(`"count":([0-9]+)`)
	for _, c := range []struct{ name, body string }{
		{"per_record", `{"event_type":"r_json","identifier":{},"from_id":"1","format":"reading_cbor"}`},
		{"container", `{"event_type":"r_json","identifier":{},"from_id":"1","format":"reading_cbor","batch":{"max_records":1000}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := http.Post(s.URL+"/api/v1/replay", "application/json", strings.NewReader(c.body))
				if err != nil {
					b.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					b.Fatal(err)
				}
				n := bytes.Count(body, []byte("event: replay\n"))
				for _, m := range counts.FindAllSubmatch(body, -1) {
					k, _ := strconv.Atoi(string(m[1]))
					n += k
				}
				if n != records {
					b.Fatalf("%d records delivered, want %d", n, records)
				}
			}
			b.ReportMetric(float64(records*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
