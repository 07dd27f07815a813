//go:build race

package sim_test

// The race detector slows the simulator about tenfold; race builds use the
// -short sizes (the concurrency they check is the same).
const raceEnabled = true
