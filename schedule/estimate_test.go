package schedule_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

// poissonChecks simulates n checks of a page whose content changes as a
// Poisson process with rate lam (per day). interval draws each check's
// length in days. Every check records whether some change fell in it and,
// for a change, the time from the last change to the check (what a
// reliable Last-Modified reveals).
func poissonChecks(rng *rand.Rand, lam float64, n int, interval func() float64) []schedule.Check {
	out := make([]schedule.Check, 0, n)
	next := rng.ExpFloat64() / lam // time of the next change, from the previous check
	for range n {
		t := interval()
		c := schedule.Check{Elapsed: dur(t)}
		last := -1.0
		for next <= t {
			last = next
			next += rng.ExpFloat64() / lam
		}
		next -= t
		if last >= 0 {
			c.Changed = true
			c.Modified = max(dur(t-last), time.Nanosecond)
		} else {
			c.Modified = c.Elapsed
		}
		out = append(out, c)
	}
	return out
}

func dur(days float64) time.Duration { return time.Duration(days * float64(schedule.Day)) }

func counts(cs []schedule.Check) (x int, total time.Duration) {
	for _, c := range cs {
		if c.Changed {
			x++
		}
		total += c.Modified
	}
	return x, total
}

func relErr(got schedule.Rate, want float64) float64 { return math.Abs(float64(got)/want - 1) }

// The three estimators converge on synthetic Poisson data: at n = 1000
// checks the root-mean-square relative error over rates and seeds is under
// 5% and no estimate is off by more than 12%; at n = 10000 none is off by
// more than 4%.
func TestEstimatorsConverge(t *testing.T) {
	rates := []float64{0.2, 1, 6, 30} // changes per day (the sums of 10000 intervals fit a Duration)
	type estimator struct {
		name     string
		interval func(rng *rand.Rand, lam float64) func() float64
		estimate func(cs []schedule.Check, mean time.Duration) schedule.Rate
	}
	estimators := []estimator{
		{
			name: "irregular MLE",
			// log-uniform intervals between 0.1/λ and 4/λ
			interval: func(rng *rand.Rand, lam float64) func() float64 {
				return func() float64 { return math.Exp(math.Log(0.1)+rng.Float64()*math.Log(40)) / lam }
			},
			estimate: func(cs []schedule.Check, _ time.Duration) schedule.Rate {
				return schedule.EstimateIrregular(cs, schedule.Limits{})
			},
		},
		{
			name:     "regular (Cho-Garcia-Molina)",
			interval: func(_ *rand.Rand, lam float64) func() float64 { return func() float64 { return 0.8 / lam } },
			estimate: func(cs []schedule.Check, mean time.Duration) schedule.Rate {
				x, _ := counts(cs)
				return schedule.EstimateRegular(len(cs), x, mean, schedule.Limits{})
			},
		},
		{
			name:     "Last-Modified",
			interval: func(_ *rand.Rand, lam float64) func() float64 { return func() float64 { return 1.5 / lam } },
			estimate: func(cs []schedule.Check, _ time.Duration) schedule.Rate {
				x, total := counts(cs)
				return schedule.EstimateLastModified(len(cs), x, total, schedule.Limits{})
			},
		},
	}
	tolerance := map[int]float64{1000: 0.12, 10000: 0.04}
	for _, e := range estimators {
		t.Run(e.name, func(t *testing.T) {
			worst, sq := map[int]float64{}, map[int]float64{}
			samples := 0
			for _, lam := range rates {
				for seed := range uint64(5) {
					rng := rand.New(rand.NewPCG(seed, uint64(lam*1000)))
					all := poissonChecks(rng, lam, 10000, e.interval(rng, lam))
					for _, n := range []int{1000, 10000} {
						cs := all[:n]
						var sum float64
						for _, c := range cs {
							sum += float64(c.Elapsed)
						}
						got := e.estimate(cs, time.Duration(sum/float64(n)))
						err := relErr(got, lam)
						worst[n] = max(worst[n], err)
						sq[n] += err * err
						if n == 1000 {
							samples++
						}
						require.LessOrEqualf(t, err, tolerance[n], "λ=%v seed %d n=%d: estimate %v", lam, seed, n, got)
					}
				}
			}
			rms := math.Sqrt(sq[1000] / float64(samples))
			require.Less(t, rms, 0.05, "RMS relative error at n=1000")
			t.Logf("relative error over %d rates × 5 seeds: n=1000 RMS %.1f%% worst %.1f%%; n=10000 RMS %.1f%% worst %.1f%%",
				len(rates), 100*rms, 100*worst[1000], 100*math.Sqrt(sq[10000]/float64(samples)), 100*worst[10000])
		})
	}
}

