package recrawl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// With SitemapPriority, a sitemap's <priority> is the page's weight: it
// is stored with the row, and the default scheduler revisits the pages
// of priority 1.0 more often than those of 0.1 that change as often (the
// sitemap has no lastmods, so that only the weights decide).
func TestSitemapPriorityWeighsPages(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 20, NoLastMod: true}, recrawl.Config{Scheduler: schedule.Index{}, SitemapPriority: true})
	paths := f.site.Paths()
	heavy := map[string]bool{}
	for i, p := range paths {
		pr := 0.1
		if i%2 == 0 {
			pr, heavy[p] = 1, true
		}
		f.site.Update(p, func(pg *testsite.Page) { pg.Priority = pr })
	}
	f.run()
	require.InDelta(t, 2, f.row(paths[0]).Stats.Weight, 1e-9, "priority 1.0 weighs 2")
	require.InDelta(t, 0.2, f.row(paths[1]).Stats.Weight, 1e-9, "priority 0.1 weighs 0.2")

	var fetches [2]int // light, heavy
	for day := range 60 {
		f.clk.Advance(24 * time.Hour)
		for k := range 2 { // two edits a day, on pages of both kinds alike
			f.site.Edit(paths[(day*2+k)%len(paths)])
		}
		f.run()
		for _, r := range f.site.PageRequests() {
			if f.site.IsPage(r) {
				if heavy[r.Path] {
					fetches[1]++
				} else {
					fetches[0]++
				}
			}
		}
	}
	t.Logf("fetches: light %d, heavy %d", fetches[0], fetches[1])
	require.Greater(t, float64(fetches[1]), 2*float64(fetches[0]), "the heavy pages get the fetches")

	// Without the option the priority is ignored.
	g := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{Scheduler: schedule.Index{}})
	g.site.Update(g.site.Paths()[0], func(pg *testsite.Page) { pg.Priority = 1 })
	g.run()
	require.Zero(t, g.row(g.site.Paths()[0]).Stats.Weight, "the default weight")
}
