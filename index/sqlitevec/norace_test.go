//go:build !race

package sqlitevec_test

// raceEnabled is true in race builds, where the crash test runs small.
const raceEnabled = false
