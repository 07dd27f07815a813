package schedule

import (
	"math"
	"time"
)

// Gain is the expected freshness a fetch of p at now recovers: the
// probability that the page changed since its last fetch, times its
// weight, (1 − e^(−λ̂·Δt))·w. A page never fetched gains its full weight.
// When more pages are due than a run may fetch, fetch them in decreasing
// order of Gain rather than by age alone. λ̂ is p.ChangeRate, or Estimate(p)
// when that is unset.
func Gain(p Page, now time.Time) float64 {
	w := weightOf(p.Weight)
	if p.LastFetched.IsZero() {
		return w
	}
	dt := now.Sub(p.LastFetched)
	if dt <= 0 {
		return 0
	}
	lam := p.ChangeRate
	if !(lam > 0) {
		lam = Estimate(p)
	}
	lam = DefaultLimits.Clamp(lam)
	return -math.Expm1(-float64(lam)*days(dt)) * w
}