func TestEstimateIrregularEdgeCases(t *testing.T) {
	h := time.Hour
	day := schedule.Day
	prior := schedule.Rate(math.Ln2 / schedule.DefaultPriorInterval.Hours() * 24)
	tests := []struct {
		name   string
		checks []schedule.Check
		lim    schedule.Limits
		want   func(t *testing.T, r schedule.Rate)
	}{
		{"no checks: the prior", nil, schedule.Limits{}, func(t *testing.T, r schedule.Rate) {
			require.InDelta(t, float64(prior), float64(r), 1e-6)
		}},
		{"equal intervals have the closed form", []schedule.Check{{Elapsed: day, Changed: true}, {Elapsed: day}, {Elapsed: day}},
			schedule.Limits{}, func(t *testing.T, r schedule.Rate) {
				require.InDelta(t, math.Log(5.0/3), float64(r), 1e-9) // ln((n+2)/(n-x+1)) / I
			}},
		{"every check changed stays finite", []schedule.Check{{Elapsed: h, Changed: true}, {Elapsed: h, Changed: true}},
			schedule.Limits{}, func(t *testing.T, r schedule.Rate) {
				require.InDelta(t, math.Log(4)*24, float64(r), 1e-6)
			}},
		{"no change falls with time", []schedule.Check{{Elapsed: 30 * day}, {Elapsed: 30 * day}},
			schedule.Limits{}, func(t *testing.T, r schedule.Rate) {
				require.InDelta(t, math.Log(4.0/3)/30, float64(r), 1e-9)
			}},
		{"non-positive intervals are ignored", []schedule.Check{{Elapsed: 0, Changed: true}, {Elapsed: -h}},
			schedule.Limits{}, func(t *testing.T, r schedule.Rate) {
				require.InDelta(t, float64(prior), float64(r), 1e-6)
			}},
		{"bounded below", []schedule.Check{{Elapsed: 3000 * day}}, schedule.Limits{Min: 0.01, Max: 10},
			func(t *testing.T, r schedule.Rate) { require.Equal(t, schedule.Rate(0.01), r) }},
		{"bounded above", []schedule.Check{{Elapsed: time.Second, Changed: true}}, schedule.Limits{Min: 0.01, Max: 10},
			func(t *testing.T, r schedule.Rate) { require.Equal(t, schedule.Rate(10), r) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want(t, schedule.EstimateIrregular(tc.checks, tc.lim))
		})
	}
}

// The MLE rises with every extra change and falls with every extra quiet
// day.
func TestEstimateIrregularMonotone(t *testing.T) {
	base := []schedule.Check{{Elapsed: schedule.Day}, {Elapsed: 2 * schedule.Day, Changed: true}, {Elapsed: schedule.Day}}
	r0 := schedule.EstimateIrregular(base, schedule.Limits{})
	more := append([]schedule.Check{{Elapsed: schedule.Day, Changed: true}}, base...)
	quiet := append([]schedule.Check{{Elapsed: schedule.Day}}, base...)
	require.Greater(t, schedule.EstimateIrregular(more, schedule.Limits{}), r0)
	require.Less(t, schedule.EstimateIrregular(quiet, schedule.Limits{}), r0)
}

