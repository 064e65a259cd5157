package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/herald-gateway/herald/configs"
	herald "github.com/herald-gateway/herald/server"
)

// serveNATS is the external server of -backend external: nats-server
// in a process of its own (this tool re-executed), with JetStream on a
// file store under dir and the options herald's embedded server uses
// (jetstream/server.go: no fsync per message, max_control_line 16 KiB),
// so that the same server stores both sides' messages and neither
// client shares its process. With a profile prefix it profiles on
// signals as serveHerald does. It ends on SIGINT.
func serveNATS(addr, dir, prefix string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	s, err := server.NewServer(&server.Options{
		Host: host, Port: p, JetStream: true, StoreDir: dir, NoSigs: true, MaxControlLine: 16 << 10,
	})
	if err != nil {
		return err
	}
	s.Start()
	if !s.ReadyForConnections(time.Minute) || !s.JetStreamEnabled() {
		s.Shutdown()
		return fmt.Errorf("nats-server on %s did not start with JetStream", addr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = profileOnSignals(ctx, prefix)
	s.Shutdown()
	s.WaitForShutdown()
	return err
}

// serveHerald is the -cpuprofile variant of the herald side (as in
// bench/fanout): herald assembled from the same packages and in the same
// way as the herald command (server.New on the loaded config, its HTTP
// server), in a process of its own, so that the profile holds the
// server only; herald itself exposes no pprof endpoint. It profiles on
// signals (profileOnSignals); SIGINT ends the server.
func serveHerald(cfgPath, prefix string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopHerald, err := startHerald(ctx, cfgPath)
	if err != nil {
		return err
	}
	defer stopHerald()
	return profileOnSignals(ctx, prefix)
}

// startHerald serves herald in this process on the config cfgPath, as
// the herald command assembles it (server.New, its HTTP server); the
// returned function stops it.
func startHerald(ctx context.Context, cfgPath string) (func(), error) {
	cfg, err := configs.Load(cfgPath, nil)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hs, err := herald.New(ctx, cfg, herald.Options{Logger: log, Version: "producer-bench"})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Application.Host, strconv.Itoa(cfg.Application.Port)))
	if err != nil {
		hs.Close()
		return nil, err
	}
	srv := hs.HTTPServer()
	go func() { _ = srv.Serve(ln) }()
	return func() {
		_ = srv.Close()
		hs.Close()
	}, nil
}

// profileOnSignals runs until ctx ends. With a prefix, each SIGUSR1
// starts a CPU profile written to <prefix>-<k>.pprof (k = 1, 2, …) and
// SIGUSR2 stops it.
func profileOnSignals(ctx context.Context, prefix string) error {
	if prefix == "" {
		<-ctx.Done()
		return nil
	}
	usr := make(chan os.Signal, 2)
	signal.Notify(usr, syscall.SIGUSR1, syscall.SIGUSR2)
	var f *os.File
	k := 0
	for {
		select {
		case <-ctx.Done():
			if f != nil {
				pprof.StopCPUProfile()
				f.Close()
			}
			return nil
		case sig := <-usr:
			switch {
			case sig == syscall.SIGUSR1 && f == nil:
				k++
				var err error
				if f, err = os.Create(fmt.Sprintf("%s-%d.pprof", prefix, k)); err != nil {
					return err
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("cpu profile: %w", err)
				}
			case sig == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				f.Close()
				f = nil
			}
		}
	}
}
