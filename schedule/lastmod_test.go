package schedule_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

// fill returns a table of n fetches: a share changed of them, of which
// recall came with a moved lastmod, and of the unchanged ones a share
// falseAlarms with one.
func fill(n, changed, recall, falseAlarms float64) schedule.LastModTrust {
	c, u := n*changed, n*(1-changed)
	return schedule.LastModTrust{MovedChanged: c * recall, StillChanged: c * (1 - recall), MovedSame: u * falseAlarms, StillSame: u * (1 - falseAlarms)}
}

func TestLastModTrustPosterior(t *testing.T) {
	for _, tc := range []struct {
		name              string
		t                 schedule.LastModTrust
		prior             float64
		moved, unmovedMax float64 // bounds: the posterior when moved is at least moved; when not, at most unmovedMax
	}{
		{"honest", fill(1000, 0.3, 1, 0), 0.3, 0.99, 0.01},
		{"honest, a rare page", fill(1000, 0.3, 1, 0), 0.01, 0.8, 0.001},
		{"half the changes unannounced", fill(1000, 0.3, 0.5, 0), 0.3, 0.99, 0.2},
		{"no evidence: mildly believed", schedule.LastModTrust{}, 0.3, 0.45, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, u := tc.t.Posterior(tc.prior, true), tc.t.Posterior(tc.prior, false)
			require.GreaterOrEqual(t, m, tc.moved)
			require.LessOrEqual(t, u, tc.unmovedMax)
			require.Greater(t, m, tc.prior)
			require.Less(t, u, tc.prior)
		})
	}
	// A generation time on every URL (it always moves), or a lastmod
	// that moves at random, says nothing.
	generated, random := fill(1000, 0.3, 1, 1), fill(1000, 0.3, 0.4, 0.4)
	for _, prior := range []float64{0.01, 0.3, 0.9} {
		require.InDelta(t, prior, generated.Posterior(prior, true), 0.01*prior+0.003)
		require.InDelta(t, prior, random.Posterior(prior, true), 0.02*prior+0.003)
		require.InDelta(t, prior, random.Posterior(prior, false), 0.02*prior+0.003)
	}
	// Out-of-range priors are clamped.
	require.Equal(t, 1.0, fill(100, 0.5, 1, 0).Posterior(2, true))
	require.Equal(t, 0.0, fill(100, 0.5, 1, 0).Posterior(-1, true))
}

func TestLastModTrustCounts(t *testing.T) {
	var tr schedule.LastModTrust
	for _, c := range []struct{ moved, changed bool }{{true, true}, {true, true}, {true, false}, {false, true}, {false, false}, {false, false}} {
		tr.Add(c.moved, c.changed)
	}
	require.Equal(t, schedule.LastModTrust{MovedChanged: 2, MovedSame: 1, StillChanged: 1, StillSame: 2}, tr)
	require.Equal(t, 6.0, tr.Total())
	require.InDelta(t, 3.0/5, tr.Precision(), 1e-12)
	require.InDelta(t, 4.0/6, tr.Recall(), 1e-12)
	require.InDelta(t, 2.0/6, tr.FalseAlarms(), 1e-12)
	require.Equal(t, tr.Plus(tr), schedule.LastModTrust{MovedChanged: 4, MovedSame: 2, StillChanged: 2, StillSame: 4})

	d := tr.Plus(tr).Decayed(6)
	require.InDelta(t, 6, d.Total(), 1e-12)
	require.InDelta(t, tr.Precision(), schedule.LastModTrust{MovedChanged: d.MovedChanged, MovedSame: d.MovedSame}.Precision(), 1e-12, "decay keeps the shares")
	require.Equal(t, tr, tr.Decayed(100), "under the memory: as it is")
	require.Equal(t, tr, tr.Decayed(0), "no memory: as it is")
	bad := schedule.LastModTrust{MovedChanged: math.NaN(), MovedSame: -3, StillChanged: math.Inf(1), StillSame: 2}
	require.Equal(t, schedule.LastModTrust{StillSame: 2}, bad.Decayed(0), "bad counts read as zero")
	require.False(t, math.IsNaN(bad.Posterior(0.5, true)))
}

// sixHourlyPlan is the Index's plan of a 6-hourly run at now over 100
// pages of rate lam fetched one to 100 hours before.
func sixHourlyPlan(now time.Time, lam schedule.Rate) schedule.RunPlan {
	var inputs []schedule.PlanInput
	for i := range 100 {
		inputs = append(inputs, schedule.PlanInput{ChangeRate: lam, LastFetched: now.Add(-time.Duration(i+1) * time.Hour)})
	}
	return schedule.Index{}.PlanRun(schedule.Run{Start: now, Previous: now.Add(-6 * time.Hour), Cadence: 6 * time.Hour}, inputs)
}

