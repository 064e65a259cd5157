package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/herald-gateway/herald/client"
)

const notifyUsage = `Usage: herald notify EVENT_TYPE KEY=VALUE... [--payload JSON | --payload-file FILE] [client flags]
       herald notify EVENT_TYPE [KEY=VALUE...] --raw FILE --content-type TYPE [client flags]

Publishes one notification and prints its id (EVENT_TYPE@SEQUENCE) once
the server has stored it. Every identifier of the event type is given as
KEY=VALUE (herald schema EVENT_TYPE lists them); the payload is JSON.

--raw sends FILE (- for standard input) as a typed payload in its codec's
wire format to POST /api/v1/events/EVENT_TYPE, with --content-type the
format's media type (application/cbor, application/x-protobuf, ...); the
identifiers go as query parameters and may be completed by the payload's
own fields. One payload may unfold into several notifications: each id is
printed on its own line.

Example:
  herald notify mars class=od expver=1 domain=g date=2025-07-06 time=12 stream=enfo step=12 \
      --payload '{"path":"/data/od/enfo/20250706/12/step12.grib"}'
`

func (s *streams) notify(ctx context.Context, args []string) error {
	fs, cf := s.newFlags("notify", notifyUsage)
	payload := fs.String("payload", "", "the payload, a `JSON` value")
	payloadFile := fs.String("payload-file", "", "read the JSON payload from `FILE` (- for standard input)")
	raw := fs.String("raw", "", "send `FILE` (- for standard input) as a typed payload to POST /api/v1/events/EVENT_TYPE")
	contentType := fs.String("content-type", "", "the media `TYPE` of --raw's payload")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	set := setFlags(fs)
	if len(pos) == 0 {
		return usagef("the event type is missing: herald notify EVENT_TYPE KEY=VALUE...")
	}
	eventType, idents := pos[0], pos[1:]
	if n := count(set["payload"], set["payload-file"], set["raw"]); n > 1 {
		return usagef("--payload, --payload-file and --raw exclude one another: give one")
	}
	if set["content-type"] && !set["raw"] {
		return usagef("--content-type goes with --raw FILE")
	}
	c, err := s.client(cf)
	if err != nil {
		return err
	}
	if set["raw"] {
		if *contentType == "" {
			return usagef("--raw needs --content-type, the media type of the payload's format")
		}
		return s.notifyRaw(ctx, c, eventType, idents, *raw, *contentType)
	}
	var body json.RawMessage
	switch {
	case set["payload"]:
		if !json.Valid([]byte(*payload)) {
			return usagef("--payload is not valid JSON: %s", jsonProblem([]byte(*payload)))
		}
		body = json.RawMessage(*payload)
	case set["payload-file"]:
		b, err := s.readInput(*payloadFile)
		if err != nil {
			return usagef("--payload-file: %v", err)
		}
		if !json.Valid(b) {
			return usagef("--payload-file %s is not valid JSON: %s", *payloadFile, jsonProblem(b))
		}
		body = b
	}
	fields, err := schemaFields(ctx, c, eventType)
	if err != nil {
		return err
	}
	ident, err := identifier(idents, fields, true)
	if err != nil {
		return err
	}
	res, err := c.Notify(ctx, client.NotifyRequest{EventType: eventType, Identifier: ident, Payload: body})
	if err != nil {
		return err
	}
	if res.NotificationID == "" {
		// A server that does not say (aviso-server): the request id is
		// what there is.
		fmt.Fprintf(s.stderr, "herald notify: stored (the server names no notification id; request %s)\n", res.RequestID)
		return nil
	}
	_, err = fmt.Fprintln(s.stdout, res.NotificationID)
	return err
}

// notifyRaw sends a typed payload in its wire format.
func (s *streams) notifyRaw(ctx context.Context, c *client.Client, eventType string, idents []string, file, contentType string) error {
	q := url.Values{}
	for _, a := range idents {
		arg, err := ParseArg(a)
		if err != nil {
			return err
		}
		if arg.Op != "=" {
			return &ArgError{a, "notify takes key=value: " + arg.Op + " filters, on watch and replay"}
		}
		if q.Has(arg.Key) {
			return &ArgError{a, arg.Key + " is given twice"}
		}
		q.Set(arg.Key, arg.Value)
	}
	body, err := s.readInput(file)
	if err != nil {
		return usagef("--raw: %v", err)
	}
	res, err := c.NotifyRaw(ctx, eventType, q, contentType, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, id := range res.IDs {
		if _, err := fmt.Fprintln(s.stdout, id); err != nil {
			return err
		}
	}
	return nil
}

// readInput reads a file named on the command line, - for stdin.
func (s *streams) readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(s.stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %v", name, pe.Err)
		}
		return nil, err
	}
	return b, nil
}

// schemaFields fetches an event type's identifier handlers, by field
// name. A server without a schema for it (404: an unknown event type, or
// a server that accepts schema-less notifications) gives nil, and the
// request itself then gets the server's answer.
func schemaFields(ctx context.Context, c *client.Client, eventType string) (map[string]string, error) {
	schema, err := c.Schema(ctx, eventType)
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fields, err := client.Fields(schema)
	if err != nil {
		return nil, fmt.Errorf("the schema of %s: %w", eventType, err)
	}
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f.Name] = f.Type
	}
	return m, nil
}

// jsonProblem describes why b is not JSON.
func jsonProblem(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err.Error()
	}
	return "not one JSON value"
}

// setFlags lists the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { m[f.Name] = true })
	return m
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
