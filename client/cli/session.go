package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/herald-gateway/herald/client"
)

const sessionUsage = `Usage: herald session [client flags]

Opens a WebSocket session (GET /api/v1/session, protocol herald.v1) and
reads statements from standard input, one per line, printing the replies
and every subscription's events as they arrive:

  CREATE SUBSCRIPTION name TO event_type [BLOCKING|DROPPING] [BATCH SAMPLE RATE r] [WHERE predicate]
  DELETE SUBSCRIPTION name
  DESCRIBE EVENT TYPE event_type [WHERE predicate]
  ping
  {"op": ...}          any request of the protocol, as one JSON object
  quit                 (or the end of the input) closes the session

CREATE SUBSCRIPTION takes its identifier from the top-level AND
conditions of WHERE: CREATE SUBSCRIPTION s1 TO mars WHERE class = 'od'
AND step >= 6 pins the required class.

At the end of the input it waits for the outstanding replies, then
closes. It exits 0, or 1 when the server refused a request, or 3 when
the connection is lost.
`

const sessionHelp = `statements:
  CREATE SUBSCRIPTION name TO event_type [BLOCKING|DROPPING] [BATCH SAMPLE RATE r] [WHERE predicate]
  DELETE SUBSCRIPTION name
  DESCRIBE EVENT TYPE event_type [WHERE predicate]
  ping | {"op": ...} | quit
`

// sessionPrompt is shown when standard input is a terminal.
const sessionPrompt = "herald> "

func (s *streams) session(ctx context.Context, args []string) error {
	fs, cf := s.newFlags("session", sessionUsage)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q: herald session reads its statements from standard input", pos[0])
	}
	c, err := s.client(cf)
	if err != nil {
		return err
	}
	sess, err := c.DialSession(ctx)
	if err != nil {
		return err
	}
	defer sess.Close()
	w := sess.Welcome
	fmt.Fprintf(s.stdout, "connected to %s: session %s (protocol %s)\n", w.Server, w.SessionID, w.Protocol)
	interactive := isTerminal(s.stdin)
	prompt := func() {
		if interactive {
			fmt.Fprint(s.stdout, sessionPrompt)
		}
	}
	prompt()

	// done stops the reading goroutines when the session ends.
	done := make(chan struct{})
	defer close(done)
	input := make(chan string)
	lines := input // nil once the input has ended
	go func() {
		defer close(input)
		sc := bufio.NewScanner(s.stdin)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			select {
			case input <- sc.Text():
			case <-done:
				return
			}
		}
	}()
	type frameOrErr struct {
		f   *client.Frame
		err error
	}
	frames := make(chan frameOrErr)
	go func() {
		for {
			f, err := sess.Next(ctx)
			select {
			case frames <- frameOrErr{f, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()

	pending := map[string]string{} // request id → what it was
	inputDone, refused := false, false
	for {
		if inputDone && len(pending) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				inputDone = true
				lines = nil
				continue
			}
			kind, req, err := statement(line)
			switch {
			case err != nil:
				fmt.Fprintln(s.stdout, "error: "+err.Error())
				prompt()
				continue
			case kind == "":
				prompt()
				continue
			case kind == "help":
				fmt.Fprint(s.stdout, sessionHelp)
				prompt()
				continue
			case kind == "quit":
				inputDone = true
				lines = nil
				continue
			}
			var id string
			if req.op == "" {
				id, err = sess.Send(ctx, req.raw)
				if err != nil && !isConnect(err) {
					fmt.Fprintln(s.stdout, "error: "+err.Error())
					prompt()
					continue
				}
			} else {
				id, err = sess.Request(ctx, req.op, req.fields)
			}
			if err != nil {
				return err
			}
			pending[id] = kind
		case fe := <-frames:
			if fe.err != nil {
				var ce *client.CloseError
				if errors.As(fe.err, &ce) {
					fmt.Fprintln(s.stdout, ce.Error())
					if ce.Code == 1000 {
						return nil
					}
					return &client.ConnectError{URL: c.URL("api/v1/session").String(), Err: ce}
				}
				return fe.err
			}
			f := fe.f
			if f.Type == "reply" {
				id := string(f.ID)
				kind := pending[id]
				delete(pending, id)
				if !f.OK {
					refused = true
				}
				s.printReply(kind, f)
				if len(pending) == 0 {
					prompt()
				}
				continue
			}
			s.printFrame(f)
		}
	}
	if err := sess.Close(); err != nil && !isConnect(err) {
		var ce *client.CloseError
		if !errors.As(err, &ce) {
			fmt.Fprintln(s.stderr, "herald session: closing: "+err.Error())
		}
	}
	if refused {
		return errSilent
	}
	return nil
}

func isConnect(err error) bool {
	var ce *client.ConnectError
	return errors.As(err, &ce)
}

// sessionRequest is what a line becomes: an op with fields, or raw JSON.
type sessionRequest struct {
	op     string
	fields map[string]any
	raw    json.RawMessage
}

// statement reads one input line: its kind ("" for nothing to send,
// create, delete, describe, ping, raw, help, quit) and the request.
func statement(line string) (string, sessionRequest, error) {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "--") {
		return "", sessionRequest{}, nil
	}
	if strings.HasPrefix(t, "{") {
		if !json.Valid([]byte(t)) {
			return "", sessionRequest{}, fmt.Errorf("the line starts with { but is not one JSON object: %s", jsonProblem([]byte(t)))
		}
		return "raw", sessionRequest{raw: json.RawMessage(t)}, nil
	}
	words := strings.Fields(strings.ToUpper(t))
	switch {
	case len(words) == 1 && (words[0] == "QUIT" || words[0] == "EXIT" || words[0] == `\Q`):
		return "quit", sessionRequest{}, nil
	case len(words) == 1 && (words[0] == "HELP" || words[0] == "?"):
		return "help", sessionRequest{}, nil
	case len(words) == 1 && strings.TrimSuffix(words[0], ";") == "PING":
		return "ping", sessionRequest{op: "ping"}, nil
	}
	kind := "execute"
	if len(words) > 0 {
		switch strings.TrimSuffix(words[0], ";") {
		case "CREATE":
			kind = "create"
		case "DELETE":
			kind = "delete"
		case "DESCRIBE":
			kind = "describe"
		}
	}
	return kind, sessionRequest{op: "execute", fields: map[string]any{"statement": t}}, nil
}

