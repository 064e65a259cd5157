package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/herald-gateway/herald/client"
)

// payloadSummaryRunes bounds the payload part of a readable event line.
const payloadSummaryRunes = 72

// eventLine renders a CloudEvent as one readable line: the id, the time,
// the identifier as key=value pairs in the server's order, and the
// payload's compact JSON, cut to payloadSummaryRunes with "…":
//
//	mars@3  2025-07-06T12:00:00Z  class=od date=20250706 step=12  {"path":"/data/…"}
func eventLine(ce json.RawMessage) string {
	var ev struct {
		ID   string          `json:"id"`
		Time string          `json:"time"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(ce, &ev); err != nil {
		return compact(ce)
	}
	var b strings.Builder
	b.WriteString(ev.ID)
	b.WriteString("  ")
	b.WriteString(ev.Time)
	b.WriteString("  ")
	var ident, payload json.RawMessage
	if data, err := client.Members(ev.Data); err == nil {
		for _, m := range data {
			switch m.Key {
			case "identifier":
				ident = m.Value
			case "payload":
				payload = m.Value
			}
		}
	}
	members, _ := client.Members(ident)
	for i, m := range members {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(m.Key)
		b.WriteByte('=')
		b.WriteString(value(m.Value))
	}
	if len(members) == 0 {
		b.WriteString("-")
	}
	b.WriteString("  ")
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	b.WriteString(cut(compact(payload), payloadSummaryRunes))
	return b.String()
}

// value renders an identifier value: a string as it is (quoted when it
// is empty or holds spaces or quotes), anything else as compact JSON.
func value(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" || strings.ContainsAny(s, " \t\n\"") {
			return strconv.Quote(s)
		}
		return s
	}
	return compact(raw)
}

// compact renders JSON without insignificant space.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// cut shortens s to n runes, the last one an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// writeSchema prints one event type's schema readably:
//
//	mars
//	  payload: optional
//	  class   EnumHandler   required  values: od, rd
//	          MARS class, e.g. od for operational data.
//	  step    IntHandler    optional  range: [0, 360]
func writeSchema(w io.Writer, name string, schema json.RawMessage) error {
	fields, err := client.Fields(schema)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, name)
	top, _ := client.Members(schema)
	for _, m := range top {
		if m.Key != "payload" {
			continue
		}
		writePayload(w, m.Value)
	}
	nameW, typeW := 0, 0
	for _, f := range fields {
		nameW = max(nameW, utf8.RuneCountInString(f.Name))
		typeW = max(typeW, len(f.Type))
	}
	for _, f := range fields {
		req := "optional"
		if f.Required {
			req = "required"
		}
		line := fmt.Sprintf("  %-*s  %-*s  %s", nameW, f.Name, typeW, f.Type, req)
		var attrs []string
		for _, a := range f.Attrs {
			attrs = append(attrs, a.Key+": "+attrValue(a.Value))
		}
		if len(attrs) > 0 {
			line += "  " + strings.Join(attrs, "  ")
		}
		fmt.Fprintln(w, line)
		if f.Description != "" {
			fmt.Fprintf(w, "  %*s  %s\n", nameW, "", f.Description)
		}
	}
	if len(fields) == 0 {
		fmt.Fprintln(w, "  (no identifier fields)")
	}
	return nil
}

// writePayload prints a schema's payload rules: "payload: required" or
// "optional", then any further settings (a typed payload's codec, ...),
// multi-line text indented below its key.
func writePayload(w io.Writer, raw json.RawMessage) {
	if string(bytes.TrimSpace(raw)) == "null" {
		fmt.Fprintln(w, "  payload: optional")
		return
	}
	members, err := client.Members(raw)
	if err != nil {
		fmt.Fprintln(w, "  payload: "+compact(raw))
		return
	}
	req := "optional"
	var rest []client.Member
	for _, m := range members {
		if m.Key == "required" {
			if string(m.Value) == "true" {
				req = "required"
			}
			continue
		}
		if string(m.Value) != "null" {
			rest = append(rest, m)
		}
	}
	fmt.Fprintln(w, "  payload: "+req)
	for _, m := range rest {
		var s string
		if json.Unmarshal(m.Value, &s) == nil && strings.Contains(s, "\n") {
			fmt.Fprintf(w, "    %s:\n", m.Key)
			for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				fmt.Fprintln(w, "      "+l)
			}
			continue
		}
		fmt.Fprintf(w, "    %s: %s\n", m.Key, attrValue(m.Value))
	}
}

// attrValue renders a schema setting: strings bare, lists of strings
// comma-separated, anything else as compact JSON with a space after each
// comma.
func attrValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		return strings.Join(ss, ", ")
	}
	var xs []json.RawMessage
	if json.Unmarshal(raw, &xs) == nil {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = compact(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return compact(raw)
}
