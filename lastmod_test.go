package recrawl_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// lastmodPages is the size of the sites of the moved-lastmod tests: the
// issue's 10,000 pages, 2,000 in -short and race builds.
func lastmodPages() int {
	if testing.Short() || raceEnabled {
		return 2000
	}
	return 10000
}

// lastmodFixture is a source crawled once with the engine's defaults (the
// default scheduler, learned trust); with quiet, run again an hour later
// with nothing to do.
func lastmodFixture(t *testing.T, opts testsite.Options, quiet bool, list func(i int, p *testsite.Page)) *fixture {
	t.Helper()
	l := recrawl.DefaultLimits()
	l.RequestDelay, l.MaxPages = 0, 0
	f := newFixture(t, opts, recrawl.Config{Scheduler: schedule.Index{}, Limits: &l})
	if list != nil {
		for i, path := range f.site.Paths() {
			f.site.Update(path, func(p *testsite.Page) { list(i, p) })
		}
	}
	rep := f.run()
	require.Equal(t, opts.Pages, rep.New)
	if quiet {
		f.clk.Advance(time.Hour)
		rep = f.run()
		require.Zero(t, rep.Fetched, "an hour after a cold crawl nothing is due")
	}
	return f
}

// edit edits every k-th page of paths from the first, an hour from now,
// and returns the edited paths.
func (f *fixture) editEvery(paths []string, k int) map[string]bool {
	f.clk.Advance(time.Hour)
	edited := map[string]bool{}
	for i := 0; i < len(paths); i += k {
		f.site.Edit(paths[i])
		edited[paths[i]] = true
	}
	return edited
}

// fetchedPaths is the set of page paths the site answered since its log
// was reset.
func fetchedPaths(site *testsite.Site) map[string]bool {
	out := map[string]bool{}
	for _, r := range site.PageRequests() {
		out[r.Path] = true
	}
	return out
}

// An honest sitemap moves the lastmods of the pages it edited, and of the
// pages a rebuild touched without changing them: the next run fetches
// every one of them, a source with no trust evidence yet included (the
// seeds' contract: a moved lastmod is a reason to check sooner), and
// little else: requests ≤ 1.05 × moved, and the two requests of
// robots.txt and the sitemap.
func TestMovedLastModFetchedNextRun(t *testing.T) {
	n := lastmodPages()
	f := lastmodFixture(t, testsite.Options{Pages: n}, true, nil)
	paths := f.site.Paths()
	edited := f.editEvery(paths, 50) // 2% edited
	touched := 0
	for i := 25; i < len(paths); i += 100 { // 1% rebuilt, the content as it was
		f.site.Touch(paths[i])
		edited[paths[i]] = true
		touched++
	}
	rep := f.run()
	got := fetchedPaths(f.site)
	for p := range edited {
		require.True(t, got[p], "%s moved its lastmod and was not fetched", p)
	}
	t.Logf("moved %d: bumped %d, fetched %d, requests %d of the site's %d, changed %d, limit %d", len(edited), rep.Bumped, rep.Fetched, rep.Requests, len(f.site.Requests()), rep.Changed, rep.Limit)
	require.Equal(t, len(edited), rep.Bumped)
	require.Equal(t, len(edited)-touched, rep.Changed)
	require.LessOrEqual(t, float64(rep.Requests), 1.05*float64(len(edited)))
	require.LessOrEqual(t, float64(len(f.site.Requests())), 1.05*float64(len(edited))+2, "robots.txt, the sitemap and the moved pages")

	// Once the evidence is in, the same holds without a sample.
	edited = f.editEvery(f.site.Paths()[1:], 50)
	rep = f.run()
	got = fetchedPaths(f.site)
	for p := range edited {
		require.True(t, got[p], "%s moved its lastmod and was not fetched", p)
	}
	require.LessOrEqual(t, float64(len(f.site.Requests())), 1.05*float64(len(edited))+2)
}

// A sitemap that stamps its generation time on every URL moves every
// lastmod at every rebuild while the content stays: the first run after
// a rebuild fetches a small sample of the moved rows beyond the plan's
// limit (at most 2% of the pages), and learns from it that the lastmods
// lie; the next runs fetch no more than the limit.
func TestGeneratedLastModsSampledOnce(t *testing.T) {
	n := lastmodPages()
	f := lastmodFixture(t, testsite.Options{Pages: n, GeneratedLastMod: true, SitemapSplit: n / 4}, false, nil)
	for i := range 4 {
		f.clk.Advance(6 * time.Hour) // the sitemap is built again: every lastmod moves
		rep := f.run()
		t.Logf("run %d after the rebuild: bumped %d, fetched %d, limit %d", i+1, rep.Bumped, rep.Fetched, rep.Limit)
		require.Equal(t, n, rep.Bumped, "every lastmod moved")
		require.GreaterOrEqual(t, rep.Limit, 0)
		if i == 0 {
			require.LessOrEqual(t, rep.Fetched, rep.Limit+n/50, "the first run after a rebuild: at most 2%% of the pages beyond the limit")
			require.Greater(t, rep.Fetched, rep.Limit, "a sample of the moved rows is fetched")
		} else {
			require.LessOrEqual(t, rep.Fetched, rep.Limit, "the next runs: none beyond the limit")
		}
	}
}

