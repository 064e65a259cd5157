package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/server"
)

const contractConfig = `
application:
  host: 127.0.0.1
  port: 0
notification_backend:
  kind: in_memory
  in_memory:
    max_history_per_topic: 100
watch_endpoint:
  replay_batch_delay_ms: 0
  max_historical_notifications: 4
notification_schema:
  forecast:
    topic:
      base: forecast
      key_order: [region, step]
    identifier:
      region: {type: EnumHandler, values: [europe, asia], required: true}
      step: {type: IntHandler, required: false}
`

// startHerald runs the herald command in-process on a loopback port and
// returns its base URL and a stop function that waits for the exit code.
func startHerald(t *testing.T, config string, env ...string) (string, func() int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	var out, errOut testkit.Buffer
	go func() { done <- run(ctx, []string{"--config", path}, env, &out, &errOut, ready) }()
	select {
	case addr := <-ready:
		stop := func() int {
			cancel()
			select {
			case code := <-done:
				return code
			case <-time.After(40 * time.Second):
				t.Fatalf("herald did not exit within the grace period")
				return -1
			}
		}
		t.Cleanup(func() { cancel() })
		return "http://" + addr.String(), stop
	case code := <-done:
		cancel()
		t.Fatalf("herald exited with %d: %s%s", code, out.String(), errOut.String())
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("herald did not start")
	}
	return "", nil
}

type sseEvent struct {
	name string
	data map[string]any
}

