package recrawl_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/peakheap"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/sitemap"
)

// A crawled page obeys WEB_MAX_BYTES (issue 12, defect 5: a crawl of a
// 1 GB page with WEB_MAX_BYTES=1000000 downloaded 61 MB, and the error
// named a setting that had no effect).
func TestCrawledPageObeysMaxBytes(t *testing.T) {
	var failure error
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{
		Limits: limits(func(l *recrawl.Limits) { l.MaxBytes = 1000000 }),
		Observer: func(ev recrawl.Event) {
			if ev.Outcome == recrawl.OutcomeFailed {
				failure = ev.Err
			}
		},
	})
	big := f.site.Paths()[1]
	f.site.Huge(big, 1<<30)
	f.src = discover.Crawl{URL: f.site.PageURL(f.site.Paths()[0])}
	rep, err := f.eng.Run(context.Background(), f.src)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
	require.ErrorIs(t, failure, discover.ErrTooLarge)
	require.Contains(t, failure.Error(), "more than 1000000 bytes")
	require.Contains(t, failure.Error(), recrawl.EnvMaxBytes, "the message names the setting that applies")
	require.NotContains(t, failure.Error(), recrawl.EnvMaxDocumentBytes)
	require.Eventually(t, func() bool {
		for _, r := range f.site.Requests() {
			if r.Path == big {
				// The cap, plus what the loopback socket buffers held.
				return r.Bytes < 16<<20
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "the body was cut off near WEB_MAX_BYTES")
}

// Discovery documents have their own cap, WEB_MAX_DOCUMENT_BYTES, and a
// document over it fails discovery with a message naming it.
func TestDiscoveryDocumentsObeyTheirCap(t *testing.T) {
	tests := []struct {
		name   string
		source func(s *testsite.Site) discover.Source
		is     error
	}{
		{"sitemap", func(s *testsite.Site) discover.Source {
			return discover.Sitemap{URL: s.HugeSitemap("/big.xml", 100000)}
		}, sitemap.ErrTooLarge},
		{"llms.txt", func(s *testsite.Site) discover.Source {
			return discover.LLMsTxt{URL: s.HugeLLMs("/big-llms.txt", 100000)}
		}, discover.ErrTooLarge},
		{"entry llms.txt", func(s *testsite.Site) discover.Source {
			return discover.Entry{URL: s.HugeLLMs("/llms-full.txt", 100000)}
		}, discover.ErrTooLarge},
		{"entry sitemap", func(s *testsite.Site) discover.Source { return discover.Entry{URL: s.HugeSitemap("/big.xml", 100000)} }, sitemap.ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 2}, recrawl.Config{
				Limits: limits(func(l *recrawl.Limits) { l.MaxDocumentBytes = 1 << 20; l.MaxBytes = 64 << 20 }),
			})
			f.src = tc.source(f.site)
			rep, err := f.eng.Run(context.Background(), f.src)
			var de *recrawl.DiscoveryError
			require.ErrorAs(t, err, &de)
			require.ErrorIs(t, err, tc.is)
			require.Contains(t, err.Error(), recrawl.EnvMaxDocumentBytes, "the message names the setting that applies")
			require.True(t, rep.Incomplete)
			require.Zero(t, rep.Missing)
		})
	}
}

// A sitemap index tree that fans out without end (every index lists
// 20,000 more indexes) stays bounded in memory: at most MaxSitemaps child
// sitemaps are queued, the rest are counted as skipped (issue 12, defect
// 2: such a tree reached 4.1 GB after 221 documents).
func TestFanOutSitemapIndexStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 30 documents of 20,000 entries")
	}
	const width, docs = 20000, 30
	f := newFixture(t, testsite.Options{Pages: 1}, recrawl.Config{
		Limits: limits(func(l *recrawl.Limits) { l.MaxPages = docs }),
	})
	f.src = discover.Sitemap{URL: f.site.FanOut("/fan/", width)}
	def := recrawl.DefaultLimits()
	var rep *recrawl.Report
	var err error
	peak := peakheap.Measure(func() { rep, err = f.eng.Run(context.Background(), f.src) })
	t.Logf("fan-out index, %d documents of %d children: peak heap %.1f MiB", docs, width, float64(peak)/(1<<20))
	require.NoError(t, err)
	require.True(t, rep.Incomplete)
	require.Equal(t, width-def.MaxSitemaps+(docs-1)*width, rep.Skipped[recrawl.SkipMaxSitemaps],
		"the root's children past the cap, then every child of the other documents")
	require.Equal(t, docs, f.site.Count(nil)-1, "robots.txt and the documents up to the page cap")
	require.Less(t, peak, uint64(32<<20))
}

// MaxSitemapChildren bounds the children followed from one index.
func TestSitemapChildrenPerIndexCap(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 1}, recrawl.Config{
		Limits: limits(func(l *recrawl.Limits) { l.MaxPages = 3; l.MaxSitemapChildren = 5 }),
	})
	f.src = discover.Sitemap{URL: f.site.FanOut("/fan/", 8)}
	rep := f.run()
	require.True(t, rep.Incomplete)
	require.Equal(t, 3*3, rep.Skipped[recrawl.SkipMaxSitemapChildren], "three children past the cap in each of the three documents read")
	require.Zero(t, rep.Skipped[recrawl.SkipMaxSitemaps])
	require.Zero(t, rep.Missing, "an incomplete listing counts nothing missing")
}
