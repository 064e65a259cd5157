package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/herald-gateway/herald/client"
)

const watchUsage = `Usage: herald watch EVENT_TYPE [FILTER...] [--from SEQ | --from-date DATE] [--where PREDICATE] [--format CODEC] [--output text|json] [client flags]

Prints the notifications of EVENT_TYPE that match the filters as they
arrive, one line each: id, time, identifier, payload summary (--output
json: each CloudEvent as one JSON line). --from or --from-date first
replays history from that point. When the connection is lost or the
server ends the stream, it reconnects by itself from the next sequence,
with a growing delay after failures, and never prints a notification
twice. It runs until interrupted (exit 0), or until the event type is
removed from the server (exit 1).

` + filterHelp + `
Example:
  herald watch mars class=od 'step>=6' --from 0 --where "stream = 'enfo'"
`

const replayUsage = `Usage: herald replay EVENT_TYPE [FILTER...] (--from SEQ | --from-date DATE) [--to-id SEQ | --to-date DATE] [--where PREDICATE] [--format CODEC] [--output text|json] [client flags]

Prints the stored notifications of EVENT_TYPE that match the filters from
a sequence (0 is the beginning) or a date, up to --to-id or --to-date or
the newest, then exits 0. When standard error is a terminal it shows a
progress line: events so far, the rate and, with --to-id, a bar and the
time left. A lost connection is resumed from the next sequence.

` + filterHelp + `
Example:
  herald replay mars class=od --from-date 2025-07-06 --to-id 5000
`

