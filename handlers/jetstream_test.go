package handlers_test

import "testing"

// TestOnJetStream runs the end-to-end HTTP/SSE tests again on the
// JetStream engine (an embedded nats-server per test): both engines must
// behave identically behind the endpoints.
func TestOnJetStream(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"NotifySuccess", TestNotifySuccess},
		{"TracingEndToEnd", TestTracingEndToEnd},
		{"NoTraceContextWithoutTracing", TestNoTraceContextWithoutTracing},
		{"NotifyBatch", TestNotifyBatch},
		{"NotifyBatchInvalid", TestNotifyBatchInvalid},
		{"NotifyBatchRequestErrors", TestNotifyBatchRequestErrors},
		{"NotifyBatchErrorsBounded", TestNotifyBatchErrorsBounded},
		{"NotifyBatchMetrics", TestNotifyBatchMetrics},
		{"NotifyBatchTyped", TestNotifyBatchTyped},
		{"WatchLiveOnly", TestWatchLiveOnly},
		{"WatchWithCursorThenLive", TestWatchWithCursorThenLive},
		{"ReplayCursorsAndFilters", TestReplayCursorsAndFilters},
		{"ReplayFromDate", TestReplayFromDate},
		{"ReplayEndSequence", TestReplayEndSequence},
		{"Aviso13Endpoints", TestAviso13Endpoints},
		{"CoordinatesAsFloats", TestCoordinatesAsFloats},
		{"HistoricalCap", TestHistoricalCap},
		{"SpatialFilters", TestSpatialFilters},
		{"BoundaryNoGapNoDuplicate", TestBoundaryNoGapNoDuplicate},
		{"SlowWatcherIsClosed", TestSlowWatcherIsClosed},
		{"Admin", TestAdmin},
		{"LongSubjectsRefused", TestLongSubjectsRefused},
		{"AvisoConformance", TestAvisoConformance},
		{"WhereOnWatchAndReplay", TestWhereOnWatchAndReplay},
		{"Reload", TestReload},
		{"ReloadDuringNotifyBurst", TestReloadDuringNotifyBurst},
		{"SessionBasics", TestSessionBasics},
		{"SessionRequestErrors", TestSessionRequestErrors},
		{"SessionDroppingCountsExact", TestSessionDroppingCountsExact},
		{"SessionBlockingOverflow", TestSessionBlockingOverflow},
		{"SessionReplyAheadOfQueuedEvents", TestSessionReplyAheadOfQueuedEvents},
		{"SessionUnsubscribeDiscardsQueued", TestSessionUnsubscribeDiscardsQueued},
		{"SessionHistoryToLive", TestSessionHistoryToLive},
		{"SessionExecute", TestSessionExecute},
		{"SessionCreateSubscriptionPins", TestSessionCreateSubscriptionPins},
		{"SessionWhereAndSample", TestSessionWhereAndSample},
		{"SessionProducers", TestSessionProducers},
		{"SessionReloadAndShutdown", TestSessionReloadAndShutdown},
		{"SessionHistoryLimit", TestSessionHistoryLimit},
		{"SessionMaxDuration", TestSessionMaxDuration},
		{"SessionFrameLimits", TestSessionFrameLimits},
		{"TypedEveryCodec", TestTypedEveryCodec},
		{"TypedFidelity", TestTypedFidelity},
		{"TypedUnfolding", TestTypedUnfolding},
		{"TypedErrors", TestTypedErrors},
		{"TypedSchema", TestTypedSchema},
		{"TypedWatchLive", TestTypedWatchLive},
		{"TypedWhereAndSessions", TestTypedWhereAndSessions},
		{"TypedEvolutionOnReload", TestTypedEvolutionOnReload},
		{"PastSchemasSurviveRestart", TestPastSchemasSurviveRestart},
		{"BatchContainersSSE", TestBatchContainersSSE},
		{"BatchContainersSession", TestBatchContainersSession},
		{"PayloadTooLarge", TestPayloadTooLarge},
	} {
		t.Run(c.name, c.fn)
	}
}