// A sitemap index whose children differ: a third honest, a third with
// the generation time on every URL, a third with no lastmod. Each child
// is judged on its own evidence: the honest third's edits are fetched the
// next run, the generated third costs a sample once and nothing after.
func TestMixedSitemapJudgedPerChild(t *testing.T) {
	n := lastmodPages()
	third := (n + 2) / 3
	opts := testsite.Options{Pages: n, SitemapSplit: third}
	f := lastmodFixture(t, opts, false, func(i int, p *testsite.Page) {
		switch i / third {
		case 1:
			p.ListedLastMod = testsite.ListGenerated
		case 2:
			p.ListedLastMod = testsite.ListNone
		}
	})
	paths := f.site.Paths()
	for i := range 3 {
		edited := f.editEvery(paths[:third], 50) // 2% of the honest third, an hour after the last run
		rep := f.run()
		got := fetchedPaths(f.site)
		for p := range edited {
			require.True(t, got[p], "run %d: %s moved its lastmod and was not fetched", i+1, p)
		}
		generated := 0
		for p := range got {
			if idx := indexOf(paths, p); idx >= third && idx < 2*third {
				generated++
			}
		}
		t.Logf("run %d: honest edits %d, fetched %d (%d of the generated third), limit %d", i+1, len(edited), rep.Fetched, generated, rep.Limit)
		require.LessOrEqual(t, rep.Fetched, len(edited)+rep.Limit+n/50)
		if i > 0 {
			require.LessOrEqual(t, rep.Fetched, len(edited)+rep.Limit, "the generated third's sample is taken once")
		}
	}
}

func indexOf(paths []string, p string) int {
	for i, q := range paths {
		if q == p {
			return i
		}
	}
	return -1
}

// Bad lastmods never make a run fetch beyond its limit, nor starve the
// honest rows listed beside them: lastmods in the future, ones that do
// not parse, one date on every URL, ones earlier than the last fetch, and
// ones that move at every run on every URL.
func TestBadLastModsStayWithinTheLimit(t *testing.T) {
	n := 400
	future := testsite.DefaultStart.Add(365 * 24 * time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		name string
		list func(run int) string // the listed lastmod at a run (0: the cold crawl)
	}{
		{"future", func(int) string { return future }},
		{"future and moving", func(run int) string {
			return testsite.DefaultStart.Add(time.Duration(365+run) * 24 * time.Hour).UTC().Format(time.RFC3339)
		}},
		{"unparsable", func(run int) string { return fmt.Sprintf("yesterday-%d", run) }},
		{"one date on every URL", func(int) string { return "2025-06-01" }},
		{"earlier than the last fetch", func(run int) string {
			return testsite.DefaultStart.Add(-time.Duration(run) * 24 * time.Hour).UTC().Format(time.RFC3339)
		}},
		{"moving at every run", func(run int) string {
			return testsite.DefaultStart.Add(time.Duration(run) * 7 * time.Hour).UTC().Format(time.RFC3339)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The bad half of the site is listed beside an honest half.
			f := lastmodFixture(t, testsite.Options{Pages: n, SitemapSplit: n / 2}, false, func(i int, p *testsite.Page) {
				if i >= n/2 {
					p.ListedLastMod = tc.list(0)
				}
			})
			paths := f.site.Paths()
			for run := 1; run <= 4; run++ {
				for _, p := range paths[n/2:] {
					f.site.Update(p, func(pg *testsite.Page) { pg.ListedLastMod = tc.list(run) })
				}
				edited := f.editEvery(paths[:n/2], 25)
				f.clk.Advance(5 * time.Hour)
				rep := f.run()
				got := fetchedPaths(f.site)
				for p := range edited {
					require.True(t, got[p], "run %d: an honest moved row starved", run)
				}
				extra := 0
				if run == 1 {
					extra = schedule.DefaultLastModSample // the bad listing's sample, once
				}
				require.LessOrEqual(t, rep.Fetched, len(edited)+rep.Limit+extra, "run %d", run)
			}
		})
	}
}
