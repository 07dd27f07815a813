package schedule

import "math"

// HalvingFixedPoint is λ·I where the Halving baseline settles for a page of
// change rate λ: halving on a change (probability 1−e^(−λI)) and growing by
// half otherwise balance when (1−e^(−λI))·ln 2 = e^(−λI)·ln 1.5, at
// λI = −ln(ln 2 / ln 3) ≈ 0.46.
var HalvingFixedPoint = -math.Log(math.Ln2 / math.Log(3))

// BaselineBudget returns the fetch rate, in fetches per day, that the
// Halving baseline settles at for these pages: each page at
// λ/HalvingFixedPoint, bounded to the policy's Min and Max intervals (the
// baseline's own one-hour floor and thirty-day cap by default; a crawler
// that runs less often than hourly cannot fetch a page more often than it
// runs, so set Min to its cadence). A page with a Fixed rate counts at that
// rate. Optimal given this Budget spends what the baseline would, placed
// where it buys the most freshness.
func (o Optimal) BaselineBudget(pages []PlanInput) Rate {
	o = o.withDefaults()
	lo, hi := float64(Every(o.Max)), float64(Every(o.Min))
	var total float64
	for _, p := range pages {
		if f, ok := fixedRate(p); ok {
			total += f
			continue
		}
		lam := float64(DefaultLimits.Clamp(p.ChangeRate))
		total += min(max(lam/HalvingFixedPoint, lo), hi)
	}
	return Rate(total)
}
