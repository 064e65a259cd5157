package configs

import (
	"strings"

	"github.com/herald-gateway/herald/topic"
)

// This file holds the names and the syntax rule that the config file shares
// with the runtime: the identifier handler names, the reserved spatial
// field names, and the topic base rule (owned by package topic, which
// applies it). notification takes the names from here instead of
// spelling them again.

// Identifier handler names (the `type` of an identifier field).
const (
	// HandlerString accepts any non-empty string (key max_length).
	HandlerString = "StringHandler"
	// HandlerDate accepts dates (key canonical_format).
	HandlerDate = "DateHandler"
	// HandlerTime accepts times of day.
	HandlerTime = "TimeHandler"
	// HandlerEnum accepts one of a list of values (key values, required).
	HandlerEnum = "EnumHandler"
	// HandlerInt accepts integers (key range).
	HandlerInt = "IntHandler"
	// HandlerFloat accepts finite numbers (key range).
	HandlerFloat = "FloatHandler"
	// HandlerExpver accepts experiment versions (key default).
	HandlerExpver = "ExpverHandler"
	// HandlerPolygon accepts a closed polygon; the field must be named
	// polygon.
	HandlerPolygon = "PolygonHandler"
	// HandlerPointCloud accepts a list of points (key max_points); the
	// field must be named point_cloud.
	HandlerPointCloud = "PointCloudHandler"
)

// Reserved identifier names with spatial meaning.
const (
	// FieldPolygon is the only name a PolygonHandler field may have.
	FieldPolygon = "polygon"
	// FieldPointCloud is the only name a PointCloudHandler field may have.
	FieldPointCloud = "point_cloud"
	// FieldPoint is the spatial point filter of watch and replay; no
	// field may be declared with this name.
	FieldPoint = "point"
)

// handlerSpecs is the one list of identifier handlers, in the order
// messages name them: each with the keys its field may hold besides type,
// required and description, and whether it stores geometry as metadata
// rather than as a subject token.
var handlerSpecs = []struct {
	name    string
	keys    []string
	spatial bool
}{
	{HandlerString, []string{"max_length"}, false},
	{HandlerDate, []string{"canonical_format"}, false},
	{HandlerTime, nil, false},
	{HandlerEnum, []string{"values"}, false},
	{HandlerInt, []string{"range"}, false},
	{HandlerFloat, []string{"range"}, false},
	{HandlerExpver, []string{"default"}, false},
	{HandlerPolygon, nil, true},
	{HandlerPointCloud, []string{"max_points"}, true},
}

// handlerList names the handlers for messages: "StringHandler, ...,
// PolygonHandler or PointCloudHandler".
var handlerList = func() string {
	names := make([]string, len(handlerSpecs))
	for i, h := range handlerSpecs {
		names[i] = h.name
	}
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}()

// handlerKeys returns the keys an identifier field of the given handler
// type may hold (the common type, required and description first), and
// false for an unknown handler.
func handlerKeys(handler string) ([]string, bool) {
	for _, h := range handlerSpecs {
		if h.name == handler {
			return append([]string{"type", "required", "description"}, h.keys...), true
		}
	}
	return nil, false
}

// isSpatial reports whether a handler stores geometry as metadata rather
// than as a subject token (PolygonHandler, PointCloudHandler).
func isSpatial(handler string) bool {
	for _, h := range handlerSpecs {
		if h.name == handler {
			return h.spatial
		}
	}
	return false
}

// MaxBaseBytes bounds a topic base: topic.MaxBaseBytes.
const MaxBaseBytes = topic.MaxBaseBytes

// BaseRule states the rule ValidBase checks, for error messages:
// topic.BaseRule.
const BaseRule = topic.BaseRule

// ValidBase reports whether s is a valid topic base (topic.ValidBase). A
// base names the event type's subjects and its JetStream stream; the
// config file declares it (topic.base, or the event type's name).
func ValidBase(s string) bool { return topic.ValidBase(s) }
