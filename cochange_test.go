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
// fixture crawled. The site is served under host, so that its URLs, and
// with them the jitter of every revisit (a hash of the URL), and so the
// whole crawl, are the same on every run of the test. With noLastModified
// the pages send no Last-Modified (their ETags stay).
func releaseStaleness(t *testing.T, s schedule.Scheduler, cluster func(string) string, days int, host string, noLastModified bool) (stale float64, fetches int, f *fixture) {
	t.Helper()
	const pages, sections = 400, 8
	l := recrawl.DefaultLimits()
	// One worker, so that fewer of a run's fetches finish out of the order
	// they started in (see TestCoChangeFollowsReleases). A page cap spreads
	// the first crawl over the first runs, as a site found a part at a time
	// is, so that the pages' revisits do not fall due together.
	l.RequestDelay, l.MaxPages = 0, 60
	f = newFixture(t, testsite.Options{Pages: pages, Sections: sections, NoLastMod: true, NoLastModified: noLastModified, Host: host}, recrawl.Config{Scheduler: s, Limits: &l, Cluster: cluster, Workers: 1})
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

// releaseHosts are the host names TestCoChangeFollowsReleases serves its
// site under: each gives other jitters, and so another crawl.
var releaseHosts = []string{"docs.example.test", "docs2.example.test", "docs3.example.test"}

// The default learns that a site's sections change together: once a run
// finds changes in a section, their siblings are fetched in the same run
// or the next, and siblings checked clean are fetched later, so the pages
// a release rewrote stay stale for less time than with co-change turned
// off (Config.Cluster) and than under the baseline, at about the
// baseline's fetches. A crawl is the same on every run of the test (the
// site has a fixed host name), but one crawl says little: over the random
// loopback ports the site had before, the default's staleness varied over
// 0.55–0.98× of co-change turned off. The test sums three crawls, each
// under its own host name: 0.68× co-change turned off and 0.49× the
// baseline's, at 1.001× its fetches (two waves a run: 0.71×, 0.51×, 0.988×). The crawls fetch with one worker: with four,
// the order fetches finished in made each crawl differ more. (The
// baseline's spend, the default's budget, comes in bursts on a site
// crawled whole at once: a run whose budget is nothing cannot follow a
// release up.)
func TestCoChangeFollowsReleases(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("80 simulated days of nine crawls; .ci/run runs it without race")
	}
	days := 80
	none := func(string) string { return "" }
	var halving, alone, def float64
	var hf, af, df int
	for _, host := range releaseHosts {
		h, f, _ := releaseStaleness(t, schedule.DefaultHalving, nil, days, host, false)
		a, g, _ := releaseStaleness(t, schedule.Index{}, none, days, host, false)
		d, e, _ := releaseStaleness(t, schedule.Index{}, nil, days, host, false)
		t.Logf("%s: release staleness: Halving %.0f page-hours (%d fetches), without co-change %.0f (%.2f×), default %.0f (%.2f×, %.2f× Halving's; %d fetches)", host, h, f, a, a/h, d, d/a, d/h, e)
		halving, alone, def = halving+h, alone+a, def+d
		hf, af, df = hf+f, af+g, df+e
	}
	t.Logf("release staleness over %d crawls: default %.2f× co-change turned off, %.2f× Halving's, at %.3f× its fetches (without co-change %.3f×)", len(releaseHosts), def/alone, def/halving, float64(df)/float64(hf), float64(af)/float64(hf))
	require.Less(t, def, 0.85*alone)
	require.Less(t, def, 0.7*halving)
	require.LessOrEqual(t, float64(df), 1.08*float64(hf))
}

// A run on a source whose pages change together spreads its limit over
// waves (Report.Waves), each ranking again with the changes the earlier
// ones found, so that a release found late in a run is still followed
// within it: four once the model has learned co-change, and one or two
// with co-change turned off.
func TestCoChangeRunsInWaves(t *testing.T) {
	if testing.Short() {
		t.Skip("20 simulated days of two crawls")
	}
	for _, tc := range []struct {
		name    string
		cluster func(string) string
		least   int
		most    int
	}{
		{"co-change", nil, 4, 4},
		{"co-change turned off", func(string) string { return "" }, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, f := releaseStaleness(t, schedule.Index{}, tc.cluster, 20, releaseHosts[0], false)
			f.clk.Advance(6 * time.Hour)
			rep := f.run()
			t.Logf("limit %d, waves %d, fetched %d", rep.Limit, rep.Waves, rep.Fetched)
			require.GreaterOrEqual(t, rep.Limit, 0)
			require.GreaterOrEqual(t, rep.Waves, tc.least)
			require.LessOrEqual(t, rep.Waves, tc.most)
		})
	}
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
	_, _, f := releaseStaleness(t, schedule.Index{}, nil, 20, releaseHosts[0], true)
	_, _, alone := releaseStaleness(t, schedule.Index{}, func(string) string { return "" }, 20, releaseHosts[0], true)
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
