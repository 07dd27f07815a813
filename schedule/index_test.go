package schedule_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

// simulateHalving runs DefaultHalving on a Poisson page of rate lam for
// days, fetching at the first run at or after each due time, and returns
// its fetch rate per day.
func simulateHalving(lam float64, cadence time.Duration, days float64, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	h := schedule.DefaultHalving
	iv := h.Start
	var now, nextChange float64 // in days
	nextChange = rng.ExpFloat64() / lam
	fetches := 0
	for now < days {
		due := now + iv.Hours()/24
		at := due
		if cadence > 0 {
			c := cadence.Hours() / 24
			at = math.Ceil(due/c-1e-9) * c
			at = math.Max(at, now+c)
		}
		changed := false
		for nextChange <= at {
			changed = true
			nextChange += rng.ExpFloat64() / lam
		}
		now = at
		fetches++
		iv = h.Next(schedule.Page{Interval: iv}, schedule.Observation{Changed: changed})
	}
	return float64(fetches) / days
}

func TestHalvingRateMatchesItsSimulation(t *testing.T) {
	for _, lam := range []float64{0.02, 0.3, 1, 6} {
		for _, c := range []time.Duration{0, time.Hour, 24 * time.Hour, 7 * 24 * time.Hour} {
			got := float64(schedule.DefaultHalving.Rate(schedule.Rate(lam), c, -1))
			want := simulateHalving(lam, c, 40000, 1)
			require.InEpsilon(t, want, got, 0.04, "λ %v a day, runs every %v", lam, c)
		}
	}
}

func TestHalvingFetchesOfAYoungPage(t *testing.T) {
	h := schedule.DefaultHalving
	static := schedule.Rate(1e-6)
	// Fetched at 0 (not counted), then after 24 h, then 36 h later.
	require.InDelta(t, 1, h.Fetches(static, 0, 0, 24*time.Hour), 1e-9)
	require.InDelta(t, 0, h.Fetches(static, 0, 24*time.Hour, 59*time.Hour), 1e-9)
	require.InDelta(t, 1, h.Fetches(static, 0, 59*time.Hour, 61*time.Hour), 1e-9)
	require.Zero(t, h.Fetches(static, 0, 5*time.Hour, 5*time.Hour), "an empty window")
	// Daily runs: the 36 h interval waits for the run at 48 h (at a
	// cadence of a day or more the chain is followed run by run, and the
	// rare change the minimum rate allows moves a little of the next fetch
	// forward).
	require.InDelta(t, 1, h.Fetches(static, 24*time.Hour, 47*time.Hour, 49*time.Hour+24*time.Hour), 1e-3)
	// A settled page: the stationary rate over the window.
	late := h.Fetches(static, 0, 5000*schedule.Day, 5300*schedule.Day)
	require.InDelta(t, 10, late, 0.1, "about one fetch every 30 days (a rare change halves it)")
}

// youngHalving counts the fetches DefaultHalving makes of a Poisson page
// of rate lam first fetched at age 0, at runs every cadence, at ages in
// (from, to] days: the mean over n pages.
func youngHalving(lam float64, cadence time.Duration, from, to float64, n int) float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	h := schedule.DefaultHalving
	c := cadence.Hours() / 24
	count := 0
	for range n {
		iv, last := h.Start, 0.0
		nextChange := rng.ExpFloat64() / lam
		for {
			at := math.Max(math.Ceil((last+iv.Hours()/24)/c-1e-9), last/c+1) * c
			if at > to {
				break
			}
			changed := nextChange <= at
			for nextChange <= at {
				nextChange += rng.ExpFloat64() / lam
			}
			if at > from {
				count++
			}
			iv = h.Next(schedule.Page{Interval: iv}, schedule.Observation{Changed: changed})
			last = at
		}
	}
	return float64(count) / float64(n)
}

