package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestProducerSmoke runs one short round with the nats-server and herald
// in this process (-backend inproc): the raw reference, a WebSocket
// producer and batch notify each store exactly their 500 notifications
// (the tool checks the stream and the ids), and the report has every
// line.
func TestProducerSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	p := params{n: 500, batches: []int{100}, httpBatch: []int{100}, httpConc: 4, credit: 16, rounds: 1,
		rawPending: 256, backend: "inproc", timeout: time.Minute}
	if err := run(ctx, p, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	report := out.String()
	for _, side := range []string{"raw", "b100", "h100"} {
		if !regexp.MustCompile(`(?m)^1\s+` + side + `\s+\d+ .* 500$`).MatchString(report) {
			t.Errorf("no measurement of %s storing 500 in the report", side)
		}
	}
	for _, line := range []string{"herald b100 : raw ", "herald h100 : raw ", "batch notify: batches [100], 4 clients"} {
		if !strings.Contains(report, line) {
			t.Errorf("the report has no %q", line)
		}
	}
	if t.Failed() {
		t.Logf("\n%s", report)
	}
}
