// Package syslog owns the SYSLOG wire format, the predefined singleton
// wire schema: a hand-written RFC 5424 parser with the RFC 3164 fallback,
// the RFC 5424 encoder and the batch frame, all under the SYSLOG field
// contract (docs/codecs.md): facility, severity, timestamp, hostname,
// app_name, proc_id, msg_id, structured_data (the exact text) and message.
//
// It must not depend on a syslog library or a transport: framing (octet
// counting) belongs to whoever carries the frames. Decoding never quotes
// the frame in an error.
package syslog

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/rows"
	"github.com/herald-gateway/herald/codec/values"
)

// Header field limits of RFC 5424.
const (
	maxHostname = 255
	maxAppName  = 48
	maxProcID   = 128
	maxMsgID    = 32
	maxName     = 32 // SD-ID, PARAM-NAME, RFC 3164 TAG
)

// Message is one parsed syslog frame; nil pointers are typed nulls.
type Message struct {
	Facility, Severity uint8
	Timestamp          *int64
	Hostname           *string
	AppName            *string
	ProcID             *string
	MsgID              *string
	StructuredData     *string
	Message            string
}

// Codec decodes and encodes SYSLOG frames for one target schema. It is
// safe for concurrent use.
type Codec struct {
	plan *bind.SyslogPlan
	// Now returns the current time; RFC 3164 timestamps take its UTC
	// year. Nil means time.Now.
	Now func() time.Time
	// MaxSize bounds one frame in bytes; 0 means unbounded.
	MaxSize int
}

// New compiles a SYSLOG codec for a plan.
func New(p *bind.Plan) *Codec { return &Codec{plan: p.Syslog} }

func fail(msg string) *values.Error {
	return &values.Error{Code: values.CodeSyslog, Msg: msg, Offset: -1}
}

// Parse parses one frame under the contract.
func (c *Codec) Parse(frame []byte) (*Message, error) {
	end := len(frame)
	for end > 0 && (frame[end-1] == '\r' || frame[end-1] == '\n' || frame[end-1] == 0) {
		end--
	}
	b := frame[:end]
	if len(b) == 0 {
		return nil, &values.Error{Code: values.CodeEmpty, Msg: "empty syslog frame", Offset: -1}
	}
	if !utf8.Valid(b) {
		return nil, &values.Error{Code: values.CodeInvalidUTF8, Msg: "syslog frame is not valid UTF-8", Offset: -1}
	}
	pri, rest, ok := parsePRI(b)
	if !ok {
		m := &Message{Facility: 1, Severity: 5}
		c.parse3164(m, b)
		return m, nil
	}
	m := &Message{Facility: uint8(pri / 8), Severity: uint8(pri % 8)}
	// RFC 5424 when a 1–3 digit version and a space follow
	n := 0
	for n < len(rest) && n < 4 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n >= 1 && n <= 3 && n < len(rest) && rest[n] == ' ' {
		if string(rest[:n]) != "1" {
			return nil, fail("unsupported RFC 5424 VERSION: expected 1")
		}
		if err := parse5424(m, rest[n+1:]); err != nil {
			return nil, err
		}
		return m, nil
	}
	c.parse3164(m, rest)
	return m, nil
}

// parsePRI reads <digits>: 1–3 digits, no leading zero unless 0, ≤ 191.
func parsePRI(b []byte) (int, []byte, bool) {
	if len(b) < 3 || b[0] != '<' {
		return 0, nil, false
	}
	i := 1
	v := 0
	for i < len(b) && i <= 4 && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int(b[i]-'0')
		i++
	}
	digits := i - 1
	if digits < 1 || digits > 3 || i >= len(b) || b[i] != '>' || (digits > 1 && b[1] == '0') || v > 191 {
		return 0, nil, false
	}
	return v, b[i+1:], true
}

