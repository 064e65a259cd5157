package jetstream

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
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
	// Ports are the kernel's choice at listen time (RANDOM_PORT) where
	// they can be: a port picked before and bound later can be taken in
	// between on a busy machine, and the server then never gets ready.
	// A clustered JetStream node needs configured routes, so n0's route
	// port is picked first (and n0 routes to itself, which nats-server
	// ignores), on another port if it was taken; n1 and n2 route to n0,
	// and gossip completes the mesh.
	servers := map[string]*server.Server{}
	var clientURLs []string
	node := func(name string, dir string, clientPort, routePort int, routes []*url.URL) (*server.Server, error) {
		return tryServer(t, dir, clientPort, func(o *server.Options) {
			o.ServerName = name
			o.Cluster = server.ClusterOpts{Name: "herald-test", Host: "127.0.0.1", Port: routePort}
			o.Routes = routes
		})
	}
	var seed *url.URL
	for attempt := 1; ; attempt++ {
		p := testkit.FreePort(t)
		seed = &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)}
		s, err := node("n0", t.TempDir(), server.RANDOM_PORT, p, []*url.URL{seed})
		if err == nil {
			servers["n0"] = s
			clientURLs = append(clientURLs, s.ClientURL())
			break
		}
		if attempt == 3 {
			t.Fatal(err)
		}
		t.Logf("%v; again on another route port", err)
	}
	for i := 1; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		s, err := node(name, t.TempDir(), server.RANDOM_PORT, server.RANDOM_PORT, []*url.URL{seed})
		if err != nil {
			t.Fatal(err)
		}
		servers[name] = s
		clientURLs = append(clientURLs, s.ClientURL())
	}
	urls := func(first int) string {
		var us []string
		for i := range n {
			us = append(us, clientURLs[(first+i)%n])
		}
		return strings.Join(us, ",")
	}
	r3 := func(o *Options) {
		o.Defaults.Replicas = 3
		o.PublishAttempts = 8
		o.PublishTimeout = 5 * time.Second
		// Stream and consumer requests are answered by the nodes' raft
		// groups, slow on loaded machines.
		o.RequestTimeout = 10 * time.Second
	}
	// The cluster elects its JetStream meta leader after startup; until
	// then creating the streams fails. The second engine opens the same
	// stream and creates its own consumer, which a loaded cluster may
	// not place at once either.
	open := func(first int) *Engine {
		var e *Engine
		testkit.WaitFor(t, wait, fmt.Sprintf("the cluster to accept R3 streams (engine on node %d)", first), func() bool {
			var err error
			e, err = Open(context.Background(), urlOptions(t, urls(first), r3))
			if err != nil {
				t.Logf("Open on node %d: %v; retrying", first, err)
				return false
			}
			t.Cleanup(func() { _ = e.Close() })
			return true
		})
		return e
	}
	pub, watch := open(0), open(1)

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
