package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"heraldsdk/heraldclient"
	"heraldsdk/sse"
)

// This file is the Go streaming helper: the generated client sends the
// watch or replay request (Client.Watch, Client.Replay return the
// *http.Response unread), sse.Reader splits the body into events, and each
// event becomes the generated union of the document (WatchEvent,
// ReplayEvent), whose discriminator is the event name.

// Stream is an open watch or replay.
type Stream struct {
	resp *http.Response
	r    *sse.Reader
}

// HTTPError is a watch or replay that was refused: the parsed answer of
// the generated client (its JSON400 ... JSON503 fields hold the typed body).
type HTTPError[T any] struct {
	Status int
	Parsed *T
}

// Error returns the message.
func (e *HTTPError[T]) Error() string { return fmt.Sprintf("HTTP %d", e.Status) }

// OpenWatch starts a watch. A refusal is an *HTTPError[heraldclient.WatchResponse].
func OpenWatch(ctx context.Context, c *heraldclient.Client, req heraldclient.Request, edit ...heraldclient.RequestEditorFn) (*Stream, error) {
	resp, err := c.Watch(ctx, req, edit...)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		parsed, err := heraldclient.ParseWatchResponse(resp)
		if err != nil {
			return nil, fmt.Errorf("watch: HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, &HTTPError[heraldclient.WatchResponse]{resp.StatusCode, parsed}
	}
	return &Stream{resp: resp, r: sse.NewReader(resp.Body)}, nil
}

// OpenReplay starts a replay. A refusal is an *HTTPError[heraldclient.ReplayResponse].
func OpenReplay(ctx context.Context, c *heraldclient.Client, req heraldclient.Request, edit ...heraldclient.RequestEditorFn) (*Stream, error) {
	resp, err := c.Replay(ctx, req, edit...)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		parsed, err := heraldclient.ParseReplayResponse(resp)
		if err != nil {
			return nil, fmt.Errorf("replay: HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, &HTTPError[heraldclient.ReplayResponse]{resp.StatusCode, parsed}
	}
	return &Stream{resp: resp, r: sse.NewReader(resp.Body)}, nil
}

// union is what the generated WatchEvent and ReplayEvent decode from.
func union(ev sse.Event) []byte {
	b, _ := json.Marshal(struct {
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}{ev.Name, json.RawMessage(ev.Data)})
	return b
}

// NextWatch returns the next event of a watch as the generated type of
// its event name (a heraldclient.SseLiveNotification, SseReplayControl,
// SseReplay, SseHeartbeat, SseError or SseConnectionClosing), or io.EOF
// after the last one.
func (s *Stream) NextWatch() (any, error) {
	ev, err := s.r.Next()
	if err != nil {
		return nil, err
	}
	if !json.Valid(ev.Data) {
		return nil, fmt.Errorf("event %s: data is not JSON: %q", ev.Name, ev.Data)
	}
	var w heraldclient.WatchEvent
	if err := w.UnmarshalJSON(union(ev)); err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.Name, err)
	}
	v, err := w.ValueByDiscriminator()
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.Name, err)
	}
	return v, nil
}

// NextReplay is NextWatch for a replay (heraldclient.ReplayEvent).
func (s *Stream) NextReplay() (any, error) {
	ev, err := s.r.Next()
	if err != nil {
		return nil, err
	}
	if !json.Valid(ev.Data) {
		return nil, fmt.Errorf("event %s: data is not JSON: %q", ev.Name, ev.Data)
	}
	var w heraldclient.ReplayEvent
	if err := w.UnmarshalJSON(union(ev)); err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.Name, err)
	}
	v, err := w.ValueByDiscriminator()
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.Name, err)
	}
	return v, nil
}

// Close ends the stream (herald sees the client go away).
func (s *Stream) Close() error { return s.resp.Body.Close() }

// drained reports whether the stream has nothing after its last event.
func (s *Stream) drained() error {
	if _, err := s.r.Next(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("an event after connection-closing (err %v)", err)
	}
	return nil
}
