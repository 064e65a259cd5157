package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/herald-gateway/herald/tracing/tracingtest"
)

func TestSensitiveKey(t *testing.T) {
	for key, want := range map[string]bool{
		"password": true, "nats_password": true, "jwt_secret": true, "Secret": true, "token": true,
		"X-Auth-Token": true, "AUTHORIZATION": true, "api_key": true, "x_api_key_id": true,
		"request_id": false, "apikey": false, "auth": false, "user": false, "": false, "passwd": false, "tok": false,
	} {
		if got := SensitiveKey(key); got != want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestRedactURLUserinfo(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"nats://user:pass@localhost:4222", "nats://[REDACTED]@localhost:4222", true},
		{"nats://localhost:4222", "nats://localhost:4222", false},
		{"https://u@h/p?q=a@b#f", "https://[REDACTED]@h/p?q=a@b#f", true},
		{"https://h/p@q", "https://h/p@q", false},
		{"see nats://a:b@h:1, then retry", "see nats://[REDACTED]@h:1, then retry", true},
		{"x://@h", "x://[REDACTED]@h", true},
		{"a@b", "a@b", false},
		{"://", "://", false},
	} {
		got, ok := RedactURLUserinfo(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RedactURLUserinfo(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRedactMessage(t *testing.T) {
	for in, want := range map[string]string{
		"login with password=hunter2 done":       "login with password=[REDACTED] done",
		"PASSWORD : hunter2":                     "PASSWORD : [REDACTED]",
		"token=abc&x=1 other":                    "token=[REDACTED] other",
		"Authorization: Bearer eyJ.a-b_c~rest":   "Authorization: Bearer [REDACTED]~rest",
		"no secrets here":                        "no secrets here",
		"password is required":                   "password is required",
		"tokens=3":                               "tokens=3",
		"bearer":                                 "bearer",
		"password=[REDACTED] already":            "password=[REDACTED] already",
		"token: a password: b bearer c":          "token: [REDACTED] password: [REDACTED] bearer [REDACTED]",
		"\u00e9 token=\u00e9\u00e9 \u00e9":       "\u00e9 token=[REDACTED] \u00e9",
		"retry with Token:\tsecret and continue": "retry with Token:\t[REDACTED] and continue",
	} {
		if got := RedactMessage(in); got != want {
			t.Errorf("RedactMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReplaceAttr checks stdout's redaction attribute by attribute.
func TestReplaceAttr(t *testing.T) {
	for _, tc := range []struct {
		groups []string
		in     slog.Attr
		want   string
	}{
		{nil, slog.String("msg", "password=x"), "password=[REDACTED]"},
		{nil, slog.String("api_key", "k"), Redacted},
		{[]string{"auth"}, slog.String("jwt_secret", "s"), Redacted},
		{[]string{"auth"}, slog.String("jwt_secret", ""), ""},
		{[]string{"auth"}, slog.String("jwt_secret", "[redacted]"), "[redacted]"},
		{nil, slog.Any("token", []byte("t")), Redacted},
		{nil, slog.Int("token_count", 3), "3"},
		{nil, slog.String("url", "nats://u:p@h"), "nats://[REDACTED]@h"},
		{nil, slog.Any("error", errors.New("token=abc failed")), "token=[REDACTED] failed"},
		{nil, slog.Any("error", errors.New("plain failure")), "plain failure"},
		{nil, slog.String("path", "/api/v1/notification"), "/api/v1/notification"},
		{nil, slog.String(slog.LevelKey, "password=x"), "password=x"},
	} {
		got := ReplaceAttr(tc.groups, tc.in)
		if got.Key != tc.in.Key || got.Value.String() != tc.want {
			t.Errorf("ReplaceAttr(%v, %v) = %v, want %s=%s", tc.groups, tc.in, got, tc.in.Key, tc.want)
		}
	}
}

// TestFailureReports: while exports keep failing, stdout gets the first
// failure at once and then one line a minute with the count since.
func TestFailureReports(t *testing.T) {
	c := tracingtest.StartHTTP(t)
	c.Refuse(true)
	exp, err := newLogExporter(context.Background(), LogExport{Protocol: ProtocolHTTP, URL: exportURL(c)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failures := 0
	m := &meteredExporter{next: exp, failed: func() { failures++ }, log: slog.New(slog.NewJSONHandler(out, nil)),
		target: exportURL(c), now: func() time.Time { return now }}
	export := func(after time.Duration) {
		now = now.Add(after)
		if err := m.Export(context.Background(), make([]sdklog.Record, 1)); err != nil {
			t.Fatalf("Export returned %v; it reports failures itself", err)
		}
	}
	export(0)
	for range 5 {
		export(10 * time.Second)
	}
	export(10 * time.Second) // a minute after the first
	export(time.Second)
	c.Refuse(false)
	export(time.Second)
	if failures != 8 {
		t.Errorf("%d failures counted, want 8", failures)
	}
	var got []string
	for _, l := range out.lines(t) {
		got = append(got, strings.Join([]string{l["msg"].(string), field(l, "failed_batches"), field(l, "failing_for"), field(l, "failed_for")}, " | "))
	}
	want := []string{
		"OTLP log export failed; the records of the batch are dropped (stdout has them) | - | - | -",
		"OTLP log export still failing | 6 | 1m0s | -",
		"OTLP log export recovered | - | - | 1m2s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// field formats a field of a decoded log line, "-" when absent.
func field(l map[string]any, key string) string {
	v, ok := l[key]
	if !ok {
		return "-"
	}
	return fmt.Sprint(v)
}

// FuzzRedact: the redaction functions never panic, are idempotent, keep
// no userinfo after a redacted URL's scheme, and containsFold agrees with
// strings.Contains on lower-cased text.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"", "nats://user:pass@localhost:4222", "password=hunter2", "Bearer abc.def", "token: x token=y",
		"https://u@h/p?q=a@b#f", "PaSsWoRd = 1", "://@", "\xff\xfe token=\x00", "tokentoken=token",
	} {
		f.Add(s, "token")
	}
	f.Fuzz(func(t *testing.T, s, sub string) {
		r, ok := RedactURLUserinfo(s)
		if !ok && r != s {
			t.Fatalf("RedactURLUserinfo(%q) changed the text without saying so: %q", s, r)
		}
		if ok {
			i := strings.Index(r, "://")
			if i < 0 || !strings.HasPrefix(r[i+3:], Redacted+"@") {
				t.Fatalf("RedactURLUserinfo(%q) = %q", s, r)
			}
		}
		m := RedactMessage(s)
		if RedactMessage(m) != m {
			t.Fatalf("RedactMessage is not idempotent on %q: %q then %q", s, m, RedactMessage(m))
		}
		lower := []byte(s)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		upper := strings.ContainsFunc(sub, func(r rune) bool { return 'A' <= r && r <= 'Z' })
		if !upper && containsFold(s, sub) != strings.Contains(string(lower), sub) {
			t.Fatalf("containsFold(%q, %q) = %v", s, sub, containsFold(s, sub))
		}
		_ = ReplaceAttr(nil, slog.String(sub, s))
	})
}
