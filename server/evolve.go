package server

import (
	"sort"
	"strings"

	"github.com/herald-gateway/herald/notification"
)

// payloadChanges judges, for every event type in both registries whose
// payload schema changed (the fingerprint of its payload codec's internal
// schema differs, or its codec was removed), whether the records stored
// under the previous schema stay readable under the new one. A codec
// added to an event type with an opaque payload is not judged: its
// records stay readable as they were stored (the row view shows the
// opaque JSON), and the payload block's change ends its streams anyway.
// The list is sorted by event type and never nil.
func payloadChanges(old, next *notification.Registry) []PayloadChange {
	out := []PayloadChange{}
	for _, name := range next.Names() {
		prev, ok := old.Schema(name)
		if !ok || prev.Payload == nil {
			continue
		}
		ns, _ := next.Schema(name)
		op, np := prev.Payload, ns.Payload
		c := PayloadChange{EventType: name, PreviousCodec: op.Codec(), PreviousFingerprint: op.Fingerprint().ID64, Breaks: []string{}}
		if np == nil {
			c.Breaks = append(c.Breaks, "the payload codec is removed: the records stored typed under codec '"+op.Codec()+"' could no longer be shown (their payload would read as null)")
			out = append(out, c)
			continue
		}
		c.Codec, c.Fingerprint = np.Codec(), np.Fingerprint().ID64
		if c.Fingerprint == c.PreviousFingerprint {
			continue
		}
		for _, b := range notification.Breaks("", op.Schema(), np.Schema()) {
			c.Breaks = append(c.Breaks, b.Reason)
		}
		c.Compatible = len(c.Breaks) == 0
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EventType < out[j].EventType })
	return out
}

// breakingMessage is the refusal of a reload whose payload schema changes
// break: the verdict's reasons by event type and codec, and how to apply
// it anyway. refused lists each reason, one an item.
func breakingMessage(changes []PayloadChange) (msg string, refused []string) {
	var parts []string
	for _, c := range changes {
		if c.Compatible {
			continue
		}
		what := "the payload schema of event type '" + c.EventType + "' (codec '" + c.PreviousCodec + "'"
		if c.Codec != "" && c.Codec != c.PreviousCodec {
			what += " → '" + c.Codec + "'"
		}
		what += ", fingerprint " + c.PreviousFingerprint
		if c.Fingerprint != "" {
			what += " → " + c.Fingerprint
		}
		what += ")"
		parts = append(parts, what+" changes incompatibly: records stored under the current schema could not be read under the new one: "+strings.Join(c.Breaks, "; "))
		for _, b := range c.Breaks {
			codec := c.Codec
			if codec == "" {
				codec = c.PreviousCodec
			}
			refused = append(refused, "notification_schema."+c.EventType+".payload (codec "+codec+"): "+b)
		}
	}
	msg = strings.Join(parts, "; ") + "; nothing was applied (a forced reload applies it: POST /api/v1/admin/reload?force=true; the records stored before are then read with the schema that wrote them, projected onto the new one by field name, a field it cannot read as null; a view that cannot show a record delivers a null payload and the reason in heraldpayloaderror)"
	return msg, refused
}

// breaking reports whether any change is breaking.
func breaking(changes []PayloadChange) bool {
	for _, c := range changes {
		if !c.Compatible {
			return true
		}
	}
	return false
}

// payloadSummary is the log form of the payload schema verdicts: one
// "event_type codec old→new verdict" item each.
func payloadSummary(changes []PayloadChange) []string {
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		v := "compatible"
		switch {
		case c.Forced:
			v = "BREAKING, forced: " + strings.Join(c.Breaks, "; ")
		case !c.Compatible:
			v = "BREAKING: " + strings.Join(c.Breaks, "; ")
		}
		out = append(out, c.EventType+" "+c.Codec+" "+c.PreviousFingerprint+"→"+c.Fingerprint+" "+v)
	}
	return out
}
