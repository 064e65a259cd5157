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

	"herald/configs"
	"herald/server"
)

// serveHerald is the -cpuprofile variant of the herald side: herald
// assembled from the same packages and in the same way as the herald
// command (server.New on the loaded config, its HTTP server), in a
// process of its own (this tool re-executed), so that the profile holds
// the server only. herald itself exposes no pprof endpoint. SIGUSR1
// starts a CPU profile written to profPath, SIGUSR2 stops it; SIGINT
// ends the server.
func serveHerald(cfgPath, profPath string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := configs.Load(cfgPath, nil)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hs, err := server.New(ctx, cfg, server.Options{Logger: log, Version: "fanout"})
	if err != nil {
		return err
	}
	defer hs.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Application.Host, strconv.Itoa(cfg.Application.Port)))
	if err != nil {
		return err
	}
	srv := hs.HTTPServer()
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	usr := make(chan os.Signal, 2)
	signal.Notify(usr, syscall.SIGUSR1, syscall.SIGUSR2)
	var f *os.File
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
				if f, err = os.Create(profPath); err != nil {
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
