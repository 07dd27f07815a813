package recrawl_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// requestsTo counts the logged requests for path.
func requestsTo(site *testsite.Site, path string) int {
	return site.Count(func(r testsite.Request) bool { return r.Path == path })
}

// A crawl of a documentation build never requests its images, archives,
// scripts, notebooks, fonts, feeds or _sources/; a link that only its
// Content-Type shows to be a file is requested once, skipped as
// not_document, and never again.
func TestCrawlFetchesOnlyDocuments(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 12}, recrawl.Config{})
	assets := f.site.AddAssets()
	f.src = discover.Crawl{URL: f.site.PageURL(f.site.Paths()[0]), SourceName: "crawl"}
	const download = "/docs/download/dataset"

	rep := f.run()
	require.Equal(t, 12, rep.New)
	require.Zero(t, rep.FailedTotal(), "nothing failed")
	require.Equal(t, 1, rep.Skipped[recrawl.SkipNotDocument], "the extensionless download")
	for _, a := range assets {
		want := 0
		if a.Path == download {
			want = 1
		}
		require.Equal(t, want, requestsTo(f.site, a.Path), a.Path)
	}
	require.Equal(t, 14, rep.Requests, "12 pages, /docs/ (404) and the download")
	require.Equal(t, rep.Requests, len(f.site.PageRequests()))
	require.Equal(t, recrawl.SkipNotDocument, f.row(download).Excluded)

	f.clk.Advance(25 * time.Hour)
	rep = f.run()
	require.Zero(t, requestsTo(f.site, download), "a not_document row is not requested again")
	require.Zero(t, rep.FailedTotal())
	require.Equal(t, 12, rep.NotModified)
	require.Equal(t, 13, rep.Requests, "12 pages and /docs/")
	require.Equal(t, rep.Requests, len(f.site.PageRequests()))
	for _, r := range f.site.Requests() {
		require.False(t, strings.Contains(r.Path, "_sources/"), r.Path)
	}
}

// A sitemap or llms.txt that lists files which are not pages gets each of
// them requested once, skipped as not_document (not failed), and not
// requested on later runs.
func TestListedNonDocumentsAreSkippedOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  func(*testsite.Site) discover.Source
	}{
		{"sitemap", func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} }},
		{"llms.txt", func(s *testsite.Site) discover.Source { return discover.LLMsTxt{URL: s.LLMsURL()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{})
			f.site.AddRaw("/docs/diagram.png", "image/png", []byte("\x89PNG\r\n\x1a\n0000000000000000"))
			f.site.AddRaw("/docs/guide.pdf", "application/pdf", []byte("%PDF-1.7\n0000000000"))
			f.site.AddRaw("/docs/notes.md", "text/markdown", []byte("# Notes\n\nPlain notes.\n"))
			f.src = tc.src(f.site)

			rep := f.run()
			require.Equal(t, 5, rep.New, "4 pages and the Markdown file")
			require.Zero(t, rep.FailedTotal())
			require.Equal(t, 2, rep.Skipped[recrawl.SkipNotDocument])
			require.Equal(t, 1, requestsTo(f.site, "/docs/diagram.png"))
			require.Equal(t, recrawl.SkipNotDocument, f.row("/docs/guide.pdf").Excluded)

			for run := 0; run < 3; run++ {
				f.clk.Advance(40 * 24 * time.Hour) // past every interval
				rep = f.run()
				require.Zero(t, requestsTo(f.site, "/docs/diagram.png"), "run %d", run)
				require.Zero(t, requestsTo(f.site, "/docs/guide.pdf"), "run %d", run)
				require.Zero(t, rep.FailedTotal())
				require.Equal(t, 5, rep.Due, "run %d: the documents only", run)
			}
		})
	}
}

// Through Entry, the start page is requested once per run: its answer to
// format detection is the crawl's, unconditional the first time and
// conditional (a 304 continuing the crawl from its stored links) later.
func TestEntryCrawlRequestsTheStartPageOncePerRun(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 8}, recrawl.Config{})
	startPath := f.site.Paths()[0]
	f.src = discover.Entry{URL: f.site.PageURL(startPath), SourceName: "entry"}

	rep := f.run()
	require.Equal(t, 8, rep.New)
	require.Equal(t, 1, requestsTo(f.site, startPath), "run 1")
	require.Equal(t, rep.Requests, len(f.site.PageRequests()))

	for run := 2; run <= 3; run++ {
		f.clk.Advance(25 * time.Hour)
		if run == 3 {
			f.site.Edit(startPath)
		}
		rep = f.run()
		starts := 0
		for _, r := range f.site.Requests() {
			if r.Path == startPath {
				starts++
				require.True(t, r.Conditional(), "run %d: the known start page is requested conditionally", run)
			}
		}
		require.Equal(t, 1, starts, "run %d", run)
		require.Equal(t, rep.Requests, len(f.site.PageRequests()), "run %d", run)
		require.Zero(t, rep.FailedTotal())
		require.Equal(t, 8, rep.Unchanged+rep.Changed, "run %d: the crawl still reaches every page", run)
		if run == 3 {
			require.Equal(t, 1, rep.Changed, "the edited start page")
		} else {
			require.Equal(t, 8, rep.NotModified)
		}
	}
}

// The start page's request counts against the page cap.
func TestEntryCrawlStartPageCountsAgainstTheCap(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 20}, recrawl.Config{Limits: limits(func(l *recrawl.Limits) { l.MaxPages = 5 })})
	f.src = discover.Entry{URL: f.site.PageURL(f.site.Paths()[0]), SourceName: "entry"}
	rep := f.run()
	require.Equal(t, recrawl.StopMaxPages, rep.StoppedBy)
	require.Len(t, f.site.PageRequests(), 5)
	require.Equal(t, 5, rep.Requests)
}