// readEvents parses an event stream into a channel.
func readEvents(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "":
				ch <- ev
				ev = sseEvent{}
			}
		}
	}()
	return ch
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestClientContract plays the aviso Python client against herald run as
// a command: every rule pyaviso 2.4 checks literally.
func TestClientContract(t *testing.T) {
	base, stop := startHerald(t, contractConfig)
	allowedReasons := map[string]bool{"server_shutdown": true, "max_duration_reached": true, "end_of_stream": true}

	for i := 1; i <= 6; i++ {
		resp := post(t, base+"/api/v1/notification", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":"europe","step":%d},"payload":{"i":%d}}`, i, i))
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 200 || body["status"] != "success" || len(body["processed_at"].(string)) != 20 {
			t.Fatalf("notify %d: %d %v", i, resp.StatusCode, body)
		}
	}

	// Replay from a cursor: 200 text/event-stream, replay_started first
	// (within 10 s), ids <event_type>@<u64> dense, the cap event carries
	// max_allowed, closing reason from the allowed set.
	resp := post(t, base+"/api/v1/replay", `{"event_type":"forecast","identifier":{"region":"europe"},"from_id":"2"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("replay: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(resp.Body)
	var seqs []uint64
	var limit, closing map[string]any
	first := true
	timeout := time.After(10 * time.Second)
loop:
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				break loop
			}
			if first {
				if ev.name != "replay-control" || ev.data["type"] != "replay_started" {
					t.Fatalf("opening event %s %v", ev.name, ev.data)
				}
				first = false
			}
			switch ev.name {
			case "replay":
				id := ev.data["id"].(string)
				at := strings.LastIndex(id, "@")
				seq, err := strconv.ParseUint(id[at+1:], 10, 64)
				if at < 0 || id[:at] != "forecast" || err != nil {
					t.Fatalf("id %q does not parse as <event_type>@<u64>", id)
				}
				seqs = append(seqs, seq)
			case "replay-control":
				if ev.data["type"] == "notification_replay_limit_reached" {
					limit = ev.data
				}
			case "connection-closing":
				closing = ev.data
			}
		case <-timeout:
			t.Fatal("replay did not finish within 10 s")
		}
	}
	resp.Body.Close()
	if fmt.Sprint(seqs) != "[2 3 4 5]" {
		t.Fatalf("sequences %v", seqs)
	}
	if limit == nil || limit["max_allowed"] != float64(4) {
		t.Fatalf("limit event %v", limit)
	}
	if closing == nil || !allowedReasons[closing["reason"].(string)] {
		t.Fatalf("closing %v", closing)
	}

	// Resume: from_id is the next sequence wanted (last id + 1).
	resp = post(t, base+"/api/v1/watch", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":"europe"},"from_id":"%d"}`, seqs[len(seqs)-1]+1))
	events = readEvents(resp.Body)
	got := []string{}
	for len(got) < 2 {
		select {
		case ev := <-events:
			switch ev.name {
			case "replay":
				got = append(got, ev.data["id"].(string))
			case "replay-control":
				if ev.data["type"] == "replay_completed" {
					r := post(t, base+"/api/v1/notification", `{"event_type":"forecast","identifier":{"region":"europe","step":7}}`)
					r.Body.Close()
				}
			case "live-notification":
				if ev.data["id"] != nil {
					got = append(got, ev.data["id"].(string))
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("resume watch stalled")
		}
	}
	if strings.Join(got, " ") != "forecast@6 forecast@7" {
		t.Fatalf("resumed %v", got)
	}

	// A live-only watch opens with connection_established; on SIGTERM-like
	// shutdown every open stream ends with server_shutdown and the process
	// exits 0 within the grace period.
	live := post(t, base+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"asia"}}`)
	liveEvents := readEvents(live.Body)
	if ev := <-liveEvents; ev.data["type"] != "connection_established" {
		t.Fatalf("live opening %v", ev)
	}
	code := stop()
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	for _, ch := range []<-chan sseEvent{events, liveEvents} {
		var last sseEvent
		for ev := range ch {
			last = ev
		}
		if last.name != "connection-closing" || last.data["reason"] != "server_shutdown" {
			t.Fatalf("last event on shutdown %v", last)
		}
	}

	// With auth enabled, a 401 carries the WWW-Authenticate challenges
	// (Bearer, and Basic in direct mode) and the JSON error code.
	authConfig := strings.Replace(contractConfig, "notification_schema:",
		"auth: {enabled: true, mode: direct, auth_o_tron_url: 'http://127.0.0.1:9', jwt_secret: s, admin_roles: {ecmwf: [admin]}}\nnotification_schema:", 1) +
		"    auth: {required: true}\n"
	authBase, authStop := startHerald(t, authConfig)
	resp = post(t, authBase+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"europe"}}`)
	var unauthorized map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&unauthorized)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || strings.Join(resp.Header.Values("WWW-Authenticate"), ", ") != "Bearer, Basic" ||
		unauthorized["code"] != "UNAUTHORIZED" || unauthorized["request_id"] != resp.Header.Get("X-Request-ID") {
		t.Fatalf("unauthenticated watch: %d %v %v", resp.StatusCode, resp.Header.Values("WWW-Authenticate"), unauthorized)
	}
	// A 503 from auth-o-tron being unreachable carries Retry-After.
	req, _ := http.NewRequest(http.MethodPost, authBase+"/api/v1/watch", strings.NewReader(`{"event_type":"forecast","identifier":{"region":"europe"}}`))
	req.Header.Set("Authorization", "Bearer abc.def.ghi")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("auth-o-tron unreachable: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code := authStop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	// Over the concurrent-stream limit: 429 with Retry-After.
	limitBase, limitStop := startHerald(t, contractConfig, "HERALD_WATCH_ENDPOINT__MAX_STREAMS_PER_CLIENT=1")
	held := post(t, limitBase+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"europe"}}`)
	if held.StatusCode != 200 {
		t.Fatalf("first stream: %d", held.StatusCode)
	}
	second := post(t, limitBase+"/api/v1/watch", `{"event_type":"forecast","identifier":{"region":"europe"}}`)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" {
		t.Fatalf("second stream: %d Retry-After %q", second.StatusCode, second.Header.Get("Retry-After"))
	}
	held.Body.Close()
	if code := limitStop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"help"}, nil, &out, &errOut, nil); code != 0 || !strings.Contains(out.String(), "herald [serve] [--config FILE]") || !strings.Contains(out.String(), "-config FILE") {
		t.Fatalf("help: %d %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"bogus"}, nil, &out, &errOut, nil); code != 2 || !strings.Contains(errOut.String(), `unknown command "bogus"`) {
		t.Fatalf("bogus: %d %q", code, errOut.String())
	}
	errOut.Reset()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("application:\n  host: 127.0.0.1\n  port: 0\n  bogus: 1\nnotification_backend:\n  kind: in_memory\n"), 0o600)
	if code := run(context.Background(), []string{"--config", bad}, nil, &out, &errOut, nil); code != 1 || !strings.Contains(errOut.String(), "application.bogus") {
		t.Fatalf("bad config: %d %q", code, errOut.String())
	}
}

// TestVersion: --version, -version, `herald version` and `serve
// --version` print the version the startup log shows, exit 0 and start
// nothing; a build stamps it with -ldflags -X main.version, and without
// a stamp it comes from the module's build information.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}, {"serve", "--version"}, {"--config", "/nonexistent", "--version"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, nil, &out, &errOut, nil); code != 0 || out.String() != "herald "+heraldVersion()+"\n" || errOut.Len() != 0 {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	bin := filepath.Join(t.TempDir(), "herald")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=9.8.7-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || string(out) != "herald 9.8.7-test\n" {
		t.Fatalf("stamped build: %q %v", out, err)
	}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{nil, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.4.2"}}, "v1.4.2"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0a5199a0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}, "devel+0a5199a01234-modified"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "devel+abc"},
	} {
		got := versionFromBuild(func() (*debug.BuildInfo, bool) { return tc.bi, tc.bi != nil })
		if got != tc.want {
			t.Errorf("versionFromBuild(%+v) = %q, want %q", tc.bi, got, tc.want)
		}
	}
}

