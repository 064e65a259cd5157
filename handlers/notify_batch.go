package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/session"
)

// This file is batch notify, POST /api/v1/notifications: many notify
// requests in one body, validated as a whole before anything is stored,
// then published pipelined (engine.PublishAll: the JetStream engine's
// asynchronous publishes) and answered once every notification has its
// outcome, ids in request order.

// maxListedErrors bounds the refused notifications a 400 lists (the
// others are counted in errors_truncated), and maxErrorMessage the bytes
// of each one's message (a message may quote the request), so that the
// answer to a bad batch stays small whatever the batch.
const (
	maxListedErrors = 100
	maxErrorMessage = 1024
)

// NotifyBatchErrorBody is the error body of a batch notify: the fields of
// httperr.ErrorBody, plus the refused notifications of a batch that
// failed validation (Errors), or what a backend failure part-way left
// (Stored, NotStored, Unknown: every notification of the batch is in
// exactly one of them).
type NotifyBatchErrorBody struct {
	Code      string `json:"code"`
	Error     string `json:"error"`
	Message   string `json:"message"`
	Details   string `json:"details"`
	RequestID string `json:"request_id"`
	// Errors are the first maxListedErrors refused notifications, by
	// index; ErrorsTruncated counts those left out.
	Errors          []BatchElementError `json:"errors,omitzero"`
	ErrorsTruncated int                 `json:"errors_truncated,omitzero"`
	// Stored are the notifications stored, with their ids; NotStored
	// the indices of those certainly not stored; Unknown those sent
	// without an answer (stored or not, nobody can tell). Set together,
	// on a storage failure only.
	Stored    []BatchStored `json:"stored,omitzero"`
	NotStored []int         `json:"not_stored,omitzero"`
	Unknown   []int         `json:"unknown,omitzero"`
}

