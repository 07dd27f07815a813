//go:build race

package index_test

// raceEnabled is true in race builds, where the peak-heap tests skip.
const raceEnabled = true
