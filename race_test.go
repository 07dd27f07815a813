//go:build race

package recrawl_test

// raceEnabled is true in race builds. The race detector slows the engine
// about tenfold: the crash and soak proofs run at their -short sizes there
// (still under the detector), and .ci/run runs them at full size without it.
const raceEnabled = true
