package schedule_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

// mixA draws n pages from the realistic mix: 23% daily, 15% every
// 4 days, 16% every 15 days, 16% every 60 days, 30% yearly; weights are
// 1 unless weighted, then log-uniform in [0.25, 4].
func mixA(rng *rand.Rand, n int, weighted bool) []schedule.PlanInput {
	in := make([]schedule.PlanInput, n)
	for i := range in {
		u := rng.Float64()
		var r schedule.Rate
		switch {
		case u < 0.23:
			r = 1
		case u < 0.38:
			r = 1.0 / 4
		case u < 0.54:
			r = 1.0 / 15
		case u < 0.70:
			r = 1.0 / 60
		default:
			r = 1.0 / 365
		}
		in[i].ChangeRate = r
		if weighted {
			in[i].Weight = math.Exp((rng.Float64()*2 - 1) * math.Ln2 * 2)
		}
	}
	return in
}

func weight(w float64) float64 {
	if w > 0 {
		return w
	}
	return 1
}

// The plan spends the budget exactly and satisfies the KKT conditions of
// max Σ wF(λ, f) s.t. Σ f = B, fmin <= f <= fmax: every page strictly
// between the bounds has w·∂F/∂f = μ, a page at the floor has
// w·∂F/∂f <= μ, a page at the cap has w·∂F/∂f >= μ.
func TestPlanBudgetAndKKT(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		perPage  float64 // budget per page per day
		weighted bool
		warm     float64 // initial multiplier
	}{
		{"mix A at the baseline's budget", 5000, 0.56, false, 0},
		{"tight budget", 5000, 0.06, false, 0},
		{"generous budget", 5000, 5, false, 0},
		{"weighted pages", 5000, 0.3, true, 0},
		{"warm start far too low", 2000, 0.5, false, 1e-200},
		{"warm start far too high", 2000, 0.5, true, 1e200},
		{"single page", 1, 0.5, false, 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			in := mixA(rng, tc.n, tc.weighted)
			o := schedule.Optimal{Budget: schedule.Rate(tc.perPage * float64(tc.n)), Multiplier: tc.warm}
			plan := o.Plan(in)
			require.Len(t, plan.Rates, tc.n)
			require.InEpsilon(t, float64(o.Budget), float64(plan.Total), 1e-9, "Σf = budget")
			var sum float64
			for _, f := range plan.Rates {
				sum += float64(f)
			}
			require.InEpsilon(t, float64(plan.Total), sum, 1e-12)

			mu := plan.Multiplier
			fmin, fmax := schedule.Every(schedule.DefaultMaxInterval), schedule.Every(schedule.DefaultMinInterval)
			interior := 0
			for j, p := range in {
				f := plan.Rates[j]
				require.GreaterOrEqual(t, f, fmin*(1-1e-12))
				require.LessOrEqual(t, f, fmax*(1+1e-12))
				marginal := weight(p.Weight) * schedule.MarginalFreshness(p.ChangeRate, f)
				switch {
				case f <= fmin*(1+1e-12):
					require.LessOrEqual(t, marginal, mu*(1+1e-4), "page %d at the floor", j)
				case f >= fmax*(1-1e-12):
					require.GreaterOrEqual(t, marginal, mu*(1-1e-4), "page %d at the cap", j)
				default:
					interior++
					require.InEpsilon(t, mu, marginal, 1e-4, "page %d: w·∂F/∂f = μ", j)
				}
			}
			require.Positive(t, interior)
		})
	}
}

// No budget-preserving move of revisits from one page to another raises
// the objective: the plan is a maximum, not just a stationary point.
func TestPlanIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	in := mixA(rng, 300, true)
	plan := schedule.Optimal{Budget: 0.5 * 300}.Plan(in)
	objective := func(rates []schedule.Rate) float64 {
		var s float64
		for i, p := range in {
			s += weight(p.Weight) * schedule.Freshness(p.ChangeRate, rates[i])
		}
		return s
	}
	best := objective(plan.Rates)
	fmin := schedule.Every(schedule.DefaultMaxInterval)
	for range 2000 {
		i, j := rng.IntN(len(in)), rng.IntN(len(in))
		d := plan.Rates[i] * schedule.Rate(0.05+0.5*rng.Float64())
		if i == j || plan.Rates[i]-d < fmin {
			continue
		}
		moved := append([]schedule.Rate(nil), plan.Rates...)
		moved[i] -= d
		moved[j] += d
		require.LessOrEqual(t, objective(moved), best+1e-9)
	}
	uniform := make([]schedule.Rate, len(in))
	for i := range uniform {
		uniform[i] = 0.5
	}
	require.Greater(t, best, objective(uniform))
}

