// Package cputime reads the CPU time the process has used, for benchmarks
// that report CPU per operation beside wall time.
package cputime
