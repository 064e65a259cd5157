package server

import (
	"reflect"
	"testing"
	"time"

	"herald/configs"
	"herald/ecpds"
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
