package index_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
)

// The index the engine builds, per record (pipelineLoad): a 384-dimension
// vector, about 900 bytes of prose, the eleven metadata keys of the
// pipeline (most shared by the records of one page) and a hex ID. The
// index keeps 1.67x the raw float32 vectors on 24,000 records (texts
// packed against the dictionary; the rest is metadata, IDs and slots);
// unpacked texts made it 1.89x. TestPeakHeapMemory measures the peak
// at the bench site's size.
func TestMemoryHeapPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 24,000 records")
	}
	const pages, perPage, dims = 1000, 24, 384
	m := index.NewMemory(dims)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := pipelineLoad(t, m, pages, perPage, dims)
	runtime.GC()
	runtime.ReadMemStats(&after)
	raw := float64(n * dims * 4)
	kept := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	t.Logf("raw vectors %.1f MB, index %.1f MB (%.2fx)", raw/1e6, kept/1e6, kept/raw)
	require.LessOrEqual(t, kept, 1.75*raw, "the index keeps %.2fx the raw vector bytes", kept/raw)
	runtime.KeepAlive(m)
}
