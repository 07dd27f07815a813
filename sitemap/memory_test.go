package sitemap_test

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/sitemap"
)

func TestGenReaderMatchesGenSitemap(t *testing.T) {
	got, err := io.ReadAll(newGenReader(1000))
	require.NoError(t, err)
	require.True(t, bytes.Equal(genSitemap(1000), got))
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The live heap after 30,000 entries is what it was after 3,000: nothing
// is kept per entry.
func TestLiveHeapDoesNotGrowWithEntries(t *testing.T) {
	const n, early = 30_000, 3_000
	var atEarly, atEnd uint64
	count := 0
	kind, err := sitemap.Parse(newGenReader(n), func(e sitemap.Entry) error {
		count++
		switch count {
		case early:
			atEarly = liveHeap()
		case n:
			atEnd = liveHeap()
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, sitemap.URLSet, kind)
	require.Equal(t, n, count)
	growth := int64(atEnd) - int64(atEarly)
	t.Logf("live heap after %d entries: %d B, after %d entries: %d B (growth %d B)", early, atEarly, n, atEnd, growth)
	// Keeping even the 27,000 Loc strings alone would add over 1.5 MB.
	require.Less(t, growth, int64(256<<10))
}

// Bytes allocated per entry are the same for a small and a large sitemap:
// the cost of an entry does not depend on how many came before it.
func TestAllocationPerEntryIsFlat(t *testing.T) {
	perEntry := func(n int) float64 {
		doc := genSitemap(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := sitemap.Parse(bytes.NewReader(doc), func(sitemap.Entry) error { return nil })
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perEntry(2_000), perEntry(20_000)
	t.Logf("allocated per entry: %.0f B at 2,000 entries, %.0f B at 20,000", small, large)
	require.InDelta(t, small, large, small*0.15)
}
