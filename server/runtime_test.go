package server

import (
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/ecpds"
)

func TestECPDSConfig(t *testing.T) {
	block := configs.ECPDS{Username: "svc", Password: "p", Servers: []string{"https://a", "https://b"}, MatchKey: "destination",
		TargetField: "name", CacheTTLSeconds: 300, MaxEntries: 10, RequestTimeoutSeconds: 30, ConnectTimeoutSeconds: 5}
	want := ecpds.Config{Username: "svc", Password: "p", Servers: []string{"https://a", "https://b"}, MatchKey: "destination",
		TargetField: "name", CacheTTL: 300 * time.Second, MaxEntries: 10, RequestTimeout: 30 * time.Second, ConnectTimeout: 5 * time.Second}
	tests := []struct {
		policy string
		want   ecpds.OutagePolicy
	}{
		{configs.ECPDSStrict, ecpds.Strict},
		{configs.ECPDSAnySuccess, ecpds.AnySuccess},
		{"", ecpds.Strict},
	}
	for _, tc := range tests {
		block.PartialOutagePolicy = tc.policy
		want.PartialOutagePolicy = tc.want
		if got := ecpdsConfig(block); !reflect.DeepEqual(got, want) {
			t.Errorf("policy %q: got %+v, want %+v", tc.policy, got, want)
		}
		if got := tc.want.String(); tc.policy != "" && got != tc.policy {
			t.Errorf("%v.String() = %q, want %q", tc.want, got, tc.policy)
		}
	}
}

// TestParseLogLevel: every valid logging.level maps to its slog level
// (off above error, so nothing is logged), and anything else is the
// error configuration validation gives, naming the valid levels.
func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"trace": slog.LevelDebug, "DEBUG": slog.LevelDebug, "": slog.LevelInfo, " info ": slog.LevelInfo,
		"warn": slog.LevelWarn, "Warning": slog.LevelWarn, "error": slog.LevelError, "off": levelOff,
	} {
		if got, err := ParseLogLevel(in); err != nil || got != want {
			t.Errorf("ParseLogLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if levelOff <= slog.LevelError {
		t.Fatalf("off (%d) must be above error (%d)", levelOff, slog.LevelError)
	}
	_, err := ParseLogLevel("verbose")
	if want := `logging.level: must be trace, debug, info, warn, error or off, got "verbose"`; err == nil || err.Error() != want {
		t.Fatalf("ParseLogLevel(verbose) = %v, want %s", err, want)
	}
}
