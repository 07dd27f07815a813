package discover_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/peakheap"
	"github.com/recrawl/recrawl/internal/testsite"
)

// A crawled page of a million links costs a small multiple of its body:
// the links are streamed from the body with the HTML tokenizer into the
// crawl's queue, with no DOM (issue 12, defect 5: such a page took
// 1.36 GB, some 27 times its 49 MiB).
func TestPeakHeapCrawlOfAMillionLinkPage(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("crawls a 49 MiB page of a million links (run without -race by .ci/run)")
	}
	const n = 1_000_000
	site := testsite.New(testsite.Options{Pages: 1})
	t.Cleanup(site.Close)
	start := site.HugeLinks("/docs/many.html", n)
	env := discover.Env{Client: site.Client(), MaxPageBytes: 128 << 20, MaxDocuments: 3}
	var yielded int
	var err error
	peak := peakheap.Measure(func() {
		err = discover.Crawl{URL: start}.Discover(context.Background(), env, func(discover.Link) error {
			yielded++
			return nil
		})
	})
	var body int
	for _, r := range site.Requests() {
		if r.Path == "/docs/many.html" {
			body = r.Bytes
		}
	}
	t.Logf("crawled page of %d links (%.1f MiB): peak heap %.1f MiB, %.2f× its body", n, float64(body)/(1<<20), float64(peak)/(1<<20), float64(peak)/float64(body))
	var le *discover.LimitError
	require.ErrorAs(t, err, &le, "more pages remain than MaxDocuments")
	require.Equal(t, 3, yielded, "the start page and the two links requested")
	require.Greater(t, body, 45<<20)
	require.Less(t, peak, uint64(6*body))
}

// The crawl's queue is bounded by twice MaxDocuments; a MaxDocuments too
// large to double (an engine without a page cap) leaves it unbounded
// rather than overflowing to nothing.
func TestCrawlQueueBound(t *testing.T) {
	for _, max := range []int{math.MaxInt, math.MaxInt/2 + 1, 50} {
		site := testsite.New(testsite.Options{Pages: 1})
		t.Cleanup(site.Close)
		start := site.HugeLinks("/docs/many.html", 200)
		var yielded int
		err := discover.Crawl{URL: start}.Discover(context.Background(), discover.Env{Client: site.Client(), MaxDocuments: max},
			func(discover.Link) error { yielded++; return nil })
		if max == 50 {
			var le *discover.LimitError
			require.ErrorAs(t, err, &le)
			require.Equal(t, 50, yielded)
			continue
		}
		require.NoError(t, err, "MaxDocuments %d", max)
		require.Equal(t, 201, yielded, "MaxDocuments %d: the start page and its 200 links", max)
	}
}

// The start page of an Entry obeys the page cap once it is known to be
// HTML (issue 30, deliverable 4: with WEB_MAX_BYTES=1000000 a 1 GB start
// page was read to the 50 MiB discovery-document cap, peak heap 116 MiB).
// The crawl hands it on as a page too large, with the page cap named.
func TestPeakHeapEntryStartPageObeysPageCap(t *testing.T) {
	if testing.Short() {
		t.Skip("serves a 1 GiB start page")
	}
	site := testsite.New(testsite.Options{Pages: 1})
	t.Cleanup(site.Close)
	site.Huge("/docs/huge.html", 1<<30)
	h := newHandlerDouble()
	env := discover.Env{Client: site.Client(), Pages: h, MaxBytes: discover.DefaultMaxBytes, MaxPageBytes: 1_000_000}
	var err error
	peak := peakheap.Measure(func() {
		err = discover.Entry{URL: site.PageURL("/docs/huge.html")}.Discover(context.Background(), env, func(discover.Link) error { return nil })
	})
	t.Logf("1 GiB start page, page cap 1,000,000 bytes: peak heap %.1f MiB", float64(peak)/(1<<20))
	require.NoError(t, err, "a page too large is no failure of the crawl")
	require.Len(t, h.handled, 1)
	start := h.handled[0]
	require.True(t, start.Prefetched, "the detection answer is the start page's")
	require.ErrorIs(t, start.Err, discover.ErrTooLarge)
	require.Contains(t, start.Err.Error(), "more than 1000000 bytes")
	require.Contains(t, start.Err.Error(), "WEB_MAX_BYTES", "the message names the cap that applies")
	require.NotContains(t, start.Err.Error(), "WEB_MAX_DOCUMENT_BYTES")
	require.Less(t, peak, uint64(16<<20), "the body is read to the page cap, not to the document cap")
}
