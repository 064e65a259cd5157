package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"
	"time"
)

// TestFanoutSmoke runs one short round of the herald sides with herald
// in this process (-inproc): 30 subscribers of each transport receive
// every one of 100 notifications (the tool waits for all 3,000
// deliveries), the records of the typed sides are rendered once per view
// asked for (1 for typed-row, 3 for typed-mixed: the tool reads them
// back and fails otherwise), and the report has every line.
func TestFanoutSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	p := params{subscribers: 30, notifications: 100, batch: 50, credit: 4, rounds: 1, transports: []string{"ws", "sse"},
		sides: []string{"herald", "typed-row", "typed-mixed"}, sendBuffer: -1, timeout: 2 * time.Minute, inproc: true}
	if err := run(ctx, p, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	report := out.String()
	for _, tr := range p.transports {
		for side, views := range map[string]string{"herald": "1", "typed-row": "1", "typed-mixed": "3"} {
			re := `(?m)^1\s+` + tr + `\s+` + side + `\s+\d+ .* views rendered per record: ` + views + `$`
			if !regexp.MustCompile(re).MatchString(report) {
				t.Errorf("no %s %s measurement rendering each record in %s views in the report", tr, side, views)
			}
		}
		if re := `(?m)^` + tr + `\s+typed-mixed : typed-row deliveries/s \d`; !regexp.MustCompile(re).MatchString(report) {
			t.Errorf("the report has no %s typed-mixed : typed-row ratio", tr)
		}
	}
	if t.Failed() {
		t.Logf("\n%s", report)
	}
}