// TestCheckConfigShipped runs check-config on every shipped config as it
// is (no environment: nothing is started, so the JetStream examples need
// no overrides) and on the shipped codec definitions: exit 0, nothing on
// stderr, and exactly the summary line, the event types and the codecs.
func TestCheckConfigShipped(t *testing.T) {
	files, _ := filepath.Glob("configs/examples/*.yaml")
	files = append(files, "configs/config.yaml")
	// Written in a temporary directory: its codec paths are absolute (a
	// relative one would be relative to that directory).
	shippedCodecs, err := filepath.Abs("configs/codecs")
	if err != nil {
		t.Fatal(err)
	}
	codecs := filepath.Join(t.TempDir(), "codecs.yaml")
	if err := os.WriteFile(codecs, []byte("application: {host: 127.0.0.1, port: 0}\nnotification_backend: {kind: in_memory}\n"+
		"codecs:\n  definitions: "+filepath.Join(shippedCodecs, "jaq.nspl")+"\n  resources:\n    - {name: proto_bundle, dir: "+filepath.Join(shippedCodecs, "proto")+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files = append(files, codecs)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := configs.Load(f, nil)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			rt, err := server.NewRuntime(cfg, server.RuntimeOptions{}, nil)
			if err != nil {
				t.Fatalf("runtime: %v", err)
			}
			reg := rt.Registry
			want := fmt.Sprintf("herald: config %s is valid (fingerprint %s)\n", f, server.Fingerprint(cfg))
			for _, name := range reg.Names() {
				want += "event_type " + name + "\n"
			}
			if f == "configs/config.yaml" {
				want += "codec reading_avro AVRO reading\n" +
					"codec reading_cbor CBOR reading\n" +
					"codec reading_json JSON reading\n"
			}
			if f == codecs {
				want += "codec notification_cbor CBOR notification\n" +
					"codec notification_cbor_items CBOR notification\n" +
					"codec notification_codec JSON notification\n" +
					"codec notification_envelope JSON notification\n" +
					"codec notification_json JSON notification\n" +
					"codec notification_proto PROTOBUF notification\n" +
					"codec notification_proto_batch PROTOBUF notification\n" +
					"codec notification_toml TOML notification\n" +
					"codec notification_xml XML notification\n" +
					"codec notification_xml_elements XML notification\n" +
					"codec notification_yaml YAML notification\n" +
					"codec order_lines_codec JSON order_line\n"
			}
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"check-config", "--config", f}, nil, &out, &errOut, nil); code != 0 || errOut.Len() != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if out.String() != want {
				t.Fatalf("stdout\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
	t.Run("default path and warnings", func(t *testing.T) {
		// Without --config the environment names the file, as for serve;
		// warnings go to stderr and the config is still valid.
		path := filepath.Join(t.TempDir(), "c.yaml")
		_ = os.WriteFile(path, []byte("application: {host: 127.0.0.1, port: 0, client_address_header: X-Forwarded-For}\nnotification_backend: {kind: in_memory}\n"), 0o600)
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"check-config"}, []string{"HERALD_CONFIG_FILE=" + path}, &out, &errOut, nil)
		wantErr := `herald: warning: application.client_address_header "X-Forwarded-For" is ignored without application.trusted_proxies: the per-client stream limit counts the TCP peer address` + "\n"
		if code != 0 || errOut.String() != wantErr || !strings.HasPrefix(out.String(), "herald: config "+path+" is valid (fingerprint ") {
			t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out.String(), errOut.String())
		}
	})
}

