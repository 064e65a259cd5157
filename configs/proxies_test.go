package configs

import (
	"slices"
	"testing"
)

// TestParseTrustedProxy: CIDRs are masked, single addresses become
// one-address prefixes, IPv4-mapped forms are read as IPv4, and names,
// zones and bad lengths are refused.
func TestParseTrustedProxy(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.0/8":          "10.0.0.0/8",
		"10.1.2.3/8":          "10.0.0.0/8",
		" 192.0.2.7 ":         "192.0.2.7/32",
		"2001:db8::1":         "2001:db8::1/128",
		"fd00::/8":            "fd00::/8",
		"::ffff:10.0.0.1":     "10.0.0.1/32",
		"::ffff:10.0.0.0/104": "10.0.0.0/8",
		"10.0.0.0/33":         "",
		"proxy.example.org":   "",
		"fe80::1%eth0":        "",
		"":                    "",
	} {
		p, err := ParseTrustedProxy(in)
		got := ""
		if err == nil {
			got = p.String()
		}
		if got != want {
			t.Errorf("ParseTrustedProxy(%q) = %q (%v), want %q", in, got, err, want)
		}
	}
	a := Application{TrustedProxies: []string{"10.0.0.0/8", "bad", "::1"}}
	var got []string
	for _, p := range a.TrustedProxyPrefixes() {
		got = append(got, p.String())
	}
	if !slices.Equal(got, []string{"10.0.0.0/8", "::1/128"}) {
		t.Fatalf("TrustedProxyPrefixes = %v", got)
	}
}
