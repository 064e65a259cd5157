package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/internal/testkit"
)

// allEvents is what `watch --output json` must have printed: every
// notification of the replay, each once, in order.
func allEvents(t *testing.T, base, identifier string) string {
	t.Helper()
	evs := replayHTTP(t, base, `{"event_type":"mars","identifier":`+identifier+`,"from_id":"0"}`)
	if len(evs) == 0 {
		return ""
	}
	return strings.Join(evs, "\n") + "\n"
}

// TestWatchResumesAfterACut: a TCP proxy between the client and herald
// cuts the connection from the server's side (no connection-closing);
// notifications published while the client is away arrive once it is
// back, and each is printed exactly once, in order. On both engines.
func TestWatchResumesAfterACut(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig)
		p := testkit.NewProxy(t, h.url)
		w := startCLI(t, nil, nil, "watch", "mars", "class=od", "--output", "json", "--url", "http://"+p.Addr())
		waitOpened(t, p)
		notifyHTTP(t, h.url, marsAt(1, "enfo"))
		waitFor(t, "the first event", w.stdout, func(s string) bool { return lines(s) == 1 })

		p.Hold()
		p.Cut()
		waitFor(t, "the reconnection notice", w.stderr, func(s string) bool { return lines(s) == 1 })
		waitFor(t, "the reconnection", w.stderr, func(string) bool { return p.Held() > 0 })
		notifyHTTP(t, h.url, marsAt(2, "enfo"))
		notifyHTTP(t, h.url, marsAt(3, "oper"))
		p.Release()
		waitFor(t, "the events stored meanwhile", w.stdout, func(s string) bool { return lines(s) == 3 })
		waitOpened(t, p)
		notifyHTTP(t, h.url, marsAt(4, "enfo"))
		waitFor(t, "the next live event", w.stdout, func(s string) bool { return lines(s) == 4 })

		if code := w.stop(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if want := allEvents(t, h.url, `{"class":"od"}`); w.stdout.String() != want {
			t.Fatalf("printed:\n%s\nwant each notification once:\n%s", w.stdout, want)
		}
		if want := "herald watch: the connection to " + "http://" + p.Addr() + "/api/v1/watch was lost: unexpected EOF; reconnecting from mars@2 in 0s\n"; w.stderr.String() != want {
			t.Fatalf("stderr %q, want %q", w.stderr, want)
		}
	})
}

// TestLiveWatchResumesFromItsStart: a live-only watch cut before it has
// printed anything resumes from the time the server opened it, so a
// notification stored while it was away is not lost.
func TestLiveWatchResumesFromItsStart(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig)
		p := testkit.NewProxy(t, h.url)
		w := startCLI(t, nil, nil, "watch", "mars", "class=od", "--output", "json", "--url", "http://"+p.Addr())
		waitOpened(t, p)
		p.Hold()
		p.Cut()
		waitFor(t, "the reconnection", w.stderr, func(string) bool { return p.Held() > 0 })
		notifyHTTP(t, h.url, marsAt(1, "enfo"))
		p.Release()
		waitFor(t, "the event stored meanwhile", w.stdout, func(s string) bool { return lines(s) == 1 })
		if code := w.stop(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if want := allEvents(t, h.url, `{"class":"od"}`); w.stdout.String() != want {
			t.Fatalf("printed:\n%s\nwant:\n%s", w.stdout, want)
		}
		re := regexp.MustCompile(`^herald watch: the connection to ` + regexp.QuoteMeta("http://"+p.Addr()) +
			`/api/v1/watch was lost: unexpected EOF; reconnecting from \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ in \d+ms\n$`)
		if !re.MatchString(w.stderr.String()) {
			t.Fatalf("stderr %q", w.stderr)
		}
	})
}

