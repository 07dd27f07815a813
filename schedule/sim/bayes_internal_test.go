package sim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

// The prior holds the mix's classes, a log-normal class as bayesPoints
// rates of equal share around its median, and the posterior moves to the
// rate the checks point at.
func TestBayesPosterior(t *testing.T) {
	b := IndexBayes().(*bayes)
	b.knowMix(MixB)
	require.Len(t, b.rates, 1+bayesPoints)
	var sum float64
	for _, p := range b.prior {
		sum += p
	}
	require.InDelta(t, 1, sum, 1e-12)
	require.InDelta(t, 0.5, b.prior[0], 1e-12, "the static half")
	require.Equal(t, float64(schedule.DefaultLimits.Min), b.rates[0], "a rate of 0 is the lowest estimate")
	require.InDelta(t, 1.0/30, b.rates[1+bayesPoints/2], 1e-12, "the middle point is the median")
	require.Less(t, b.rates[1], b.rates[bayesPoints])

	b.knowMix(MixA)
	daily := make([]schedule.Check, 20)
	for i := range daily {
		daily[i] = schedule.Check{Elapsed: schedule.Day, Changed: i%3 != 0}
	}
	post := b.posterior(daily)
	require.Greater(t, post[0], 0.99, "changes on most days: the daily class")
	quiet := []schedule.Check{{Elapsed: 30 * schedule.Day}, {Elapsed: 30 * schedule.Day}, {Elapsed: 30 * schedule.Day}}
	post = b.posterior(quiet)
	require.Greater(t, post[4], post[3], "90 quiet days: yearly before every 60 days")
	require.Less(t, post[0], 1e-30)
	require.InDelta(t, 1, post[0]+post[1]+post[2]+post[3]+post[4], 1e-12)
	require.InDeltaSlice(t, b.prior, b.posterior(nil), 1e-12, "no checks: the prior")
}

// The Bayes ranking knows the mix, not the rates: on mix A it does better
// than Halving at its fetch count and no better than the index given the
// true rates.
func TestIndexBayesBetweenBounds(t *testing.T) {
	cfg := Config{Mix: MixA, Pages: 500, Days: 60, Warmup: 60, Seed: 2, Cadence: 24 * time.Hour}
	w, err := NewWorld(cfg)
	require.NoError(t, err)
	base := Run(w, Halving(), 0)
	budget := BudgetOf(cfg, base.Fetches)
	bayes := Run(w, IndexBayes(), budget)
	oracle := Run(w, IndexOracle(), budget)
	require.Greater(t, bayes.Freshness, base.Freshness)
	require.LessOrEqual(t, bayes.Freshness, oracle.Freshness)
	require.LessOrEqual(t, bayes.Fetches, math.Ceil(1.01*base.Fetches))
}
