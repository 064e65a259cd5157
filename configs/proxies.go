package configs

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseTrustedProxy reads one entry of application.trusted_proxies: a
// CIDR such as 10.0.0.0/8 or fd00::/8 (host bits are ignored), or a
// single IPv4 or IPv6 address. IPv4-mapped IPv6 forms are read as IPv4.
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked(), nil
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("ParseAddr(%q): an IPv6 zone is not allowed", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// TrustedProxyPrefixes returns TrustedProxies parsed; entries that do not
// parse (a config that was not validated) are left out.
func (a Application) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range a.TrustedProxies {
		if p, err := ParseTrustedProxy(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}
