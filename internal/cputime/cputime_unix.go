//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the process's user and system CPU time so far (0 if the
// system does not say).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
