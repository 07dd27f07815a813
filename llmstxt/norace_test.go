//go:build !race

package llmstxt_test

// raceEnabled is true in race builds; see race_test.go.
const raceEnabled = false
