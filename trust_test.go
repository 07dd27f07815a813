package recrawl_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// trustRun is what a month of 6-hourly runs with one edit each did after
// the first two weeks.
type trustRun struct {
	fetched, changed, edits int
	trust                   schedule.LastModTrust
}

func runTrust(t *testing.T, opts testsite.Options, trust recrawl.SitemapTrust) trustRun {
	t.Helper()
	f := newFixture(t, opts, recrawl.Config{Scheduler: schedule.Index{}, SitemapTrust: trust})
	f.run()
	paths := f.site.Paths()
	runs, warm := 120, 56
	if testing.Short() {
		runs, warm = 80, 40
	}
	var out trustRun
	for i := range runs {
		f.clk.Advance(6 * time.Hour)
		f.site.Edit(paths[(i*7)%len(paths)])
		rep := f.run()
		if i >= warm {
			out.fetched += rep.Fetched
			out.changed += rep.Changed
			out.edits++
		}
	}
	lt, err := f.eng.LastModTrust(context.Background(), f.src.Name())
	require.NoError(t, err)
	out.trust = lt
	return out
}

// The default learns each source's lastmod trust: a sitemap whose
// lastmods move exactly with the content earns precision and recall near
// 1, and then its pages are fetched when their lastmod moves and left alone
// otherwise (the edits found at a fraction of TrustHint's wasted fetches); a
// sitemap that stamps its generation time on every URL earns a
// false-alarm rate near 1, and its moves stop pulling every page in at
// every run as they do under TrustHint.
func TestLearnedSitemapTrust(t *testing.T) {
	t.Run("honest", func(t *testing.T) {
		opts := testsite.Options{Pages: 40}
		learned, hint := runTrust(t, opts, recrawl.TrustLearned), runTrust(t, opts, recrawl.TrustHint)
		t.Logf("learned %+v; hint %+v", learned, hint)
		require.Greater(t, learned.trust.Precision(), 0.9)
		require.Greater(t, learned.trust.Recall(), 0.9)
		require.Less(t, learned.trust.FalseAlarms(), 0.1)
		require.GreaterOrEqual(t, float64(learned.changed), 0.9*float64(learned.edits), "the edits are found")
		require.Less(t, float64(learned.fetched-learned.changed), 0.5*float64(hint.fetched-hint.changed), "fewer fetches find nothing")
	})
	t.Run("generated", func(t *testing.T) {
		opts := testsite.Options{Pages: 40, GeneratedLastMod: true}
		learned, hint := runTrust(t, opts, recrawl.TrustLearned), runTrust(t, opts, recrawl.TrustHint)
		t.Logf("learned %+v; hint %+v", learned, hint)
		require.Greater(t, learned.trust.FalseAlarms(), 0.8)
		require.Greater(t, hint.trust.FalseAlarms(), 0.8, "the trust is measured under every setting")
		require.Equal(t, 40*hint.edits, hint.fetched, "hint: every page at every run")
		require.Less(t, float64(learned.fetched), 0.5*float64(hint.fetched))
		require.Greater(t, learned.changed, learned.edits/2)
	})
}
