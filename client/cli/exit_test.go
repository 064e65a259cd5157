package cli

import (
	"strings"
	"testing"
)

// TestExitCodes: 0 done, 1 the server refused (its message printed), 2
// a usage error naming the bad argument, 3 no server; each with its
// exact output.
func TestExitCodes(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig)
	u := "--url=" + h.url
	down := "--url=" + closedURL(t)
	downHost := strings.TrimPrefix(down, "--url=http://")
	see := func(cmd string) string { return "Run 'herald " + cmd + " --help' for usage.\n" }
	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"notify", "alert", "region=europe", "level=2", "--payload", `{"a":1}`, u}, 0, "alert@1\n", ""},
		// The server refuses.
		{[]string{"notify", "mars", "class=xx", "date=2025-07-06", "step=1", "stream=enfo", u}, 1, "",
			`herald notify: the server refused: 400 Bad Request INVALID_NOTIFICATION_REQUEST: invalid value for identifier 'class': value "xx" is not allowed; allowed values (case-insensitive): od, rd` + "\n"},
		{[]string{"notify", "alert", "region=europe", "level=2", u}, 1, "",
			"herald notify: the server refused: 400 Bad Request INVALID_NOTIFICATION_REQUEST: payload is required for event type 'alert'\n"},
		{[]string{"notify", "nope", "a=1", u}, 1, "",
			"herald notify: the server refused: 400 Bad Request UNKNOWN_EVENT_TYPE: unknown event type 'nope'\n"},
		{[]string{"replay", "mars", "--from", "0", u}, 1, "",
			"herald replay: the server refused: 400 Bad Request INVALID_REPLAY_REQUEST: Required field 'class' missing for replay operation\n"},
		{[]string{"watch", "mars", "class=od", "--where", "step >", u}, 1, "",
			"herald watch: the server refused: 400 Bad Request INVALID_WATCH_REQUEST: where: column 7: expected a field name or a value, found end of the predicate\n"},
		{[]string{"replay", "mars", "class=od", "--from", "5", "--to-id", "2", u}, 1, "",
			"herald replay: the server refused: 400 Bad Request INVALID_REPLAY_REQUEST: to_id (2) must not be lower than from_id (5)\n"},
		// Usage errors.
		{[]string{"notify", u}, 2, "", "herald notify: the event type is missing: herald notify EVENT_TYPE KEY=VALUE...\n" + see("notify")},
		{[]string{"watch", u}, 2, "", "herald watch: the event type is missing: herald watch EVENT_TYPE [FILTER...]\n" + see("watch")},
		{[]string{"notify", "mars", "class", u}, 2, "", `herald notify: identifier argument "class": no operator: write key=value, key>=v, key<v (also > and <=), key=a,b (one of) or key=lo..hi (between)` + "\n" + see("notify")},
		{[]string{"watch", "mars", "clas=od", u}, 2, "", `herald watch: identifier argument "clas=od": the event type has no identifier "clas"; its identifiers are class, date, step, stream` + "\n" + see("watch")},
		{[]string{"watch", "mars", "class>=od", u}, 2, "", `herald watch: identifier argument "class>=od": >= compares numbers, and class is an EnumHandler field: use class=value` + "\n" + see("watch")},
		{[]string{"notify", "alert", "--payload", "{x", u}, 2, "", "herald notify: --payload is not valid JSON: invalid character 'x' looking for beginning of object key string\n" + see("notify")},
		{[]string{"notify", "alert", "--payload-file", "/nonexistent/p.json", u}, 2, "", "herald notify: --payload-file: /nonexistent/p.json: no such file or directory\n" + see("notify")},
		{[]string{"notify", "alert", "--payload", "1", "--raw", "f", u}, 2, "", "herald notify: --payload, --payload-file and --raw exclude one another: give one\n" + see("notify")},
		{[]string{"notify", "alert", "--raw", "f", u}, 2, "", "herald notify: --raw needs --content-type, the media type of the payload's format\n" + see("notify")},
		{[]string{"notify", "alert", "--content-type", "application/cbor", u}, 2, "", "herald notify: --content-type goes with --raw FILE\n" + see("notify")},
		{[]string{"replay", "mars", "class=od", u}, 2, "", "herald replay: replay needs a start: --from SEQ (0 is the beginning) or --from-date DATE\n" + see("replay")},
		{[]string{"replay", "mars", "--from", "0", "--from-date", "2025-07-06", u}, 2, "", "herald replay: --from and --from-date exclude one another: give one start\n" + see("replay")},
		{[]string{"replay", "mars", "--from", "0", "--to-id", "1", "--to-date", "2025-07-06", u}, 2, "", "herald replay: --to-id and --to-date exclude one another: give one end\n" + see("replay")},
		{[]string{"replay", "mars", "--from", "x", u}, 2, "", `herald replay: --from "x" is not a sequence number (a decimal integer ≥ 0, or mars@N)` + "\n" + see("replay")},
		{[]string{"replay", "mars", "--from", "alert@3", u}, 2, "", `herald replay: --from "alert@3" names event type "alert", not mars` + "\n" + see("replay")},
		{[]string{"replay", "mars", "--from-date", "2025-02-30", u}, 2, "", `herald replay: --from-date "2025-02-30" is not a date: parsing time "2025-02-30": day out of range` + "\n" + see("replay")},
		{[]string{"watch", "mars", "--output", "yaml", u}, 2, "", `herald watch: --output "yaml": the formats are text and json` + "\n" + see("watch")},
		{[]string{"schema", "a", "b", u}, 2, "", `herald schema: unexpected argument "b": herald schema takes at most one event type` + "\n" + see("schema")},
		{[]string{"session", "x", u}, 2, "", `herald session: unexpected argument "x": herald session reads its statements from standard input` + "\n" + see("session")},
		{[]string{"schema", "--url", "ftp://x"}, 2, "", `herald schema: --url: server URL "ftp://x": the scheme must be http or https` + "\n" + see("schema")},
		// No server.
		{[]string{"notify", "alert", "region=asia", "--payload", "1", down}, 3, "",
			"herald notify: cannot connect to http://" + downHost + "/api/v1/schema/alert: dial tcp " + downHost + ": connect: connection refused\n"},
		{[]string{"watch", "alert", down}, 3, "",
			"herald watch: cannot connect to http://" + downHost + "/api/v1/watch: dial tcp " + downHost + ": connect: connection refused\n"},
		{[]string{"replay", "alert", "--from", "0", down}, 3, "",
			"herald replay: cannot connect to http://" + downHost + "/api/v1/replay: dial tcp " + downHost + ": connect: connection refused\n"},
		{[]string{"schema", down}, 3, "",
			"herald schema: cannot connect to http://" + downHost + "/api/v1/schema: dial tcp " + downHost + ": connect: connection refused\n"},
		{[]string{"session", down}, 3, "",
			"herald session: cannot connect to ws://" + downHost + "/api/v1/session: dial tcp " + downHost + ": connect: connection refused\n"},
	}
	for _, c := range cases {
		r := runCLI(t, nil, nil, c.args...)
		if r.code != c.code || r.stdout != c.stdout || r.stderr != c.stderr {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr:\n%s", c.args, r.code, r.stdout, r.stderr, c.code, c.stdout, c.stderr)
		}
	}
}

