package schedule_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

func TestHalvingFixedPoint(t *testing.T) {
	x := schedule.HalvingFixedPoint
	require.InDelta(t, 0.46, x, 0.01)
	p := 1 - math.Exp(-x) // probability of a change in one interval
	require.InDelta(t, 0, p*math.Log(0.5)+(1-p)*math.Log(1.5), 1e-12, "halving and growing balance")
}

// The baseline budget matches what Halving really spends in the long run.
func TestBaselineBudgetMatchesHalvingSpend(t *testing.T) {
	tests := []struct {
		name   string
		lambda schedule.Rate
		want   schedule.Rate
	}{
		{"daily page", 1, 1 / schedule.Rate(schedule.HalvingFixedPoint)},
		{"static page sits at the 30-day cap", 1e-4, schedule.Every(30 * 24 * time.Hour)},
		{"hourly page sits at the one-hour floor", 100, 24},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := schedule.Optimal{}.BaselineBudget([]schedule.PlanInput{{ChangeRate: tc.lambda}})
			require.InDelta(t, float64(tc.want), float64(got), 1e-9)
		})
	}
	got := schedule.Optimal{}.BaselineBudget([]schedule.PlanInput{{ChangeRate: 1}, {Fixed: 3}})
	require.InDelta(t, 1/schedule.HalvingFixedPoint+3, float64(got), 1e-9, "fixed pages count at their rate")
}

func TestBaselineBudgetHonoursTheCadence(t *testing.T) {
	daily := schedule.Optimal{Min: 24 * time.Hour}
	got := daily.BaselineBudget([]schedule.PlanInput{{ChangeRate: 50}})
	require.InDelta(t, 1, float64(got), 1e-9, "a crawler that runs daily fetches a page at most daily")
}
