package handlers

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"sort"
	"strconv"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/codec/jsonstr"
	"github.com/herald-gateway/herald/engine"
)

// EventsResponse is the body of a successful raw notify: the ids of the
// notifications stored, in payload order.
type EventsResponse struct {
	Status      string   `json:"status"`
	RequestID   string   `json:"request_id"`
	ProcessedAt string   `json:"processed_at"`
	Count       int      `json:"count"`
	IDs         []string `json:"ids"`
}

// eventsFailure is the body of a raw notify the backend stored only part
// of: ids lists what was stored (in order), the rest was not.
type eventsFailure struct {
	httperr.ErrorBody
	IDs []string `json:"ids"`
}

// Events serves POST /api/v1/events/{event_type}: the body is the wire
// payload itself, in the media type of the event type's payload codec
// (415 otherwise), and the query parameters are identifier values. The
// payload may unfold into up to notification.MaxRecords records; each
// becomes one notification, identifiers merged from the query and the
// record's same-named fields. All are validated before any is stored,
// and they are stored in order; 200 lists their ids.
func (h *Handlers) Events(w http.ResponseWriter, r *http.Request) {
	set := h.Settings()
	reg := set.Registry
	name := pathParam(r, "event_type")
	id := httperr.RequestID(r.Context())
	s, err := reg.Lookup(name)
	if err != nil {
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	if s.Payload == nil {
		msg := "event type '" + s.Name + "' has no payload codec, so it has no raw payload format: send its notifications as JSON to POST /api/v1/notification"
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.ErrorBody{Code: notifyEndpoint.code, Error: notifyEndpoint.label, Message: msg, Details: "no payload codec", RequestID: id})
		return
	}
	if !h.authorizeStream(w, r, set, s, auth.OpWrite) {
		return
	}
	p := s.Payload
	want := p.MediaType()
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != want {
		got := "no Content-Type"
		if ct != "" {
			got = "Content-Type " + strconv.Quote(ct)
		}
		msg := "event type '" + s.Name + "' takes its raw payload in the format of codec '" + p.Codec() + "' (" + p.Format().String() + "): send it with Content-Type " + want + ", not " + got
		// The codings herald decodes still apply (as for any body).
		w.Header().Set("Accept-Encoding", "gzip, deflate, br, zstd")
		httperr.WriteJSON(w, http.StatusUnsupportedMediaType, httperr.ErrorBody{Code: "UNSUPPORTED_MEDIA_TYPE", Error: "unsupported_media_type", Message: msg, Details: "expected Content-Type " + want, RequestID: id})
		return
	}
	ident, err := queryIdentifier(r)
	if err != nil {
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, notifyEndpoint.label, notifyEndpoint.code, err)
		return
	}
	ns, err := s.NotifyRaw(r.Context(), ident, body)
	if err != nil {
		h.observeCodecError(s, err)
		writeRequestError(w, r, notifyEndpoint, err)
		return
	}
	// Every record is checked against the backend's limit before any is
	// stored: a payload is stored whole or not at all.
	for i, n := range ns {
		if err := engine.CheckSize(h.eng, n); err != nil {
			msg := err.Error()
			if len(ns) > 1 {
				msg = "record " + strconv.Itoa(i) + " of the payload's " + strconv.Itoa(len(ns)) + ": " + msg + "; nothing was stored"
			}
			httperr.WriteJSON(w, http.StatusRequestEntityTooLarge, httperr.ErrorBody{Code: codeTooLarge, Error: notifyEndpoint.label, Message: msg, Details: msg, RequestID: id})
			return
		}
	}
	results := h.trace.PublishEach(r.Context(), h.eng, ns, func(i int) int {
		if len(ns) == 1 {
			return len(body)
		}
		return len(ns[i].Payload)
	})
	ids := make([]string, 0, len(results))
	var failure error
	for _, res := range results {
		if res.Err != nil {
			if failure == nil {
				failure = res.Err
			}
			continue
		}
		if failure == nil {
			ids = append(ids, s.Name+"@"+strconv.FormatUint(res.Seq, 10))
		}
	}
	if failure != nil {
		h.writeEventsFailure(w, r, failure, ids, len(ns))
		return
	}
	httperr.WriteJSON(w, http.StatusOK, EventsResponse{
		Status: "success", RequestID: id, ProcessedAt: h.now().UTC().Format("2006-01-02T15:04:05Z"),
		Count: len(ids), IDs: ids,
	})
}

// queryIdentifier reads the identifier values of a raw notify from the
// query: each parameter once, its value as a JSON string (handlers coerce
// text as they do in a JSON body).
func queryIdentifier(r *http.Request) (map[string]json.RawMessage, error) {
	q := r.URL.Query()
	ident := make(map[string]json.RawMessage, len(q))
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vs := q[k]
		if len(vs) > 1 {
			return nil, validation("query parameter '" + k + "' is given " + strconv.Itoa(len(vs)) + " times: an identifier takes one value")
		}
		ident[k] = json.RawMessage(jsonstr.Append(nil, vs[0]))
	}
	return ident, nil
}

// writeEventsFailure answers a raw notify the backend failed part-way:
// ids lists what was stored.
func (h *Handlers) writeEventsFailure(w http.ResponseWriter, r *http.Request, err error, ids []string, total int) {
	id := httperr.RequestID(r.Context())
	stored := strconv.Itoa(len(ids)) + " of " + strconv.Itoa(total) + " notifications were stored (ids lists them, in order); the rest were not"
	switch {
	case errors.Is(err, engine.ErrUnknownOutcome):
		msg := "the backend connection was lost while storing; " + stored + ", and whether the next one was stored cannot be known"
		w.Header().Set("Retry-After", "5")
		httperr.WriteJSON(w, http.StatusServiceUnavailable, eventsFailure{ErrorBody: httperr.ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: "outcome unknown", RequestID: id}, IDs: ids})
	case errors.Is(err, engine.ErrUnavailable):
		msg := "the notification backend is unavailable; " + stored + ", retry the rest later"
		w.Header().Set("Retry-After", "5")
		httperr.WriteJSON(w, http.StatusServiceUnavailable, eventsFailure{ErrorBody: httperr.ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: msg, RequestID: id}, IDs: ids})
	case errors.Is(err, engine.ErrTooLarge):
		msg := err.Error() + "; " + stored
		httperr.WriteJSON(w, http.StatusRequestEntityTooLarge, eventsFailure{ErrorBody: httperr.ErrorBody{Code: codeTooLarge, Error: notifyEndpoint.label, Message: msg, Details: err.Error(), RequestID: id}, IDs: ids})
	case errors.Is(err, engine.ErrInvalid):
		msg := err.Error() + "; " + stored
		httperr.WriteJSON(w, http.StatusBadRequest, eventsFailure{ErrorBody: httperr.ErrorBody{Code: notifyEndpoint.code, Error: notifyEndpoint.label, Message: msg, Details: err.Error(), RequestID: id}, IDs: ids})
	default:
		h.log.Error("notification storage failed", "request_id", id, "error", err, "stored", len(ids), "total", total)
		httperr.WriteJSON(w, http.StatusInternalServerError, eventsFailure{ErrorBody: httperr.ErrorBody{Code: "NOTIFICATION_STORAGE_FAILED", Error: "Notification Storage Failed",
			Message: "storing the notifications failed; " + stored, Details: "backend write failed", RequestID: id}, IDs: ids})
	}
}