// bareDate is a date without a time, which the server does not take as
// a cursor: it is sent as that day's midnight UTC.
var bareDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func (s *streams) stream(ctx context.Context, mode client.Mode, args []string) error {
	name, usage := "watch", watchUsage
	if mode == client.Replay {
		name, usage = "replay", replayUsage
	}
	fs, cf := s.newFlags(name, usage)
	from := fs.String("from", "", "start at sequence `SEQ` (0 is the beginning; EVENT_TYPE@SEQ also works)")
	fromDate := fs.String("from-date", "", "start at `DATE` (RFC 3339, YYYY-MM-DD HH:MM:SS, epoch seconds or milliseconds, or YYYY-MM-DD for its midnight UTC)")
	where := fs.String("where", "", "a WHERE `PREDICATE` over the identifier, e.g. \"step >= 6 AND stream = 'enfo'\"")
	format := fs.String("format", "", "render typed payloads with codec `NAME` (herald schema EVENT_TYPE lists the formats); default the JSON row view")
	output := fs.String("output", "text", "`FORMAT` of each notification: text (one readable line) or json (the CloudEvent)")
	var toID, toDate *string
	if mode == client.Replay {
		toID = fs.String("to-id", "", "end at sequence `SEQ`, inclusive")
		toDate = fs.String("to-date", "", "end at `DATE`, inclusive")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	set := setFlags(fs)
	if len(pos) == 0 {
		return usagef("the event type is missing: herald %s EVENT_TYPE [FILTER...]", name)
	}
	eventType := pos[0]
	if *output != "text" && *output != "json" {
		return usagef("--output %q: the formats are text and json", *output)
	}
	if set["from"] && set["from-date"] {
		return usagef("--from and --from-date exclude one another: give one start")
	}
	req := client.StreamRequest{EventType: eventType, Where: *where, Format: *format}
	if set["from"] {
		if req.FromID, err = sequenceFlag("--from", *from, eventType); err != nil {
			return err
		}
	}
	if set["from-date"] {
		if req.FromDate, err = dateFlag("--from-date", *fromDate); err != nil {
			return err
		}
	}
	if mode == client.Replay {
		if !set["from"] && !set["from-date"] {
			return usagef("replay needs a start: --from SEQ (0 is the beginning) or --from-date DATE")
		}
		if set["to-id"] && set["to-date"] {
			return usagef("--to-id and --to-date exclude one another: give one end")
		}
		if set["to-id"] {
			if req.ToID, err = sequenceFlag("--to-id", *toID, eventType); err != nil {
				return err
			}
		}
		if set["to-date"] {
			if req.ToDate, err = dateFlag("--to-date", *toDate); err != nil {
				return err
			}
		}
	}
	c, err := s.client(cf)
	if err != nil {
		return err
	}
	var fields map[string]string
	if len(pos) > 1 {
		if fields, err = schemaFields(ctx, c, eventType); err != nil {
			return err
		}
	}
	if req.Identifier, err = identifier(pos[1:], fields, false); err != nil {
		return err
	}
	return s.follow(ctx, c, mode, name, req, *output == "json")
}

// follow runs the stream and prints it.
func (s *streams) follow(ctx context.Context, c *client.Client, mode client.Mode, name string, req client.StreamRequest, asJSON bool) error {
	var bar *progress
	if mode == client.Replay && isTerminal(s.stderr) {
		bar = newProgress(s.stderr, s.now, isTerminal(s.stdout))
		first, haveFirst := uint64(0), false
		if req.FromID != "" {
			first, _ = strconv.ParseUint(req.FromID, 10, 64)
			haveFirst = true
		}
		end, haveEnd := uint64(0), false
		if req.ToID != "" {
			end, _ = strconv.ParseUint(req.ToID, 10, 64)
			haveEnd = true
		}
		bar.setRange(first, haveFirst, end, haveEnd)
		bar.tick()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(progressEvery)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					bar.tick()
				}
			}
		}()
	}
	notice := func(format string, args ...any) {
		text := fmt.Sprintf("herald "+name+": "+format, args...)
		if bar != nil {
			bar.note(text)
			return
		}
		fmt.Fprintln(s.stderr, text)
	}
	h := client.Handler{
		OnEvent: func(ev *client.Event) error {
			line := eventLine(ev.CloudEvent)
			if asJSON {
				line = compact(ev.CloudEvent)
			}
			write := func() error {
				_, err := fmt.Fprintln(s.stdout, line)
				return err
			}
			if bar != nil {
				return bar.event(ev.Seq, write)
			}
			return write()
		},
		OnControl: func(ctl *client.Control) {
			if ctl.Event == "error" {
				var d struct {
					Error, Message string
				}
				_ = json.Unmarshal(ctl.Data, &d)
				notice("the server reported: %s: %s", d.Error, d.Message)
			}
		},
		OnReconnect: func(r *client.Reconnect) {
			where := "live"
			switch {
			case r.FromID != "":
				where = "from " + req.EventType + "@" + r.FromID
			case r.FromDate != "":
				where = "from " + r.FromDate
			}
			notice("%s; reconnecting %s in %s", r.Cause, where, r.Delay.Round(time.Millisecond))
		},
	}
	opt := client.FollowOptions{}
	if mode == client.Replay {
		opt.MaxAttempts = 5
	}
	end, err := c.Follow(ctx, mode, req, h, opt)
	if bar != nil {
		bar.finish(err == nil)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if mode == client.Replay {
				return errInterrupted
			}
			return nil
		}
		return err
	}
	if end.Reason == "schema_removed" {
		notice("the server ended the stream: %s (%s)", end.Message, end.Reason)
		return errSilent
	}
	if end.LimitReached > 0 {
		next := "its start"
		if end.HaveLast {
			next = "--from " + strconv.FormatUint(end.Last+1, 10)
		}
		notice("stopped at the server's replay limit of %d notifications; continue with %s", end.LimitReached, next)
	}
	return nil
}

// sequenceFlag checks a sequence flag: a decimal sequence, or a
// notification id EVENT_TYPE@SEQ of the event type.
func sequenceFlag(flagName, v, eventType string) (string, error) {
	raw := v
	if at := strings.LastIndexByte(v, '@'); at >= 0 {
		if v[:at] != eventType {
			return "", usagef("%s %q names event type %q, not %s", flagName, raw, v[:at], eventType)
		}
		v = v[at+1:]
	}
	if _, err := strconv.ParseUint(v, 10, 64); err != nil {
		return "", usagef("%s %q is not a sequence number (a decimal integer ≥ 0, or %s@N)", flagName, raw, eventType)
	}
	return v, nil
}

// dateFlag checks a date flag; a bare YYYY-MM-DD becomes its midnight
// UTC. The server parses and checks the rest.
func dateFlag(flagName, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", usagef("%s is empty", flagName)
	}
	if bareDate.MatchString(v) {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return "", usagef("%s %q is not a date: %v", flagName, v, err)
		}
		return v + "T00:00:00Z", nil
	}
	return v, nil
}
