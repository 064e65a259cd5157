package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPeersHeraldOnly runs every measurement of the tool, two rounds on
// both engines, against the herald binary built from this tree (on
// JetStream with a nats-server binary built from the module's
// dependency), with no aviso-server: the tool itself fails on any notify
// that is not 200, a replay that does not deliver exactly what was
// stored, a watcher missing or repeating a notification, or a batch not
// storing all of its notifications; the test checks the counts it
// reports and the table, whose aviso-server column reads "not run".
func TestPeersHeraldOnly(t *testing.T) {
	dir := t.TempDir()
	herald, nats := filepath.Join(dir, "herald"), filepath.Join(dir, "nats-server")
	for bin, pkg := range map[string]string{herald: "github.com/herald-gateway/herald", nats: "github.com/nats-io/nats-server/v2"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := params{herald: herald, nats: nats, rounds: 2, duration: 100 * time.Millisecond, engines: []string{"jetstream", "in_memory"},
		concurrency: []int{1, 3}, replay: 50, replayBatch: 7, storeConcurrency: 4, watchers: []int{1, 4}, events: 6,
		batchSize: 10, batchConcurrency: 2, logLevel: "info"}
	var out, progress bytes.Buffer
	if err := run(ctx, p, &out, &progress); err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	prog, table := progress.String(), out.String()
	for _, engine := range p.engines {
		for round := 1; round <= 2; round++ {
			if !strings.Contains(prog, fmt.Sprintf("round %d, %s, herald:\n", round, engine)) {
				t.Errorf("no round %d of herald on %s in the progress", round, engine)
			}
		}
	}
	for re, n := range map[string]int{
		`(?m)^  notify c=1: \d+ requests, all 200,`:                                                                            4,
		`(?m)^  notify c=3: \d+ requests, all 200,`:                                                                            4,
		`(?m)^  stored 50 notifications for the replay in `:                                                                    4,
		`(?m)^  replay: 50/50 events in `:                                                                                      4,
		`(?m)^  live fan-out: 1 watchers × 6 notifications = 6 deliveries, each exactly once, `:                                4,
		`(?m)^  live fan-out: 4 watchers × 6 notifications = 24 deliveries, each exactly once, `:                               4,
		`(?m)^  batch notify: \d+ requests of 10, all stored, \d+ notifications/s, p50 \S+, p99 \S+$`:                          4,
		`(?m)^\| (jetstream|in_memory): notify c=(1|3), (req/s \| \d+/s|p50 \| \d|p99 \| \d).* \| not run \| – \|$`:            12,
		`(?m)^\| (jetstream|in_memory): replay of 50, events/s \| \d+/s \| not run \| – \|$`:                                   2,
		`(?m)^\| (jetstream|in_memory): live fan-out W=(1|4), p(50|99) \| [0-9.]+ ms \| not run \| – \|$`:                      8,
		`(?m)^\| (jetstream|in_memory): batch notify \(10 per request, c=2\), notifications/s \| \d+/s \| – \| – \|$`:          2,
		`(?m)^\| (jetstream|in_memory): batch notify \(10 per request, c=2\), request p(50|99) \| [0-9.]+ ms \| – \| – \|$`:    4,
		`(?m)^\| (jetstream|in_memory): notify c=(1|3), (server|nats-server) CPU per notify \| [0-9.]+ µs \| not run \| – \|$`: 6,
		`(?m)^\| jetstream: notify c=(1|3), nats-server CPU per notify \|`:                                                     2,
		`(?m)^  notify c=\d: .*; CPU per notify: server [0-9.]+ µs, nats-server [0-9.]+ µs, load generator [0-9.]+ µs$`:        8,
		`(?m)^\| `: 1 + 12 + 6 + 2 + 8 + 2 + 4, // the header and the figures
	} {
		if got := len(regexp.MustCompile(re).FindAllString(prog+table, -1)); got != n {
			t.Errorf("%d lines match %s, want %d", got, re, n)
		}
	}
	for _, want := range []string{"aviso-server: not run", "nats-server: v2.", "load average (1, 5, 15 min) before: "} {
		if !strings.Contains(table, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("progress:\n%s\nreport:\n%s", prog, table)
	}
}
