package llmstxt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/internal/peakheap"
	"github.com/recrawl/recrawl/llmstxt"
)

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
	peak := peakheap.Measure(func() { f, err = llmstxt.Parser{MaxBytes: 64 << 20}.Parse(data) })
	t.Logf("llms.txt of %d links (%.1f MiB): peak heap %.0f MiB, %.1f× the file", n, float64(len(data))/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(len(data)))
	require.NoError(t, err)
	require.Len(t, f.Sections[0].Links, n)
	require.Less(t, peak, uint64(10*len(data)))
}