// BatchElementError is why one notification of a batch was refused.
type BatchElementError struct {
	Index   int    `json:"index"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// BatchStored is one notification of a batch that was stored.
type BatchStored struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
}

// batchElement is one notification of a batch being validated.
type batchElement struct {
	schema *notification.Schema // nil until its event type is known
	req    *notification.Request
	n      *notification.Notification
	code   string // the refusal's API error code, "" when valid so far
	msg    string
}

// NotifyBatch serves POST /api/v1/notifications: each element is checked
// as Notify checks a request (parse, event type, point, the stream's
// write authorisation, the schema); any refusal answers 400 listing the
// refused notifications by index and stores nothing. Otherwise the batch
// is stored in order and answered when every notification has an
// outcome: 200 with the ids in request order, or, when the backend
// failed part-way, which were stored and which were not.
func (h *Handlers) NotifyBatch(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, notifyEndpoint.label, notifyEndpoint.code, err)
		h.countBatchRefused(nil, bodyErrorCode(err))
		return
	}
	raws, err := notification.ParseNotifyBatch(body, set.MaxBatchNotifications)
	if err != nil {
		h.writeBatchParseError(w, r, err)
		return
	}
	els := make([]batchElement, len(raws))
	h.parseBatch(set, raws, els)
	if !h.authorizeBatch(w, r, set, els) {
		return
	}
	ns, bad, busy := h.validateBatch(r.Context(), els)
	if busy != nil {
		// A typed payload's codec could not judge it: nothing is refused
		// and nothing stored; the client sends the batch again, as it
		// would a single notify (503, Retry-After).
		writeRequestError(w, r, notifyEndpoint, busy)
		h.countBatchRefused(els, "SERVICE_UNAVAILABLE")
		return
	}
	if bad > 0 {
		h.writeBatchInvalid(w, r, els, bad)
		return
	}
	// Once validated the batch is published to its end even if the client
	// goes away: a disconnect must not cut it at an arbitrary point. The
	// engine's own timeouts bound it.
	results := h.trace.PublishEach(context.WithoutCancel(r.Context()), h.eng, ns, func(i int) int {
		if len(ns) == len(raws) {
			return len(raws[i])
		}
		return len(ns[i].Payload)
	})
	h.answerBatch(w, r, start, els, results)
}

// parseBatch parses each element as a notify request and looks up its
// event type, and refuses `point` before authorisation, as Notify does.
func (h *Handlers) parseBatch(set *Settings, raws [][]byte, els []batchElement) {
	type lookup struct {
		s   *notification.Schema
		err error
	}
	schemas := map[string]lookup{}
	for i, raw := range raws {
		el := &els[i]
		req, err := notification.ParseNotifyRequest(raw)
		if err != nil {
			el.refuse(err)
			continue
		}
		el.req = req
		l, ok := schemas[req.EventType]
		if !ok {
			l.s, l.err = set.Registry.Lookup(req.EventType)
			schemas[req.EventType] = l
		}
		if l.err != nil {
			el.refuse(l.err)
			continue
		}
		el.schema = l.s
		if err := req.CheckNoEnd("/notification"); err != nil {
			el.refuse(err)
			continue
		}
		if _, ok := req.Identifier[notification.FieldPoint]; ok {
			// Schema.Notify checks `point` first and owns the message.
			_, err := l.s.Notify(req.Identifier, req.Payload)
			el.refuse(err)
		}
	}
}

// refuse records why an element is refused.
func (el *batchElement) refuse(err error) {
	el.code, el.msg, _ = requestError(notifyEndpoint, err)
}

// authorizeBatch runs the stream's write authorisation for each event
// type of the batch, in the order they first appear; the first refusal
// answers the whole request with the body Notify would give (Aviso's
// messages, which the API documents as a closed list).
func (h *Handlers) authorizeBatch(w http.ResponseWriter, r *http.Request, set *Settings, els []batchElement) bool {
	id := auth.IdentityFrom(r.Context())
	seen := map[*notification.Schema]bool{}
	for i := range els {
		s := els[i].schema
		if s == nil || seen[s] {
			continue
		}
		seen[s] = true
		if e := set.Auth.DecideStream(s.Name, id, auth.OpWrite); e != nil {
			auth.WriteError(w, r, set.Auth.Direct, e)
			h.countBatchRefused(els, e.Kind.Code())
			return false
		}
	}
	return true
}

// validateBatch checks each element that parsed against its schema; it
// returns the notifications and the number of refused elements, or,
// stopping there, the first payload a codec could not judge because its
// extension workers were busy.
func (h *Handlers) validateBatch(ctx context.Context, els []batchElement) ([]*notification.Notification, int, error) {
	bad := 0
	for i := range els {
		el := &els[i]
		if el.code != "" {
			bad++
			continue
		}
		n, err := h.buildNotification(ctx, el.schema, el.req)
		if be := (*notification.BusyError)(nil); errors.As(err, &be) {
			return nil, 0, err
		}
		if err != nil {
			el.refuse(err)
			bad++
			continue
		}
		el.n = n
	}
	if bad > 0 {
		return nil, bad, nil
	}
	ns := make([]*notification.Notification, len(els))
	for i := range els {
		ns[i] = els[i].n
	}
	return ns, 0, nil
}

// writeBatchParseError answers a body that is not a batch (400), or one
// with too many notifications (413).
func (h *Handlers) writeBatchParseError(w http.ResponseWriter, r *http.Request, err error) {
	var le *notification.BatchLimitError
	if errors.As(err, &le) {
		msg := le.Error()
		httperr.WriteJSON(w, http.StatusRequestEntityTooLarge, httperr.ErrorBody{Code: "PAYLOAD_TOO_LARGE", Error: notifyEndpoint.label,
			Message: msg, Details: msg, RequestID: httperr.RequestID(r.Context())})
		h.countBatchRefused(nil, "PAYLOAD_TOO_LARGE")
		return
	}
	writeRequestError(w, r, notifyEndpoint, err)
	code, _, _ := requestError(notifyEndpoint, err)
	h.countBatchRefused(nil, code)
}

// writeBatchInvalid answers a batch with refused elements: 400, the first
// maxListedErrors refusals by index (413 PAYLOAD_TOO_LARGE when every
// refused element is too large to store).
func (h *Handlers) writeBatchInvalid(w http.ResponseWriter, r *http.Request, els []batchElement, bad int) {
	body := NotifyBatchErrorBody{Code: notifyEndpoint.code, Error: notifyEndpoint.label, RequestID: httperr.RequestID(r.Context())}
	body.Message = fmt.Sprintf("%d of the batch's %d notifications are invalid; nothing was stored", bad, len(els))
	status := http.StatusBadRequest
	if tooLarge(els) == bad {
		status, body.Code = http.StatusRequestEntityTooLarge, codeTooLarge
		body.Message = fmt.Sprintf("%d of the batch's %d notifications are too large to store; nothing was stored", bad, len(els))
	}
	for i := range els {
		el := &els[i]
		if el.code == "" {
			continue
		}
		if len(body.Errors) == maxListedErrors {
			body.ErrorsTruncated = bad - maxListedErrors
			break
		}
		msg := shortMessage(el.msg)
		if body.Details == "" {
			body.Details = "notifications[" + strconv.Itoa(i) + "]: " + msg
		}
		body.Errors = append(body.Errors, BatchElementError{Index: i, Code: el.code, Message: msg})
	}
	httperr.WriteJSON(w, status, body)
	h.countBatchRefused(els, body.Code)
}

// tooLarge counts the elements refused as too large to store.
func tooLarge(els []batchElement) int {
	n := 0
	for i := range els {
		if els[i].code == codeTooLarge {
			n++
		}
	}
	return n
}

// shortMessage is msg shortened to maxErrorMessage bytes, at a character
// boundary, marked with a final "…".
func shortMessage(msg string) string {
	return string(session.FitMessage(msg, maxErrorMessage, func(m string) []byte { return []byte(m) }))
}

// answerBatch answers a published batch: 200 with the ids when every
// notification was stored, else the storage failure with what was
// stored and what was not.
func (h *Handlers) answerBatch(w http.ResponseWriter, r *http.Request, start time.Time, els []batchElement, results []engine.BatchResult) {
	id := httperr.RequestID(r.Context())
	var failure error
	unknown := false
	for _, res := range results {
		if res.Err == nil {
			continue
		}
		if errors.Is(res.Err, engine.ErrUnknownOutcome) {
			unknown = true
		}
		if failure == nil {
			failure = res.Err
		}
	}
	if failure == nil {
		writeBatchOK(w, id, h.now(), els, results)
		h.countBatch(start, els, results, "")
		return
	}
	body := NotifyBatchErrorBody{RequestID: id, Stored: []BatchStored{}, NotStored: []int{}, Unknown: []int{}}
	for i, res := range results {
		switch {
		case res.Err == nil:
			body.Stored = append(body.Stored, BatchStored{Index: i, ID: batchID(els[i].n, res.Seq)})
		case errors.Is(res.Err, engine.ErrUnknownOutcome):
			body.Unknown = append(body.Unknown, i)
		default:
			body.NotStored = append(body.NotStored, i)
		}
	}
	status := http.StatusInternalServerError
	switch {
	case unknown || errors.Is(failure, engine.ErrUnavailable):
		status, body.Code, body.Error = http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "service_unavailable"
		body.Message = "the notification backend became unavailable during the batch"
		w.Header().Set("Retry-After", "5")
	case errors.Is(failure, engine.ErrTooLarge):
		// Checked before anything was stored; the backend's limit can
		// only have shrunk since (a reconnection to another server).
		status, body.Code, body.Error = http.StatusRequestEntityTooLarge, codeTooLarge, notifyEndpoint.label
		body.Message = "the backend refused a notification of the batch: " + failure.Error()
	case errors.Is(failure, engine.ErrInvalid):
		status, body.Code, body.Error = http.StatusBadRequest, notifyEndpoint.code, notifyEndpoint.label
		body.Message = "the backend refused a notification of the batch: " + failure.Error()
	default:
		body.Code, body.Error = "NOTIFICATION_STORAGE_FAILED", "Notification Storage Failed"
		body.Message = "the backend refused a notification of the batch"
	}
	body.Message += fmt.Sprintf("; %d stored (listed in stored), %d not stored (not_stored)", len(body.Stored), len(body.NotStored))
	if len(body.Unknown) > 0 {
		body.Message += fmt.Sprintf(", %d sent without an acknowledgement, stored or not (unknown)", len(body.Unknown))
	}
	body.Details = "backend write failed"
	if status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge {
		body.Details = failure.Error()
	}
	h.log.Error("batch notification storage failed", "request_id", id, "stored", len(body.Stored),
		"not_stored", len(body.NotStored), "unknown", len(body.Unknown), "error", failure)
	httperr.WriteJSON(w, status, body)
	h.countBatch(start, els, results, body.Code)
}

// writeBatchOK writes the answer to a stored batch,
// {"status":"success","request_id","processed_at","ids"}, the ids in
// request order (NotifyBatchResult in openapi.json). It is written by
// hand: a batch's answer is on the path of every notification
// it carries, and encoding/json spends more on the ids (a string each,
// then reflection) than the rest of the answer costs.
func writeBatchOK(w http.ResponseWriter, requestID string, now time.Time, els []batchElement, results []engine.BatchResult) {
	b := make([]byte, 0, 96+len(requestID)+len(results)*24)
	b = append(b, `{"status":"success","request_id":`...)
	b, _ = jsontext.AppendQuote(b, requestID) // a UUID: always valid
	b = append(b, `,"processed_at":"`...)
	b = now.UTC().AppendFormat(b, "2006-01-02T15:04:05Z")
	b = append(b, `","ids":[`...)
	var prefix []byte // the quoted event type and "@" of the last id
	last := ""
	for i, res := range results {
		if i > 0 {
			b = append(b, ',')
		}
		if et := els[i].n.EventType; prefix == nil || et != last {
			// An event type is valid UTF-8 (it was read from JSON).
			prefix, _ = jsontext.AppendQuote(prefix[:0], et+"@")
			prefix, last = prefix[:len(prefix)-1], et
		}
		b = append(b, prefix...)
		b = strconv.AppendUint(b, res.Seq, 10)
		b = append(b, '"')
	}
	b = append(b, "]}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// batchID is the CloudEvent id of a stored notification.
func batchID(n *notification.Notification, seq uint64) string {
	return n.EventType + "@" + strconv.FormatUint(seq, 10)
}

// bodyErrorCode is the API error code writeBodyError answers err with.
func bodyErrorCode(err error) string {
	switch {
	case errors.Is(err, errBodyTooLarge):
		return "PAYLOAD_TOO_LARGE"
	case errors.Is(err, errBodyTimeout):
		return "REQUEST_TIMEOUT"
	}
	return notifyEndpoint.code
}

// outcomeKey is one series of a batch's outcomes.
type outcomeKey struct{ eventType, code string }

// countBatchRefused counts a batch refused as a whole: each notification
// refused under its event type, with its own code when it was invalid
// and the batch's otherwise. A batch refused before its notifications
// were read (els nil) counts one refusal of event type unknown, as
// Notify counts an unreadable request.
func (h *Handlers) countBatchRefused(els []batchElement, code string) {
	if !h.observing {
		return
	}
	if els == nil {
		h.obs.Notified(TransportHTTP, EventTypeUnknown, code, 1, 0)
		return
	}
	counts := map[outcomeKey]int{}
	for i := range els {
		el := &els[i]
		k := outcomeKey{eventTypeLabel(el.schema), code}
		if el.code != "" {
			k.code = el.code
		}
		counts[k]++
	}
	for k, n := range counts {
		h.obs.Notified(TransportHTTP, k.eventType, k.code, n, 0)
	}
}

// countBatch counts a published batch: the notifications stored as
// accepted, with the time from the request's start, the others refused
// with the answer's code.
func (h *Handlers) countBatch(start time.Time, els []batchElement, results []engine.BatchResult, code string) {
	if !h.observing {
		return
	}
	d := time.Since(start)
	counts := map[outcomeKey]int{}
	for i, res := range results {
		k := outcomeKey{eventType: eventTypeLabel(els[i].schema)}
		if res.Err != nil {
			k.code = code
		}
		counts[k]++
	}
	for k, n := range counts {
		h.obs.Notified(TransportHTTP, k.eventType, k.code, n, d)
	}
}
