package schedule_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

func TestFreshness(t *testing.T) {
	tests := []struct {
		name      string
		lambda, f schedule.Rate
		want      float64
	}{
		{"one change per visit interval", 1, 1, 1 - 1/math.E},
		{"static page", 0, 1, 1},
		{"never revisited", 1, 0, 0},
		{"revisited twice per change", 1, 2, 2 * (1 - math.Exp(-0.5))},
		{"revisited far more often than it changes", 1e-12, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, schedule.Freshness(tc.lambda, tc.f), 1e-9)
		})
	}
}

// MarginalFreshness is the derivative of Freshness in f, and it falls as
// f grows (F is concave).
func TestMarginalFreshness(t *testing.T) {
	prev := math.Inf(1)
	for _, f := range []schedule.Rate{0.01, 0.1, 0.5, 1, 2, 10, 100} {
		lam := schedule.Rate(0.7)
		h := f * 1e-6
		num := (schedule.Freshness(lam, f+h) - schedule.Freshness(lam, f-h)) / float64(2*h)
		got := schedule.MarginalFreshness(lam, f)
		require.InDelta(t, num, got, 1e-6*math.Max(1, num))
		require.Less(t, got, prev)
		prev = got
	}
	require.InDelta(t, 1/0.7, schedule.MarginalFreshness(0.7, 0), 1e-12)
	require.Zero(t, schedule.MarginalFreshness(0, 1))
}
