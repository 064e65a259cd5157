package tracing

import (
	"context"
	"log/slog"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// Redacted replaces a sensitive value in the log.
const Redacted = "[REDACTED]"

// sensitiveWords are the parts of an attribute key that make its value
// sensitive (aviso-server's list), matched ignoring ASCII case anywhere in
// the key: jwt_secret, X-Auth-Token, nats_password, api_key.
var sensitiveWords = [...]string{"password", "secret", "token", "authorization", "api_key"}

// SensitiveKey reports whether an attribute key names a sensitive value
// (see sensitiveWords).
func SensitiveKey(key string) bool {
	for _, w := range sensitiveWords {
		if containsFold(key, w) {
			return true
		}
	}
	return false
}

// alreadyRedacted reports whether a sensitive key's value hides nothing:
// empty (a secret that is not set), or a redaction marker put there by
// the code that logged it (configs' [redacted], this package's
// [REDACTED]).
func alreadyRedacted(v string) bool {
	return v == "" || strings.EqualFold(v, Redacted)
}

// RedactURLUserinfo hides the user name and password of a URL in s: the
// authority after the first "://" (up to the next /, ? or #) loses what
// is before its first @, as aviso-server does, so
// "nats://user:pass@host:4222/x" becomes "nats://[REDACTED]@host:4222/x".
// ok is false, and s is returned, when there is no such part.
func RedactURLUserinfo(s string) (string, bool) {
	i := strings.Index(s, "://")
	if i < 0 {
		return s, false
	}
	start := i + 3
	end := len(s)
	if j := strings.IndexAny(s[start:], "/?#"); j >= 0 {
		end = start + j
	}
	at := strings.IndexByte(s[start:end], '@')
	if at < 0 {
		return s, false
	}
	return s[:start] + Redacted + "@" + s[start+at+1:], true
}

// Patterns of free text that carry a secret, and what replaces the secret.
var (
	passwordPattern = regexp.MustCompile(`(?i)(password\s*[=:]\s*)\S+`)
	tokenPattern    = regexp.MustCompile(`(?i)(token\s*[=:]\s*)\S+`)
	bearerPattern   = regexp.MustCompile(`(?i)(bearer\s+)[a-z0-9._\-]+`)
)

// RedactMessage hides the secrets of free text as aviso-server does:
// what follows "password=" or "token:" (any case, spaces allowed around
// the = or :) up to the next space, and a bearer token after "Bearer ".
func RedactMessage(s string) string {
	// Most text names none of the three words: no regular expression runs.
	if !containsFold(s, "password") && !containsFold(s, "token") && !containsFold(s, "bearer") {
		return s
	}
	s = passwordPattern.ReplaceAllString(s, "${1}"+Redacted)
	s = tokenPattern.ReplaceAllString(s, "${1}"+Redacted)
	return bearerPattern.ReplaceAllString(s, "${1}"+Redacted)
}

// redactText applies RedactURLUserinfo, else RedactMessage, to a string
// value, as aviso-server's stdout does.
func redactText(s string) string {
	if r, ok := RedactURLUserinfo(s); ok {
		return r
	}
	return RedactMessage(s)
}

// ReplaceAttr is the slog.HandlerOptions.ReplaceAttr of the stdout log:
// the redaction aviso-server applies to its stdout records. The value of
// a sensitive key (SensitiveKey; at any depth of groups) becomes
// [REDACTED] unless it is empty or already a redaction marker; a string
// value (and the message, and the text of an error) has the credentials
// of a URL hidden (RedactURLUserinfo) or else its password=, token= and
// bearer secrets (RedactMessage).
func ReplaceAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
		return a
	}
	switch a.Value.Kind() {
	case slog.KindString:
		s := a.Value.String()
		if SensitiveKey(a.Key) {
			if !alreadyRedacted(s) {
				a.Value = slog.StringValue(Redacted)
			}
			return a
		}
		if r := redactText(s); r != s {
			a.Value = slog.StringValue(r)
		}
	case slog.KindAny:
		if SensitiveKey(a.Key) {
			a.Value = slog.StringValue(Redacted)
			return a
		}
		if err, ok := a.Value.Any().(error); ok && err != nil {
			s := err.Error()
			if r := redactText(s); r != s {
				a.Value = slog.StringValue(r)
			}
		}
	default:
		// Numbers, booleans, times and durations are never secrets,
		// whatever their key.
	}
	return a
}