// TestFlags: flags go before or after the positional arguments, --
// ends them, an unknown flag is a usage error (exit 2) with the usage
// printed, and --help prints it and exits 0.
func TestFlags(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig)
	notifyHTTP(t, h.url, `{"event_type":"alert","identifier":{"region":"europe","level":1},"payload":1}`)
	a := runCLI(t, nil, nil, "replay", "--url", h.url, "--from", "0", "alert", "--output", "json", "region=europe")
	b := runCLI(t, nil, nil, "replay", "alert", "region=europe", "--from=0", "--output=json", "--url="+h.url)
	c := runCLI(t, nil, nil, "replay", "--from", "0", "--output", "json", "--url", h.url, "--", "alert", "region=europe")
	if a.code != 0 || a.stdout == "" || a.stdout != b.stdout || a.stdout != c.stdout || b.code != 0 || c.code != 0 {
		t.Fatalf("flag orders: %+v %+v %+v", a, b, c)
	}
	r := runCLI(t, nil, nil, "watch", "alert", "--bogus")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "flag provided but not defined: -bogus\nUsage: herald watch EVENT_TYPE") || !strings.Contains(r.stderr, "\nFlags:\n  -format NAME\n") {
		t.Fatalf("--bogus: %+v", r)
	}
	r = runCLI(t, nil, nil, "watch", "alert", "--to-id", "3")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "flag provided but not defined: -to-id\n") {
		t.Fatalf("watch --to-id: %+v", r)
	}
	r = runCLI(t, nil, nil, "replay", "--help")
	if r.code != 0 || r.stdout != "" || !strings.HasPrefix(r.stderr, replayUsage+"\nFlags:\n") || !strings.Contains(r.stderr, "  -to-date DATE\n") {
		t.Fatalf("replay --help: %+v", r)
	}
}
