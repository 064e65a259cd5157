package handlers_test

import (
	"net"
	"strings"
	"testing"

	"github.com/herald-gateway/herald/configs"
)

// withMetrics turns the metrics on (on a free loopback port) after the
// config edits of edit.
func withMetrics(t *testing.T, edit func(*configs.Config)) func(*configs.Config) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return func(c *configs.Config) {
		if edit != nil {
			edit(c)
		}
		c.Metrics = configs.Metrics{Enabled: true, Host: "127.0.0.1", Port: port}
	}
}

// metric returns the value of the counter or gauge name{labels} (labels
// as "k=v,k=v") in the server's registry; it fails when there is none.
func metric(t *testing.T, s *server, name, labels string) float64 {
	t.Helper()
	m := s.Server.Metrics()
	if m == nil {
		t.Fatal("metrics are off")
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.Metric {
			var got []string
			for _, l := range s.Label {
				got = append(got, l.GetName()+"="+l.GetValue())
			}
			if strings.Join(got, ",") != labels {
				continue
			}
			if s.Counter != nil {
				return s.Counter.GetValue()
			}
			return s.Gauge.GetValue()
		}
	}
	t.Fatalf("no series %s{%s}", name, labels)
	return 0
}
