package syslog

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/catalog"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/values"
	wjson "github.com/herald-gateway/herald/codec/wire/json"
)

const fullSchema = `CREATE SCHEMA ev (facility U8, severity U8, timestamp DATETIME OPTIONAL, hostname STRING OPTIONAL,
  app_name STRING OPTIONAL, proc_id STRING OPTIONAL, msg_id STRING OPTIONAL, structured_data STRING OPTIONAL, message STRING);
CREATE CODEC c FROM SYSLOG TO SCHEMA ev`

func plan(t testing.TB, defs string) *bind.Plan {
	t.Helper()
	cat := catalog.New()
	if _, err := cat.Exec(defs); err != nil {
		t.Fatal(err)
	}
	p, err := cat.Plan("c")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fixedNow() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }

// decode returns the row view of one frame, or "CODE: message".
func decode(t testing.TB, p *bind.Plan, frame string) string {
	t.Helper()
	c := New(p)
	c.Now = fixedNow
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	if _, err := c.Decode([]byte(frame), b); err != nil {
		return string(values.CodeOf(err)) + ": " + err.Error()
	}
	rec, _ := b.NewRecordBatch()
	defer rec.Release()
	out, err := wjson.NewRowViewEncoder(p.Schema, true).AppendRow(nil, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestDecode(t *testing.T) {
	p := plan(t, fullSchema)
	tests := []struct{ frame, want string }{
		{"<134>1 2026-09-24T10:15:00Z app-01 checkout - - - order accepted",
			`{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:00Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"order accepted"}`},
		{"<165>1 2003-10-11T22:14:15.003000-07:00 mymachine.example.com evntslog 1234 ID47 [exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"][examplePriority@32473 class=\"high\"] \xef\xbb\xbfAn application event\r\n",
			`{"facility":20,"severity":5,"timestamp":"2003-10-12T05:14:15.003Z","hostname":"mymachine.example.com","app_name":"evntslog","proc_id":"1234","msg_id":"ID47","structured_data":"[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"][examplePriority@32473 class=\"high\"]","message":"An application event"}`},
		{`<0>1 - - - - - [a x="q\]\"\\ \n"]`, `{"facility":0,"severity":0,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":"[a x=\"q\\]\\\"\\\\ \\n\"]","message":""}`},
		{"<191>1 - - - - - -", `{"facility":23,"severity":7,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":""}`},
		// RFC 3164
		{"<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
			`{"facility":4,"severity":2,"timestamp":"2026-10-11T22:14:15Z","hostname":"mymachine","app_name":"su","proc_id":null,"msg_id":null,"structured_data":null,"message":"'su root' failed for lonvick on /dev/pts/8"}`},
		{"<13>Feb  5 01:02:03 host sshd[4242]: Accepted key",
			`{"facility":1,"severity":5,"timestamp":"2026-02-05T01:02:03Z","hostname":"host","app_name":"sshd","proc_id":null,"msg_id":null,"structured_data":null,"message":"Accepted key"}`},
		{"<13>just text", `{"facility":1,"severity":5,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":"just text"}`},
		// no or malformed PRI: priority 13, the whole frame is the 3164 body
		{"no pri at all", `{"facility":1,"severity":5,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":"no pri at all"}`},
		{"<192>1 - - - - - - x", `{"facility":1,"severity":5,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":"<192>1 - - - - - - x"}`},
		{"<013>x", `{"facility":1,"severity":5,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":"<013>x"}`},
		// errors
		{"<13>2 - - - - - -", "SYSLOG: unsupported RFC 5424 VERSION: expected 1"},
		{"<13>1 2026-09-24T10:15:00.1234567Z h a p m -", "SYSLOG: TIMESTAMP must be YYYY-MM-DDTHH:MM:SS[.1–6 digits](Z|±HH:MM)"},
		{"<13>1 - " + strings.Repeat("h", 256) + " a p m -", "SYSLOG: HOSTNAME must be 1–255 printable US-ASCII characters"},
		{"<13>1 - h " + strings.Repeat("a", 49) + " p m -", "SYSLOG: APP-NAME must be 1–48 printable US-ASCII characters"},
		{"<13>1 - h a p " + strings.Repeat("m", 33) + " -", "SYSLOG: MSGID must be 1–32 printable US-ASCII characters"},
		{"<13>1 - h a p m [a][a]", "SYSLOG: STRUCTURED-DATA repeats an SD-ID"},
		{`<13>1 - h a p m [a x="1" x="2"]`, "SYSLOG: an SD-ELEMENT repeats a PARAM-NAME"},
		{`<13>1 - h a p m [a x="]"]`, "SYSLOG: PARAM-VALUE holds an unescaped ]"},
		{`<13>1 - h a p m [a x="1"]x`, "SYSLOG: STRUCTURED-DATA must be followed by a space or the end of the frame"},
		{`<13>1 - h a p m x`, "SYSLOG: STRUCTURED-DATA must be - or one or more [SD-ID …] elements"},
		{"<13>1 - h a", "SYSLOG: RFC 5424 header ends early: expected APP-NAME followed by a space"},
		{"\r\n\x00", "EMPTY_PAYLOAD: empty syslog frame"},
		{"<13>1 - h a p m - \xff", "INVALID_UTF8: syslog frame is not valid UTF-8"},
	}
	for _, tt := range tests {
		if got := decode(t, p, tt.frame); got != tt.want {
			t.Errorf("%q\n got: %s\nwant: %s", tt.frame, got, tt.want)
		}
	}
	// a subset schema drops the other fields
	sub := plan(t, "CREATE SCHEMA ev (message STRING, severity U8); CREATE CODEC c FROM SYSLOG TO SCHEMA ev")
	if got := decode(t, sub, "<134>1 2026-09-24T10:15:00Z app-01 checkout - - - hi"); got != `{"message":"hi","severity":6}` {
		t.Errorf("subset: %s", got)
	}
}

func encodeRows(t *testing.T, p *bind.Plan, lines ...string) (one []string, batch []string, err error) {
	t.Helper()
	b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
	defer b.Release()
	d := wjson.NewRowViewDecoder(p.Schema)
	for _, l := range lines {
		if _, err := d.Decode([]byte(l), b); err != nil {
			t.Fatal(err)
		}
	}
	rec, _ := b.NewRecordBatch()
	defer rec.Release()
	c := New(p)
	idx := []int{}
	for i := 0; i < int(rec.NumRows()); i++ {
		out, err := c.AppendRow(nil, rec, i)
		if err != nil {
			return nil, nil, err
		}
		one = append(one, string(out))
		idx = append(idx, i)
	}
	for len(idx) > 0 {
		out, n, err := c.AppendBatch(nil, rec, idx)
		if err != nil {
			return nil, nil, err
		}
		batch = append(batch, string(out))
		idx = idx[n:]
	}
	return one, batch, nil
}

func TestEncode(t *testing.T) {
	p := plan(t, fullSchema)
	one, batch, err := encodeRows(t, p,
		`{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:00Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"order accepted"}`,
		`{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:01Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"order shipped"}`,
		`{"facility":16,"severity":3,"timestamp":"2026-09-24T08:15:00.123456789Z","hostname":null,"app_name":null,"proc_id":"7","msg_id":"M","structured_data":"[a x=\"\\\"\"]","message":"\ufeffboom"}`,
		`{"facility":16,"severity":3,"timestamp":"2026-09-24T08:15:00.1Z","hostname":null,"app_name":null,"proc_id":"7","msg_id":"M","structured_data":"[a x=\"\\\"\"]","message":""}`,
	)
	if err != nil {
		t.Fatal(err)
	}
	wantOne := []string{
		"<134>1 2026-09-24T10:15:00Z app-01 checkout - - - order accepted",
		"<134>1 2026-09-24T10:15:01Z app-01 checkout - - - order shipped",
		`<131>1 2026-09-24T08:15:00.123456Z - - 7 M [a x="\""] boom`,
		`<131>1 2026-09-24T08:15:00.1Z - - 7 M [a x="\""]`,
	}
	wantBatch := []string{
		`<134>1 2026-09-24T10:15:00Z app-01 checkout - - - ["<134>1 2026-09-24T10:15:00Z app-01 checkout - - - order accepted","<134>1 2026-09-24T10:15:01Z app-01 checkout - - - order shipped"]`,
		`<131>1 2026-09-24T08:15:00.123456Z - - 7 M [a x="\""] ["<131>1 2026-09-24T08:15:00.123456Z - - 7 M [a x=\"\\\"\"] boom","<131>1 2026-09-24T08:15:00.1Z - - 7 M [a x=\"\\\"\"]"]`,
	}
	if strings.Join(one, "\n") != strings.Join(wantOne, "\n") {
		t.Errorf("one:\n%s", strings.Join(one, "\n"))
	}
	if strings.Join(batch, "\n") != strings.Join(wantBatch, "\n") {
		t.Errorf("batch:\n%s", strings.Join(batch, "\n"))
	}
	for i, w := range wantOne { // encoded frames read back
		_ = i
		if got := decode(t, p, w); strings.HasPrefix(got, "SYSLOG") {
			t.Errorf("re-decode %q: %s", w, got)
		}
	}
	errs := []struct{ row, want string }{
		{`{"facility":24,"severity":0,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":""}`, "field facility: facility must be 0…23"},
		{`{"facility":1,"severity":8,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":""}`, "field severity: severity must be 0…7"},
		{`{"facility":1,"severity":1,"timestamp":null,"hostname":"a b","app_name":null,"proc_id":null,"msg_id":null,"structured_data":null,"message":""}`, "field hostname: must be 1–255 printable US-ASCII characters, and not the null marker -"},
		{`{"facility":1,"severity":1,"timestamp":null,"hostname":null,"app_name":"-","proc_id":null,"msg_id":null,"structured_data":null,"message":""}`, "field app_name: must be 1–48 printable US-ASCII characters, and not the null marker -"},
		{`{"facility":1,"severity":1,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":"[a x=\"\\q\"]","message":""}`, "field structured_data: must be well-formed SD-ELEMENTs with no trailing text"},
		{`{"facility":1,"severity":1,"timestamp":null,"hostname":null,"app_name":null,"proc_id":null,"msg_id":null,"structured_data":"[a] x","message":""}`, "field structured_data: must be well-formed SD-ELEMENTs with no trailing text"},
	}
	for _, e := range errs {
		_, _, err := encodeRows(t, p, e.row)
		if err == nil || err.Error() != e.want {
			t.Errorf("%s: got %v, want %s", e.row, err, e.want)
		}
	}
	if err := EncodeError(plan(t, "CREATE SCHEMA ev (message STRING); CREATE CODEC c FROM SYSLOG TO SCHEMA ev")); err == nil ||
		err.Error() != "a SYSLOG codec encodes only when its schema declares facility, severity and message; missing: facility, severity" {
		t.Errorf("EncodeError: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"<134>1 2026-09-24T10:15:00Z app-01 checkout - - - order accepted",
		"<165>1 2003-10-11T22:14:15.003000-07:00 mymachine.example.com evntslog 1234 ID47 [exampleSDID@32473 iut=\"3\"] \xef\xbb\xbfAn application event",
		`<0>1 - - - - - [a x="q\]\"\\ \n"]`, "<34>Oct 11 22:14:15 mymachine su: 'su root' failed",
		"<13>Feb  5 01:02:03 host sshd[4242]: Accepted key", "no pri", "<192>1 - - - - - - x", "<13>2 - - - - - -",
		`<13>1 - h a p m [a][a]`, `<13>1 - h a p m [a x="1"]x`, "\r\n", "<13>1 - h a",
	} {
		f.Add([]byte(s))
	}
	p := plan(f, fullSchema)
	f.Fuzz(func(t *testing.T, frame []byte) {
		c := New(p)
		c.Now = fixedNow
		b := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
		defer b.Release()
		n, err := c.Decode(frame, b)
		rec, _ := b.NewRecordBatch()
		defer rec.Release()
		if int(rec.NumRows()) != n {
			t.Fatalf("rows %d vs %d", rec.NumRows(), n)
		}
		if err != nil {
			return
		}
		// what decodes re-encodes, unless a header the 3164 path accepted
		// breaks the 5424 limits, and reads back the same
		out, err := c.AppendRow(nil, rec, 0)
		if err != nil {
			return
		}
		b2 := rows.NewBuilder(memory.NewGoAllocator(), p.Schema)
		defer b2.Release()
		if _, err := c.Decode(out, b2); err != nil {
			t.Fatalf("re-decode of %q: %v", out, err)
		}
		rec2, _ := b2.NewRecordBatch()
		defer rec2.Release()
		rv := wjson.NewRowViewEncoder(p.Schema, true)
		a, _ := rv.AppendRow(nil, rec, 0)
		z, _ := rv.AppendRow(nil, rec2, 0)
		msg := rec.Column(8).ValueStr(0)
		inherent := strings.HasPrefix(msg, "\ufeff") || strings.TrimRight(msg, "\r\n\x00") != msg
		if string(a) != string(z) && !inherent {
			t.Fatalf("round trip\n%s\n%s", a, z)
		}
	})
}
