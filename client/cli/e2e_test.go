package cli

import (
	"fmt"
	"strings"
	"testing"
)

// marsLine is the readable line of the mars notification at step in
// stream, stored at time tm.
func marsLine(seq int, tm string, step int, stream string) string {
	return fmt.Sprintf(`mars@%d  %s  class=od date=20250706 step=%d stream=%s  {"path":"/data/%s/%d"}`, seq, tm, step, stream, stream, step)
}

// TestNotifyThenReplay publishes with `herald notify` and reads back with
// `herald replay`, on both engines: notify prints exactly the ids; the
// JSON output is exactly the server's CloudEvents; the readable lines
// are exact; every filter form selects exactly its notifications.
func TestNotifyThenReplay(t *testing.T) {
	onBoth(t, func(t *testing.T, kind string) {
		h := startHerald(t, kind, testConfig)
		u := "--url=" + h.url
		steps := []struct {
			step   int
			stream string
		}{{1, "enfo"}, {6, "enfo"}, {12, "oper"}, {24, "enfo"}}
		for i, s := range steps {
			r := runCLI(t, nil, nil, "notify", "mars", "class=od", "date=2025-07-06", "step="+itoa(s.step), "stream="+s.stream,
				"--payload", fmt.Sprintf(`{"path":"/data/%s/%d"}`, s.stream, s.step), u)
			if r.code != 0 || r.stdout != fmt.Sprintf("mars@%d\n", i+1) || r.stderr != "" {
				t.Fatalf("notify %d: %+v", i, r)
			}
		}
		// The payload from a file, and no payload (alert requires one).
		payload := t.TempDir() + "/p.json"
		writeFile(t, payload, `{"text": "storm"}`)
		if r := runCLI(t, nil, nil, "notify", "alert", "region=europe", "level=3", "--payload-file", payload, u); r.code != 0 || r.stdout != "alert@1\n" {
			t.Fatalf("notify --payload-file: %+v", r)
		}
		if r := runCLI(t, nil, strings.NewReader(`[1, 2]`), "notify", "alert", "region=asia", "level=1", "--payload-file", "-", u); r.code != 0 || r.stdout != "alert@2\n" {
			t.Fatalf("notify --payload-file -: %+v", r)
		}

		want := replayHTTP(t, h.url, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`)
		if len(want) != 4 {
			t.Fatalf("the server replays %d notifications", len(want))
		}
		r := runCLI(t, nil, nil, "replay", "mars", "class=od", "--from", "0", "--output", "json", u)
		if r.code != 0 || r.stdout != strings.Join(want, "\n")+"\n" || r.stderr != "" {
			t.Fatalf("replay --output json: %+v\nwant\n%s", r, strings.Join(want, "\n"))
		}
		times := make([]string, len(want))
		var text []string
		for i, ce := range want {
			times[i] = timeOf(t, ce)
			text = append(text, marsLine(i+1, times[i], steps[i].step, steps[i].stream))
		}
		pick := func(idx ...int) string {
			var b strings.Builder
			for _, i := range idx {
				b.WriteString(text[i] + "\n")
			}
			return b.String()
		}
		cases := []struct {
			args []string
			want string
		}{
			{[]string{"class=od", "--from", "0"}, pick(0, 1, 2, 3)},
			{[]string{"--from", "mars@2", "class=od"}, pick(1, 2, 3)},
			{[]string{"class=od", "step>=6", "--from", "0"}, pick(1, 2, 3)},
			{[]string{"class=od", "step>6", "--from", "0"}, pick(2, 3)},
			{[]string{"class=od", "step<12", "--from", "0"}, pick(0, 1)},
			{[]string{"class=od", "step<=12", "--from", "0"}, pick(0, 1, 2)},
			{[]string{"class=od", "step=1,24", "--from", "0"}, pick(0, 3)},
			{[]string{"class=od", "step=6..12", "--from", "0"}, pick(1, 2)},
			{[]string{"class=od,rd", "stream=enfo", "--from", "0"}, pick(0, 1, 3)},
			{[]string{"class=od", "--from", "0", "--where", "stream = 'oper' OR step = 1"}, pick(0, 2)},
			{[]string{"class=od", "--from", "0", "--to-id", "3"}, pick(0, 1, 2)},
			{[]string{"class=od", "--from", "2", "--to-id", "mars@2"}, pick(1)},
			{[]string{"class=od", "--from-date", "2000-01-01"}, pick(0, 1, 2, 3)},
			{[]string{"class=od", "--from-date", "2999-01-01"}, ""},
			{[]string{"class=od", "--from", "0", "--to-date", times[1]}, pick(0, 1)},
			{[]string{"class=od", "date=20250706", "--from", "0", "step=12"}, pick(2)},
		}
		for _, c := range cases {
			r := runCLI(t, nil, nil, append([]string{"replay", "mars", u}, c.args...)...)
			if r.code != 0 || r.stdout != c.want || r.stderr != "" {
				t.Errorf("replay %q: exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", c.args, r.code, r.stdout, c.want, r.stderr)
			}
		}
		// The alert payloads: a JSON array, and an object.
		r = runCLI(t, nil, nil, "replay", "alert", "--from", "0", u)
		alerts := replayHTTP(t, h.url, `{"event_type":"alert","identifier":{},"from_id":"0"}`)
		wantAlert := "alert@1  " + timeOf(t, alerts[0]) + `  level=3 region=europe  {"text":"storm"}` + "\n" +
			"alert@2  " + timeOf(t, alerts[1]) + `  level=1 region=asia  [1,2]` + "\n"
		if r.code != 0 || r.stdout != wantAlert {
			t.Errorf("replay alert:\n%s\nwant\n%s", r.stdout, wantAlert)
		}
	})
}

// TestReplayLimit: a replay cut short by the server's historical cap
// prints what it got, says on stderr where to continue, and exits 0.
func TestReplayLimit(t *testing.T) {
	h := startHerald(t, "in_memory", strings.Replace(testConfig, "max_historical_notifications: 50", "max_historical_notifications: 2", 1))
	for i := 1; i <= 3; i++ {
		notifyHTTP(t, h.url, marsAt(i, "enfo"))
	}
	r := runCLI(t, nil, nil, "replay", "mars", "class=od", "--from", "0", "--output", "json", "--url", h.url)
	all := replayHTTP(t, h.url, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"0"}`)
	if r.code != 0 || r.stdout != all[0]+"\n"+all[1]+"\n" ||
		r.stderr != "herald replay: stopped at the server's replay limit of 2 notifications; continue with --from 3\n" {
		t.Fatalf("%+v", r)
	}
	r = runCLI(t, nil, nil, "replay", "mars", "class=od", "--from", "3", "--output", "json", "--url", h.url)
	if r.code != 0 || r.stdout != replayHTTP(t, h.url, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"3"}`)[0]+"\n" || r.stderr != "" {
		t.Fatalf("continued: %+v", r)
	}
}

// TestSchemaCommand prints the schemas exactly.
func TestSchemaCommand(t *testing.T) {
	h := startHerald(t, "in_memory", testConfig)
	mars := `mars
  payload: optional
  class   EnumHandler    required  values: od, rd
          MARS class.
  date    DateHandler    optional  canonical_format: %Y%m%d
  step    IntHandler     optional  range: [0, 360]
  stream  StringHandler  optional
`
	alert := `alert
  payload: required
  level   IntHandler   optional
  region  EnumHandler  optional  values: europe, asia
`
	if r := runCLI(t, nil, nil, "schema", "--url", h.url); r.code != 0 || r.stdout != alert+"\n"+mars || r.stderr != "" {
		t.Errorf("schema:\n%s\nwant\n%s", r.stdout, alert+"\n"+mars)
	}
	if r := runCLI(t, nil, nil, "schema", "mars", "--url", h.url); r.code != 0 || r.stdout != mars {
		t.Errorf("schema mars:\n%s", r.stdout)
	}
	wantJSON := `{"event_type":"alert","schema":{"identifier":{"level":{"range":null,"required":false,"type":"IntHandler"},"region":{"required":false,"type":"EnumHandler","values":["europe","asia"]}},"payload":{"required":true}}}` + "\n"
	if r := runCLI(t, nil, nil, "schema", "alert", "--output", "json", "--url", h.url); r.code != 0 || r.stdout != wantJSON {
		t.Errorf("schema alert --output json:\n%s\nwant\n%s", r.stdout, wantJSON)
	}
	if r := runCLI(t, nil, nil, "schema", "nope", "--url", h.url); r.code != 1 || r.stdout != "" ||
		r.stderr != "herald schema: the server refused: 404 Not Found: Event type 'nope' not found\n" {
		t.Errorf("schema nope: %+v", r)
	}
}
