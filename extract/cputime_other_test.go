//go:build !linux

package extract_test

import "time"

var start = time.Now()

// threadCPU falls back to elapsed time where the thread's CPU clock is
// not read.
func threadCPU() time.Duration { return time.Since(start) }
