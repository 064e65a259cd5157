package notification

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

const benchYAML = `
application: {host: 127.0.0.1, port: 0, base_url: "http://localhost"}
notification_backend: {kind: in_memory}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, expver, domain, date, time, stream, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd, ea], required: true}
      expver: {type: ExpverHandler, required: false}
      domain: {type: EnumHandler, values: [g, m], required: false}
      date: {type: DateHandler, canonical_format: "%Y%m%d", required: false}
      time: {type: TimeHandler, required: false}
      stream: {type: StringHandler, required: false}
      step: {type: IntHandler, range: [0, 1000], required: false}
`

const benchBody = `{"event_type":"mars","identifier":{"class":"od","expver":"1","domain":"g","date":"2025-07-06","time":"12","stream":"enfo","step":12},"payload":{"path":"/data/od/enfo/20250706/12/step12.grib","size":123456}}`

// BenchmarkNotifyPipeline measures notify request handling without the
// network: parse, validate and canonicalise, build the subject, render
// the CloudEvent. "naive" is the straightforward version: decode into
// map[string]any, validate with the same rules by hand, fmt the subject,
// json.Marshal a CloudEvent map.
func BenchmarkNotifyPipeline(b *testing.B) {
	r := mustRegistry(b, benchYAML)
	body := []byte(benchBody)
	at := time.Date(2025, 7, 6, 12, 0, 0, 123456789, time.UTC)
	b.Run("herald", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			req, err := ParseRequest(body)
			if err != nil {
				b.Fatal(err)
			}
			s, err := r.Lookup(req.EventType)
			if err != nil {
				b.Fatal(err)
			}
			n, err := s.Notify(req.Identifier, req.Payload)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.CloudEvent(n, uint64(i+1), at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("naive", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for i := 0; i < b.N; i++ {
			if _, err := naiveNotify(body, uint64(i+1), at); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func naiveNotify(body []byte, seq uint64, at time.Time) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	et, _ := req["event_type"].(string)
	ident, _ := req["identifier"].(map[string]any)
	text := func(k string) string {
		switch v := ident[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	class := strings.ToLower(text("class"))
	if class != "od" && class != "rd" && class != "ea" {
		return nil, fmt.Errorf("class")
	}
	expver := text("expver")
	if n, err := strconv.ParseUint(expver, 10, 32); err == nil {
		expver = fmt.Sprintf("%04d", n)
	}
	d, err := time.Parse("2006-01-02", text("date"))
	if err != nil {
		return nil, err
	}
	hh, err := strconv.Atoi(text("time"))
	if err != nil {
		return nil, err
	}
	step, err := strconv.Atoi(text("step"))
	if err != nil || step < 0 || step > 1000 {
		return nil, fmt.Errorf("step")
	}
	values := []string{class, expver, strings.ToLower(text("domain")), d.Format("20060102"), fmt.Sprintf("%02d00", hh), text("stream"), strconv.Itoa(step)}
	for i, v := range values {
		v = strings.ReplaceAll(v, "%", "%25")
		v = strings.ReplaceAll(v, ".", "%2E")
		v = strings.ReplaceAll(v, "*", "%2A")
		values[i] = strings.ReplaceAll(v, ">", "%3E")
	}
	subject := "mars." + strings.Join(values, ".")
	keys := []string{"class", "expver", "domain", "date", "time", "stream", "step"}
	out := map[string]any{}
	for i, tok := range strings.Split(subject, ".")[1:] {
		out[keys[i]] = tok
	}
	ce := map[string]any{
		"specversion": "1.0", "id": fmt.Sprintf("%s@%d", et, seq), "type": "int.ecmwf.aviso." + et,
		"source": "http://localhost", "datacontenttype": "application/json",
		"dataschema": "http://localhost/schema/" + et, "time": at.Format(time.RFC3339Nano),
		"data": map[string]any{"identifier": out, "payload": req["payload"]},
	}
	return json.Marshal(ce)
}
