package cli

import (
	"io"
	"regexp"
	"strings"
	"testing"
)

// TestSessionCommand types statements into `herald session` and reads
// exactly what it prints: the welcome, each reply, the events of a
// subscription as they arrive, errors with their position; the end of
// the input closes the session (exit 1: a request was refused). On both
// engines.
func TestSessionCommand(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig)
		in, typing := io.Pipe()
		s := startCLI(t, nil, in, "session", "--url", h.url)
		say := func(line string, wantLines int) string {
			t.Helper()
			if _, err := io.WriteString(typing, line+"\n"); err != nil {
				t.Fatal(err)
			}
			return waitFor(t, "the answer to "+line, s.stdout, func(s string) bool { return lines(s) >= wantLines })
		}
		welcome := waitFor(t, "the welcome", s.stdout, func(s string) bool { return lines(s) == 1 })
		if !regexp.MustCompile(`^connected to herald 0\.1\.0-test: session [0-9a-f-]{36} \(protocol herald\.v1\)\n$`).MatchString(welcome) {
			t.Fatalf("welcome %q", welcome)
		}
		say("CREATE SUBSCRIPTION s1 TO alert WHERE level >= 3", 2)
		say(`{"op":"replay","name":"r","event_type":"alert","identifier":{"region":"europe"},"from_id":"0"}`, 3)
		waitFor(t, "the empty replay's end", s.stdout, func(s string) bool { return lines(s) == 4 })
		notifyHTTP(t, h.url, `{"event_type":"alert","identifier":{"region":"europe","level":1},"payload":"low"}`)
		notifyHTTP(t, h.url, `{"event_type":"alert","identifier":{"region":"asia","level":4},"payload":{"text":"high"}}`)
		waitFor(t, "the event", s.stdout, func(s string) bool { return lines(s) == 5 })
		say("DESCRIBE EVENT TYPE alert WHERE level > 3", 10)
		say("DELETE SUBSCRIPTION s1;", 11)
		say("CREATE SUBSCRIPTION s2 TO nope", 12)
		say("CREATE SUBSCRIPTION s3 TO alert WHERE level >", 13)
		say("ping", 14)
		say(`{"op":"schema","event_type":"alert"}`, 15)
		say(`{"op":`, 16)
		say("", 16)
		typing.Close()
		if code := s.wait(t); code != 1 {
			t.Fatalf("exit %d; stderr %s", code, s.stderr)
		}
		ce := replayHTTP(t, h.url, `{"event_type":"alert","identifier":{},"from_id":"2"}`)[0]
		want := welcome +
			"subscribed s1 (generation 1) to alert.*.*, boundary alert@0\n" +
			"subscribed r (generation 2) to alert.*.europe, boundary alert@0\n" +
			"[r] ended: end_of_stream: Stream completed\n" +
			"[s1] alert@2  " + timeOf(t, ce) + `  level=4 region=asia  {"text":"high"}` + "\n" +
			"alert\n  payload: required\n  level   IntHandler   optional\n  region  EnumHandler  optional  values: europe, asia\n" +
			"  where: (identifier.level > 3)\n" +
			"unsubscribed s1\n" +
			"error UNKNOWN_EVENT_TYPE: unknown event type 'nope'\n" +
			"error INVALID_WATCH_REQUEST: execute: line 1 column 46: WHERE: expected a field name or a value, found end of the predicate\n" +
			"pong TIME\n" +
			`{"type":"reply","id":8,"ok":true,"schema":{"event_type":"alert","schema":{"identifier":{"level":{"range":null,"required":false,"type":"IntHandler"},"region":{"required":false,"type":"EnumHandler","values":["europe","asia"]}},"payload":{"required":true}},"status":"success"}}` + "\n" +
			"error: the line starts with { but is not one JSON object: unexpected end of JSON input\n"
		got := regexp.MustCompile(`(?m)^pong \S+Z$`).ReplaceAllString(s.stdout.String(), "pong TIME")
		if got != want {
			t.Fatalf("session printed:\n%s\nwant:\n%s", got, want)
		}
		if s.stderr.String() != "" {
			t.Fatalf("stderr %q", s.stderr)
		}
	})
}

// TestSessionQuit: quit closes the session at once, exit 0 when nothing
// was refused.
func TestSessionQuit(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig)
	r := runCLI(t, nil, strings.NewReader("ping\nquit\nping\n"), "session", "--url", h.url)
	if r.code != 0 || lines(r.stdout) != 2 || !strings.Contains(r.stdout, "\npong ") || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
}
