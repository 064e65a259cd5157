package cli

import (
	"io"
	"regexp"
	"testing"

	"github.com/herald-gateway/herald/internal/testkit"
)

// TestReplayGivesUpWhenTheServerIsGone: a replay whose connection is cut
// and whose server no longer answers retries, then gives up with exit 3
// (cannot connect) after five failed attempts in a row, having printed
// each notification it received once.
func TestReplayGivesUpWhenTheServerIsGone(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig, "HERALD_WATCH_ENDPOINT__REPLAY_BATCH_DELAY_MS=200")
	for i := 1; i <= 6; i++ {
		notifyHTTP(t, h.url, marsAt(i, "enfo"))
	}
	p := testkit.NewProxy(t, h.url)
	r := startCLI(t, nil, nil, "replay", "mars", "class=od", "--from", "0", "--output", "json", "--url", "http://"+p.Addr())
	waitFor(t, "the first page", r.stdout, func(s string) bool { return lines(s) >= 2 })
	p.Close() // nothing answers on the proxy's port any more
	if code := r.wait(t); code != ExitNoServer {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitNoServer, r.stderr)
	}
	printed := r.stdout.String()
	if all := allEvents(t, h.url, `{"class":"od"}`); len(printed) == 0 || all[:len(printed)] != printed {
		t.Fatalf("printed:\n%s\nwant a prefix of:\n%s", printed, all)
	}
	refused := `cannot connect to ` + regexp.QuoteMeta("http://"+p.Addr()) + `/api/v1/replay: dial tcp ` + regexp.QuoteMeta(p.Addr()) + `: connect: connection refused`
	re := regexp.MustCompile(`^herald replay: the connection to ` + regexp.QuoteMeta("http://"+p.Addr()) + `/api/v1/replay was lost: unexpected EOF; reconnecting from (mars@[3-6]) in 0s\n` +
		`(herald replay: ` + refused + `; reconnecting from mars@[3-6] in [0-9.]+m?s\n){5}` +
		`herald replay: gave up after 5 reconnections: ` + refused + `\n$`)
	if !re.MatchString(r.stderr.String()) {
		t.Fatalf("stderr %q", r.stderr)
	}
}

// TestSessionLostExits3: a session whose connection is cut exits 3
// (the session's connection was lost), saying so on stderr, after the
// welcome it printed.
func TestSessionLostExits3(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig)
	p := testkit.NewProxy(t, h.url)
	in, typing := io.Pipe()
	t.Cleanup(func() { typing.Close() })
	s := startCLI(t, nil, in, "session", "--url", "http://"+p.Addr())
	waitFor(t, "the welcome", s.stdout, func(s string) bool { return lines(s) == 1 })
	p.Cut()
	if code := s.wait(t); code != ExitNoServer {
		t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, ExitNoServer, s.stdout, s.stderr)
	}
	if want := "herald session: cannot connect to the session: failed to get reader: failed to read frame header: EOF\n"; s.stderr.String() != want {
		t.Fatalf("stderr %q, want %q", s.stderr, want)
	}
}
