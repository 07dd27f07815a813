//go:build race

package discover_test

// raceEnabled is true in race builds. The race detector slows parsing
// about tenfold: the peak-heap tests of million-link documents skip there,
// and .ci/run runs them without it.
const raceEnabled = true
