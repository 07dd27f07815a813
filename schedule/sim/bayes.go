package sim

import (
	"math"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// IndexBayes is IndexAtBudget ranking by the index a page is expected to
// have given what its checks found and the mix its world was drawn from:
// the posterior over the mix's change rates (its classes' shares the
// prior; a log-normal class as bayesPoints rates of equal share) given the
// page's checks, and the index (schedule.PriorityOf) averaged over it.
// Every fetched page is due at every run, so that the ranking alone picks
// what the budget buys. It knows the world's mix but no page's rate: it
// bounds what a better estimate of each page's rate could reach from the
// same checks, where IndexOracle bounds what knowing the rates reaches.
func IndexBayes() Policy {
	return &bayes{index: index{name: "Index (Bayes, true mix)", trust: TrustLearned, p: schedule.Index{}}}
}

// bayesPoints is how many rates stand for a log-normal class.
const bayesPoints = 9

// forcedAbove is the least priority schedule.IndexPlan gives a page it
// fetches ahead of every index: past the floor it ranks at 1e300 and up,
// ahead of the floor (within its last sixth) at 1e300·5/6 and up. Such a
// page keeps the plan's rank.
const forcedAbove = 0.5e300

type bayes struct {
	index
	rates, prior []float64 // the mix's rates (per day) and their shares
	cadence      time.Duration
}

// knowMix implements the simulator's mixAware: it is told the world's mix
// before the first run.
func (b *bayes) knowMix(m Mix) {
	b.rates, b.prior = b.rates[:0], b.prior[:0]
	var total float64
	for _, c := range m.Classes {
		total += c.Share
	}
	for _, c := range m.Classes {
		share := c.Share / total
		if c.Sigma <= 0 || c.Rate <= 0 {
			b.rates = append(b.rates, float64(schedule.DefaultLimits.Clamp(c.Rate)))
			b.prior = append(b.prior, share)
			continue
		}
		// The middles of bayesPoints equally likely bands of the normal.
		for i := range bayesPoints {
			z := math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/bayesPoints-1)
			b.rates = append(b.rates, float64(schedule.DefaultLimits.Clamp(c.Rate*schedule.Rate(math.Exp(c.Sigma*z)))))
			b.prior = append(b.prior, share/bayesPoints)
		}
	}
}

func (b *bayes) Plan(now time.Time, budget schedule.Rate, pages []Known) {
	b.index.Plan(now, budget, pages)
	b.cadence = schedule.Cadence(b.starts)
}

func (b *bayes) Priority(k Known, now time.Time) float64 {
	p := b.page(k)
	tau := now.Sub(p.LastFetched)
	if p.LastFetched.IsZero() || len(p.Recent) == 0 || len(b.rates) == 0 || tau <= 0 || p.Sitemap.Listed {
		return b.plan.Priority(p) // forced, unchecked, or ranked by its sitemap
	}
	if v := b.plan.Priority(p); v >= forcedAbove || math.IsInf(v, 1) {
		return v // past the floor, or fetched ahead of it
	}
	post := b.posterior(p.Recent)
	var v float64
	for i, lam := range b.rates {
		v += post[i] * schedule.PriorityOf(schedule.Rate(lam), p.Weight, tau, b.cadence)
	}
	return v
}

// posterior returns the posterior weights of b.rates given checks: a
// check that found a change has likelihood 1 − e^(−λt), one that did not
// e^(−λt).
func (b *bayes) posterior(checks []schedule.Check) []float64 {
	lp := make([]float64, len(b.rates))
	best := math.Inf(-1)
	for i, lam := range b.rates {
		s := math.Log(b.prior[i])
		for _, c := range checks {
			if c.Elapsed <= 0 {
				continue
			}
			t := float64(c.Elapsed) / float64(schedule.Day)
			if c.Changed {
				s += math.Log(-math.Expm1(-lam * t))
			} else {
				s -= lam * t
			}
		}
		lp[i] = s
		best = max(best, s)
	}
	var z float64
	for i := range lp {
		lp[i] = math.Exp(lp[i] - best)
		z += lp[i]
	}
	for i := range lp {
		lp[i] /= z
	}
	return lp
}

// Advance keeps every fetched page due at the next run: the ranking alone
// decides what is fetched.
func (b *bayes) Advance(k Known, obs schedule.Observation) schedule.Page {
	q := b.index.Advance(k, obs)
	q.Interval = 1
	return q
}

// mixAware is a policy told the world's mix before its first run.
type mixAware interface{ knowMix(Mix) }