// The index ranks a page whose proven lastmod moved above every page of
// the same rate whose lastmod did not, and schedules a page whose
// lastmods have always announced its changes at the floor: only a move
// brings it back. A lastmod that says nothing changes neither.
func TestIndexWeighsTheSitemapHint(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	plan := sixHourlyPlan(now, 0.2)
	honest := fill(2000, 0.2, 1, 0)
	generated := fill(2000, 0.2, 1, 1)
	page := func(age time.Duration, h schedule.SitemapHint) schedule.Page {
		return schedule.Page{LastFetched: now.Add(-age), ChangeRate: 0.2, Visits: 10, Sitemap: h}
	}
	plain := page(10*schedule.Day, schedule.SitemapHint{})
	moved := page(6*time.Hour, schedule.SitemapHint{Listed: true, Moved: true, Trust: honest})
	still := page(10*schedule.Day, schedule.SitemapHint{Listed: true, Trust: honest})
	require.Greater(t, plan.Priority(moved), plan.Priority(plain), "a proven move beats ten days of waiting")
	require.Less(t, plan.Priority(still), 0.01*plan.Priority(plain), "a proven lastmod that did not move: nothing to fetch")
	g := page(10*schedule.Day, schedule.SitemapHint{Listed: true, Moved: true, Trust: generated})
	require.InDelta(t, plan.Priority(plain), plan.Priority(g), 0.01*plan.Priority(plain), "a generated lastmod says nothing")

	obs := schedule.Observation{At: now}
	base := plan.Next(page(schedule.Day, schedule.SitemapHint{}), obs)
	require.Less(t, base, schedule.DefaultMaxInterval)
	fair := plan.Next(page(schedule.Day, schedule.SitemapHint{Listed: true, Trust: honest}), obs)
	require.Greater(t, fair, 3*base, "an honest lastmod: much later, unless it moves")
	always := fill(1e6, 0.2, 1, 0)
	require.Greater(t, plan.Next(page(schedule.Day, schedule.SitemapHint{Listed: true, Trust: always}), obs), 20*schedule.Day,
		"a lastmod that announced 200,000 changes: near the floor")
	gen := plan.Next(page(schedule.Day, schedule.SitemapHint{Listed: true, Trust: generated}), obs)
	require.InDelta(t, float64(base), float64(gen), 0.15*float64(base), "a generated lastmod: about the interval of no lastmod")
	half := plan.Next(page(schedule.Day, schedule.SitemapHint{Listed: true, Trust: fill(2000, 0.2, 0.5, 0)}), obs)
	require.Greater(t, half, base, "half the changes announced: later than without a lastmod")
	require.Less(t, half, schedule.DefaultMaxInterval)
}

// Co-change is evidence the sitemap's word weighs too: a page whose
// siblings were found changed is ranked high without a lastmod, and
// behind a generated one, but a proven lastmod that did not move says the
// release left it alone.
func TestIndexWeighsCoChangeBySitemapHint(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	plan := sixHourlyPlan(now, 0.05)
	page := func(co float64, h schedule.SitemapHint) schedule.Page {
		return schedule.Page{LastFetched: now.Add(-schedule.Day), ChangeRate: 0.05, Visits: 10, Sitemap: h, CoChange: co}
	}
	plain := plan.Priority(page(0, schedule.SitemapHint{}))
	exposed := plan.Priority(page(0.6, schedule.SitemapHint{}))
	require.Greater(t, exposed, 5*plain, "siblings found changed")
	generated := plan.Priority(page(0.6, schedule.SitemapHint{Listed: true, Trust: fill(2000, 0.2, 1, 1)}))
	require.InDelta(t, exposed, generated, 0.01*exposed, "a generated lastmod says nothing")
	honest := plan.Priority(page(0.6, schedule.SitemapHint{Listed: true, Trust: fill(2000, 0.2, 1, 0)}))
	require.Less(t, honest, plain, "a proven lastmod that did not move outweighs the siblings")
}

// A crawler that learns lastmod trust counts each fetch of a page whose
// sitemap lists a lastmod, and hands the page's hint to the run plan.
func ExampleLastModTrust() {
	var trust schedule.LastModTrust
	for range 50 {
		trust.Add(true, true)   // the lastmod moved, the page had changed
		trust.Add(false, false) // it did not move, the page had not changed
	}
	fmt.Printf("precision %.2f, recall %.2f, false alarms %.2f\n", trust.Precision(), trust.Recall(), trust.FalseAlarms())
	// A page with a 10% chance of a change since its last fetch:
	fmt.Printf("moved: %.3f, not moved: %.4f\n", trust.Posterior(0.1, true), trust.Posterior(0.1, false))
	// Output:
	// precision 0.98, recall 0.98, false alarms 0.02
	// moved: 0.852, not moved: 0.0021
}
