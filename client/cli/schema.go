package cli

import (
	"context"
	"fmt"
	"strings"
)

const schemaUsage = `Usage: herald schema [EVENT_TYPE] [--output text|json] [client flags]

Prints every event type's schema, or one: the payload rule, then each
identifier field with its handler, whether it is required, its settings
(values, range, canonical_format, ...) and its description. --output
json prints one JSON line per event type, {"event_type":...,"schema":...},
the schema as the server sends it.
`

func (s *streams) schema(ctx context.Context, args []string) error {
	fs, cf := s.newFlags("schema", schemaUsage)
	output := fs.String("output", "text", "`FORMAT`: text or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("unexpected argument %q: herald schema takes at most one event type", pos[1])
	}
	if *output != "text" && *output != "json" {
		return usagef("--output %q: the formats are text and json", *output)
	}
	c, err := s.client(cf)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		sc, err := c.Schema(ctx, pos[0])
		if err != nil {
			return err
		}
		if *output == "json" {
			_, err = fmt.Fprintf(s.stdout, "{\"event_type\":%s,\"schema\":%s}\n", str(pos[0]), compact(sc))
			return err
		}
		return writeSchema(s.stdout, pos[0], sc)
	}
	list, err := c.Schemas(ctx)
	if err != nil {
		return err
	}
	if *output == "json" {
		for _, name := range list.EventTypes {
			if _, err := fmt.Fprintf(s.stdout, "{\"event_type\":%s,\"schema\":%s}\n", str(name), compact(list.Schemas[name])); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list.EventTypes) == 0 {
		msg := strings.TrimSpace(list.Message)
		if msg == "" {
			msg = "no event types"
		}
		_, err := fmt.Fprintln(s.stdout, msg)
		return err
	}
	for i, name := range list.EventTypes {
		if i > 0 {
			fmt.Fprintln(s.stdout)
		}
		if err := writeSchema(s.stdout, name, list.Schemas[name]); err != nil {
			return fmt.Errorf("the schema of %s: %w", name, err)
		}
	}
	return nil
}
