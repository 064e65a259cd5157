package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/server"
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

// inprocHerald is the herald side served in this process (-inproc): the
// smoke test's server, whose engine the tool can inspect.
type inprocHerald struct {
	srv  *server.Server
	http *http.Server
}

// startInproc serves herald in this process with the config at cfgPath,
// assembled as serveHerald does.
func startInproc(ctx context.Context, cfgPath string) (*inprocHerald, error) {
	cfg, err := configs.Load(cfgPath, nil)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hs, err := server.New(ctx, cfg, server.Options{Logger: log, Version: "fanout"})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Application.Host, strconv.Itoa(cfg.Application.Port)))
	if err != nil {
		hs.Close()
		return nil, err
	}
	h := &inprocHerald{srv: hs, http: hs.HTTPServer()}
	go func() { _ = h.http.Serve(ln) }()
	return h, nil
}

// close stops the server.
func (h *inprocHerald) close() {
	_ = h.http.Close()
	h.srv.Close()
}

// renderedViews reads the n records of stream back from the engine (the
// in-memory engine hands out the records it fanned out) and returns the
// number of views each was rendered in, an error if they differ or if
// the stream does not hold n records.
func (h *inprocHerald) renderedViews(ctx context.Context, stream string, n int) (int, error) {
	rd, err := h.srv.Engine().History(ctx, engine.Query{Stream: stream}, engine.Range{ToSeq: math.MaxUint64})
	if err != nil {
		return 0, fmt.Errorf("reading %s back: %w", stream, err)
	}
	defer rd.Close()
	got, views := 0, -1
	for {
		recs, done, err := rd.Next(ctx, 1000)
		if err != nil {
			return 0, fmt.Errorf("reading %s back: %w", stream, err)
		}
		for _, rec := range recs {
			v := rec.RenderedViews()
			if views >= 0 && v != views {
				return 0, fmt.Errorf("record %d of %s was rendered in %d views, record %d in %d", rec.Seq, stream, v, rec.Seq-1, views)
			}
			views = v
			got++
		}
		if done {
			break
		}
	}
	if got != n {
		return 0, fmt.Errorf("%s holds %d records, want %d", stream, got, n)
	}
	return views, nil
}
