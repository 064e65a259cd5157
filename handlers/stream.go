package handlers

import (
	"errors"
	"net/http"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/sse"
	"github.com/herald-gateway/herald/stream"
)

// Watch serves POST /api/v1/watch: live notifications, optionally after
// history from a cursor, as Server-Sent Events.
func (h *Handlers) Watch(w http.ResponseWriter, r *http.Request) { h.serveStream(w, r, stream.Watch) }

// Replay serves POST /api/v1/replay: history from a cursor, then the
// stream ends.
func (h *Handlers) Replay(w http.ResponseWriter, r *http.Request) { h.serveStream(w, r, stream.Replay) }

func (h *Handlers) serveStream(w http.ResponseWriter, r *http.Request, mode stream.Mode) {
	ep := watchEndpoint
	if mode == stream.Replay {
		ep = replayEndpoint
	}
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, ep.label, ep.code, err)
		return
	}
	reg := set.Registry
	req, err := notification.ParseRequest(body)
	if err != nil {
		writeRequestError(w, r, ep, err)
		return
	}
	ident := auth.IdentityFrom(r.Context())
	p, err := stream.Prepare(reg, req, mode, set.Watch.limits(), stream.Checks{
		Read: func(sc *notification.Schema) error {
			if denied := set.Auth.DecideStream(sc.Name, ident, auth.OpRead); denied != nil {
				return denied
			}
			return nil
		},
		Destination: func(sc *notification.Schema, filter *notification.Filter) error {
			if e := h.decideECPDS(r.Context(), set, sc, filter, ident, httperr.RequestID(r.Context())); e != nil {
				return e
			}
			return nil
		},
	})
	if err != nil {
		h.writePrepareError(w, r, set, ep, err)
		return
	}
	s, spec := p.Schema, p.Spec
	route := RouteWatch
	if mode == stream.Replay {
		route = RouteReplay
	}
	obs := h.obs.Stream(StreamLabels{Transport: TransportSSE, Route: route, EventType: eventTypeLabel(s), User: streamUser(ident)})
	spec.Observer = obs
	spec.Tracer, spec.Transport = h.trace.Tracer, TransportSSE
	key, render := p.Renderer(reg)
	o := sse.Options{
		Now: h.now, WriteTimeout: h.writeTimeout, AnyOrigin: !set.CORSManaged, Log: h.log,
		Cursors: spec.Cursors, PageSize: set.Watch.ReplayBatchSize, MaxDuration: set.Watch.MaxDuration, HistoryCap: s.MaxHistorical,
		RequestID: httperr.RequestID(r.Context()), Topic: p.Topic(), EventType: s.Name,
		View: key, Render: render, Observer: obs,
		OnOpen: func() { h.streams.Add(1) },
	}
	if p.Batch != nil {
		o.Batch = stream.NewBatcher(p.BatchView, *p.Batch, sse.DefaultBatchFrameBytes)
	}
	sink := sse.NewSink(w, o)
	sse.CapSendBuffer(r, set.Watch.SendBufferBytes, h.log)
	ctx, leave := h.running.Join(r.Context(), p.SetKey())
	defer leave()
	end := stream.Run(ctx, h.eng, &spec, sink)
	if !sink.Opened() {
		if end.Reason == stream.SetupFailed {
			h.writeSetupError(w, r, ep, o.Topic, end.Err)
		}
		return
	}
	defer h.streams.Add(-1)
	sink.End(end)
}

// limits are the bounds of every stream the watch settings set.
func (ws WatchSettings) limits() stream.Limits {
	return stream.Limits{Heartbeat: ws.Heartbeat, MaxDuration: ws.MaxDuration, PageSize: ws.ReplayBatchSize,
		PageDelay: ws.ReplayBatchDelay, QueueSize: ws.LiveQueueSize, MaxLag: ws.MaxLag}
}

// writePrepareError answers a watch or replay request that
// stream.Prepare refused: a denied access or destination as package auth
// answers it, anything else as a request error of the endpoint.
func (h *Handlers) writePrepareError(w http.ResponseWriter, r *http.Request, set *Settings, ep endpoint, err error) {
	var (
		refused *ecpdsRefusal
		denied  *auth.Error
	)
	switch {
	case errors.As(err, &refused) && refused.internal:
		auth.WriteInternalError(w, r, refused.denied.Message)
	case errors.As(err, &denied):
		auth.WriteError(w, r, set.Auth.Direct, denied)
	default:
		writeRequestError(w, r, ep, err)
	}
}

func (h *Handlers) writeSetupError(w http.ResponseWriter, r *http.Request, ep endpoint, topic string, err error) {
	id := httperr.RequestID(r.Context())
	if errors.Is(err, engine.ErrInvalid) {
		writeRequestError(w, r, ep, validation(err.Error()))
		return
	}
	if errors.Is(err, engine.ErrUnavailable) {
		w.Header().Set("Retry-After", "5")
		msg := "the notification backend is unavailable; retry later"
		httperr.WriteJSON(w, http.StatusServiceUnavailable, httperr.ErrorBody{Code: "SERVICE_UNAVAILABLE", Error: "service_unavailable", Message: msg, Details: msg, Topic: &topic, RequestID: id})
		return
	}
	h.log.Error("stream setup failed", "request_id", id, "topic", topic, "error", err)
	httperr.WriteJSON(w, http.StatusInternalServerError, httperr.ErrorBody{Code: "SSE_STREAM_INITIALIZATION_FAILED", Error: "SSE stream creation failed",
		Message: "the stream could not be set up", Details: "subscription setup failed", Topic: &topic, RequestID: id})
}
