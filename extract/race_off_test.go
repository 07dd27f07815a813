//go:build !race

package extract_test

// raceEnabled is true in race builds; see race_on_test.go.
const raceEnabled = false
