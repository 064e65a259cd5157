package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// avisoReplay is a replay stream framed as aviso-server frames it: one
// event and one data line per event, a blank line after each, control
// events with a type member, CloudEvents with their keys sorted, the
// close event last.
func avisoReplay(events int, end string) string {
	var b strings.Builder
	b.WriteString("event: replay-control\ndata: {\"batch_size\":1000,\"end_sequence\":null,\"from_date\":null,\"from_sequence\":1," +
		"\"request_id\":\"r1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"to_date\":null,\"topic\":\"replay.*.*.*\",\"type\":\"replay_started\"}\n\n")
	for i := range events {
		fmt.Fprintf(&b, "event: replay\ndata: {\"data\":{\"identifier\":{\"class\":\"c%02d\",\"kind\":\"k\",\"step\":\"%d\"},\"payload\":{\"i\":%d}},"+
			"\"datacontenttype\":\"application/json\",\"dataschema\":\"http://localhost/schema/replay\",\"id\":\"replay@%d\","+
			"\"source\":\"http://localhost\",\"specversion\":\"1.0\",\"time\":\"2026-01-01T00:00:00.123Z\",\"type\":\"int.ecmwf.aviso.replay\"}\n\n",
			i%16, i, i, i+1)
	}
	b.WriteString(end)
	return b.String()
}

const (
	completed = "event: replay-control\ndata: {\"timestamp\":\"2026-01-01T00:00:01Z\",\"topic\":\"replay.*.*.*\",\"type\":\"replay_completed\"}\n\n"
	closing   = "event: connection-closing\ndata: {\"message\":\"Stream completed\",\"reason\":\"end_of_stream\",\"request_id\":\"r1\"," +
		"\"timestamp\":\"2026-01-01T00:00:01Z\",\"topic\":\"replay.*.*.*\"}\n\n"
	limit = "event: replay-control\ndata: {\"max_allowed\":3,\"message\":\"Historical replay limited to 3 messages.\"," +
		"\"timestamp\":\"2026-01-01T00:00:01Z\",\"topic\":\"replay.*.*.*\",\"type\":\"notification_replay_limit_reached\"}\n\n"
)

// TestReplayCount follows replay streams framed as aviso-server frames
// them: a complete one is counted exactly, and a truncated one, one with
// an error event, one ending without replay_completed and one cut off
// are refused.
func TestReplayCount(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         int
		err          string
	}{
		{"complete", avisoReplay(5, completed+closing), 5, ""},
		{"empty", avisoReplay(0, completed+closing), 0, ""},
		{"CRLF lines", strings.ReplaceAll(avisoReplay(3, completed+closing), "\n", "\r\n"), 3, ""},
		{"truncated", avisoReplay(3, limit+closing), 3, "notification_replay_limit_reached"},
		{"error event", avisoReplay(2, "event: error\ndata: {\"error\":\"stream_processing_failed\"}\n\n"+closing), 2, "error event after 2 events"},
		{"no replay_completed", avisoReplay(2, closing), 2, "without replay_completed"},
		{"cut off", avisoReplay(2, completed), 2, io.ErrUnexpectedEOF.Error()},
		{"replay before start", "event: replay\ndata: {\"specversion\":\"1.0\"}\n\n" + completed + closing, 0, "outside replay_started"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := &replayCount{began: time.Now()}
			err := scanSSE(strings.NewReader(c.stream), rc.on)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
			if rc.n != c.want {
				t.Errorf("counted %d replay events, want %d", rc.n, c.want)
			}
			if c.err == "" && rc.completed <= 0 {
				t.Errorf("no completion time")
			}
		})
	}
}

// TestLiveEvents checks the reading of a live watch as aviso-server
// frames it: the opening control event, a heartbeat, a CloudEvent
// carrying a send time, and multi-line data.
func TestLiveEvents(t *testing.T) {
	stream := "event: live-notification\ndata: {\"connection_will_close_in_seconds\":3600,\"request_id\":\"r\",\"timestamp\":\"2026-01-01T00:00:00Z\"," +
		"\"topic\":\"live.*.*.*\",\"type\":\"connection_established\"}\n\n" +
		"event: heartbeat\ndata: {\"timestamp\":\"2026-01-01T00:00:00Z\",\"topic\":\"live.*.*.*\"}\n\n" +
		": a comment\nid: 7\n" +
		"event: live-notification\ndata: {\"data\":{\"identifier\":{\"class\":\"c01\",\"kind\":\"k\",\"step\":\"1\"},\"payload\":{\"t\":1765000000123456789}}," +
		"\"id\":\"live@2\",\"specversion\":\"1.0\"}\n\n" +
		"event: x\ndata: a\ndata: b\n\n"
	var got []string
	err := scanSSE(strings.NewReader(stream), func(ev sseEvent) (bool, error) {
		got = append(got, fmt.Sprintf("%s %q %d", ev.name, controlType(ev.data), stamp(ev.data)))
		if ev.name == "x" && string(ev.data) != "a\nb" {
			t.Errorf("multi-line data %q, want \"a\\nb\"", ev.data)
		}
		return true, nil
	})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("end of stream: %v, want io.ErrUnexpectedEOF", err)
	}
	want := []string{`live-notification "connection_established" 0`, `heartbeat "" 0`, `live-notification "" 1765000000123456789`, `x "" 0`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// FuzzScanSSE feeds arbitrary bytes to the event stream reader: it never
// panics, delivers names without newlines and neither names nor data
// ending in a carriage return (a CRLF line end), and reports the end
// of the input as a stream cut off.
func FuzzScanSSE(f *testing.F) {
	f.Add([]byte(avisoReplay(2, completed+closing)))
	f.Add([]byte("event: a\r\ndata: x\r\n\r\n"))
	f.Add([]byte("data:\n\ndata\n\n\n\nevent:\n"))
	f.Add([]byte(strings.Repeat("data: "+strings.Repeat("y", 20000)+"\n", 2) + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		err := scanSSE(strings.NewReader(string(in)), func(ev sseEvent) (bool, error) {
			if strings.Contains(ev.name, "\n") || strings.HasSuffix(ev.name, "\r") || strings.HasSuffix(string(ev.data), "\r") {
				t.Fatalf("event %q with data %q carries a line end", ev.name, ev.data)
			}
			_ = stamp(ev.data)
			_ = controlType(ev.data)
			return true, nil
		})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("end of input: %v, want io.ErrUnexpectedEOF", err)
		}
	})
}
