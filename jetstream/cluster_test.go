package jetstream

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"herald/engine"
)

// TestClusterNodeLoss runs three nats-servers clustered by routes on
// loopback, with streams of three replicas, and stops the stream leader
// while publishers and watchers run: publishing and watching go on and no
// acknowledged notification is lost.
func TestClusterNodeLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: it starts a three-node nats-server cluster (several seconds); run without -short, as scripts/test and CI do")
	}
	const n = 3
	clientPorts, routePorts := make([]int, n), make([]int, n)
	for i := range n {
		clientPorts[i], routePorts[i] = freePort(t), freePort(t)
	}
	servers := map[string]*server.Server{}
	for i := range n {
		var routes []*url.URL
		for j := range n {
			if j != i {
				routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", routePorts[j])})
			}
		}
		name := fmt.Sprintf("n%d", i)
		servers[name] = runServer(t, t.TempDir(), clientPorts[i], func(o *server.Options) {
			o.ServerName = name
			o.Cluster = server.ClusterOpts{Name: "herald-test", Host: "127.0.0.1", Port: routePorts[i]}
			o.Routes = routes
		})
	}
	urls := func(first int) string {
		var us []string
		for i := range n {
			us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[(first+i)%n]))
		}
		return strings.Join(us, ",")
	}
	r3 := func(o *Options) {
		o.Defaults.Replicas = 3
		o.PublishAttempts = 8
		o.PublishTimeout = 5 * time.Second
	}
	// The cluster elects its JetStream meta leader after startup; until
	// then creating the streams fails.
	var pub, watch *Engine
	until(t, "the cluster to accept R3 streams", func() bool {
		o := urlOptions(t, urls(0), r3)
		e, err := Open(context.Background(), o)
		if err != nil {
			return false
		}
		t.Cleanup(func() { _ = e.Close() })
		pub = e
		return true
	})
	watch = openURL(t, urls(1), r3)

	h := newHarness(t, pub)
	h.watch(watch, "all", engine.Query{Stream: "mars"})
	h.watch(watch, "od enfo", query("mars", "od", "enfo", "*"))
	h.watch(pub, "rd", query("mars", "rd", "*", "*"))
	h.start(3)
	h.waitAcked(60)
	s, err := watch.cur().js.Stream(context.Background(), "MARS")
	if err != nil {
		t.Fatal(err)
	}
	ci := s.CachedInfo().Cluster
	if ci == nil || servers[ci.Leader] == nil || len(ci.Replicas) != 2 {
		t.Fatalf("MARS is not replicated on three nodes: %+v", ci)
	}
	t.Logf("stopping the stream leader %s", ci.Leader)
	stopServer(servers[ci.Leader])
	h.waitAcked(60)
	h.check(watch)
}
