//go:build unix

package schedule_test

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time the process has used. The
// benchmarks report it next to wall time because the machines they run on
// are often shared: CPU per op is steadier than ns/op there.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
