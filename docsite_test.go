package recrawl_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

func TestAuthoritativeSitemapEndsAfterTwoRequests(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 10}, recrawl.Config{SitemapTrust: recrawl.TrustAuthoritative})
	rep := f.run()
	require.Equal(t, 10, rep.New)

	f.clk.Advance(48 * time.Hour) // every row would be due by schedule, and robots.txt is stale
	rep = f.run()
	require.Equal(t, []string{"/robots.txt", "/sitemap.xml"}, paths(f.site.Requests()), "robots.txt and the sitemap, nothing else")
	require.Equal(t, http.StatusNotModified, f.site.Requests()[1].Status)
	require.Zero(t, rep.Fetched)
	require.Zero(t, rep.Missing)

	// A moved lastmod brings back exactly its own row.
	edited := f.site.Paths()[6]
	f.clk.Advance(time.Hour)
	f.site.Edit(edited)
	rep = f.run()
	require.Equal(t, 1, rep.Bumped)
	require.Equal(t, 1, rep.Due)
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, []string{"/sitemap.xml", edited}, paths(f.site.Requests()))
}

func TestAuthoritativeSitemapWithoutLastmodRefetchesEverything(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 6, NoLastMod: true}, recrawl.Config{SitemapTrust: recrawl.TrustAuthoritative})
	f.run()
	f.clk.Advance(time.Hour) // long before any interval would be up
	rep := f.run()
	require.Equal(t, 6, rep.Due, "nothing to compare: every run refetches everything")
	require.Equal(t, 6, rep.NotModified, "conditionally")
}

func TestConditionalSitemapKeepsItsURLsSeen(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 8, SitemapSplit: 3}, recrawl.Config{})
	f.run()
	for run := 0; run < 4; run++ {
		f.clk.Advance(time.Hour)
		rep := f.run()
		require.Zero(t, rep.Missing, "run %d: 304 sitemaps still list their URLs", run)
		require.Equal(t, 8, rep.Unlisted)
		for _, r := range f.site.Requests() {
			if strings.HasPrefix(r.Path, "/sitemap-") {
				require.Equal(t, http.StatusNotModified, r.Status, r.Path)
			}
		}
	}
	// A page dropped from one child sitemap is missing, though its
	// siblings in other (unchanged) child sitemaps are not.
	f.site.RemoveFromSitemap(f.site.Paths()[7])
	f.clk.Advance(time.Hour)
	rep := f.run()
	require.Equal(t, 1, rep.Missing)
	f.clk.Advance(time.Hour)
	rep = f.run()
	require.Equal(t, 1, rep.Missing)
	require.Equal(t, 2, f.row(f.site.Paths()[7]).MissingRuns)
}

func TestCrawlSourceRecordsAndRevisitsConditionally(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 12}, recrawl.Config{})
	start := f.site.PageURL(f.site.Paths()[0])
	f.src = discover.Crawl{URL: start, SourceName: "crawl"}
	rep := f.run()
	require.Equal(t, 12, rep.New, "every page is reachable from the first")
	perPath := map[string]int{}
	for _, r := range f.site.PageRequests() {
		perPath[r.Path]++
	}
	for _, p := range f.site.Paths() {
		require.Equal(t, 1, perPath[p], "%s requested once: the crawl's answer is the page's fetch", p)
	}

	f.clk.Advance(25 * time.Hour)
	edited := f.site.Paths()[5]
	f.site.Edit(edited)
	rep = f.run()
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, 11, rep.NotModified, "known pages are requested conditionally; 304s continue the crawl from stored links")
	for _, r := range f.site.PageRequests() {
		if f.site.IsPage(r) && r.Path != "/docs/" {
			require.True(t, r.Conditional(), r.Path)
		}
	}
}

func TestCrawlStopsAtThePageCap(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 30}, recrawl.Config{Limits: limits(func(l *recrawl.Limits) { l.MaxPages = 7 })})
	f.src = discover.Crawl{URL: f.site.PageURL(f.site.Paths()[0]), SourceName: "crawl"}
	rep := f.run()
	require.Equal(t, recrawl.StopMaxPages, rep.StoppedBy)
	require.Len(t, f.site.PageRequests(), 7)
}

func TestLLMsTxtSource(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 7}, recrawl.Config{})
	f.src = discover.LLMsTxt{URL: f.site.LLMsURL()}
	rep := f.run()
	require.Equal(t, 7, rep.Discovered)
	require.Equal(t, 7, rep.New)
	row := f.row(f.site.Paths()[3])
	require.Equal(t, "Page 4", row.Title)
}

func TestEntryDetectsTheFormatOrNamesTheSetting(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{})
	f.src = discover.Entry{URL: f.site.SitemapURL()}
	rep := f.run()
	require.Equal(t, 4, rep.New)

	landing := f.site.Serve("/feed/sitemap.xml", "text/html; charset=utf-8", []byte("<!doctype html><html><body><h1>Welcome</h1><p>Our new site.</p></body></html>"))
	_, err := f.eng.Run(context.Background(), discover.Entry{URL: landing})
	var fe *discover.FormatError
	require.ErrorAs(t, err, &fe)
	require.Contains(t, err.Error(), "EntryFormat")

	// Format set by hand is a working override.
	rep, err = f.eng.Run(context.Background(), discover.Entry{URL: f.site.PageURL(f.site.Paths()[0]), Format: discover.FormatPage, SourceName: "by-hand"})
	require.NoError(t, err)
	require.Positive(t, rep.New)
}

