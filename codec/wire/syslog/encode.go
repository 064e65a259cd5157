package syslog

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herald-gateway/herald/codec/bind"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/codec/values"
)

// EncodeError returns why a plan cannot encode (the schema lacks
// facility, severity or message), or nil.
func EncodeError(p *bind.Plan) error {
	if len(p.Syslog.EncodeMissing) == 0 {
		return nil
	}
	return values.Errorf(values.CodeUnencodable, "", "a SYSLOG codec encodes only when its schema declares facility, severity and message; missing: "+strings.Join(p.Syslog.EncodeMissing, ", "))
}

// frame is the encoded header parts of one row.
type frame struct {
	pri    int
	ts     []byte // "-" or the timestamp
	header [5][]byte
	msg    []byte
}

func (c *Codec) str(rec arrow.RecordBatch, id, row int) (string, bool) {
	i := c.plan.Index[id]
	if i < 0 {
		return "", false
	}
	col := rec.Column(i).(*array.String)
	if col.IsNull(row) {
		return "", false
	}
	return col.Value(row), true
}

var headerIDs = [4]int{bind.SyslogHostname, bind.SyslogAppName, bind.SyslogProcID, bind.SyslogMsgID}
var headerNames = [4]string{"hostname", "app_name", "proc_id", "msg_id"}
var headerMax = [4]int{maxHostname, maxAppName, maxProcID, maxMsgID}

func (c *Codec) frame(rec arrow.RecordBatch, row int) (*frame, error) {
	if len(c.plan.EncodeMissing) > 0 {
		return nil, values.Errorf(values.CodeUnencodable, "", "schema lacks "+strings.Join(c.plan.EncodeMissing, ", "))
	}
	u8 := func(id int) (uint8, bool) {
		col := rec.Column(c.plan.Index[id]).(*array.Uint8)
		if col.IsNull(row) {
			return 0, false
		}
		return col.Value(row), true
	}
	fac, ok1 := u8(bind.SyslogFacility)
	sev, ok2 := u8(bind.SyslogSeverity)
	if !ok1 || !ok2 {
		return nil, values.Errorf(values.CodeRequiredNull, "facility", "facility and severity are required to encode")
	}
	if fac > 23 {
		return nil, values.Errorf(values.CodeUnencodable, "facility", "facility must be 0…23")
	}
	if sev > 7 {
		return nil, values.Errorf(values.CodeUnencodable, "severity", "severity must be 0…7")
	}
	f := &frame{pri: int(fac)*8 + int(sev), ts: []byte{'-'}}
	if i := c.plan.Index[bind.SyslogTimestamp]; i >= 0 {
		col := rec.Column(i).(*array.Timestamp)
		if !col.IsNull(row) {
			f.ts = values.AppendRFC3339(nil, int64(col.Value(row)), 6)
		}
	}
	for k, id := range headerIDs {
		v, ok := c.str(rec, id, row)
		if !ok {
			f.header[k] = []byte{'-'}
			continue
		}
		if v == "-" || !printable([]byte(v), headerMax[k]) {
			return nil, values.Errorf(values.CodeUnencodable, headerNames[k], "must be 1–"+strconv.Itoa(headerMax[k])+" printable US-ASCII characters, and not the null marker -")
		}
		f.header[k] = []byte(v)
	}
	f.header[4] = []byte{'-'}
	if v, ok := c.str(rec, bind.SyslogStructuredData, row); ok {
		n, err := scanSD([]byte(v), true)
		if err != nil || n != len(v) {
			return nil, values.Errorf(values.CodeUnencodable, "structured_data", "must be well-formed SD-ELEMENTs with no trailing text")
		}
		f.header[4] = []byte(v)
	}
	msg, ok := c.str(rec, bind.SyslogMessage, row)
	if !ok {
		return nil, values.Errorf(values.CodeRequiredNull, "message", "null in a required field")
	}
	f.msg = bytes.TrimPrefix([]byte(msg), bom)
	return f, nil
}

func (f *frame) appendHead(dst []byte, ts []byte) []byte {
	dst = append(dst, '<')
	dst = strconv.AppendInt(dst, int64(f.pri), 10)
	dst = append(dst, ">1 "...)
	dst = append(dst, ts...)
	for _, h := range f.header {
		dst = append(dst, ' ')
		dst = append(dst, h...)
	}
	return dst
}

func (f *frame) appendMessage(dst []byte) []byte {
	dst = f.appendHead(dst, f.ts)
	if len(f.msg) > 0 {
		dst = append(dst, ' ')
		dst = append(dst, f.msg...)
	}
	return dst
}

func (f *frame) sameHeader(g *frame) bool {
	if f.pri != g.pri {
		return false
	}
	for i := range f.header {
		if !bytes.Equal(f.header[i], g.header[i]) {
			return false
		}
	}
	return true
}

// AppendRow appends row i as one RFC 5424 message (version 1, no BOM).
func (c *Codec) AppendRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	f, err := c.frame(rec, i)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = f.appendMessage(dst)
	if c.MaxSize > 0 && len(dst)-start > c.MaxSize {
		return dst[:start], values.Errorf(values.CodeTooLarge, "", "encoded frame exceeds the size bound of "+strconv.Itoa(c.MaxSize)+" bytes")
	}
	return dst, nil
}

// AppendBatch appends one batch frame for the longest prefix of rows that
// share PRI, HOSTNAME, APP-NAME, PROCID, MSGID and STRUCTURED-DATA: the
// shared header, the first member's timestamp, and a MSG that is a JSON
// array of the members' complete messages. It returns how many rows the
// frame holds; the caller continues with the rest.
func (c *Codec) AppendBatch(dst []byte, rec arrow.RecordBatch, rowIdx []int) ([]byte, int, error) {
	if len(rowIdx) == 0 {
		return dst, 0, nil
	}
	start := len(dst)
	first, err := c.frame(rec, rowIdx[0])
	if err != nil {
		return dst, 0, err
	}
	dst = first.appendHead(dst, first.ts)
	dst = append(dst, " ["...)
	var member []byte
	n := 0
	for _, i := range rowIdx {
		f := first
		if n > 0 {
			if f, err = c.frame(rec, i); err != nil {
				return dst[:start], 0, err
			}
			if !f.sameHeader(first) {
				break
			}
			dst = append(dst, ',')
		}
		member = f.appendMessage(member[:0])
		dst = jsonstr.AppendBytes(dst, member)
		n++
	}
	dst = append(dst, ']')
	if c.MaxSize > 0 && len(dst)-start > c.MaxSize {
		return dst[:start], 0, values.Errorf(values.CodeTooLarge, "", "encoded frame exceeds the size bound of "+strconv.Itoa(c.MaxSize)+" bytes")
	}
	return dst, n, nil
}
