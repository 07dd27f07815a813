//go:build cgo

// This test needs SQLite: it measures the Go heap, where the memory store
// would hold the 200,000 rows SQLite keeps outside it.

package recrawl_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/peakheap"
	"github.com/recrawl/recrawl/internal/testsite"
)

// An llms.txt file of many links costs a small multiple of its size
// (issue 12, defect 5: 1 M links took 2.07 GB, 50 times the file).
func TestLargeLLMsTxtStaysWithinASmallMultipleOfItsSize(t *testing.T) {
	if testing.Short() {
		t.Skip("discovers 200,000 links")
	}
	const n = 200000
	f := newFixture(t, testsite.Options{Pages: 1}, recrawl.Config{
		Limits: limits(func(l *recrawl.Limits) { l.MaxPages = 1 }),
	})
	f.src = discover.LLMsTxt{URL: f.site.HugeLLMs("/llms.txt", n)}
	var rep *recrawl.Report
	var err error
	peak := peakheap.Measure(func() { rep, err = f.eng.Run(context.Background(), f.src) })
	var bytes int
	for _, r := range f.site.Requests() {
		if r.Path == "/llms.txt" {
			bytes = r.Bytes
		}
	}
	t.Logf("llms.txt of %d links (%.1f MiB): peak heap %.1f MiB, %.1f× its size", n, float64(bytes)/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(bytes))
	require.NoError(t, err)
	require.Equal(t, n, rep.Discovered)
	// A whole parse cost 38 times the file (355 MiB for these 9.3 MiB).
	require.Less(t, peak, uint64(20*bytes))
}