func TestCheck(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 9, SitemapSplit: 4}, recrawl.Config{})
	ctx := context.Background()
	tests := []struct {
		name   string
		entry  discover.Entry
		format discover.Format
		pages  int
	}{
		{"sitemap index followed", discover.Entry{URL: f.site.SitemapURL()}, discover.FormatSitemap, 9},
		{"llms.txt", discover.Entry{URL: f.site.LLMsURL()}, discover.FormatLLMsTxt, 9},
		// page-0002, page-0003 and the nav's /docs/; the nav's / is off the path
		{"start page", discover.Entry{URL: f.site.PageURL(f.site.Paths()[0])}, discover.FormatPage, 3},
		{"override", discover.Entry{URL: f.site.SitemapURL(), Format: discover.FormatSitemap}, discover.FormatSitemap, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.eng.Check(ctx, tc.entry)
			require.NoError(t, err)
			require.True(t, res.RobotsAllowed)
			require.Equal(t, tc.format, res.Format)
			require.Equal(t, tc.entry.Format == "", res.Detected)
			require.Equal(t, tc.pages, res.Pages)
		})
	}
	total, _, err := f.state.Count(ctx, f.site.SitemapURL())
	require.NoError(t, err)
	require.Zero(t, total, "Check writes nothing")

	f.site.SetRobots("", http.StatusServiceUnavailable)
	f.clk.Advance(25 * time.Hour)
	_, err = f.eng.Check(ctx, discover.Entry{URL: f.site.SitemapURL()})
	require.ErrorContains(t, err, "robots.txt")
}

func TestCanonicalPolicies(t *testing.T) {
	for _, policy := range []recrawl.CanonicalPolicy{recrawl.CanonicalRecord, recrawl.CanonicalFollow} {
		t.Run(fmt.Sprint(policy), func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{CanonicalPolicy: policy})
			dup := f.site.Paths()[2]
			canonical := f.site.PageURL(f.site.Paths()[0])
			f.site.Update(dup, func(p *testsite.Page) { p.Canonical = canonical + "?utm_source=dup" })
			rep := f.run()
			row := f.row(dup)
			require.Equal(t, canonical+"?utm_source=dup", row.Canonical, "the declared canonical is stored either way")
			if policy == recrawl.CanonicalRecord {
				require.Equal(t, 3, rep.New)
				require.Empty(t, row.AliasOf)
				require.NotEmpty(t, row.ContentHash)
				return
			}
			require.Equal(t, 2, rep.New)
			require.Equal(t, 1, rep.Skipped[recrawl.SkipAlias])
			require.Equal(t, 1, rep.Aliases)
			require.Equal(t, canonical, row.AliasOf, "normalized")
			require.Empty(t, row.ContentHash, "an alias carries no content of its own")
		})
	}
}

func TestBudgetSpendsFetchesOnTheLikeliestChanges(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 20}, recrawl.Config{})
	f.run()
	hot := f.site.Paths()[:4]
	for round := 0; round < 6; round++ {
		f.clk.Advance(13 * time.Hour)
		for _, p := range hot {
			f.site.Edit(p)
		}
		f.run()
	}
	f.clk.Advance(40 * 24 * time.Hour) // everything is due
	// A scheduler that does not plan: Config.Budget ranks by schedule.Gain.
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, Budget: 4, Scheduler: schedule.DefaultHalving, Limits: limits(func(*recrawl.Limits) {})})
	for _, p := range hot {
		f.site.Edit(p)
	}
	rep := f.run()
	require.Equal(t, 20, rep.Due)
	require.Equal(t, 4, rep.Fetched)
	require.Equal(t, 16, rep.Skipped[recrawl.SkipBudget])
	require.Equal(t, recrawl.StopBudget, rep.StoppedBy)
	require.Equal(t, 4, rep.Changed, "the budget went to the pages that change")
	got := map[string]bool{}
	for _, r := range f.site.PageRequests() {
		got[r.Path] = true
	}
	for _, p := range hot {
		require.True(t, got[p], p)
	}
}

func TestNextDue(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	ctx := context.Background()
	next, err := f.eng.NextDue(ctx, f.src)
	require.NoError(t, err)
	require.True(t, next.IsZero(), "an unknown source is due at once")
	f.run()
	next, err = f.eng.NextDue(ctx, f.src)
	require.NoError(t, err)
	now := f.clk.Now()
	require.WithinRange(t, next, now.Add(21*time.Hour), now.Add(24*time.Hour))
}

func TestShutdownLetsInFlightPagesFinish(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 12}, recrawl.Config{Workers: 2})
	for _, p := range f.site.Paths() {
		f.site.Slow(p, 30*time.Millisecond)
	}
	done := make(chan *recrawl.Report, 1)
	go func() {
		rep, err := f.eng.Run(context.Background(), f.src)
		require.NoError(t, err)
		done <- rep
	}()
	require.Eventually(t, func() bool { return len(f.site.PageRequests()) >= 2 }, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, f.eng.Shutdown(context.Background()))
	rep := <-done
	require.Equal(t, recrawl.StopShutdown, rep.StoppedBy)
	require.Less(t, rep.New, 12)
	require.Equal(t, rep.New, rep.Fetched, "every page in flight finished and was recorded")
	require.Equal(t, 12-rep.New, rep.Skipped[recrawl.SkipShutdown])
	due, err := f.state.Due(context.Background(), f.src.Name(), f.clk.Now(), crawlstate.Key{}, 100)
	require.NoError(t, err)
	require.Len(t, due, 12-rep.New, "the rest stays due: nothing is lost")
	_, err = f.eng.Run(context.Background(), f.src)
	require.ErrorIs(t, err, recrawl.ErrEngineClosed)
}