// TestWatchResumesAfterMaxDuration: the server ends each watch after
// connection_max_duration_sec with max_duration_reached; the client
// reconnects from the next sequence each time and prints every
// notification once, in order.
func TestWatchResumesAfterMaxDuration(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig+"\n", "HERALD_WATCH_ENDPOINT__CONNECTION_MAX_DURATION_SEC=1")
		w := startCLI(t, nil, nil, "watch", "mars", "class=od", "--from", "0", "--output", "json", "--url", h.url)
		step := 0
		for round := 1; round <= 3; round++ {
			// Two notifications, printed; then the server ends the stream
			// and the client comes back before the next two.
			for range 2 {
				step++
				notifyHTTP(t, h.url, marsAt(step, "enfo"))
			}
			waitFor(t, "the round's events", w.stdout, func(s string) bool { return lines(s) == step })
			waitFor(t, "a reconnection", w.stderr, func(s string) bool {
				return strings.Contains(s, "max_duration_reached; reconnecting from mars@"+itoa(step+1)+" in 0s\n")
			})
		}
		if code := w.stop(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if want := allEvents(t, h.url, `{"class":"od"}`); w.stdout.String() != want {
			t.Fatalf("printed:\n%s\nwant:\n%s", w.stdout, want)
		}
		re := regexp.MustCompile(`^herald watch: max_duration_reached; reconnecting from mars@([1-7]) in 0s$`)
		prev := "1"
		for _, l := range strings.Split(strings.TrimSuffix(w.stderr.String(), "\n"), "\n") {
			m := re.FindStringSubmatch(l)
			if m == nil || m[1] < prev {
				t.Fatalf("stderr line %q (after from %s)\n%s", l, prev, w.stderr)
			}
			prev = m[1]
		}
	})
}

// TestWatchAcrossReload: a reload that changes the event type's schema
// ends the watch with schema_changed and a resume_from_id; the client
// resumes from it without a gap or a duplicate. A reload that removes
// the event type ends the watch: exit 1, the server's reason on stderr.
func TestWatchAcrossReload(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig)
		w := startCLI(t, nil, nil, "watch", "mars", "class=od", "--from", "0", "--output", "json", "--url", h.url)
		notifyHTTP(t, h.url, marsAt(1, "enfo"))
		notifyHTTP(t, h.url, marsAt(2, "enfo"))
		waitFor(t, "two events", w.stdout, func(s string) bool { return lines(s) == 2 })
		changed := strings.Replace(testConfig, "range: [0, 360]", "range: [0, 400]", 1)
		h.reload(t, kind, changed)
		waitFor(t, "the reconnection", w.stderr, func(s string) bool { return lines(s) == 1 })
		notifyHTTP(t, h.url, marsAt(380, "enfo"))
		waitFor(t, "the event under the new schema", w.stdout, func(s string) bool { return lines(s) == 3 })
		if want := allEvents(t, h.url, `{"class":"od"}`); w.stdout.String() != want {
			t.Fatalf("printed:\n%s\nwant:\n%s", w.stdout, want)
		}
		if want := "herald watch: schema_changed; reconnecting from mars@3 in 0s\n"; w.stderr.String() != want {
			t.Fatalf("stderr %q, want %q", w.stderr, want)
		}

		removed := strings.Replace(changed, "notification_schema:\n  mars:", "notification_schema:\n  gone:", 1)
		h.reload(t, kind, strings.Replace(removed, "base: mars", "base: gone", 1))
		if code := w.wait(t); code != 1 {
			t.Fatalf("exit %d after the event type was removed; stderr %s", code, w.stderr)
		}
		if want := "herald watch: schema_changed; reconnecting from mars@3 in 0s\n" +
			"herald watch: the server ended the stream: The event type was removed from the configuration (schema_removed)\n"; w.stderr.String() != want {
			t.Fatalf("stderr %q, want %q", w.stderr, want)
		}
	})
}

// TestReplayResumesAfterACut: a replay cut in the middle resumes from
// the next sequence, prints each notification once and exits 0.
func TestReplayResumesAfterACut(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig, "HERALD_WATCH_ENDPOINT__REPLAY_BATCH_DELAY_MS=200")
		for i := 1; i <= 6; i++ {
			notifyHTTP(t, h.url, marsAt(i, "enfo"))
		}
		p := testkit.NewProxy(t, h.url)
		r := startCLI(t, nil, nil, "replay", "mars", "class=od", "--from", "0", "--output", "json", "--url", "http://"+p.Addr())
		waitFor(t, "the first page", r.stdout, func(s string) bool { return lines(s) >= 2 })
		p.Cut()
		if code := r.wait(t); code != 0 {
			t.Fatalf("exit %d; stderr %s", code, r.stderr)
		}
		if want := allEvents(t, h.url, `{"class":"od"}`); r.stdout.String() != want {
			t.Fatalf("printed:\n%s\nwant:\n%s", r.stdout, want)
		}
		re := regexp.MustCompile(`^herald replay: the connection to ` + regexp.QuoteMeta("http://"+p.Addr()) + `/api/v1/replay was lost: unexpected EOF; reconnecting from mars@[3-6] in 0s\n$`)
		if !re.MatchString(r.stderr.String()) {
			t.Fatalf("stderr %q", r.stderr)
		}
	})
}
