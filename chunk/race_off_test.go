//go:build !race

package chunk_test

// raceEnabled shortens the slow measurements under the race detector.
const raceEnabled = false
