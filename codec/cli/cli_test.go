package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files and the binary sample payloads")

const (
	examples = "../../configs/codecs/examples.nspl"
	payloads = "../../configs/codecs/payloads/"
)

func run(stdin string, args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

func golden(t *testing.T, path, got string) string {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// showAnswer is an answer of GET /api/v1/schema/{event_type} with two
// payload schema versions.
const showAnswer = `{"event_type":"r","payload_schema_versions":[
{"fingerprint":"7b403105f0976b36","codec":"reading_json","schema":"CREATE SCHEMA reading (\n  station STRING\n);","first_seq":1,"last_seq":3,"current":false},
{"fingerprint":"84f7da96448112e9","codec":"reading_json","schema":"CREATE SCHEMA reading (\n  station STRING,\n  step I32\n);","first_seq":null,"last_seq":null,"current":true}]}`

func TestMain(t *testing.T) {
	readingRow := `{"sensor":"t-01","at":"2026-09-24T08:15:00.123456789Z","value":21.5,"samples":[0.1,0.2,7.038531e-26],"tags":["lab","north"],"raw":"AAEC/w==","secret":"***"}` + "\n"
	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		out, err   string
		goldenFile string // compare stdout to this file instead of out
	}{
		{name: "help", args: []string{"--help"}, out: Usage},
		{name: "no args", args: nil, code: 2, err: Usage},
		{name: "unknown", args: []string{"frob"}, code: 2, err: "herald codec: unknown command \"frob\" (expected check, decode, encode, fingerprint, diff or show; see --help)\n"},
		// show reads the schema endpoint's answer and lists the registry
		// of past payload schemas, or prints one version by fingerprint.
		{name: "show versions", stdin: showAnswer, args: []string{"show", "--versions"},
			out: "7b403105f0976b36 codec=reading_json records 1..3\n84f7da96448112e9 codec=reading_json no records current\n"},
		{name: "show id", stdin: showAnswer, args: []string{"show", "--id", "7b403105f0976b36"}, out: "CREATE SCHEMA reading (\n  station STRING\n);\n"},
		{name: "show unknown id", stdin: showAnswer, args: []string{"show", "--id", "ffff"}, code: 1,
			err: "herald codec: event type 'r' has no payload schema version ffff (its versions: 7b403105f0976b36, 84f7da96448112e9)\n"},
		{name: "show opaque", stdin: `{"event_type":"plain","schema":{}}`, args: []string{"show", "--versions"}, code: 1,
			err: "herald codec: standard input lists no payload_schema_versions: event type 'plain' has no typed payload\n"},
		{name: "show usage", args: []string{"show"}, code: 2,
			err: "herald codec: show needs exactly one of --versions and --id FINGERPRINT, and at most one FILE (see --help)\n"},
		{name: "check examples", args: []string{"check", examples}, goldenFile: "testdata/examples.show"},
		{name: "check refused", args: []string{"check", "../../configs/codecs/refused.nspl"}, code: 1,
			err: "../../configs/codecs/refused.nspl:17:1: codec notification_codec cannot bind field created_at (wire string, internal DATETIME): a string wire field binds DATETIME only with ENCODE created_at AS RFC3339\n"},
		{name: "check bad", args: []string{"check", "testdata/bad.nspl"}, code: 1, err: "testdata/bad.nspl:3:3: DROP FIELD b: schema s has no field b\n"},
		{name: "check verdicts", args: []string{"check", "--verdicts", "testdata/alter.nspl"}, goldenFile: "testdata/alter.out"},
		{name: "check usage", args: []string{"check"}, code: 2, err: "herald codec: check takes exactly one definitions file (see --help)\n"},
		{name: "decode json", args: []string{"decode", "--defs", examples, "--codec", "reading_json", payloads + "reading.json"}, out: readingRow},
		{name: "decode stdin", stdin: `{"sensor":"x","at":"2026-01-01T00:00:00Z","value":1e300,"samples":[1]}`, args: []string{"decode", "--defs", examples, "--codec", "reading_json"},
			out: `{"sensor":"x","at":"2026-01-01T00:00:00Z","value":1e+300,"samples":[1],"tags":null,"raw":null,"secret":null}` + "\n"},
		{name: "decode out of range", stdin: `{"sensor":"x","at":"2026-01-01T00:00:00Z","value":1e400,"samples":[1]}`, args: []string{"decode", "--defs", examples, "--codec", "reading_json"}, code: 1,
			err: "error[OUT_OF_RANGE]: field value: number is outside the range of F64 (largest magnitude 1.7976931348623157e+308) (at byte 55)\n"},
		{name: "decode reveal", args: []string{"decode", "--reveal", "--defs", examples, "--codec", "reading_json", payloads + "reading.json"},
			out: strings.Replace(readingRow, `"***"`, `"s3cr3t"`, 1)},
		{name: "decode cbor", args: []string{"decode", payloads + "reading.cbor", "--defs", examples, "--codec", "reading_cbor"},
			out: readingRow + ""},
		{name: "decode avro", args: []string{"decode", "--defs", examples, "--codec", "reading_avro", payloads + "reading.avro"}, out: readingRow},
		{name: "decode strict error", args: []string{"decode", "--defs", examples, "--codec", "reading_json", payloads + "reading-strict-error.json"}, code: 1,
			err: "error[UNEXPECTED_FIELD]: field extra: field is not declared by the STRICT wire schema (at byte 76)\n"},
		{name: "decode syntax error", stdin: `{"sensor":"secret-value`, args: []string{"decode", "--defs", examples, "--codec", "reading_json"}, code: 1,
			err: "error[SYNTAX]: field sensor: malformed JSON: unexpected end of payload, expected the end of a string (at byte 23)\n"},
		{name: "decode syslog 5424", args: []string{"decode", "--defs", examples, "--codec", "syslog_codec", payloads + "syslog-5424.log"},
			out: `{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:00Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"order accepted"}` + "\n"},
		{name: "decode syslog batch frame", args: []string{"decode", "--defs", examples, "--codec", "syslog_codec", payloads + "syslog-batch.log"},
			out: `{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:00Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"[\"<134>1 2026-09-24T10:15:00Z app-01 checkout - - - order accepted\",\"<134>1 2026-09-24T10:15:01Z app-01 checkout - - - order shipped\"]"}` + "\n"},
		{name: "decode unknown codec", args: []string{"decode", "--defs", examples, "--codec", "nope"}, code: 1, err: "herald codec: codec nope does not exist\n"},
		{name: "decode usage", args: []string{"decode", "--codec", "x"}, code: 2, err: "herald codec: decode needs --defs and --codec (see --help)\n"},
		{name: "encode json", args: []string{"encode", "--defs", examples, "--codec", "reading_json", payloads + "reading.rows"},
			out: `{"sensor":"t-01","at":"2026-09-24T08:15:00.123456789Z","value":21.5,"samples":[0.1,0.2,7.038531e-26],"tags":["lab","north"],"raw":"AAEC/w==","secret":"s3cr3t"}` + "\n" +
				`{"sensor":"t-02","at":"2026-09-24T08:16:00Z","value":null,"samples":[]}` + "\n"},
		{name: "encode json batch", args: []string{"encode", "--batch", "--defs", examples, "--codec", "reading_json", payloads + "reading.rows"},
			out: `[{"sensor":"t-01","at":"2026-09-24T08:15:00.123456789Z","value":21.5,"samples":[0.1,0.2,7.038531e-26],"tags":["lab","north"],"raw":"AAEC/w==","secret":"s3cr3t"},{"sensor":"t-02","at":"2026-09-24T08:16:00Z","value":null,"samples":[]}]` + "\n"},
		{name: "encode syslog batch", stdin: `{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:00Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"order accepted"}
{"facility":16,"severity":6,"timestamp":"2026-09-24T10:15:01Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"order shipped"}
{"facility":16,"severity":3,"timestamp":"2026-09-24T10:15:02Z","hostname":"app-01","app_name":"checkout","proc_id":null,"msg_id":null,"structured_data":null,"message":"payment failed"}
`, args: []string{"encode", "--batch", "--defs", examples, "--codec", "syslog_codec"},
			out: `<134>1 2026-09-24T10:15:00Z app-01 checkout - - - ["<134>1 2026-09-24T10:15:00Z app-01 checkout - - - order accepted","<134>1 2026-09-24T10:15:01Z app-01 checkout - - - order shipped"]` + "\n" +
				`<131>1 2026-09-24T10:15:02Z app-01 checkout - - - ["<131>1 2026-09-24T10:15:02Z app-01 checkout - - - payment failed"]` + "\n"},
		{name: "encode bad row", stdin: "\n" + `{"sensor":"x","at":"2026-01-01T00:00:00Z","value":1,"samples":[],"oops":1}`, args: []string{"encode", "--defs", examples, "--codec", "reading_json"}, code: 1,
			err: "error[UNEXPECTED_FIELD]: line 2: field oops: field is not declared by the STRICT wire schema (at byte 72)\n"},
		{name: "encode required null", stdin: `{"sensor":"x","at":"2026-01-01T00:00:00Z","value":1,"samples":[]}` + "\n", args: []string{"encode", "--defs", examples, "--codec", "notification_avro"}, code: 1,
			err: "error[UNEXPECTED_FIELD]: line 1: field sensor: field is not declared by the STRICT wire schema (at byte 10)\n"},
		{name: "fingerprint", args: []string{"fingerprint", "--defs", "testdata/old.nspl", "reading_wire"},
			out: "WIRE JSON SCHEMA reading_wire sha256/64=da889e392f8e5cad fnv1a32=32bcfaa4\nWIRE AVRO SCHEMA reading_wire sha256/64=921c369b96eb9325 fnv1a32=6f417177\n"},
		{name: "fingerprint codec", args: []string{"fingerprint", "--defs", "testdata/old.nspl", "r"},
			out: "CODEC r sha256/64=5962fb30fe848047 fnv1a32=1a2d39f8\n"},
		{name: "fingerprint missing", args: []string{"fingerprint", "--defs", "testdata/old.nspl", "nope"}, code: 1, err: "herald codec: testdata/old.nspl defines no entity named nope\n"},
		{name: "diff", args: []string{"diff", "testdata/old.nspl", "testdata/new.nspl"}, code: 1, goldenFile: "testdata/diff.out"},
		// "A position is forever. … Never insert, reorder or delete.":
		// swapping two same-typed fields breaks AVRO (the wire schema, and
		// the internal schema through it), not JSON or CBOR
		{name: "diff reorder", args: []string{"diff", "testdata/reorder-old.nspl", "testdata/reorder-new.nspl"}, code: 1, goldenFile: "testdata/reorder.out"},
		{name: "diff same", args: []string{"diff", "testdata/old.nspl", "testdata/old.nspl"}, code: 0,
			out: "SCHEMA reading: unchanged (0ee57df13f790cad)\nWIRE JSON SCHEMA reading_wire: unchanged (da889e392f8e5cad)\nWIRE AVRO SCHEMA reading_wire: unchanged (921c369b96eb9325)\nCODEC r: unchanged (5962fb30fe848047)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(tt.stdin, tt.args...)
			want := tt.out
			if tt.goldenFile != "" {
				want = golden(t, tt.goldenFile, out)
			}
			if code != tt.code || out != want || errOut != tt.err {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", code, tt.code, out, want, errOut, tt.err)
			}
		})
	}
}

