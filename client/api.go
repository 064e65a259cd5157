package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// NotifyRequest is the body of POST /api/v1/notification.
type NotifyRequest struct {
	EventType string `json:"event_type"`
	// Identifier maps each identifier key to its JSON value.
	Identifier map[string]json.RawMessage `json:"identifier"`
	// Payload is the payload's JSON; nil sends none.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// NotifyResult is the answer of a successful notify.
type NotifyResult struct {
	Status      string `json:"status"`
	RequestID   string `json:"request_id"`
	ProcessedAt string `json:"processed_at"`
	// NotificationID is the stored notification's CloudEvent id,
	// <event_type>@<sequence> (herald; empty from a server that does not
	// send it).
	NotificationID string `json:"notification_id"`
}

// Notify publishes one notification; it returns once the server has
// stored it.
func (c *Client) Notify(ctx context.Context, req NotifyRequest) (*NotifyResult, error) {
	if req.Identifier == nil {
		req.Identifier = map[string]json.RawMessage{}
	}
	var out NotifyResult
	if err := c.doJSON(ctx, http.MethodPost, "api/v1/notification", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RawResult is the answer of a successful raw notify: the ids of the
// notifications the payload unfolded into, in payload order.
type RawResult struct {
	Status      string   `json:"status"`
	RequestID   string   `json:"request_id"`
	ProcessedAt string   `json:"processed_at"`
	Count       int      `json:"count"`
	IDs         []string `json:"ids"`
}

// NotifyRaw publishes a typed payload in its codec's wire format through
// POST /api/v1/events/{event_type}: body is the payload itself, sent with
// contentType (the format's media type), and identifier holds the
// identifier values, sent as query parameters.
func (c *Client) NotifyRaw(ctx context.Context, eventType string, identifier url.Values, contentType string, body io.Reader) (*RawResult, error) {
	u := c.URL("api/v1/events/" + url.PathEscape(eventType))
	u.RawQuery = identifier.Encode()
	resp, err := c.do(ctx, http.MethodPost, u, contentType, body, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &ConnectError{URL: u.String(), Err: fmt.Errorf("reading the answer: %w", err)}
	}
	var out RawResult
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("POST %s: the answer is not the expected JSON: %w", u, err)
	}
	return &out, nil
}

// SchemaList is the answer of GET /api/v1/schema.
type SchemaList struct {
	EventTypes []string `json:"event_types"`
	// Schemas holds each event type's schema object.
	Schemas map[string]json.RawMessage `json:"schema"`
	Total   int                        `json:"total_schemas"`
	Message string                     `json:"message"`
}

// Schemas lists every event type's schema.
func (c *Client) Schemas(ctx context.Context) (*SchemaList, error) {
	var out SchemaList
	if err := c.doJSON(ctx, http.MethodGet, "api/v1/schema", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Schema returns one event type's schema object, as GET
// /api/v1/schema/{event_type} serves it under "schema".
func (c *Client) Schema(ctx context.Context, eventType string) (json.RawMessage, error) {
	var out struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := c.doJSON(ctx, http.MethodGet, "api/v1/schema/"+url.PathEscape(eventType), nil, &out); err != nil {
		return nil, err
	}
	if len(out.Schema) == 0 {
		return nil, fmt.Errorf("GET /api/v1/schema/%s: the answer has no schema", eventType)
	}
	return out.Schema, nil
}

// Field is one identifier field of a schema.
type Field struct {
	Name string
	// Type is the identifier handler: IntHandler, EnumHandler, ...
	Type     string
	Required bool
	// Description is empty when the schema has none.
	Description string
	// Attrs are the handler's other settings in the order the server
	// sent them (values, range, canonical_format, ...), nulls left out.
	Attrs []Member
}

// Fields returns a schema object's identifier fields in the order the
// server sent them.
func Fields(schema json.RawMessage) ([]Field, error) {
	top, err := Members(schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var fields []Field
	for _, m := range top {
		if m.Key != "identifier" {
			continue
		}
		idents, err := Members(m.Value)
		if err != nil {
			return nil, fmt.Errorf("schema identifier: %w", err)
		}
		for _, id := range idents {
			attrs, err := Members(id.Value)
			if err != nil {
				return nil, fmt.Errorf("schema identifier %q: %w", id.Key, err)
			}
			f := Field{Name: id.Key}
			for _, a := range attrs {
				switch a.Key {
				case "type":
					_ = json.Unmarshal(a.Value, &f.Type)
				case "required":
					_ = json.Unmarshal(a.Value, &f.Required)
				case "description":
					_ = json.Unmarshal(a.Value, &f.Description)
				default:
					if string(a.Value) != "null" {
						f.Attrs = append(f.Attrs, a)
					}
				}
			}
			fields = append(fields, f)
		}
	}
	return fields, nil
}

// Member is one member of a JSON object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members splits a JSON object into its members, in their order in the
// text (encoding/json's maps lose it).
func Members(raw json.RawMessage) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object, got %s", firstBytes(raw))
	}
	var out []Member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Member{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// firstBytes quotes the start of a JSON text for an error message.
func firstBytes(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