// printReply prints the reply to a request of the given kind.
func (s *streams) printReply(kind string, f *client.Frame) {
	out := s.stdout
	if !f.OK {
		code, msg := "", ""
		if f.Error != nil {
			code, msg = f.Error.Code, f.Error.Message
		}
		fmt.Fprintf(out, "error %s: %s\n", code, msg)
		return
	}
	var r struct {
		Name       string          `json:"name"`
		Generation int64           `json:"generation"`
		Topic      string          `json:"topic"`
		Boundary   string          `json:"boundary"`
		EventType  string          `json:"event_type"`
		Schema     json.RawMessage `json:"schema"`
		Where      *string         `json:"where"`
		Time       string          `json:"time"`
	}
	_ = json.Unmarshal(f.Raw, &r)
	switch {
	case r.Generation != 0 && r.Topic != "":
		// CREATE SUBSCRIPTION, or a subscribe or replay written as JSON.
		fmt.Fprintf(out, "subscribed %s (generation %d) to %s, boundary %s\n", r.Name, r.Generation, r.Topic, r.Boundary)
	case kind == "delete":
		fmt.Fprintf(out, "unsubscribed %s\n", r.Name)
	case kind == "describe" && len(r.Schema) > 0:
		if err := writeSchema(out, r.EventType, r.Schema); err != nil {
			fmt.Fprintln(out, compact(f.Raw))
		}
		if r.Where != nil {
			fmt.Fprintf(out, "  where: %s\n", *r.Where)
		}
	case kind == "ping":
		fmt.Fprintf(out, "pong %s\n", r.Time)
	default:
		fmt.Fprintln(out, compact(f.Raw))
	}
}

// printFrame prints a server frame.
func (s *streams) printFrame(f *client.Frame) {
	out := s.stdout
	var d struct {
		Sub          string            `json:"sub"`
		Events       []json.RawMessage `json:"events"`
		LastID       string            `json:"last_id"`
		Count        int64             `json:"count"`
		Reason       string            `json:"reason"`
		ResumeFromID string            `json:"resume_from_id"`
		Message      string            `json:"message"`
		IDs          []string          `json:"ids"`
	}
	_ = json.Unmarshal(f.Raw, &d)
	switch f.Type {
	case "events":
		for _, ev := range d.Events {
			fmt.Fprintf(out, "[%s] %s\n", d.Sub, eventLine(ev))
		}
	case "history_completed":
		fmt.Fprintf(out, "[%s] history completed at %s\n", d.Sub, d.LastID)
	case "dropped":
		fmt.Fprintf(out, "[%s] dropped %d notifications\n", d.Sub, d.Count)
	case "subscription_ended":
		line := fmt.Sprintf("[%s] ended: %s", d.Sub, d.Reason)
		if d.ResumeFromID != "" {
			line += ", resume from " + d.ResumeFromID
		}
		if d.Message != "" {
			line += ": " + d.Message
		}
		fmt.Fprintln(out, line)
	case "skipped":
		fmt.Fprintf(out, "[%s] skipped %s (%s)\n", d.Sub, strings.Join(d.IDs, ", "), d.Reason)
	case "error":
		code, msg := "", ""
		if f.Error != nil {
			code, msg = f.Error.Code, f.Error.Message
		}
		fmt.Fprintf(out, "error %s: %s\n", code, msg)
	default:
		fmt.Fprintln(out, compact(f.Raw))
	}
}