// At a daily or weekly cadence the fetches of a young page in a window
// are those of its simulation: the expected ages of its fetches, the
// estimate before the chain was followed run by run, were up to 18% off
// (a yearly page, weekly runs, ages 119 to 238 days: 3.41 fetches
// against 4).
func TestHalvingFetchesOfAYoungPageMatchItsSimulation(t *testing.T) {
	for _, c := range []time.Duration{schedule.Day, 7 * schedule.Day} {
		for _, lam := range []float64{1, 0.25, 1.0 / 15, 1.0 / 60, 1.0 / 365} {
			for _, runs := range [][2]float64{{0, 9}, {17, 34}} { // windows of whole runs
				d := c.Hours() / 24
				w := [2]float64{runs[0] * d, runs[1] * d}
				want := youngHalving(lam, c, w[0], w[1], 20000)
				got := schedule.DefaultHalving.Fetches(schedule.Rate(lam), c, time.Duration(w[0]*float64(schedule.Day)), time.Duration(w[1]*float64(schedule.Day)))
				require.InEpsilon(t, want, got, 0.02, "λ %.4f a day, runs every %v, ages %v to %v days", lam, c, w[0], w[1])
			}
		}
	}
}

func TestBaselineFetchesSumsThePages(t *testing.T) {
	h := schedule.DefaultHalving
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	pages := []schedule.PlanInput{
		{ChangeRate: 0.5, LastFetched: now.Add(-time.Hour), Age: 10 * schedule.Day},
		{ChangeRate: 2, Observed: 0.01, LastFetched: now.Add(-2 * time.Hour), Age: -1},
		{ChangeRate: 1}, // never fetched: its first fetch is not the baseline's to count
		{Fixed: 48},
	}
	prev := now.Add(-6 * time.Hour)
	got := schedule.BaselineFetches(h, pages, 6*time.Hour, prev, now)
	want := h.Fetches(0.5, 6*time.Hour, 10*schedule.Day+time.Hour-6*time.Hour, 10*schedule.Day+time.Hour) +
		float64(h.Rate(0.01, 6*time.Hour, -1))*0.25 + 48*0.25
	require.InDelta(t, want, got, 1e-9)
}

func TestCadence(t *testing.T) {
	at := func(h ...int) []time.Time {
		out := make([]time.Time, len(h))
		for i, x := range h {
			out[i] = t0.Add(time.Duration(x) * time.Hour)
		}
		return out
	}
	require.Zero(t, schedule.Cadence(nil))
	require.Zero(t, schedule.Cadence(at(5)))
	require.Equal(t, 6*time.Hour, schedule.Cadence(at(18, 0, 6, 12, 13)), "median gap, any order")
	require.Equal(t, 24*time.Hour, schedule.Cadence(at(0, 24, 48, 200)))
	require.Zero(t, schedule.Cadence(at(3, 3)), "no positive gap")
}

