package notification

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/go-json-experiment/json/jsontext"
)

// BatchLimitError is a batch notify carrying more notifications than the
// configured limit.
type BatchLimitError struct {
	// Count is the number of notifications in the batch; Max the limit.
	Count, Max int
}

// Error returns the message.
func (e *BatchLimitError) Error() string {
	return fmt.Sprintf("the batch has %d notifications; at most %d are allowed (application.max_batch_notifications)", e.Count, e.Max)
}

// batchAllowed lists the top-level keys of a batch notify body.
const batchAllowed = "notifications"

// ParseNotifyBatch reads the body of a batch notify,
// {"notifications": [<notify request>, …]}, in the order of ParseRequest:
// the whole body is checked as JSON first (InvalidJSON: strict UTF-8, no
// trailing data), then its top level: an object (InvalidShape), no key
// but notifications (UnknownField), that key once, an array with at
// least one element (InvalidShape). A batch of more than max elements is
// a *BatchLimitError. The elements are returned in order as raw spans of
// body, not looked into: each is one notify request body for
// ParseNotifyRequest, which checks it as it checks a single notify.
func ParseNotifyBatch(body []byte, max int) ([][]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &ParseError{Kind: InvalidJSON, Detail: "EOF while parsing a value: the body is empty"}
	}
	// A *bytes.Buffer is parsed in place, without a copy (as scanRequest
	// does); body itself is never written.
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true))
	kind := body[len(body)-len(bytes.TrimLeft(body, " \t\r\n"))]
	if kind != '{' {
		if err := dec.SkipValue(); err != nil {
			return nil, &ParseError{Kind: InvalidJSON, Detail: syntaxErr(body, err).Error()}
		}
		if err := trailing(dec, body); err != nil {
			return nil, &ParseError{Kind: InvalidJSON, Detail: err.Error()}
		}
		return nil, &ParseError{Kind: InvalidShape, Detail: "expected a JSON object with notifications, found " + jsonKind(kind)}
	}
	var (
		elems    [][]byte
		count    int
		found    int  // notifications keys seen
		notArray byte // the first notifications value's kind, when not an array
		unknown  []string
	)
	syntax := func(err error) error {
		return &ParseError{Kind: InvalidJSON, Detail: syntaxErr(body, err).Error()}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntax(err)
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, syntax(err)
		}
		key := tok.String()
		if key != "notifications" {
			unknown = append(unknown, key)
			if err := dec.SkipValue(); err != nil {
				return nil, syntax(err)
			}
			continue
		}
		found++
		if k := dec.PeekKind(); found > 1 || k != '[' {
			if found == 1 {
				notArray = byte(k)
				if k == 0 {
					// The decoder names the syntax error.
					if _, err := dec.ReadValue(); err != nil {
						return nil, syntax(err)
					}
				}
			}
			if err := dec.SkipValue(); err != nil {
				return nil, syntax(err)
			}
			continue
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntax(err)
		}
		for dec.PeekKind() != ']' {
			v, err := dec.ReadValue()
			if err != nil {
				return nil, syntax(err)
			}
			count++
			if count <= max {
				// The decoder's value is valid only until its next read:
				// the element is taken from body itself.
				end := int(dec.InputOffset())
				elems = append(elems, body[end-len(v):end:end])
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, syntax(err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, syntax(err)
	}
	if err := trailing(dec, body); err != nil {
		return nil, &ParseError{Kind: InvalidJSON, Detail: err.Error()}
	}
	switch {
	case len(unknown) > 0:
		sort.Strings(unknown)
		return nil, &ParseError{Kind: UnknownField, Detail: quoteList(unknown) + " (allowed: " + batchAllowed + ")"}
	case found > 1:
		return nil, &ParseError{Kind: InvalidShape, Detail: "duplicate field `notifications`"}
	case found == 0:
		return nil, &ParseError{Kind: InvalidShape, Detail: "missing field `notifications`"}
	case notArray != 0:
		return nil, &ParseError{Kind: InvalidShape, Detail: "invalid type for `notifications`: expected an array, found " + jsonKind(notArray)}
	case count == 0:
		return nil, &ParseError{Kind: InvalidShape, Detail: "`notifications` is empty: a batch carries at least one notification"}
	case count > max:
		return nil, &BatchLimitError{Count: count, Max: max}
	}
	return elems, nil
}
