package recrawl_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// other starts a second loopback site: another host for redirects.
func other(t *testing.T) *testsite.Site {
	t.Helper()
	s := testsite.New(testsite.Options{Pages: 3})
	t.Cleanup(s.Close)
	return s
}

// A listed page that redirects to another host is skipped as
// offhost_redirect: the other host is never requested and nothing of it
// is stored under the listed URL, whether the page was known or new.
func TestOffHostRedirectOfAPageIsSkipped(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  func(*testsite.Site) discover.Source
	}{
		{"sitemap", func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} }},
		{"llms.txt", func(s *testsite.Site) discover.Source { return discover.LLMsTxt{URL: s.LLMsURL()} }},
		{"crawl", func(s *testsite.Site) discover.Source {
			return discover.Crawl{URL: s.PageURL(s.Paths()[0]), SourceName: "crawl"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 5}, recrawl.Config{})
			b := other(t)
			f.src = tc.src(f.site)
			moved, fresh := f.site.Paths()[2], f.site.Add("/docs/fresh", "Fresh", "<p>fresh</p>")
			f.site.Update(f.site.Paths()[0], func(p *testsite.Page) { p.Links = append(p.Links, "/docs/fresh") })
			f.site.Redirect("/docs/fresh", b.PageURL(b.Paths()[0]))
			rep := f.run()
			require.Equal(t, 1, rep.Skipped[recrawl.SkipOffHostRedirect], "the new page")
			require.Zero(t, b.Count(nil), "the other host is never requested")
			row := f.row("/docs/fresh")
			require.Empty(t, row.ContentHash, "nothing stored under the listed URL")
			require.Empty(t, row.Title)
			require.Equal(t, fresh, row.OriginalURL)

			before := f.row(moved)
			f.site.Redirect(moved, b.PageURL(b.Paths()[1]))
			f.clk.Advance(40 * 24 * time.Hour)
			rep = f.run()
			require.Equal(t, 2, rep.Skipped[recrawl.SkipOffHostRedirect])
			require.Zero(t, rep.FailedTotal())
			require.Zero(t, b.Count(nil))
			after := f.row(moved)
			require.Equal(t, before.ContentHash, after.ContentHash, "the known page keeps its own content")
			require.Equal(t, before.Title, after.Title)
		})
	}
}

// A crawl's scope is fixed by its entry URL: a start page that redirects
// to another host does not move the crawl there.
func TestRedirectingStartPageDoesNotMoveTheCrawl(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{})
	b := other(t)
	startPath := f.site.Paths()[0]
	f.site.Redirect(startPath, b.PageURL(b.Paths()[0]))

	f.src = discover.Crawl{URL: f.site.PageURL(startPath), SourceName: "crawl"}
	rep := f.run()
	require.Equal(t, 1, rep.Skipped[recrawl.SkipOffHostRedirect])
	require.Zero(t, rep.New)
	require.Zero(t, b.Count(nil))

	// Through Entry, detection refuses the redirect: the run fails
	// before anything is crawled.
	_, err := f.eng.Run(context.Background(), discover.Entry{URL: f.site.PageURL(startPath), SourceName: "entry"})
	require.ErrorContains(t, err, "another host")
	require.Zero(t, b.Count(nil))
}

// Discovery documents that redirect to another host are not read: the
// sitemap, a child sitemap of an index, llms.txt.
func TestOffHostRedirectOfDiscoveryDocuments(t *testing.T) {
	t.Run("child sitemap", func(t *testing.T) {
		f := newFixture(t, testsite.Options{Pages: 6, SitemapSplit: 3}, recrawl.Config{})
		b := other(t)
		f.site.Move("/sitemap-2.xml", b.SitemapURL())
		rep, err := f.eng.Run(context.Background(), f.src)
		var de *recrawl.DiscoveryError
		require.ErrorAs(t, err, &de, "the listing is incomplete")
		require.ErrorContains(t, err, "another host")
		require.Zero(t, b.Count(nil))
		require.Equal(t, 3, rep.New, "the pages of the readable child")
		require.Zero(t, rep.Missing)
	})
	for _, tc := range []struct {
		name string
		src  func(a, b *testsite.Site) discover.Source
	}{
		{"sitemap", func(a, b *testsite.Site) discover.Source {
			a.Move("/sitemap.xml", b.SitemapURL())
			return discover.Sitemap{URL: a.SitemapURL()}
		}},
		{"llms.txt", func(a, b *testsite.Site) discover.Source {
			a.Move("/llms.txt", b.LLMsURL())
			return discover.LLMsTxt{URL: a.LLMsURL()}
		}},
		{"entry", func(a, b *testsite.Site) discover.Source {
			a.Move("/sitemap.xml", b.SitemapURL())
			return discover.Entry{URL: a.SitemapURL()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
			b := other(t)
			rep, err := f.eng.Run(context.Background(), tc.src(f.site, b))
			require.ErrorContains(t, err, "another host")
			require.Zero(t, b.Count(nil))
			require.Zero(t, rep.New)
		})
	}
}

// Config.FollowOffHostRedirects restores following them.
func TestFollowOffHostRedirects(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{FollowOffHostRedirects: true})
	b := other(t)
	f.site.Redirect(f.site.Paths()[1], b.PageURL(b.Paths()[2]))
	rep, err := f.eng.Run(context.Background(), f.src)
	require.NoError(t, err)
	require.Equal(t, 3, rep.New)
	require.Equal(t, 1, b.Count(b.IsPage))
	require.Equal(t, 4, rep.Requests, "three on this site, one on the other")
	require.Equal(t, "Page 3", f.row(f.site.Paths()[1]).Title, "the other host's page, as asked")
}
