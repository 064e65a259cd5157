package handlers_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestSessionCreateSubscriptionPins: CREATE SUBSCRIPTION takes its identifier
// from the top-level AND conditions of WHERE (the session protocol,
// docs/sessions.md), so the protocol's own example works on an event type with
// a required field; the topic narrows, the whole WHERE still selects, and a
// required field WHERE does not pin is an error with its position.
func TestSessionCreateSubscriptionPins(t *testing.T) {
	s := startServer(t, wsConfig, nil)
	c := s.dial(t, nil)
	c.welcome()
	// The protocol's example, verbatim.
	r := c.ok("execute", `"statement":"CREATE SUBSCRIPTION s1 TO mars DROPPING BATCH SAMPLE RATE 0.1 WHERE class = 'od' AND step >= 6;"`)
	if r["name"] != "s1" || r["topic"] != "mars.od.*.*.*.*.*.*" || r["boundary"] != "mars@0" {
		t.Fatalf("the protocol's example: %v", r)
	}
	// The same selection, every notification delivered.
	if r := c.ok("execute", `"statement":"CREATE SUBSCRIPTION s2 TO mars WHERE class = 'od' AND step >= 6"`); r["topic"] != "mars.od.*.*.*.*.*.*" {
		t.Fatalf("s2: %v", r)
	}
	// An equality on a routed IntHandler field narrows the topic too.
	c3 := s.dial(t, nil)
	c3.welcome()
	if r := c3.ok("execute", `"statement":"create subscription s3 to mars where 12 = step and (identifier.class = 'RD')"`); r["topic"] != "mars.rd.*.*.*.*.*.12" {
		t.Fatalf("s3: %v", r)
	}
	// What the conditions do not pin still selects.
	c5 := s.dial(t, nil)
	c5.welcome()
	if r := c5.ok("execute", `"statement":"CREATE SUBSCRIPTION s5 TO mars WHERE class = 'od' AND step >= 6 AND step <> 12"`); r["topic"] != "mars.od.*.*.*.*.*.*" {
		t.Fatalf("s5: %v", r)
	}
	for _, n := range []string{
		`"class":"od","step":6`,  // mars@1: s2
		`"class":"rd","step":6`,  // mars@2: neither
		`"class":"od","step":5`,  // mars@3: neither
		`"class":"od","step":12`, // mars@4: s2
		`"class":"rd","step":12`, // mars@5: s3
		`"class":"od","step":0`,  // mars@6: neither
		`"class":"od","step":7`,  // mars@7: s2, the marker
		`"class":"rd","step":13`, // mars@8: neither
		`"class":"rd","step":12`, // mars@9: s3, the marker
	} {
		s.notify(t, `{"event_type":"mars","identifier":{"expver":"1","domain":"g","date":"20250706","time":"12","stream":"enfo",`+n+`}}`)
	}
	if ids, _ := c.collect("s2", 3); strings.Join(ids, " ") != "mars@1 mars@4 mars@7" {
		t.Fatalf("s2 received %v", ids)
	}
	if ids, _ := c5.collect("s5", 2); strings.Join(ids, " ") != "mars@1 mars@7" {
		t.Fatalf("s5 received %v", ids)
	}
	if ids, _ := c3.collect("s3", 2); strings.Join(ids, " ") != "mars@5 mars@9" {
		t.Fatalf("s3 received %v", ids)
	}

	// No required field: OR at the top pins nothing (the whole topic),
	// AND pins.
	for stmt, topic := range map[string]string{
		"CREATE SUBSCRIPTION o1 TO extreme WHERE region = 'north' OR anomaly > 1":                        "extreme.*.*",
		"CREATE SUBSCRIPTION o2 TO extreme WHERE NOT region = 'north'":                                   "extreme.*.*",
		"CREATE SUBSCRIPTION o3 TO extreme WHERE region = 'north' AND anomaly > 1":                       "extreme.north.*",
		"CREATE SUBSCRIPTION o4 TO extreme WHERE (region = 'north' OR region = 'south') AND anomaly = 2": "extreme.*.*",
		"CREATE SUBSCRIPTION o5 TO extreme":                                                              "extreme.*.*",
	} {
		if r := c3.ok("execute", `"statement":"`+stmt+`"`); r["topic"] != topic {
			t.Fatalf("%s: %v, want topic %s", stmt, r, topic)
		}
	}

	// s1 samples what it delivers: stop it (and s2), so that no events
	// frame comes between the requests below and their replies.
	for _, sub := range []string{"s1", "s2"} {
		if r, _ := c.replyAmid("execute", `"statement":"DELETE SUBSCRIPTION `+sub+`"`); r["ok"] != true {
			t.Fatalf("delete %s: %v", sub, r)
		}
	}

	const unpinned = "required field 'class' must be pinned in WHERE with =, as in class = …: CREATE SUBSCRIPTION takes its identifier from the top-level AND conditions of WHERE"
	for _, e := range []struct {
		stmt      string
		line, col int
		msg       string
	}{
		{"CREATE SUBSCRIPTION s4 TO mars WHERE class = 'od' OR step >= 6", 1, 38, unpinned},
		{"CREATE SUBSCRIPTION s4 TO mars WHERE step >= 6 AND (class = 'od' OR class = 'rd')", 1, 38, unpinned},
		{"CREATE SUBSCRIPTION s4 TO mars WHERE NOT class = 'rd'", 1, 38, unpinned},
		{"CREATE SUBSCRIPTION s4 TO mars WHERE class != 'rd'", 1, 38, unpinned},
		{"CREATE SUBSCRIPTION s4 TO mars", 1, 31, unpinned},
		{"CREATE SUBSCRIPTION s4 TO mars DROPPING;", 1, 40, unpinned},
		{"CREATE SUBSCRIPTION s4 TO mars\\nWHERE\\n  step >= 6;", 3, 3, unpinned},
		{"CREATE SUBSCRIPTION s4 TO cloud WHERE source = 'x'", 1, 39, "required field 'point_cloud' is a geometry, which WHERE cannot select; use subscribe with an identifier instead"},
	} {
		r := c.reply("execute", `"statement":"`+e.stmt+`"`)
		want := fmt.Sprintf("map[code:INVALID_WATCH_REQUEST message:execute: line %d column %d: %s] map[column:%d line:%d]", e.line, e.col, e.msg, e.col, e.line)
		if r["ok"] != false || fmt.Sprint(r["error"], " ", r["position"]) != want {
			t.Fatalf("%s:\n got %v %v\nwant %s", e.stmt, r["error"], r["position"], want)
		}
	}
	// A refused statement leaves the name free.
	if r := c.ok("execute", `"statement":"CREATE SUBSCRIPTION s4 TO mars WHERE class IN ('od', 'rd') AND step BETWEEN 6 AND 12"`); r["topic"] != "mars.*.*.*.*.*.*.*" {
		t.Fatalf("s4: %v", r)
	}
}
