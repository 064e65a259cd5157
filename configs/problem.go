package configs

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a configuration: a key the loader does not
// know, a value of the wrong type, or a broken validation rule.
//
// Problems found while reading the file (unknown keys, type mismatches,
// duplicate keys) read "<path>: <rule> (line N)". Problems found by
// validation inside an event type read
// "notification_schema.<event type> (line N): <field>: <rule>", where N is
// the line of the event type's key. Problems caused by an environment
// override start with the variable's name.
type Problem struct {
	// Path is the full key path, e.g.
	// "notification_schema.mars.identifier.step.range".
	Path string
	// Line is the line in the config file the problem points at; 0 when
	// unknown (a default value, an environment override).
	Line int
	// EventType is the event type a validation problem belongs to; empty
	// for global settings and for problems found while reading the file.
	EventType string
	// Field is the key path inside the event type ("topic.key_order") for
	// a validation problem of an event type; otherwise the full path.
	Field string
	// Rule says what is wrong and, where it helps, how to fix it.
	Rule string
	// Env names the environment variable the value came from; empty when
	// it came from the file.
	Env string
}

// Error formats the problem for a terminal.
func (p Problem) Error() string {
	var b strings.Builder
	if p.Env != "" {
		b.WriteString(p.Env)
		b.WriteString(": ")
	}
	if p.EventType != "" {
		b.WriteString("notification_schema.")
		b.WriteString(p.EventType)
		if p.Line > 0 && p.Env == "" {
			fmt.Fprintf(&b, " (line %d)", p.Line)
		}
		b.WriteString(": ")
		b.WriteString(p.Field)
		b.WriteString(": ")
		b.WriteString(p.Rule)
		return b.String()
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Rule)
	if p.Line > 0 && p.Env == "" {
		fmt.Fprintf(&b, " (line %d)", p.Line)
	}
	return b.String()
}

// Problems is the error returned by Load, Parse and Validate: every problem
// found, in file order (global settings first, then each event type).
// Use errors.As to get at the individual problems.
type Problems []Problem

// Error lists the problems, one per line after a count when there are
// several.
func (ps Problems) Error() string {
	switch len(ps) {
	case 0:
		return "no problems"
	case 1:
		return ps[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}
