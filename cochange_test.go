package recrawl_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// releaseStaleness crawls a site of sections that release in bursts (a
// release edits 40% of one section's pages at once, another 40% each time, a section every day
// and a half in turn, behind a sitemap without lastmods) every six hours
// with s, and returns the page-hours the edited pages stayed stale after
// their releases over the second half, the runs' fetches then, and the
// fixture crawled. With noLastModified the pages send no Last-Modified
// (their ETags stay).
func releaseStaleness(t *testing.T, s schedule.Scheduler, cluster func(string) string, days int, noLastModified bool) (stale float64, fetches int, f *fixture) {
	t.Helper()
	const pages, sections = 400, 8
	l := recrawl.DefaultLimits()
	// One worker, so that fewer of a run's fetches finish out of the order
	// they started in (see TestCoChangeFollowsReleases). A page cap spreads
	// the first crawl over the first runs, as a site found a part at a time
	// is, so that the pages' revisits do not fall due together.
	l.RequestDelay, l.MaxPages = 0, 60
	f = newFixture(t, testsite.Options{Pages: pages, Sections: sections, NoLastMod: true, NoLastModified: noLastModified}, recrawl.Config{Scheduler: s, Limits: &l, Cluster: cluster, Workers: 1})
	paths := f.site.Paths()
	per := pages / sections
	released := map[string]time.Time{} // edited and not fetched since: when
	runs := days * 4
	for run := 1; run <= runs; run++ {
		if run%6 == 0 {
			sec := (run / 6) % sections
			for k := range per * 2 / 5 { // a different 40% each time
				p := paths[sec*per+(k*7+run*13)%per]
				if _, ok := released[p]; !ok {
					released[p] = f.clk.Now()
				}
				f.site.Edit(p)
			}
		}
		f.clk.Advance(6 * time.Hour)
		rep := f.run()
		measured := run > runs/2
		if measured {
			fetches += rep.Fetched
		}
		now := f.clk.Now()
		for p := range fetchedPaths(f.site) {
			if at, ok := released[p]; ok {
				if measured {
					stale += now.Sub(at).Hours()
				}
				delete(released, p)
			}
		}
	}
	return stale, fetches, f
}

// defaultCrawls is how many crawls of the default TestCoChangeFollowsReleases
// averages.
const defaultCrawls = 3

// The default learns that a site's sections change together: once a run
// finds changes in a section, their siblings are fetched in the same run
// or the next, and siblings checked clean are fetched later, so the pages
// a release rewrote stay stale for less time than with co-change turned
// off (Config.Cluster) and than under the baseline, at about the
// baseline's fetches. One crawl of the default varies much (0.55–0.87× of
// co-change turned off over 10 runs; 0.98× once in CI): the order of the
// fetches each run depends on timers the crawl's goroutines start on the
// self-advancing clock. The test therefore averages three, which gave
// 0.72–0.82× of co-change turned off and 0.53–0.64× of the baseline at
// 0.98–1.00× its fetches over 4 runs on a loaded machine. The crawls fetch
// with one worker: with four, the order fetches finished in made each run
// differ more. (The baseline's spend, the default's budget, comes in
// bursts on a site crawled whole at once: a run whose budget is nothing
// cannot follow a release up.)
func TestCoChangeFollowsReleases(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("80 simulated days of three crawls; .ci/run runs it without race")
	}
	days := 80
	none := func(string) string { return "" }
	halving, hf, _ := releaseStaleness(t, schedule.DefaultHalving, nil, days, false)
	alone, af, _ := releaseStaleness(t, schedule.Index{}, none, days, false)
	var def, df float64
	for range defaultCrawls {
		s, f, _ := releaseStaleness(t, schedule.Index{}, nil, days, false)
		def += s / defaultCrawls
		df += float64(f) / defaultCrawls
	}
	t.Logf("release staleness: Halving %.0f page-hours (%d fetches), without co-change %.0f (%d fetches), default %.0f (%.0f fetches, %.2f× Halving's; mean of %d crawls)", halving, hf, alone, af, def, df, def/halving, defaultCrawls)
	require.Less(t, def, 0.9*alone)
	require.Less(t, def, 0.7*halving)
	require.LessOrEqual(t, df, 1.08*float64(hf))
}

// A fetch the co-change model asked for keeps the chance it was made at
// (crawlstate.Check.CoChance, to the state's resolution), so that the
// rate estimate reads a change it found as maybe its section's release,
// not the page's own: a page a release rewrote, fetched the day after,
// is not taken for one that changes daily. The site's pages send no
// Last-Modified (an estimate from Last-Modified dates the changes and
// needs no such reading), so nearly every row whose follow-up found a
// change is estimated lower. A fetch of a page without co-change keeps
// none.
func TestCoChangeFetchesKeepTheirChance(t *testing.T) {
	if raceEnabled {
		t.Skip("20 simulated days of a crawl; .ci/run runs it without race")
	}
	_, _, f := releaseStaleness(t, schedule.Index{}, nil, 20, true)
	_, _, alone := releaseStaleness(t, schedule.Index{}, func(string) string { return "" }, 20, true)
	count := func(f *fixture) (checks, co, coChanged int, lower int) {
		rows, err := f.state.LiveRows(context.Background(), f.src.Name(), "", 1000)
		require.NoError(t, err)
		for _, row := range rows {
			p := schedule.Page{Recent: make([]schedule.Check, len(row.Stats.Recent))}
			for i, c := range row.Stats.Recent {
				checks++
				require.Equal(t, crawlstate.RoundCoChance(c.CoChance), c.CoChance, "kept to the state's resolution")
				if c.CoChance > 0 {
					co++
					if c.Changed {
						coChanged++
					}
				}
				p.Recent[i] = schedule.Check{Elapsed: c.Elapsed, Changed: c.Changed, Modified: c.Modified, CoChance: c.CoChance}
			}
			// Read as the page's own, the changes give a higher rate.
			own := schedule.Page{Recent: slices.Clone(p.Recent)}
			for i := range own.Recent {
				own.Recent[i].CoChance = 0
			}
			if schedule.Estimate(p) < schedule.Estimate(own) {
				lower++
			}
		}
		return checks, co, coChanged, lower
	}
	checks, co, coChanged, lower := count(f)
	t.Logf("default: %d checks, %d at a co-change chance (%d found a change); %d rows estimated below the rate of their changes read as their own", checks, co, coChanged, lower)
	require.Positive(t, coChanged, "follow-ups found changes at their chance")
	require.GreaterOrEqual(t, lower, coChanged/2, "and those changes lower the pages' own rates")
	checks, co, _, lower = count(alone)
	require.Positive(t, checks)
	require.Zero(t, co, "no co-change, no chance")
	require.Zero(t, lower)
}