func TestIndexPlanRun(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var pages []schedule.PlanInput
	for i := range 200 {
		lam := schedule.Rate(0.01 * float64(i+1))
		pages = append(pages, schedule.PlanInput{ChangeRate: lam, LastFetched: now.Add(-time.Duration(i+1) * time.Hour)})
	}
	pages = append(pages,
		schedule.PlanInput{ChangeRate: 1},                                           // never fetched
		schedule.PlanInput{ChangeRate: 1, LastFetched: now.Add(-31 * schedule.Day)}, // past the floor
	)
	x := schedule.Index{Budget: 96}
	plan := x.PlanRun(schedule.Run{Start: now, Previous: now.Add(-time.Hour), Cadence: time.Hour}, pages)
	require.InDelta(t, 4, plan.Limit(), 1, "96 a day for an hour, the page past the floor within it")

	never := schedule.Page{}
	floor := schedule.Page{LastFetched: now.Add(-31 * schedule.Day), ChangeRate: 1}
	young := schedule.Page{LastFetched: now.Add(-time.Hour), ChangeRate: 0.1}
	old := schedule.Page{LastFetched: now.Add(-40 * time.Hour), ChangeRate: 0.1}
	require.True(t, math.IsInf(plan.Priority(never), 1), "never fetched first")
	require.Greater(t, plan.Priority(floor), plan.Priority(old), "past the floor next")
	require.Greater(t, plan.Priority(old), plan.Priority(young), "the index grows with the time since the fetch")
	require.InDelta(t, schedule.PriorityOf(0.1, 1, 40*time.Hour, time.Hour), plan.Priority(old), 1e-12)

	// A page that changes far faster than the price allows waits for the
	// floor, less the lead in which hourly runs may fetch it ahead of the
	// floor (a sixth of it); a slow one comes back before it.
	fast := schedule.Page{LastFetched: now.Add(-time.Hour), Visits: 40, ChangeRate: 1400}
	iv := plan.Next(fast, schedule.Observation{At: now, Changed: true})
	require.Equal(t, schedule.DefaultMaxInterval-schedule.DefaultMaxInterval/6, iv)
	jittered := x.PlanRun(schedule.Run{Start: now, Previous: now.Add(-time.Hour - time.Second), Cadence: time.Hour + time.Second}, pages)
	require.Equal(t, iv, jittered.Next(fast, schedule.Observation{At: now, Changed: true}),
		"a measured cadence a second off moves nothing")
	weekly := schedule.Index{Budget: 1}.PlanRun(schedule.Run{Start: now, Previous: now.Add(-7 * schedule.Day), Cadence: 7 * schedule.Day}, pages)
	require.Equal(t, schedule.DefaultMaxInterval, weekly.Next(fast, schedule.Observation{At: now, Changed: true}),
		"no lead at weekly runs: it would be less than two runs")
	slow := schedule.Page{LastFetched: now.Add(-48 * time.Hour), ChangeRate: 0.3, Visits: 5}
	iv = plan.Next(slow, schedule.Observation{At: now})
	require.Greater(t, iv, time.Hour)
	require.Less(t, iv, schedule.DefaultMaxInterval)
	require.Equal(t, "index", plan.(interface{ Name() string }).Name())
	require.Equal(t, schedule.DefaultMaxInterval, schedule.MaxIntervalOf(plan))

	// Without a budget the run gets what Halving would fetch.
	def := schedule.Index{}.PlanRun(schedule.Run{Start: now, Previous: now.Add(-6 * time.Hour), Cadence: 6 * time.Hour}, pages)
	want := schedule.BaselineFetches(schedule.DefaultHalving, pages, 6*time.Hour, now.Add(-6*time.Hour), now)
	require.InDelta(t, want, float64(def.Limit()), 1.01)
}

// Pages that reach the floor together (discovered in one run, never
// changing) are spread over the runs before it: the run fetches, ahead of
// the floor and within its share, what the next runs' shares cannot hold,
// longest since their fetch first; nothing ahead of the floor when their
// shares can.
func TestIndexSpreadsFloorVisits(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	floor := schedule.DefaultMaxInterval
	// A fast page whose index is well above the price.
	hot := schedule.Page{LastFetched: now.Add(-3 * schedule.Day), ChangeRate: 2}
	plan := func(group int) (schedule.RunPlan, []schedule.Page) {
		var in []schedule.PlanInput
		var slow []schedule.Page
		for i := range group {
			// They reach the floor 10 runs from now, a second apart.
			last := now.Add(-floor + 10*time.Hour - time.Duration(i)*time.Second)
			in = append(in, schedule.PlanInput{ChangeRate: schedule.DefaultMinRate, LastFetched: last})
			slow = append(slow, schedule.Page{ChangeRate: schedule.DefaultMinRate, LastFetched: last})
		}
		in = append(in, schedule.PlanInput{ChangeRate: 2, LastFetched: hot.LastFetched})
		x := schedule.Index{Budget: 5 * 24} // 5 a run
		return x.PlanRun(schedule.Run{Start: now, Previous: now.Add(-time.Hour), Cadence: time.Hour}, in), slow
	}

	// 60 pages reach the floor 10 runs from now, and those runs hold 50 at
	// 5 a run: 10 must go now, and this run's share holds 5 of them, the
	// ones longest since their fetch.
	p, slow := plan(60)
	require.InDelta(t, 5, p.Limit(), 1, "the share: nothing past the floor yet")
	ahead := 0
	for i, q := range slow {
		if p.Priority(q) > p.Priority(hot) {
			ahead++
			require.Greater(t, i, 60-6, "the longest since their fetch first")
		}
	}
	require.Equal(t, min(p.Limit(), 60-10*p.Limit()), ahead)

	// 20 pages fit in the next runs' shares: none is fetched ahead.
	p, slow = plan(20)
	for _, q := range slow {
		require.Less(t, p.Priority(q), p.Priority(hot))
	}

	// Runs a millisecond apart (a host retrying at once) put the floor
	// hundreds of millions of runs away; planning allocates for the pages,
	// not for the runs.
	var in []schedule.PlanInput
	for i := range 1000 {
		in = append(in, schedule.PlanInput{ChangeRate: schedule.DefaultMinRate, LastFetched: now.Add(-floor + schedule.Day + time.Duration(i)*time.Minute)})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fast := schedule.Index{Budget: 1e9}.PlanRun(schedule.Run{Start: now, Previous: now.Add(-time.Millisecond), Cadence: time.Millisecond}, in)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20))
	require.Positive(t, fast.Limit())
}

