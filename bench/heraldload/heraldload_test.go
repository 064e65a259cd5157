package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHeraldloadSmoke runs B1 briefly on both engines: on the in-memory
// engine two rounds against the HTTP floor (each round and the median
// reported) with herald's asynchronous log writer, on JetStream one
// round with the raw references and the synchronous writer; herald's log
// receives the access log line of the requests either way.
func TestHeraldloadSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		engine, writer string
		rounds         int
		want           []string
	}{
		{"in_memory", "async", 2, []string{`(?m)^1\s+1\s+\d+ `, `(?m)^2\s+2\s+\d+ `, `(?m)^1\s+median\s+\d+ .*x$`, `(?m)^2\s+median\s+\d+ .*x$`, `in-memory engine`}},
		{"jetstream", "sync", 1, []string{`(?m)^1\s+1\s+\d+ .*x\s+\S+x\s+\S+x$`, `(?m)^raw asynchronous publish ceiling: \d+ msg/s$`}},
	} {
		t.Run(c.engine, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "herald.log")
			p := params{duration: 100 * time.Millisecond, concurrency: []int{1, 2}, only: "B1", sides: "herald,raw",
				timeout: time.Minute, batch: 1000, engine: c.engine, rounds: c.rounds, logPath: logPath, logWriter: c.writer}
			var out bytes.Buffer
			if err := run(ctx, p, &out); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			for _, re := range c.want {
				if !regexp.MustCompile(re).MatchString(out.String()) {
					t.Errorf("the report has no line matching %s", re)
				}
			}
			log, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{`"path":"/api/v1/notification","status":200`, `"path":"/api/v1/schema/bench","status":200`} {
				if !strings.Contains(string(log), `"msg":"request","method":`) || !strings.Contains(string(log), path) {
					t.Errorf("herald's log has no access log line of %s", path)
				}
			}
			if t.Failed() {
				t.Logf("\n%s", out.String())
			}
		})
	}
}
