package cli

import (
	"os"
	"strings"
	"testing"
)

const (
	jaqDefs  = "../../configs/codecs/jaq.nspl"
	protoRes = "proto_bundle=../../configs/codecs/proto"
)

// TestJaqExamples runs every JAQ-native and protobuf codec of the chapter
// (configs/codecs/jaq.nspl) through `herald codec`: check, the sample
// payloads, and every batch container read back through the same codec.
func TestJaqExamples(t *testing.T) {
	code, out, errOut := run("", "check", "--resource", protoRes, jaqDefs)
	if code != 0 {
		t.Fatalf("check: %s", errOut)
	}
	if want := golden(t, "testdata/jaq.show", out); out != want {
		t.Errorf("check output differs from testdata/jaq.show:\n%s", out)
	}
	code, _, errOut = run("", "check", jaqDefs)
	if want := "../../configs/codecs/jaq.nspl:43:18: codec notification_proto: resource proto_bundle does not exist (declare it in the config file, or pass --resource proto_bundle=DIR)\n"; code != 1 || errOut != want {
		t.Errorf("check without the resource: exit %d\n%s", code, errOut)
	}

	decodes := []struct{ codec, file, want string }{
		{"notification_cbor", "notification.cbor", `{"user_id":42,"payload":"forecast step 12 for region europe is ready","action":"publish"}` + "\n"},
		{"notification_xml", "notification.xml", `{"user_id":42,"payload":null,"action":null}` + "\n"},
		{"notification_codec", "notification.json", `{"user_id":42,"payload":"forecast step 12 for region europe is ready","action":null}` + "\n" + `{"user_id":7,"payload":null,"action":null}` + "\n"},
		{"order_lines_codec", "order-lines.json", `{"sku":"a-1","quantity":2,"price":9.5}` + "\n" + `{"sku":"c-3","quantity":1,"price":null}` + "\n" + `{"sku":"d-4","quantity":5,"price":0.1}` + "\n"},
	}
	for _, d := range decodes {
		code, out, errOut := run("", "decode", "--resource", protoRes, "--defs", jaqDefs, "--codec", d.codec, payloads+d.file)
		if code != 0 || out != d.want {
			t.Errorf("decode %s %s: exit %d\n%s\nwant:\n%s%s", d.codec, d.file, code, out, d.want, errOut)
		}
	}

	rows, err := os.ReadFile(payloads + "notification.rows")
	if err != nil {
		t.Fatal(err)
	}
	noPayload := strings.NewReplacer(`"payload":"forecast step 12 for region europe is ready"`, `"payload":null`,
		`"payload":"<b>&amp;</b> \"quoted\" é😀"`, `"payload":null`).Replace(string(rows))
	trips := []struct{ enc, dec, want string }{
		{"notification_json", "notification_json", string(rows)},
		{"notification_yaml", "notification_yaml", string(rows)},
		{"notification_toml", "notification_toml", string(rows)},
		{"notification_xml_elements", "notification_xml_elements", string(rows)},
		{"notification_cbor_items", "notification_cbor_items", string(rows)},
		{"notification_proto", "notification_proto_batch", noPayload},
	}
	for _, tr := range trips {
		code, batch, errOut := run(string(rows), "encode", "--batch", "--resource", protoRes, "--defs", jaqDefs, "--codec", tr.enc)
		if code != 0 {
			t.Fatalf("encode --batch %s: %s", tr.enc, errOut)
		}
		code, out, errOut := run(batch, "decode", "--resource", protoRes, "--defs", jaqDefs, "--codec", tr.dec)
		if code != 0 || out != tr.want {
			t.Errorf("%s batch read back by %s: exit %d\n%s\nwant:\n%s%s", tr.enc, tr.dec, code, out, tr.want, errOut)
		}
	}

	code, out, _ = run(string(rows), "encode", "--batch", "--resource", protoRes, "--defs", jaqDefs, "--codec", "notification_envelope")
	if want := `{"schema_version": 2, "count": 3, "records": [{"id": 42, "action": "publish"}, {"id": 0, "action": "retract"}, {"id": 4294967295, "action": null}]}` + "\n"; code != 0 || out != want {
		t.Errorf("notification_envelope batch:\n%s", out)
	}
	code, out, _ = run(string(rows), "encode", "--resource", protoRes, "--defs", jaqDefs, "--codec", "notification_codec")
	if want := `{"payload": {"user_id": 42, "payload": "forecast step 12 for region europe is ready", "action": "publish"}}` + "\n" +
		`{"payload": {"user_id": 0, "action": "retract"}}` + "\n" + `{"payload": {"user_id": 4294967295, "payload": "<b>&amp;</b> \"quoted\" é😀"}}` + "\n"; code != 0 || out != want {
		t.Errorf("notification_codec encode:\n%s", out)
	}
	errCases := []struct {
		args []string
		err  string
	}{
		{[]string{"decode", "--resource", protoRes, "--defs", jaqDefs, "--codec", "notification_envelope"}, "error[ERROR]: codec notification_envelope declares no ON INGESTION transformation, so it cannot decode\n"},
		{[]string{"encode", "--resource", protoRes, "--defs", jaqDefs, "--codec", "order_lines_codec"}, "error[ERROR]: codec order_lines_codec declares no ON EMITTING transformation, so it cannot encode\n"},
		{[]string{"decode", "--resource", protoRes, "--defs", jaqDefs, "--codec", "order_lines_codec", payloads + "notification.json"}, "error[PROGRAM_ERROR]: codec order_lines_codec: ON INGESTION, input value 0: program evaluation failed (the evaluator's message is logged at trace level)\n"},
		{[]string{"decode", "--resource", protoRes, "--defs", jaqDefs, "--codec", "notification_codec", payloads + "order-lines.json"}, "error[EXPECTED_OBJECT]: codec notification_codec: ON INGESTION, input value 0, output 0: output is null, expected an object\n"},
		{[]string{"check", "--resource", "x", jaqDefs}, "invalid value \"x\" for flag -resource: --resource \"x\": expected NAME=DIR or NAME@VERSION=DIR\n"},
	}
	for _, ec := range errCases {
		code, _, errOut := run("", ec.args...)
		if code == 0 || !strings.Contains(errOut, ec.err) {
			t.Errorf("%v: exit %d\n%s\nwant:\n%s", ec.args, code, errOut, ec.err)
		}
	}
}
