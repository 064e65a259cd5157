package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestReport renders a table with both sides: medians of the rounds per
// side, the ratio herald ÷ aviso-server, and "–" for aviso-server on
// batch notify.
func TestReport(t *testing.T) {
	var r results
	rate, lat := figure{"jetstream: notify c=1, req/s", "/s"}, figure{"jetstream: notify c=1, p99", "ms"}
	batch := figure{"jetstream: batch notify (10 per request, c=2), notifications/s", "/s"}
	for _, v := range []float64{3000, 1000, 2000} {
		r.add(rate, sideHerald, v)
		r.add(lat, sideHerald, v/1000)
		r.add(batch, sideHerald, v*10)
	}
	for _, v := range []float64{500, 1500, 1000} {
		r.add(rate, sideAviso, v)
		r.add(lat, sideAviso, v/100)
	}
	var out bytes.Buffer
	p := params{rounds: 3, duration: time.Second, replayBatch: 1000, events: 200, logLevel: "info"}
	report(&out, p, &r, []string{sideHerald, sideAviso}, map[string]string{sideHerald: "herald v1", sideAviso: "0.13.1"},
		"nats-server: v2.15.3", time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), "1.00 2.00 3.00", "4.00 5.00 6.00")
	for _, want := range []string{
		"- date: 2026-01-02 03:04 UTC;",
		"- herald: herald v1; aviso-server: 0.13.1; nats-server: v2.15.3 (one per server, fresh store)\n",
		"- load average (1, 5, 15 min) before: 1.00 2.00 3.00; after: 4.00 5.00 6.00\n",
		"| figure | herald | aviso-server | ratio |\n|---|---|---|---|\n" +
			"| jetstream: notify c=1, req/s | 2000/s | 1000/s | 2.00 |\n" +
			"| jetstream: notify c=1, p99 | 2.00 ms | 10.00 ms | 0.20 |\n" +
			"| jetstream: batch notify (10 per request, c=2), notifications/s | 20000/s | – | – |\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestParams checks the parsing and the refusals of -engine (the
// number lists are benchproc.Ints, tested there).
func TestParams(t *testing.T) {
	if e, err := engines("both"); err != nil || strings.Join(e, ",") != "jetstream,in_memory" {
		t.Errorf("engines(both) = %v, %v", e, err)
	}
	if _, err := engines("kafka"); err == nil {
		t.Error("engines(kafka) gave no error")
	}
	ok := params{herald: "h", nats: "n", rounds: 1, duration: time.Second, engines: []string{"jetstream"}, concurrency: []int{1},
		replay: 1, replayBatch: 1, storeConcurrency: 1, watchers: []int{1}, events: 1, batchSize: 1, batchConcurrency: 1}
	if err := ok.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	for name, change := range map[string]func(*params){
		"no herald":            func(p *params) { p.herald = "" },
		"no nats on jetstream": func(p *params) { p.nats = "" },
		"no rounds":            func(p *params) { p.rounds = 0 },
		"no replay":            func(p *params) { p.replay = 0 },
		"no duration":          func(p *params) { p.duration = 0 },
		"no watchers":          func(p *params) { p.watchers = nil },
	} {
		p := ok
		change(&p)
		if err := p.check(); err == nil {
			t.Errorf("%s: check gave no error", name)
		}
	}
	p := ok
	p.nats, p.engines = "", []string{"in_memory"}
	if err := p.check(); err != nil {
		t.Errorf("in_memory without -nats: %v", err)
	}
}
