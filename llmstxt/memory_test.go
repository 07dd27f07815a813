package llmstxt_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/llmstxt"
)

// peakHeap runs f and returns the most heap it had in use above what was
// in use before, sampled every 2 ms with runtime.ReadMemStats.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	sample := func() {
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
		t := time.NewTicker(2 * time.Millisecond)
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

// An llms.txt file of a million links (48 MiB) is parsed in pieces: the
// peak heap stays a small multiple of the file, the File with its million
// links included (issue 12, defect 5: a whole parse took 2.07 GB).
func TestPeakHeapParseOfAMillionLinks(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("parses a 48 MiB file (run without -race by .ci/run)")
	}
	const n = 1_000_000
	var b strings.Builder
	b.WriteString("# Huge Docs\n\n> An llms.txt file with many links.\n\n## Pages\n\n")
	for i := range n {
		fmt.Fprintf(&b, "- [Page %d](/docs/gen-%d): generated page\n", i, i)
	}
	data := []byte(b.String())
	b.Reset()
	var f *llmstxt.File
	var err error
	peak := peakHeap(func() { f, err = llmstxt.Parser{MaxBytes: 64 << 20}.Parse(data) })
	t.Logf("llms.txt of %d links (%.1f MiB): peak heap %.0f MiB, %.1f× the file", n, float64(len(data))/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(len(data)))
	require.NoError(t, err)
	require.Len(t, f.Sections[0].Links, n)
	require.Less(t, peak, uint64(10*len(data)))
}