// A page that changes faster than the budget can follow gets fewer visits
// than a slower one, and beyond 1/μ it gets only the floor.
func TestPlanFastPagesGetFewerVisits(t *testing.T) {
	rates := []schedule.Rate{1.0 / 60, 1.0 / 15, 0.25, 1, 4, 16, 64, 256}
	in := make([]schedule.PlanInput, len(rates))
	for i, r := range rates {
		in[i].ChangeRate = r
	}
	plan := schedule.Optimal{Budget: 3}.Plan(in) // three fetches a day for eight pages
	peak := 0
	for i := range plan.Rates {
		if plan.Rates[i] > plan.Rates[peak] {
			peak = i
		}
	}
	require.Greater(t, peak, 0)
	require.Less(t, peak, len(rates)-1, "the fastest page is not the most visited")
	for i := peak + 1; i < len(rates); i++ {
		require.LessOrEqual(t, plan.Rates[i], plan.Rates[i-1], "past the peak, faster means fewer visits")
	}
	fmin := schedule.Every(schedule.DefaultMaxInterval)
	for i, r := range rates {
		if float64(r)*plan.Multiplier >= 1 {
			require.Equal(t, fmin, plan.Rates[i], "λ=%v changes too fast to follow: floor", r)
		}
	}
	require.Equal(t, fmin, plan.Rates[len(rates)-1])
}

func TestPlanEdges(t *testing.T) {
	fmin, fmax := schedule.Every(schedule.DefaultMaxInterval), schedule.Every(schedule.DefaultMinInterval)
	in := []schedule.PlanInput{{ChangeRate: 1}, {ChangeRate: 0.01}, {ChangeRate: 0}, {ChangeRate: schedule.Rate(math.NaN()), Weight: -3}}
	t.Run("budget below the floors: every page at the floor", func(t *testing.T) {
		plan := schedule.Optimal{Budget: 0.01}.Plan(in)
		for _, f := range plan.Rates {
			require.Equal(t, fmin, f)
		}
		require.Greater(t, plan.Total, schedule.Rate(0.01))
	})
	t.Run("budget above the caps: every page at the cap", func(t *testing.T) {
		plan := schedule.Optimal{Budget: 1e6}.Plan(in)
		for _, f := range plan.Rates {
			require.Equal(t, fmax, f)
		}
	})
	t.Run("no budget: rates at the given multiplier", func(t *testing.T) {
		o := schedule.Optimal{Multiplier: 0.2}
		plan := o.Plan(in)
		require.Equal(t, 0.2, plan.Multiplier)
		for i, p := range in {
			require.Equal(t, o.Revisit(p.ChangeRate, p.Weight), plan.Rates[i])
		}
	})
	t.Run("fixed pages count against the budget", func(t *testing.T) {
		fixed := append([]schedule.PlanInput{{ChangeRate: 1, Fixed: 2}}, in...)
		plan := schedule.Optimal{Budget: 3}.Plan(fixed)
		require.Equal(t, schedule.Rate(2), plan.Rates[0])
		require.InEpsilon(t, 3, float64(plan.Total), 1e-9)
	})
	t.Run("no pages", func(t *testing.T) {
		plan := schedule.Optimal{Budget: 3}.Plan(nil)
		require.Empty(t, plan.Rates)
		require.Zero(t, plan.Total)
	})
	t.Run("custom bounds", func(t *testing.T) {
		o := schedule.Optimal{Budget: 0.2, Min: 6 * time.Hour, Max: 90 * schedule.Day}
		plan := o.Plan(in)
		for i := range in {
			require.GreaterOrEqual(t, plan.Interval(i), 6*time.Hour-time.Second)
			require.LessOrEqual(t, plan.Interval(i), 90*schedule.Day+time.Second)
		}
	})
}

// Heavier pages get more visits at the same change rate.
func TestRevisitWeight(t *testing.T) {
	o := schedule.Optimal{Multiplier: 0.1}
	light, heavy := o.Revisit(0.5, 1), o.Revisit(0.5, 4)
	require.Greater(t, heavy, light)
	require.Equal(t, o.Revisit(0.5, 1), o.Revisit(0.5, 0), "weight 0 means 1")
}

