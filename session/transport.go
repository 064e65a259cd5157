package session

import "strconv"

// Transport carries a session's frames to its client: package handlers
// implements it on a WebSocket connection, tests on a fake. The session
// calls Write from one goroutine at a time, and Close once, after its
// last Write.
type Transport interface {
	// Write sends one text frame. An error means the connection failed:
	// the session ends and writes nothing more. A Write must give up
	// after a bounded time (a client that reads nothing).
	Write(frame []byte) error
	// Close closes the connection with reason (its close frame), after
	// the frames written.
	Close(reason CloseReason) error
}

// CloseReason is how a session's connection closes: the status and the
// reason text of its close frame (RFC 6455). Every close is one of the
// values below, or the client's own status echoed (CloseEcho), never a
// status and a text spelled where the session closes.
type CloseReason struct {
	// Status is the close status (1000-4999).
	Status int
	// Text is the close frame's reason.
	Text string
}

// The close reasons of a session (the close statuses the session
// protocol's AsyncAPI document lists).
var (
	// CloseNormal: the client closed the connection, without a status
	// of its own.
	CloseNormal = CloseReason{1000, ""}
	// CloseShutdown: the server shuts down.
	CloseShutdown = CloseReason{1001, "server shutting down"}
	// CloseUnmaskedFrame: the client sent a frame without a mask.
	CloseUnmaskedFrame = CloseReason{1002, "unmasked frame: a client must mask every frame (RFC 6455)"}
	// CloseNotJSON: the client sent a frame that is not one JSON object.
	CloseNotJSON = CloseReason{1002, "not a JSON object"}
	// CloseBinaryFrame: the client sent a binary frame.
	CloseBinaryFrame = CloseReason{1003, "binary frame"}
	// ClosePingTimeout: the client answered two pings in a row with
	// nothing.
	ClosePingTimeout = CloseReason{1008, "two pings unanswered"}
)

// CloseFrameTooBig: the client sent a message larger than limit bytes
// (max_body_bytes).
func CloseFrameTooBig(limit int64) CloseReason {
	return CloseReason{1009, "frame larger than " + strconv.FormatInt(limit, 10) + " bytes"}
}

// CloseEcho: the client closed with a status of its own, which the
// server's close frame echoes.
func CloseEcho(status int) CloseReason { return CloseReason{Status: status} }
