package schedule

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// gInv inverts g across its whole range, and the table used by Plan
// agrees with it to a few parts in a million.
func TestInverseTable(t *testing.T) {
	tab := tables()
	worst := 0.0
	for lz := -100.0; lz < 0; lz += 0.0137 {
		z := math.Exp(lz)
		exact := gInv(z)
		if z < 1-1e-12 {
			require.InDelta(t, z, g(exact), 1e-12*math.Max(z, 1e-300)+1e-15, "g(gInv(%g))", z)
		}
		r, el := tab.inv(lz)
		rel := math.Abs(r/exact - 1)
		worst = math.Max(worst, rel)
		require.Lessf(t, rel, 2e-5, "table at ln z = %g: %g vs %g", lz, r, exact)
		// the elasticity d ln r / d ln z, by central difference
		h := 1e-4
		if lz+h < 0 {
			num := (math.Log(gInv(math.Exp(lz+h))) - math.Log(gInv(math.Exp(lz-h)))) / (2 * h)
			require.InDeltaf(t, num, el, 1e-2*math.Max(1, math.Abs(num)), "elasticity at ln z = %g (used only for Newton steps)", lz)
		}
	}
	t.Logf("worst relative error of the table: %.2g", worst)
	require.Equal(t, 0.0, gInv(0))
	require.True(t, math.IsInf(gInv(1), 1))
}

func TestGSeriesMatchesClosedForm(t *testing.T) {
	for _, r := range []float64{1e-3, 5e-3, 0.0099} {
		closed := -math.Expm1(-r) - r*math.Exp(-r)
		require.InDelta(t, closed, g(r), 1e-15)
	}
}
