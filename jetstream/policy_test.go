package jetstream

import (
	"testing"
	"time"
)

func TestStreamName(t *testing.T) {
	for in, want := range map[string]string{"Weather_v2": "WEATHER_V2", "alerts": "ALERTS", "a-b9": "A-B9"} {
		if got := StreamName(in); got != want {
			t.Errorf("StreamName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPolicyDefaults: a stream without a storage_policy keeps one
// notification per subject (Aviso's default), and an override replaces
// only what it sets.
func TestPolicyDefaults(t *testing.T) {
	defaults := StreamPolicy{MaxMsgs: 500, MaxBytes: -1, Storage: StorageFile, Retention: RetentionLimits, Discard: "old"}.withDefaults()
	if p := (PolicyOverride{}).apply(defaults); p.MaxMsgsPerSubject != 1 || p.MaxMsgs != 500 {
		t.Errorf("default policy %+v, want one message per subject and 500 messages", p)
	}
	age, dup := 12*time.Hour, int64(-1)
	if p := (PolicyOverride{MaxAge: &age, MaxMsgsPerSubject: &dup}).apply(defaults); p.MaxAge != age || p.MaxMsgsPerSubject != -1 || p.MaxMsgs != 500 {
		t.Errorf("overridden policy %+v", p)
	}
}