// TestSamplePayloads checks that the binary sample payloads are exactly
// what encode writes for reading.rows' first row (and rewrites them with
// -update).
func TestSamplePayloads(t *testing.T) {
	rows, err := os.ReadFile(filepath.Join(payloads, "reading.rows"))
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitAfter(string(rows), "\n")[0]
	for _, c := range []struct{ codec, file string }{{"reading_cbor", "reading.cbor"}, {"reading_avro", "reading.avro"}} {
		code, out, errOut := run(first, "encode", "--defs", examples, "--codec", c.codec)
		if code != 0 {
			t.Fatalf("%s: %s", c.codec, errOut)
		}
		if got := golden(t, filepath.Join(payloads, c.file), out); got != out {
			t.Errorf("%s differs from what encode writes", c.file)
		}
	}
}

// TestNonFiniteRoundTrip: the row view reads back everything it writes.
// "NaN", "Infinity", "-Infinity" and -0 in scalars, in ARRAY and VEC
// elements and nested (a 2×2 ARRAY, a VEC of ARRAYs), F64 and F32, go
// through encode (row view to AVRO, which keeps every float bit) and back
// through decode unchanged; so does each value on its own in every
// position.
func TestNonFiniteRoundTrip(t *testing.T) {
	const defs = "testdata/nonfinite.nspl"
	roundTrip := func(line string) {
		t.Helper()
		code, wire, errOut := run(line+"\n", "encode", "--defs", defs, "--codec", "nf_avro")
		if code != 0 || errOut != "" {
			t.Fatalf("encode %s: exit %d: %s", line, code, errOut)
		}
		code, out, errOut := run(wire, "decode", "--defs", defs, "--codec", "nf_avro")
		if code != 0 || errOut != "" || out != line+"\n" {
			t.Fatalf("decode of %s: exit %d %s\n got %s", line, code, errOut, out)
		}
	}
	roundTrip(`{"f64":"-Infinity","f32":"NaN","a":["NaN","Infinity","-Infinity",-0],"m":[["-Infinity",-0],["NaN","Infinity"]],"v":["-Infinity","NaN",-0,"Infinity"],"va":[["NaN","-Infinity"],[-0,"Infinity"]],"o":-0}`)
	for _, v := range []string{`"NaN"`, `"Infinity"`, `"-Infinity"`, `-0`} {
		roundTrip(`{"f64":` + v + `,"f32":` + v + `,"a":[` + v + `,1,` + v + `,2],"m":[[1,` + v + `],[` + v + `,2]],"v":[` + v + `],"va":[[` + v + `,` + v + `]],"o":` + v + `}`)
	}
}
