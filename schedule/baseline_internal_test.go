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