func TestEstimateRegularAndLastModifiedEdges(t *testing.T) {
	lim := schedule.Limits{Min: 0.001, Max: 100}
	tests := []struct {
		name string
		got  schedule.Rate
		want schedule.Rate
	}{
		{"regular formula", schedule.EstimateRegular(10, 4, schedule.Day, lim), schedule.Rate(-math.Log(6.5 / 10.5))},
		{"regular all changed finite", schedule.EstimateRegular(10, 10, schedule.Day, lim), schedule.Rate(math.Log(21))},
		{"regular x above n is clamped", schedule.EstimateRegular(10, 12, schedule.Day, lim), schedule.Rate(math.Log(21))},
		{"regular no checks", schedule.EstimateRegular(0, 0, schedule.Day, lim), 0.001},
		{"regular zero interval", schedule.EstimateRegular(3, 1, 0, lim), 100},
		{"last-modified formula", schedule.EstimateLastModified(10, 4, 5*schedule.Day, lim),
			schedule.Rate((3 - 0.4/math.Log(0.6)) / 5)},
		{"last-modified all changed", schedule.EstimateLastModified(4, 4, 2*schedule.Day, lim), 1.5},
		{"last-modified no change", schedule.EstimateLastModified(5, 0, 5*schedule.Day, lim), 0.001},
		{"last-modified zero time", schedule.EstimateLastModified(5, 2, 0, lim), 100},
		{"last-modified negative counts", schedule.EstimateLastModified(-1, -3, schedule.Day, lim), 0.001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, float64(tc.want), float64(tc.got), 1e-9)
		})
	}
}

// Estimate picks the Last-Modified estimator only when every check in the
// window had a consistent Last-Modified and one found a change.
func TestEstimatePicksEstimator(t *testing.T) {
	day := schedule.Day
	lmChecks := []schedule.Check{
		{Elapsed: day, Changed: true, Modified: 6 * time.Hour},
		{Elapsed: day, Modified: day},
		{Elapsed: day, Changed: true, Modified: 12 * time.Hour},
		{Elapsed: day, Modified: day},
	}
	x, total := counts(lmChecks)
	withLM := schedule.Estimate(schedule.Page{Recent: lmChecks})
	require.Equal(t, schedule.EstimateLastModified(4, x, total, schedule.DefaultLimits), withLM)

	broken := append([]schedule.Check(nil), lmChecks...)
	broken[1].Modified = 0 // one check whose Last-Modified disagreed
	require.Equal(t, schedule.EstimateIrregularWeighted(broken, schedule.DefaultLimits, schedule.DefaultPriorWeight), schedule.Estimate(schedule.Page{Recent: broken}))

	short := lmChecks[:3] // too few checks for the Last-Modified estimator
	require.Equal(t, schedule.EstimateIrregularWeighted(short, schedule.DefaultLimits, schedule.DefaultPriorWeight), schedule.Estimate(schedule.Page{Recent: short}))

	legacy := schedule.Page{Visits: 11, Changes: 4, Elapsed: 10 * day} // stored without a window
	require.Equal(t, schedule.EstimateRegular(10, 4, day, schedule.DefaultLimits), schedule.Estimate(legacy))

	require.Equal(t, schedule.EstimateIrregular(nil, schedule.DefaultLimits), schedule.Estimate(schedule.Page{}))
}

func TestLimitsClamp(t *testing.T) {
	l := schedule.Limits{Min: 1, Max: 2}
	require.Equal(t, schedule.Rate(1), l.Clamp(0.5))
	require.Equal(t, schedule.Rate(2), l.Clamp(3))
	require.Equal(t, schedule.Rate(1.5), l.Clamp(1.5))
	require.Equal(t, schedule.Rate(1), l.Clamp(schedule.Rate(math.NaN())))
	require.Equal(t, schedule.DefaultMinRate, schedule.Limits{}.Clamp(0))
	require.Equal(t, schedule.DefaultMaxRate, schedule.Limits{}.Clamp(schedule.Rate(math.Inf(1))))
}

func TestRateConversions(t *testing.T) {
	require.Equal(t, schedule.Rate(24), schedule.Every(time.Hour))
	require.Equal(t, schedule.Rate(0), schedule.Every(0))
	require.Equal(t, 12*time.Hour, schedule.Rate(2).Interval())
	require.Equal(t, time.Duration(math.MaxInt64), schedule.Rate(0).Interval())
	require.Equal(t, time.Duration(math.MaxInt64), schedule.Rate(math.NaN()).Interval())
	require.Equal(t, time.Duration(math.MaxInt64), schedule.Rate(1e-300).Interval())
	require.Equal(t, time.Duration(1), schedule.Rate(1e300).Interval())
}