// TestCheckConfigAviso013Example: the example configuration of
// aviso-server 0.13.1 (configs/testdata/aviso-server-0.13.1, an
// unmodified copy) passes check-config as it is, with nothing on stderr;
// so it does with the logging.otlp block of aviso-server's documentation
// added, and with the export switched on from the environment.
func TestCheckConfigAviso013Example(t *testing.T) {
	const example = "configs/testdata/aviso-server-0.13.1/config.yaml.example"
	text, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	const documented = "  format: json\n  otlp:\n    enabled: true\n    endpoint: \"http://otel-collector.observability.svc:4317\"\n    protocol: grpc\n"
	withOTLP := strings.Replace(string(text), "  format: json\n", documented, 1)
	if withOTLP == string(text) {
		t.Fatal("the example has no logging.format line to put logging.otlp after")
	}
	otlpPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(otlpPath, []byte(withOTLP), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		env        []string
	}{
		{"as shipped", example, nil},
		{"with logging.otlp", otlpPath, nil},
		{"with logging.otlp from the environment", example, []string{
			"AVISOSERVER_LOGGING__OTLP__ENABLED=true", "AVISOSERVER_LOGGING__OTLP__ENDPOINT=http://collector:4318", "AVISOSERVER_LOGGING__OTLP__PROTOCOL=http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := configs.Load(tc.path, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("herald: config %s is valid (fingerprint %s)\n", tc.path, server.Fingerprint(cfg)) +
				"event_type dissemination\nevent_type mars\nevent_type test_point_cloud\nevent_type test_polygon\n"
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"check-config", "--config", tc.path}, tc.env, &out, &errOut, nil); code != 0 || errOut.Len() != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if out.String() != want {
				t.Fatalf("stdout\n%s\nwant\n%s", out.String(), want)
			}
			if _, on := cfg.Logging.Export(); on != (tc.name != "as shipped") {
				t.Errorf("log export on = %v", on)
			}
		})
	}
}

