package schedule

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The one-pass spend PlanRun uses is exactly BaselineFetches and
// BaselineRate over the same pages: never-fetched, young, settled and
// fixed-rate pages, at several cadences.
func TestBaselineSpendIsFetchesAndRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	pages := make([]PlanInput, 3000)
	for i := range pages {
		p := PlanInput{ChangeRate: Rate(rng.ExpFloat64()), Age: time.Duration(rng.Float64() * float64(200*Day))}
		switch i % 6 {
		case 0: // never fetched
		case 1:
			p.Age = -1 // settled
			p.LastFetched = now.Add(-time.Duration(rng.Float64() * float64(5*Day)))
		case 2:
			p.Fixed = 0.5
		case 3:
			p.Observed = p.ChangeRate / 3
			p.LastFetched = now.Add(-time.Duration(rng.Float64() * float64(5*Day)))
		default:
			p.LastFetched = now.Add(-time.Duration(rng.Float64() * float64(30*Day)))
		}
		pages[i] = p
	}
	for _, cadence := range []time.Duration{0, time.Hour, 6 * time.Hour, Day, 7 * Day} {
		for _, prev := range []time.Time{{}, now.Add(-cadence - time.Hour)} {
			fetches, rate := baselineSpend(DefaultHalving, pages, cadence, prev, now, true)
			require.Equal(t, BaselineFetches(DefaultHalving, pages, cadence, prev, now), fetches, "cadence %v", cadence)
			require.Equal(t, BaselineRate(DefaultHalving, pages, cadence, now), rate, "cadence %v", cadence)
			only, _ := baselineSpend(DefaultHalving, pages, cadence, prev, now, false)
			require.Equal(t, fetches, only)
		}
	}
}

// The tables solved on every core are exactly the tables solved one grid
// point after the other, at a cadence with run-by-run tables and at one
// without.
func TestBaselineTableParallelIsSequential(t *testing.T) {
	h := Halving{}.withDefaults()
	// Cadences no other test uses: baselineTable solves them afresh.
	for _, cadence := range []time.Duration{61 * time.Minute, 25 * time.Hour} {
		got := baselineTable(h, cadence)
		want := newBLTable(cadence)
		c := newHalvingChain(h, cadence)
		for i := range want.stationary {
			want.solve(c, i)
		}
		require.Equal(t, cadence >= runTableCadence, want.runs != nil)
		require.Equal(t, want, got, "cadence %v", cadence)
	}
}

// BenchmarkBaselineTable solves the baseline's tables of a cadence, what
// the first plan at a new cadence costs (a process that runs once, such as
// a cron job, pays it at every run).
func BenchmarkBaselineTable(b *testing.B) {
	h := Halving{}.withDefaults()
	for _, cadence := range []time.Duration{time.Hour, Day, 400 * Day} {
		b.Run(cadence.String(), func(b *testing.B) {
			for b.Loop() {
				blMu.Lock()
				clear(blCache)
				blMu.Unlock()
				baselineTable(h, cadence)
			}
		})
	}
}
