//go:build race

package handlers_test

// raceEnabled reports whether the race detector is on: it allows at most
// 8,128 live goroutines, so the load tests scale down under it.
const raceEnabled = true
