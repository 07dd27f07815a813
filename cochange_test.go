package recrawl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// releaseStaleness crawls a site of sections that release in bursts (a
// release edits 40% of one section's pages at once, another 40% each time, a section every day
// and a half in turn, behind a sitemap without lastmods) every six hours
// with s, and returns the page-hours the edited pages stayed stale after
// their releases over the second half, and the runs' fetches then.
func releaseStaleness(t *testing.T, s schedule.Scheduler, cluster func(string) string, days int) (stale float64, fetches int) {
	t.Helper()
	const pages, sections = 400, 8
	l := recrawl.DefaultLimits()
	// A page cap spreads the first crawl over the first runs, as a site
	// found a part at a time is, so that the pages' revisits do not fall
	// due together.
	l.RequestDelay, l.MaxPages = 0, 60
	f := newFixture(t, testsite.Options{Pages: pages, Sections: sections, NoLastMod: true}, recrawl.Config{Scheduler: s, Limits: &l, Cluster: cluster})
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
	return stale, fetches
}

// The default learns that a site's sections change together: once a run
// finds changes in a section, their siblings are fetched in the same run
// or the next, so the pages a release rewrote stay stale for less time
// than with co-change turned off (Config.Cluster: 0.60–0.81× over 12
// runs) and than under the baseline (0.45–0.65×), at about the baseline's
// fetches (0.98–1.04× over those runs; the runs' concurrency makes each
// run differ). (The baseline's spend, the
// default's budget, comes in bursts on a site crawled whole at once: a
// run whose budget is nothing cannot follow a release up.)
func TestCoChangeFollowsReleases(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("80 simulated days of three crawls; .ci/run runs it without race")
	}
	days := 80
	none := func(string) string { return "" }
	halving, hf := releaseStaleness(t, schedule.DefaultHalving, nil, days)
	alone, af := releaseStaleness(t, schedule.Index{}, none, days)
	def, df := releaseStaleness(t, schedule.Index{}, nil, days)
	t.Logf("release staleness: Halving %.0f page-hours (%d fetches), without co-change %.0f (%d fetches), default %.0f (%d fetches, %.2f× Halving's)", halving, hf, alone, af, def, df, def/halving)
	require.Less(t, def, 0.85*alone)
	require.Less(t, def, 0.7*halving)
	require.LessOrEqual(t, float64(df), 1.08*float64(hf))
}