// Pages past the floor are fetched within the run's budget, not on top of
// it, unless they alone exceed it: then the limit is their number, so
// that every page is still fetched at least every Floor.
func TestIndexFloorVisitsWithinTheBudget(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	pages := func(recent, past int) []schedule.PlanInput {
		var in []schedule.PlanInput
		for i := range recent {
			in = append(in, schedule.PlanInput{ChangeRate: 0.5, LastFetched: now.Add(-time.Duration(i+1) * time.Hour)})
		}
		for range past {
			in = append(in, schedule.PlanInput{ChangeRate: 0.001, LastFetched: now.Add(-40 * schedule.Day)})
		}
		return in
	}
	run := schedule.Run{Start: now, Previous: now.Add(-schedule.Day), Cadence: schedule.Day}
	x := schedule.Index{Budget: 100}
	require.Equal(t, 100, x.PlanRun(run, pages(500, 30)).Limit(), "30 pages past the floor within a budget of 100")
	require.Equal(t, 300, x.PlanRun(run, pages(500, 300)).Limit(), "300 pages past the floor exceed it")
}

// The index at τ = kC is the price at which revisiting every k runs and
// every k+1 runs give the same freshness net of the price per fetch; with
// no cadence it is the continuous index w·g(λτ)/λ.
func TestPriorityOfRuns(t *testing.T) {
	// net is, per day, the fresh fraction of a page revisited every T days
	// minus the price per fetch: (w(1 − e^(−λT))/λ − μ)/T.
	net := func(lam, w, mu, T float64) float64 { return (w*-math.Expm1(-lam*T)/lam - mu) / T }
	for _, lam := range []float64{0.01, 0.25, 1, 5} {
		for _, c := range []time.Duration{time.Hour, 6 * time.Hour, schedule.Day, 7 * schedule.Day} {
			for _, k := range []int{1, 2, 5} {
				tau := time.Duration(k) * c
				mu := schedule.PriorityOf(schedule.Rate(lam), 2, tau, c)
				T, C := tau.Hours()/24, c.Hours()/24
				require.InDelta(t, net(lam, 2, mu, T), net(lam, 2, mu, T+C), 1e-9*(1+math.Abs(net(lam, 2, mu, T))), "λ %v, every %v, k %d", lam, c, k)
				require.GreaterOrEqual(t, schedule.PriorityOf(schedule.Rate(lam), 2, tau+c, c), mu, "grows with τ")
			}
		}
		r := lam * 3
		g := 1 - (1+r)*math.Exp(-r)
		require.InDelta(t, 2*g/lam, schedule.PriorityOf(schedule.Rate(lam), 2, 3*schedule.Day, 0), 1e-12)
		require.InEpsilon(t, 2*g/lam, schedule.PriorityOf(schedule.Rate(lam), 2, 3*schedule.Day, time.Second), 1e-5)
	}
}

// Advance with a RunPlan is Observe plus the plan's Next.
func TestAdvanceWithARunPlan(t *testing.T) {
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	plan := schedule.Index{Budget: 10}.PlanRun(schedule.Run{Start: now}, []schedule.PlanInput{{ChangeRate: 0.2, LastFetched: now.Add(-schedule.Day)}})
	p := schedule.Page{LastFetched: now.Add(-schedule.Day), Visits: 3, Recent: []schedule.Check{{Elapsed: schedule.Day}}}
	obs := schedule.Observation{At: now, Changed: true}
	q := schedule.Advance(plan, p, obs)
	require.Equal(t, plan.Next(p, obs), q.Interval)
	require.Equal(t, schedule.Observe(p, obs).ChangeRate, q.ChangeRate)
	var _ schedule.Planner = schedule.Index{}
	var _ schedule.Planner = schedule.Optimal{}
}
