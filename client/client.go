// Package client is a Go client of herald's public API: notify (JSON and
// raw typed payloads), the schema endpoints, watch and replay streams
// (Server-Sent Events) that resume by themselves after a disconnect
// without delivering an event twice, and the WebSocket session protocol
// (herald.v1).
//
// It speaks only the documented HTTP and WebSocket API and imports no
// other herald package, so it works against any herald (or, for the Aviso
// endpoints, aviso-server). It owns no command-line concerns: those are in
// package github.com/herald-gateway/herald/client/cli.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a Client.
type Options struct {
	// Token, when not empty, is sent as `Authorization: Bearer <Token>`
	// on every request and on the session's upgrade.
	Token string
	// Insecure skips the verification of the server's TLS certificate.
	// It is meant for test servers with self-signed certificates only.
	Insecure bool
	// HTTPClient, when set, replaces the client built from Insecure.
	HTTPClient *http.Client
}

// Client talks to one herald server. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New returns a client of the herald at baseURL (for example
// http://127.0.0.1:8000, or https://host/prefix behind a proxy). The URL
// must be absolute, http or https, without a query or fragment.
func New(baseURL string, opt Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("server URL %q: the scheme must be http or https", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("server URL %q has no host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("server URL %q: a query or fragment is not allowed", baseURL)
	}
	hc := opt.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// A server that accepts the connection and never answers is
		// given up on (and a stream then resumed) rather than waited
		// for forever; herald answers a stream's headers as soon as
		// the subscription exists.
		tr.ResponseHeaderTimeout = time.Minute
		if opt.Insecure {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure, for self-signed test servers
		}
		hc = &http.Client{Transport: tr}
	}
	return &Client{base: u, token: opt.Token, http: hc}, nil
}

// URL returns the absolute URL of an API path such as "api/v1/schema".
func (c *Client) URL(path string) *url.URL {
	return c.base.JoinPath(path)
}

// APIError is an answer of the server other than success: the HTTP
// status and, from the JSON error body when there is one, its code and
// message.
type APIError struct {
	Status  int
	Code    string
	Message string
	// Body is the answer's body as received (at most 64 KiB).
	Body []byte
}

// Error renders the status and the server's message.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// ConnectError is a request that could not reach the server: the
// connection was refused, the name did not resolve, TLS failed, or the
// connection broke before an answer arrived.
type ConnectError struct {
	URL string
	Err error
	// Lost is true when the connection broke after the server had
	// answered (an event stream cut short).
	Lost bool
}

// Error names the URL and the cause.
func (e *ConnectError) Error() string {
	if e.Lost {
		return fmt.Sprintf("the connection to %s was lost: %v", e.URL, e.Err)
	}
	return fmt.Sprintf("cannot connect to %s: %v", e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// errorBodyLimit bounds how much of an error answer is read.
const errorBodyLimit = 64 << 10

// apiError reads an unsuccessful answer into an *APIError.
func apiError(resp *http.Response) *APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	return newAPIError(resp.StatusCode, body)
}

// newAPIError builds an *APIError from a status and an error body: the
// JSON error model's code and message, else the body's text.
func newAPIError(status int, body []byte) *APIError {
	e := &APIError{Status: status, Body: body}
	var m struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &m) == nil && (m.Message != "" || m.Code != "" || m.Error != "") {
		e.Code, e.Message = m.Code, m.Message
		if e.Message == "" {
			e.Message = m.Error
		}
		return e
	}
	e.Message = strings.TrimSpace(string(body))
	return e
}

// do sends a request and returns the answer when its status is 2xx; any
// other status is an *APIError, a transport failure a *ConnectError.
func (c *Client) do(ctx context.Context, method string, u *url.URL, contentType string, body io.Reader, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &ConnectError{URL: u.String(), Err: unwrapURLError(err)}
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, apiError(resp)
	}
	return resp, nil
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the
// method and URL that ConnectError already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// doJSON sends a JSON body (nil for none) and decodes a JSON answer into
// out.
func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	u := c.URL(path)
	var body io.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode the request: %w", method, u, err)
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, method, u, ct, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return &ConnectError{URL: u.String(), Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, u, err)
	}
	return nil
}