// TestCheckConfigErrors: a broken config makes check-config exit 1 with
// exactly the messages startup gives, which serve is run to compare, and
// print nothing on stdout.
func TestCheckConfigErrors(t *testing.T) {
	dir := t.TempDir()
	head := "application:\n  host: 127.0.0.1\n  port: 0\nnotification_backend:\n  kind: in_memory\n"
	nspl := filepath.Join(dir, "bad.nspl")
	if err := os.WriteFile(nspl, []byte("CREATE SCHEMA s (a U8);\nCREATE SCHEMA t (b NOPE);\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", "application:\n  host: 127.0.0.1\n  port: 0\n  bogus: 1\nnotification_backend:\n  kind: in_memory\n",
			"config file {path}: application.bogus: unknown key (line 4)"},
		{"logging level", head + "logging:\n  level: verbose\n",
			`config file {path}: logging.level: must be trace, debug, info, warn, error or off, got "verbose" (line 7)`},
		{"trusted proxy", "application:\n  host: 127.0.0.1\n  port: 0\n  trusted_proxies: [10.0.0.0/8, 10.0.0.300]\nnotification_backend:\n  kind: in_memory\n",
			`config file {path}: application.trusted_proxies[1]: must be a CIDR such as 10.0.0.0/8 or fd00::/8, or a single IP address, got "10.0.0.300" (line 4)`},
		{"batch limit", "application:\n  host: 127.0.0.1\n  port: 0\n  max_batch_notifications: 0\nnotification_backend:\n  kind: in_memory\n",
			"config file {path}: application.max_batch_notifications: must be between 1 and 100000, got 0 (line 4)"},
		{"schema", head + "notification_schema:\n  forecast:\n    topic: {base: forecast, key_order: [region]}\n    identifier:\n      region: {type: EnumHandler, required: true}\n",
			"config file {path}: notification_schema.forecast (line 7): identifier.region.values: required for EnumHandler; list the accepted values"},
		{"otlp without endpoint", head + "logging:\n  otlp: {enabled: true, protocol: http}\n",
			"config file {path}: logging.otlp.endpoint: required when logging.otlp.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http) (line 7)"},
		{"workqueue", "application:\n  host: 127.0.0.1\n  port: 0\nnotification_backend:\n  kind: jetstream\n  jetstream:\n    retention_policy: workqueue\n",
			"config file {path}: notification_backend.jetstream.retention_policy: 'workqueue' is not supported: workqueue retention does not support Aviso's independent watch/replay consumers; use 'limits' or 'interest' (line 7)"},
		{"retention_time", "application:\n  host: 127.0.0.1\n  port: 0\nnotification_backend:\n  kind: jetstream\n  jetstream:\n    retention_time: 9223372037s\n",
			`config file {path}: notification_backend.jetstream.retention_time: invalid duration "9223372037s": too long: it exceeds signed 64-bit nanoseconds (at most 9223372036s, about 292 years) (line 7)`},
		{"codec definitions", head + "codecs:\n  definitions: " + nspl + "\n",
			"codecs: " + nspl + `:2:20: expected a type (U8…I64, F32, F64, BOOL, STRING, BYTES, DATETIME, ARRAY<…>, VEC<…>), found "NOPE"`},
		// Every problem of the file in one run: the codecs, each event
		// type's handlers (a typed payload's codec is not judged when the
		// codecs failed), and authentication.
		{"every problem", head + "codecs:\n  definitions: " + nspl + "\n" +
			"auth: {enabled: true, mode: trusted_proxy, jwks_file: " + filepath.Join(dir, "missing.jwks") + ", admin_roles: {ecmwf: [admin]}}\n" +
			"notification_schema:\n" +
			"  a:\n    topic: {base: a, key_order: [y]}\n    payload: {codec: c}\n    identifier:\n      y: {type: IntHandler, range: [5, 1], required: true}\n" +
			"  b:\n    topic: {base: b, key_order: [d]}\n    identifier:\n      d: {type: DateHandler, canonical_format: \"%Q\", required: true}\n",
			"codecs: " + nspl + `:2:20: expected a type (U8…I64, F32, F64, BOOL, STRING, BYTES, DATETIME, ARRAY<…>, VEC<…>), found "NOPE"` + "\n" +
				"notification_schema.a.identifier.y (IntHandler, line 14): range min 5 is greater than max 1; write the range as [min, max]\n" +
				`notification_schema.b.identifier.d (DateHandler, line 18): canonical_format "%Q" is not supported; use "%Y%m%d" (20250706) or "%Y-%m-%d" (2025-07-06)` + "\n" +
				"auth.jwks_file: stat " + filepath.Join(dir, "missing.jwks") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			want := "herald: config " + path + ":\n" + strings.ReplaceAll(tc.want, "{path}", path) + "\n"
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"check-config", "--config", path}, nil, &out, &errOut, nil); code != 1 || out.Len() != 0 {
				t.Fatalf("check-config: exit %d, stdout %q", code, out.String())
			}
			if errOut.String() != want {
				t.Fatalf("check-config stderr\n%s\nwant\n%s", errOut.String(), want)
			}
			var serveErr bytes.Buffer
			if code := run(context.Background(), []string{"--config", path}, nil, io.Discard, &serveErr, nil); code != 1 || serveErr.String() != want {
				t.Fatalf("serve: exit %d, stderr\n%s\nwant\n%s", code, serveErr.String(), want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		var out, errOut bytes.Buffer
		missing := filepath.Join(dir, "nope.yaml")
		code := run(context.Background(), []string{"check-config", "--config", missing}, nil, &out, &errOut, nil)
		if want := "herald: --config: config file: stat " + missing + ": no such file or directory\n"; code != 1 || errOut.String() != want {
			t.Fatalf("exit %d, stderr %q, want %q", code, errOut.String(), want)
		}
	})
	t.Run("usage", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"check-config", "extra"}, nil, &out, &errOut, nil); code != 2 || errOut.String() != "herald: unexpected argument \"extra\"\n" {
			t.Fatalf("extra argument: exit %d, stderr %q", code, errOut.String())
		}
	})
}

