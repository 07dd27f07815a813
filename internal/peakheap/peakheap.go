// Package peakheap measures the peak heap of a piece of code, for tests
// that assert a memory bound.
package peakheap

import (
	"runtime"
	"sync"
	"time"
)

// Measure runs f and returns the most heap it had in use above what was in
// use before it started, sampled every millisecond with
// runtime.ReadMemStats (and once more when f returns). Anything else the
// process allocates meanwhile (a test server in the same process) counts
// too.
func Measure(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var mu sync.Mutex
	var peak uint64
	sample := func() {
		mu.Lock()
		defer mu.Unlock()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
			peak = ms.HeapAlloc - base
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	sample()
	return peak
}
