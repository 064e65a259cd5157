// Package benchproc holds what the load tools under bench/ need to run
// servers beside them: free loopback ports, waiting for a listener,
// stopping a child process, and a nats-server with JetStream configured
// as herald's embedded one.
package benchproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// WaitListening waits until addr accepts TCP connections, for at most
// within or until ctx ends.
func WaitListening(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s never listened: %w", addr, err)
		}
		if err := Pause(ctx, 50*time.Millisecond); err != nil {
			return fmt.Errorf("%s never listened: %w", addr, err)
		}
	}
}

// Pause waits for d or the end of ctx, whichever comes first, and returns
// ctx's error in the second case.
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OrphanGuard makes a child process receive SIGTERM when the tool that
// started it dies first.
func OrphanGuard() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }

// Stop ends a child process with SIGINT, waits for it for at most grace,
// then kills it.
func Stop(c *exec.Cmd, grace time.Duration) {
	if c == nil || c.Process == nil {
		return
	}
	_ = c.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = c.Process.Kill()
		<-done
	}
}

// StartNATS starts a nats-server with JetStream on addr (host:port) and a
// file store under dir, with the options herald's embedded server uses
// (no fsync per message, max_control_line 16 KiB), and waits until it
// serves. The caller shuts it down.
func StartNATS(addr, dir string) (*server.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("nats-server address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("nats-server address %q: %w", addr, err)
	}
	s, err := server.NewServer(&server.Options{
		Host: host, Port: p, JetStream: true, StoreDir: dir, NoSigs: true, MaxControlLine: 16 << 10,
	})
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(time.Minute) || !s.JetStreamEnabled() {
		s.Shutdown()
		return nil, fmt.Errorf("nats-server on %s did not start with JetStream", addr)
	}
	return s, nil
}