// TestPortInUse: a port already in use stops herald with the listen
// error before the embedded JetStream server starts (its data directory
// is never created) and before anything is logged as listening.
func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	dataDir := filepath.Join(t.TempDir(), "jetstream")
	config := strings.Replace(contractConfig, "  kind: in_memory\n", "  kind: jetstream\n  jetstream:\n    data_dir: "+dataDir+"\n", 1)
	config = strings.Replace(config, "  port: 0\n", "  port: "+strconv.Itoa(port)+"\n", 1)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--config", path}, nil, &out, &errOut, nil)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if want := "herald: listen on " + addr + ": listen tcp " + addr + ": bind: address already in use\n"; code != 1 || errOut.String() != want {
		t.Fatalf("exit %d, stderr %q, want %q", code, errOut.String(), want)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Fatalf("the JetStream data directory exists (%v): the backend started before the port was bound", err)
	}
	if strings.Contains(out.String(), "herald listening") {
		t.Fatalf("logged as listening: %s", out.String())
	}
}

// TestDataDirInUse: a second herald (on another port) given the data
// directory of a running one does not start: the embedded store would be
// written by two servers. It exits 1 naming the directory and the
// holder's pid; once the first has stopped, the directory is free.
func TestDataDirInUse(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "jetstream")
	config := strings.Replace(contractConfig, "  kind: in_memory\n", "  kind: jetstream\n  jetstream:\n    data_dir: "+dataDir+"\n", 1)
	_, stop := startHerald(t, config)
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--config", path}, nil, &out, &errOut, nil)
	want := "herald: backend: jetstream: embedded nats-server: data directory " + dataDir + " is in use by another process (pid " + strconv.Itoa(os.Getpid()) +
		" holds " + filepath.Join(dataDir, "herald.lock") + "): run one herald per data directory, or give this one its own notification_backend.jetstream.data_dir\n"
	if code != 1 || errOut.String() != want {
		t.Fatalf("exit %d, stderr %q, want %q", code, errOut.String(), want)
	}
	if code := stop(); code != 0 {
		t.Fatalf("the first herald exited %d", code)
	}
	_, stop = startHerald(t, config)
	if code := stop(); code != 0 {
		t.Fatalf("herald on the freed directory exited %d", code)
	}
}