func printable(s []byte, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for _, c := range s {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

// token splits b at the first space; ok is false when there is no space.
func token(b []byte) (tok, rest []byte, ok bool) {
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func header(b []byte, max int, what string) (*string, []byte, error) {
	tok, rest, ok := token(b)
	if !ok {
		return nil, nil, fail("RFC 5424 header ends early: expected " + what + " followed by a space")
	}
	if string(tok) == "-" {
		return nil, rest, nil
	}
	if !printable(tok, max) {
		return nil, nil, fail(what + " must be 1–" + strconv.Itoa(max) + " printable US-ASCII characters")
	}
	s := string(tok)
	return &s, rest, nil
}

var bom = []byte{0xEF, 0xBB, 0xBF}

func parse5424(m *Message, b []byte) error {
	tok, rest, ok := token(b)
	if !ok {
		return fail("RFC 5424 header ends early: expected TIMESTAMP followed by a space")
	}
	if string(tok) != "-" {
		ns, code := values.ParseRFC3339(tok, 6)
		if code == values.CodeOutOfRange {
			return fail("TIMESTAMP is outside the nanosecond datetime range")
		}
		if code != "" {
			return fail("TIMESTAMP must be YYYY-MM-DDTHH:MM:SS[.1–6 digits](Z|±HH:MM)")
		}
		m.Timestamp = &ns
	}
	var err error
	if m.Hostname, rest, err = header(rest, maxHostname, "HOSTNAME"); err != nil {
		return err
	}
	if m.AppName, rest, err = header(rest, maxAppName, "APP-NAME"); err != nil {
		return err
	}
	if m.ProcID, rest, err = header(rest, maxProcID, "PROCID"); err != nil {
		return err
	}
	if m.MsgID, rest, err = header(rest, maxMsgID, "MSGID"); err != nil {
		return err
	}
	var sdEnd int
	if len(rest) > 0 && rest[0] == '-' {
		sdEnd = 1
	} else {
		n, err := scanSD(rest, false)
		if err != nil {
			return err
		}
		sd := string(rest[:n])
		m.StructuredData = &sd
		sdEnd = n
	}
	rest = rest[sdEnd:]
	if len(rest) > 0 {
		if rest[0] != ' ' {
			return fail("STRUCTURED-DATA must be followed by a space or the end of the frame")
		}
		rest = rest[1:]
	}
	m.Message = string(bytes.TrimPrefix(rest, bom))
	return nil
}

func sdName(b []byte, i int) (int, bool) {
	start := i
	for i < len(b) {
		c := b[i]
		if c < '!' || c > '~' || c == '=' || c == ']' || c == '"' {
			break
		}
		i++
	}
	n := i - start
	return i, n >= 1 && n <= maxName
}

// scanSD validates one or more SD-ELEMENTs at the start of b and returns
// their length. strict refuses backslashes other than the three escapes
// (encoding); decoding tolerates them as literal characters.
func scanSD(b []byte, strict bool) (int, error) {
	i := 0
	ids := map[string]bool{}
	for i < len(b) && b[i] == '[' {
		i++
		j, ok := sdName(b, i)
		if !ok {
			return 0, fail("SD-ID must be 1–32 printable US-ASCII characters other than = ] \" and space")
		}
		id := string(b[i:j])
		if ids[id] {
			return 0, fail("STRUCTURED-DATA repeats an SD-ID")
		}
		ids[id] = true
		i = j
		params := map[string]bool{}
		for i < len(b) && b[i] == ' ' {
			i++
			j, ok := sdName(b, i)
			if !ok {
				return 0, fail("PARAM-NAME must be 1–32 printable US-ASCII characters other than = ] \" and space")
			}
			name := string(b[i:j])
			if params[name] {
				return 0, fail("an SD-ELEMENT repeats a PARAM-NAME")
			}
			params[name] = true
			i = j
			if i+1 >= len(b) || b[i] != '=' || b[i+1] != '"' {
				return 0, fail(`PARAM-NAME must be followed by ="`)
			}
			i += 2
			closed := false
			for i < len(b) {
				c := b[i]
				if c == '\\' && i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\\' || b[i+1] == ']') {
					i += 2
					continue
				}
				if c == '\\' && strict {
					return 0, fail(`PARAM-VALUE may escape only \" \\ and \]`)
				}
				if c == ']' {
					return 0, fail(`PARAM-VALUE holds an unescaped ]`)
				}
				if c == '"' {
					closed = true
					i++
					break
				}
				i++
			}
			if !closed {
				return 0, fail("PARAM-VALUE is not closed by a quote")
			}
		}
		if i >= len(b) || b[i] != ']' {
			return 0, fail("SD-ELEMENT is not closed by ]")
		}
		i++
	}
	if i == 0 {
		return 0, fail("STRUCTURED-DATA must be - or one or more [SD-ID …] elements")
	}
	return i, nil
}

var months = map[string]int{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6, "Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}

func (c *Codec) year() int {
	if c.Now != nil {
		return c.Now().UTC().Year()
	}
	return time.Now().UTC().Year()
}

// ts3164 reads "Mmm dd hh:mm:ss" (day padded with a space or a zero).
func (c *Codec) ts3164(b []byte) (int64, bool) {
	if len(b) < 15 || b[3] != ' ' || b[6] != ' ' || b[9] != ':' || b[12] != ':' {
		return 0, false
	}
	mon, ok := months[string(b[:3])]
	if !ok {
		return 0, false
	}
	d1 := b[4]
	if d1 == ' ' {
		d1 = '0'
	}
	num := func(x, y byte) (int, bool) {
		if x < '0' || x > '9' || y < '0' || y > '9' {
			return 0, false
		}
		return int(x-'0')*10 + int(y-'0'), true
	}
	day, ok1 := num(d1, b[5])
	hh, ok2 := num(b[7], b[8])
	mm, ok3 := num(b[10], b[11])
	ss, ok4 := num(b[13], b[14])
	if !(ok1 && ok2 && ok3 && ok4) {
		return 0, false
	}
	text := []byte(strconv.Itoa(c.year()))
	for len(text) < 4 {
		text = append([]byte{'0'}, text...)
	}
	text = append(text, '-', byte('0'+mon/10), byte('0'+mon%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hh/10), byte('0'+hh%10), ':', byte('0'+mm/10), byte('0'+mm%10), ':', byte('0'+ss/10), byte('0'+ss%10), 'Z')
	ns, code := values.ParseRFC3339(text, 9)
	return ns, code == ""
}

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// parse3164 applies the RFC 3164 heuristics of the contract; it never
// fails: what it cannot read is message text.
func (c *Codec) parse3164(m *Message, b []byte) {
	ns, ok := c.ts3164(b)
	if !ok || (len(b) > 15 && b[15] != ' ') {
		m.Message = string(b)
		return
	}
	rest := b[min(16, len(b)):]
	tok, after, _ := token(rest)
	if !printable(tok, maxHostname) {
		m.Message = string(b)
		return
	}
	m.Timestamp = &ns
	host := string(tok)
	m.Hostname = &host
	rest = after
	// TAG: leading alphanumerics, optional [pid] (skipped), then ":" [SP] or SP
	i := 0
	for i < len(rest) && isAlnum(rest[i]) {
		i++
	}
	if i >= 1 && i <= maxName {
		j := i
		if j < len(rest) && rest[j] == '[' {
			k := bytes.IndexByte(rest[j:], ']')
			if k > 0 {
				j += k + 1
			}
		}
		switch {
		case j < len(rest) && rest[j] == ':':
			j++
			if j < len(rest) && rest[j] == ' ' {
				j++
			}
		case j < len(rest) && rest[j] == ' ':
			j++
		default:
			j = -1
		}
		if j >= 0 {
			tag := string(rest[:i])
			m.AppName = &tag
			rest = rest[j:]
		}
	}
	m.Message = string(rest)
}

// Decode parses one frame into one row of b; fields the schema leaves out
// are dropped.
func (c *Codec) Decode(payload []byte, b *rows.Builder) (int, error) {
	m, err := c.Parse(payload)
	if err != nil {
		return 0, err
	}
	b.BeginRow()
	idx := c.plan.Index
	if i := idx[bind.SyslogFacility]; i >= 0 {
		b.Col(i).U8.Append(m.Facility)
	}
	if i := idx[bind.SyslogSeverity]; i >= 0 {
		b.Col(i).U8.Append(m.Severity)
	}
	if i := idx[bind.SyslogTimestamp]; i >= 0 {
		if m.Timestamp == nil {
			b.Col(i).TS.AppendNull()
		} else {
			b.Col(i).TS.Append(arrow.Timestamp(*m.Timestamp))
		}
	}
	for _, f := range []struct {
		id int
		v  *string
	}{{bind.SyslogHostname, m.Hostname}, {bind.SyslogAppName, m.AppName}, {bind.SyslogProcID, m.ProcID}, {bind.SyslogMsgID, m.MsgID}, {bind.SyslogStructuredData, m.StructuredData}} {
		if i := idx[f.id]; i >= 0 {
			if f.v == nil {
				b.Col(i).Str.AppendNull()
			} else {
				b.Col(i).Str.Append(*f.v)
			}
		}
	}
	if i := idx[bind.SyslogMessage]; i >= 0 {
		b.Col(i).Str.Append(m.Message)
	}
	if err := b.Commit(); err != nil {
		return 0, err
	}
	return 1, nil
}