// redactor is the log processor that keeps secrets out of the export,
// in front of the batch processor: a record carrying a sensitive key
// (SensitiveKey, at any depth of its attributes, whose value is not
// already redacted) or a string holding URL credentials is not exported
// at all and is counted in suppressed (stdout still has it, redacted by
// ReplaceAttr). Otherwise its body, and its string attributes, have their
// password=, token= and bearer secrets hidden (aviso-server rewrites only
// the body: its SDK cannot rewrite attributes).
type redactor struct {
	next       sdklog.Processor
	suppressed func()
}

// Enabled implements sdklog.Processor.
func (p *redactor) Enabled(ctx context.Context, param sdklog.EnabledParameters) bool {
	return p.next.Enabled(ctx, param)
}

// OnEmit implements sdklog.Processor.
func (p *redactor) OnEmit(ctx context.Context, r *sdklog.Record) error {
	secret := false
	rewrite := false
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		s, w := inspect(kv)
		secret, rewrite = secret || s, rewrite || w
		return !secret
	})
	if secret {
		p.suppressed()
		return nil
	}
	if b := r.Body(); b.Type() == attribute.STRING {
		if s, red := b.AsString(), RedactMessage(b.AsString()); red != s {
			r.SetBody(attribute.StringValue(red))
		}
	}
	if rewrite {
		attrs := make([]attribute.KeyValue, 0, r.AttributesLen())
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			attrs = append(attrs, attribute.KeyValue{Key: kv.Key, Value: redactValue(kv.Value)})
			return true
		})
		r.SetAttributes(attrs...)
	}
	return p.next.OnEmit(ctx, r)
}

// Shutdown implements sdklog.Processor.
func (p *redactor) Shutdown(ctx context.Context) error { return p.next.Shutdown(ctx) }

// ForceFlush implements sdklog.Processor.
func (p *redactor) ForceFlush(ctx context.Context) error { return p.next.ForceFlush(ctx) }

// inspect looks at one attribute, nested values included: secret when it
// carries a sensitive key with a value that is not already redacted, or
// URL credentials in a string; rewrite when a string of it has a
// password=, token= or bearer secret.
func inspect(kv attribute.KeyValue) (secret, rewrite bool) {
	if SensitiveKey(string(kv.Key)) {
		if kv.Value.Type() != attribute.STRING || !alreadyRedacted(kv.Value.AsString()) {
			return true, false
		}
	}
	return inspectValue(kv.Value)
}

// inspectValue is inspect for a value.
func inspectValue(v attribute.Value) (secret, rewrite bool) {
	text := func(s string) (bool, bool) {
		if _, ok := RedactURLUserinfo(s); ok {
			return true, false
		}
		return false, RedactMessage(s) != s
	}
	switch v.Type() {
	case attribute.STRING:
		return text(v.AsString())
	case attribute.STRINGSLICE:
		for _, s := range v.AsStringSlice() {
			sec, w := text(s)
			if sec {
				return true, false
			}
			rewrite = rewrite || w
		}
	case attribute.SLICE:
		for _, e := range v.AsSlice() {
			sec, w := inspectValue(e)
			if sec {
				return true, false
			}
			rewrite = rewrite || w
		}
	case attribute.MAP:
		for _, kv := range v.AsMap() {
			sec, w := inspect(kv)
			if sec {
				return true, false
			}
			rewrite = rewrite || w
		}
	default:
		// Numbers, booleans and bytes carry no text to redact.
	}
	return false, rewrite
}

// redactValue returns v with RedactMessage applied to its strings, nested
// ones included.
func redactValue(v attribute.Value) attribute.Value {
	switch v.Type() {
	case attribute.STRING:
		return attribute.StringValue(RedactMessage(v.AsString()))
	case attribute.STRINGSLICE:
		in := v.AsStringSlice()
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = RedactMessage(s)
		}
		return attribute.StringSliceValue(out)
	case attribute.SLICE:
		in := v.AsSlice()
		out := make([]attribute.Value, len(in))
		for i, e := range in {
			out[i] = redactValue(e)
		}
		return attribute.SliceValue(out...)
	case attribute.MAP:
		in := v.AsMap()
		out := make([]attribute.KeyValue, len(in))
		for i, kv := range in {
			out[i] = attribute.KeyValue{Key: kv.Key, Value: redactValue(kv.Value)}
		}
		return attribute.MapValue(out...)
	default:
		return v
	}
}

// containsFold reports whether s contains sub, ignoring ASCII case; sub
// is lower case. It does not allocate.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
