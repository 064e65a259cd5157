package server

// ReloadOptions qualify one reload.
type ReloadOptions struct {
	// Force applies a reload that a compatibility rule would refuse (a
	// breaking payload schema change).
	Force bool
	// Trigger says what asked for the reload ("SIGHUP", "admin request"),
	// for the logs.
	Trigger string
}

// ReloadReport is what a reload changed. Each list is sorted and never
// nil, so that it encodes as [].
type ReloadReport struct {
	// Fingerprint identifies the configuration now in force; Previous the
	// one before.
	Fingerprint string `json:"fingerprint"`
	Previous    string `json:"previous_fingerprint"`
	// Added, Removed and Changed are event types; Changed are those whose
	// base, key order, identifier handlers or payload rules changed (their
	// open streams ended with schema_changed).
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
	// StorageReconciled are event types whose storage policy changed and
	// whose stream was reconciled.
	StorageReconciled []string `json:"storage_reconciled"`
	// Settings are the other settings that changed (config key paths).
	Settings []string `json:"settings_changed"`
	// PayloadSchemas are the event types whose payload schema (the
	// internal schema of their payload codec) changed, each with the
	// verdict it was judged by.
	PayloadSchemas []PayloadChange `json:"payload_schemas"`
	// StreamsEnded counts the open watch and replay streams ended.
	StreamsEnded int `json:"streams_ended"`
}

// PayloadChange is the verdict on one event type's payload schema change
// in a reload: whether records stored under the previous schema can be
// read under the new one (read by field name). A compatible change
// applies and ends only the event type's streams that asked for a format;
// a breaking one is refused unless the reload is forced, and when forced
// ends all its streams.
type PayloadChange struct {
	EventType string `json:"event_type"`
	// Codec and PreviousCodec name the payload codec now and before (""
	// for none).
	Codec         string `json:"codec"`
	PreviousCodec string `json:"previous_codec"`
	// Fingerprint and PreviousFingerprint are the 64-bit fingerprints of
	// the internal schemas ("" for none); stored records carry the one
	// they were written under.
	Fingerprint         string `json:"fingerprint"`
	PreviousFingerprint string `json:"previous_fingerprint"`
	// Compatible is the verdict; Breaks its reasons when breaking (never
	// nil).
	Compatible bool     `json:"compatible"`
	Breaks     []string `json:"breaks"`
	// Forced is true for a breaking change applied by a forced reload.
	Forced bool `json:"forced"`
}

// ReloadError is a reload that changed nothing.
type ReloadError struct {
	// Code is ReloadInvalid or ReloadRefused.
	Code string
	// Message says what was wrong, with the messages startup gives.
	Message string
	// Refused lists the settings that cannot change while herald runs,
	// or the breaking steps of a payload schema change, one an item.
	Refused []string
}

// Reload error codes.
const (
	// ReloadInvalid: the new configuration does not load or validate.
	ReloadInvalid = "CONFIG_INVALID"
	// ReloadRefused: the new configuration changes settings that need a
	// restart, or a payload schema incompatibly (without force).
	ReloadRefused = "RELOAD_REFUSED"
)

// Error implements error.
func (e *ReloadError) Error() string { return e.Message }
