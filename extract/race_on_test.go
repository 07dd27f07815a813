//go:build race

package extract_test

// raceEnabled is true in race builds, which run the memory tests small:
// the race detector slows them about tenfold.
const raceEnabled = true