// Next agrees with the plan: a page with settled statistics gets the
// interval the plan gives its estimated rate.
func TestOptimalNextAgreesWithPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	in := mixA(rng, 1000, false)
	o := schedule.Optimal{Budget: 560}

	p := schedule.Observe(schedule.Page{}, schedule.Observation{At: t0, First: true})
	at := t0
	for i := range 20 {
		at = at.Add(20 * time.Hour)
		p = schedule.Observe(p, schedule.Observation{At: at, Changed: i%2 == 0})
	}
	at = at.Add(20 * time.Hour)
	obs := schedule.Observation{At: at, Changed: true}
	q := schedule.Observe(p, obs)
	withPage := append(in, o.Input(q))
	plan := o.Plan(withPage)
	o.Multiplier = plan.Multiplier
	got := o.Next(p, obs)
	require.InEpsilon(t, float64(plan.Interval(len(withPage)-1)), float64(got), 1e-9)
	require.Equal(t, got, schedule.Advance(o, p, obs).Interval)
	require.Equal(t, q.ChangeRate, schedule.Advance(o, p, obs).ChangeRate)
}

// While a page has few checks it is not abandoned at the floor: it is
// explored; with enough checks it is left at the floor.
func TestOptimalExploresBeforeAbandoning(t *testing.T) {
	o := schedule.Optimal{Multiplier: 0.5} // pages faster than 2 changes a day are not followed
	p := schedule.Observe(schedule.Page{}, schedule.Observation{At: t0, First: true})
	at := t0
	var iv time.Duration
	for i := range schedule.DefaultExploreChecks + 2 {
		at = at.Add(time.Hour)
		obs := schedule.Observation{At: at, Changed: true}
		iv = o.Next(p, obs)
		p = schedule.Advance(o, p, obs)
		if i < schedule.DefaultExploreChecks-1 {
			require.Less(t, iv, schedule.DefaultMaxInterval, "check %d: exploring", i+1)
		}
	}
	require.Equal(t, schedule.DefaultMaxInterval, iv, "a page changing at every hourly check is left at the floor")

	never := schedule.Optimal{Multiplier: 0.5, ExploreChecks: -1}
	first := schedule.Observe(schedule.Page{}, schedule.Observation{At: t0, First: true})
	require.Equal(t, schedule.DefaultMaxInterval, never.Next(first, schedule.Observation{At: t0.Add(time.Hour), Changed: true}))
}

// No policy returns an interval <= 0 or outside its bounds, whatever it is
// fed.
func TestPoliciesNeverReturnNonPositive(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	policies := map[string]schedule.Scheduler{
		"halving":                    schedule.DefaultHalving,
		"nutch":                      schedule.Nutch{},
		"uniform":                    schedule.Uniform{},
		"optimal":                    schedule.Optimal{Multiplier: 0.3},
		"optimal extreme multiplier": schedule.Optimal{Multiplier: math.Inf(1)},
		"optimal tiny multiplier":    schedule.Optimal{Multiplier: 1e-300},
	}
	for name, s := range policies {
		t.Run(name, func(t *testing.T) {
			p := schedule.Page{}
			at := t0
			for i := range 500 {
				at = at.Add(time.Duration(rng.ExpFloat64() * float64(48*time.Hour)))
				obs := schedule.Observation{At: at, First: i == 0, Changed: rng.IntN(3) == 0}
				if rng.IntN(4) == 0 {
					obs.LastModified = at.Add(-time.Duration(rng.Int64N(int64(96 * time.Hour))))
				}
				iv := s.Next(p, obs)
				require.Positive(t, iv, "fetch %d", i)
				p = schedule.Advance(s, p, obs)
				require.Equal(t, iv, p.Interval)
			}
		})
	}
	o := schedule.Optimal{}
	for _, r := range []schedule.Rate{0, 1e-9, 1, 1e9, schedule.Rate(math.Inf(1)), schedule.Rate(math.NaN())} {
		iv := o.Revisit(r, 1).Interval()
		require.GreaterOrEqual(t, iv, schedule.DefaultMinInterval-time.Second)
		require.LessOrEqual(t, iv, schedule.DefaultMaxInterval+time.Second)
	}
}