// TestForwardedForBehindProxyReload runs herald behind a trusted proxy
// (the loopback peer) with max_streams_per_client 1: watches whose forged
// first X-Forwarded-For entries differ count as the one client the proxy
// named, and after a reload that raises the limit to 2 the rule still
// holds with the new limit.
func TestForwardedForBehindProxyReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	write := func(limit int) {
		c := strings.Replace(contractConfig, "  port: 0\n", "  port: 0\n  client_address_header: X-Forwarded-For\n  trusted_proxies: [127.0.0.1/32, \"::1\"]\n", 1)
		c = strings.Replace(c, "watch_endpoint:\n", "watch_endpoint:\n  max_streams_per_client: "+strconv.Itoa(limit)+"\n", 1)
		if err := os.WriteFile(path, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan int, 1)
	var logs testkit.Buffer
	go func() { done <- run(ctx, []string{"--config", path}, nil, &logs, &logs, ready) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr.String()
	case code := <-done:
		t.Fatalf("exited %d: %s", code, logs.String())
	case <-time.After(10 * time.Second):
		t.Fatal("did not start")
	}
	// watch opens a watch forwarded for xff and returns its status and,
	// for a refusal, the message.
	watch := func(xff string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/watch", strings.NewReader(`{"event_type":"forecast","identifier":{"region":"europe"}}`))
		req.Header.Set("X-Forwarded-For", xff)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			t.Cleanup(func() { resp.Body.Close() })
			return 200, ""
		}
		defer resp.Body.Close()
		var body struct{ Message string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Message
	}
	refused := func(n int) string {
		return fmt.Sprintf("client address 203.0.113.7 already has %d open streams, the limit; close one or retry later", n)
	}
	for i, want := range []struct {
		xff, msg string
		status   int
	}{
		{"198.51.100.1, 203.0.113.7", "", 200},
		{"198.51.100.2, 203.0.113.7", refused(1), 429},
		{"198.51.100.3, 203.0.113.7", refused(1), 429},
		{"203.0.113.8", "", 200}, // another client behind the proxy
		{"198.51.100.4, 203.0.113.7", refused(1), 429},
	} {
		if status, msg := watch(want.xff); status != want.status || msg != want.msg {
			t.Fatalf("watch %d: %d %q, want %d %q", i+1, status, msg, want.status, want.msg)
		}
	}
	write(2)
	resp := post(t, base+"/api/v1/admin/reload", "")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reload: %d", resp.StatusCode)
	}
	for i, want := range []struct {
		xff, msg string
		status   int
	}{
		{"198.51.100.5, 203.0.113.7", "", 200},
		{"198.51.100.6, 203.0.113.7", refused(2), 429},
	} {
		if status, msg := watch(want.xff); status != want.status || msg != want.msg {
			t.Fatalf("after reload, watch %d: %d %q, want %d %q", i+1, status, msg, want.status, want.msg)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestShutdownFitsGrace stops herald on the embedded JetStream backend
// while 50 watchers that read nothing hold blocked writes: the whole
// shutdown, the embedded nats-server included, ends within
// shutdown_grace_sec.
func TestShutdownFitsGrace(t *testing.T) {
	const grace = 2 * time.Second
	config := strings.Replace(contractConfig, "  kind: in_memory\n", "  kind: jetstream\n  jetstream:\n    data_dir: "+t.TempDir()+"\n", 1)
	config = strings.Replace(config, "  port: 0\n", "  port: 0\n  shutdown_grace_sec: 2\n", 1)
	base, stop := startHerald(t, config)
	addr := strings.TrimPrefix(base, "http://")
	body := `{"event_type":"forecast","identifier":{"region":"europe"}}`
	for range 50 {
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/watch HTTP/1.1\r\nHost: herald\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	payload := strings.Repeat("x", 4096)
	for i := range 100 {
		resp := post(t, base+"/api/v1/notification", fmt.Sprintf(`{"event_type":"forecast","identifier":{"region":"europe","step":%d},"payload":"%s"}`, i, payload))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("notify %d: %d", i, resp.StatusCode)
		}
	}
	start := time.Now()
	if code := stop(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	// A little slack for the scheduler: the budget itself is the grace.
	if took := time.Since(start); took > grace+300*time.Millisecond {
		t.Fatalf("shutdown took %v, more than shutdown_grace_sec %v", took, grace)
	} else {
		t.Logf("shutdown with 50 stuck watchers took %v (grace %v)", took, grace)
	}
}

// TestSIGHUPReloads runs the built binary, removes an event type from its
// config file and sends SIGHUP: the event type's watcher ends with
// schema_removed, the log says what changed, and the process keeps
// serving (SIGHUP used to kill it with exit 129).
func TestSIGHUPReloads(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "herald")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "config.yaml")
	extra := "  alert:\n    identifier:\n      level: {type: IntHandler, required: false}\n"
	if err := os.WriteFile(path, []byte(contractConfig+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	waitLog := func(msg string) map[string]any {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("herald exited before logging %q: %s", msg, logs.String())
				}
				if m["msg"] == msg {
					return m
				}
			case <-deadline:
				t.Fatalf("no %q log line", msg)
			}
		}
	}
	base := "http://" + waitLog("herald listening")["address"].(string)
	watch := post(t, base+"/api/v1/watch", `{"event_type":"alert","identifier":{}}`)
	defer watch.Body.Close()
	events := readEvents(watch.Body)
	if ev := <-events; ev.data["type"] != "connection_established" {
		t.Fatalf("opening %v", ev)
	}
	if err := os.WriteFile(path, []byte(contractConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	line := waitLog("configuration reloaded")
	if fmt.Sprint(line["removed"]) != "[alert]" || line["trigger"] != "SIGHUP" || line["fingerprint"] == line["previous_fingerprint"] {
		t.Fatalf("reload log line %v", line)
	}
	for ev := range events {
		if ev.name == "heartbeat" {
			continue
		}
		if ev.name != "connection-closing" || ev.data["reason"] != "end_of_stream" || ev.data["cause"] != "schema_removed" {
			t.Fatalf("watcher of the removed event type got %v", ev)
		}
		break
	}
	resp := post(t, base+"/api/v1/notification", `{"event_type":"forecast","identifier":{"region":"europe","step":1}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("notify after the reload: %d", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (%s)", err, logs.String())
	}
}

// TestGlobalFlagsBeforeCommand: the client flags work before the command
// name as after it, $HERALD_URL names the server when --url does not,
// and --config may come before check-config.
func TestGlobalFlagsBeforeCommand(t *testing.T) {
	base, _ := startHerald(t, contractConfig)
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"flag after", []string{"schema", "forecast", "--url", base}, nil},
		{"flag before", []string{"--url", base, "schema", "forecast"}, nil},
		{"flag= before", []string{"--url=" + base, "schema", "forecast"}, nil},
		{"HERALD_URL", []string{"schema", "forecast"}, []string{"HERALD_URL=" + base}},
		{"--url wins over HERALD_URL", []string{"--url", base, "schema", "forecast"}, []string{"HERALD_URL=http://127.0.0.1:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), tc.args, tc.env, &out, &errOut, nil); code != 0 || !strings.HasPrefix(out.String(), "forecast\n") {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out.String(), errOut.String())
			}
		})
	}
	// Nothing listens on the port of HERALD_URL: the client says so.
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"schema"}, []string{"HERALD_URL=http://127.0.0.1:1"}, &out, &errOut, nil); code != 3 ||
		!strings.Contains(errOut.String(), "127.0.0.1:1") {
		t.Fatalf("unreachable HERALD_URL: exit %d, stderr %q", code, errOut.String())
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(contractConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"--config", path, "check-config"}, nil, &out, &errOut, nil); code != 0 ||
		!strings.HasPrefix(out.String(), "herald: config "+path+" is valid") {
		t.Fatalf("--config before check-config: exit %d\nstdout %q\nstderr %q", code, out.String(), errOut.String())
	}
}