// The observed rate of a page estimated from its Last-Modified is that
// estimate: it has no prior to undo, and the lower of it and the interval
// estimate would underestimate the page (the minimum of two noisy
// estimates is biased low). Without a usable Last-Modified the observed
// rate is the interval estimate without its prior, when that is lower.
func TestEstimateObservedKeepsTheLastModifiedEstimate(t *testing.T) {
	day := schedule.Day
	var lm []schedule.Check
	for i := range 8 {
		c := schedule.Check{Elapsed: day, Modified: day}
		if i%2 == 0 {
			c.Changed, c.Modified = true, 15*time.Minute // changed just before the fetch
		}
		lm = append(lm, c)
	}
	p := schedule.Page{Recent: lm}
	est := schedule.Estimate(p)
	plain := schedule.EstimateIrregularWeighted(lm, schedule.DefaultLimits, 0)
	require.Greater(t, float64(est), float64(plain), "the Last-Modified estimate is the higher here")
	require.Equal(t, est, schedule.EstimateObserved(p))
	require.Equal(t, est, schedule.Optimal{}.Input(schedule.Page{Recent: lm, ChangeRate: est}).Observed)

	noLM := make([]schedule.Check, 8)
	for i := range noLM {
		noLM[i] = schedule.Check{Elapsed: day, Changed: i < 2}
	}
	q := schedule.Page{Recent: noLM}
	require.Equal(t, schedule.EstimateIrregularWeighted(noLM, schedule.DefaultLimits, 0), schedule.EstimateObserved(q))
	require.Less(t, float64(schedule.EstimateObserved(q)), float64(schedule.Estimate(q)))
}

// A change found at a co-change chance is read as maybe its siblings'
// release: the higher the chance, the less it raises the page's own rate,
// down to the rate of a page that never changed once the chance passes
// 0.95; below 0.1 it is read as the page's own. The baseline's estimate
// (EstimateObserved) reads every change as the page's own.
func TestEstimateReadsCoChance(t *testing.T) {
	checks := func(co float64) schedule.Page {
		return schedule.Page{Recent: []schedule.Check{
			{Elapsed: 10 * schedule.Day},
			{Elapsed: 12 * schedule.Day},
			{Elapsed: schedule.Day, Changed: true, CoChance: co},
			{Elapsed: 9 * schedule.Day},
		}}
	}
	own := schedule.Estimate(checks(0))
	tests := []struct {
		co   float64
		want string // against own: "same", "lower"
	}{
		{math.NaN(), "same"},
		{-1, "same"},
		{0.05, "same"},
		{0.099, "same"},
		{0.2, "lower"},
		{0.5, "lower"},
		{0.95, "lower"},
		{1, "lower"},
		{math.Inf(1), "lower"},
	}
	prev := own
	for _, tc := range tests {
		got := schedule.Estimate(checks(tc.co))
		require.Equal(t, schedule.EstimateObserved(checks(0)), schedule.EstimateObserved(checks(tc.co)), "co %v: the baseline's rate", tc.co)
		switch tc.want {
		case "same":
			require.Equal(t, own, got, "co %v", tc.co)
		case "lower":
			require.Less(t, got, own, "co %v", tc.co)
			require.LessOrEqual(t, got, prev, "co %v: a higher chance, a lower rate", tc.co)
		}
		prev = got
	}
	require.Equal(t, schedule.Estimate(checks(0.95)), schedule.Estimate(checks(1)), "read at 0.95 at most")
	require.Greater(t, schedule.Estimate(checks(1)), schedule.Estimate(schedule.Page{Recent: []schedule.Check{
		{Elapsed: 10 * schedule.Day}, {Elapsed: 12 * schedule.Day}, {Elapsed: schedule.Day}, {Elapsed: 9 * schedule.Day},
	}}), "the change still says a little")
}

// Observe keeps the page's co-change chance in the check it adds, within
// [0, 1].
func TestObserveKeepsCoChance(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ co, want float64 }{{0, 0}, {0.3, 0.3}, {1.5, 1}, {-0.2, 0}, {math.NaN(), 0}, {math.Inf(1), 0}} {
		p := schedule.Observe(schedule.Page{LastFetched: t0, Visits: 1, CoChange: tc.co}, schedule.Observation{At: t0.Add(schedule.Day), Changed: true})
		require.Len(t, p.Recent, 1)
		require.Equal(t, tc.want, p.Recent[0].CoChance, "co %v", tc.co)
	}
}
