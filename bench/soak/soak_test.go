package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSoakSmoke runs a soak of a few seconds with every ingredient of the
// real one (SSE watchers and WebSocket subscriptions on mixed filters,
// paced notifies, reloads, a nats-server stop and start) against the
// herald binary built from this tree, and checks the ledger exactly:
// every stored notification reached every client whose filter selects
// it, once.
func TestSoakSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the herald binary and runs a 6 s soak; run without -short")
	}
	bin := filepath.Join(t.TempDir(), "herald")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/herald-gateway/herald").CombinedOutput(); err != nil {
		t.Fatalf("go build herald: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	p := params{herald: bin, duration: 6 * time.Second, watchers: 14, sessions: 2, subs: 4, rate: 50,
		reload: 2 * time.Second, natsRestart: 3 * time.Second, outage: 500 * time.Millisecond,
		report: time.Second, drain: 30 * time.Second, inprocNATS: true, dir: t.TempDir()}
	res, err := run(ctx, p, &out)
	if err != nil {
		t.Fatalf("soak: %v\n%s", err, out.String())
	}
	v := res.Verdict
	if v.Expected == 0 || v.Delivered != v.Expected || v.Lost != 0 || v.Duplicated != 0 || v.Phantom != 0 || !res.ok() {
		t.Fatalf("verdict %+v\n%s", v, out.String())
	}
	if res.Sent != 300 || res.Accepted+res.Refused+res.Unk != res.Sent || res.Refused != 0 {
		t.Fatalf("sent %d, accepted %d, refused %d, unanswered %d; want 300 sent, none refused\n%s", res.Sent, res.Accepted, res.Refused, res.Unk, out.String())
	}
	if res.NATSRestarts != 1 || res.Reloads < 2 || res.ReloadsOK != res.Reloads || res.Surprises != 0 {
		t.Fatalf("restarts %d, reloads %d (applied %d), surprises %d (%s)\n%s", res.NATSRestarts, res.Reloads, res.ReloadsOK, res.Surprises, res.LastSurprise, out.String())
	}
	if len(res.Samples) < 5 || res.Samples[len(res.Samples)-1].Goroutines == 0 {
		t.Fatalf("%d samples of herald's metrics\n%s", len(res.Samples), out.String())
	}
	if !strings.Contains(out.String(), "goal 0 lost, 0 duplicated: met") {
		t.Fatalf("report without the verdict line:\n%s", out.String())
	}
	t.Logf("\n%s", out.String())
}
