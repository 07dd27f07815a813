package schedule

import (
	"math"
	"time"
)

// Estimate returns the change rate of p from its statistics, bounded by
// DefaultLimits. It prefers, in order:
//
//   - the Last-Modified estimator (EstimateLastModified) over Recent, when
//     every check there had a consistent Last-Modified, there are at least
//     DefaultLastModifiedChecks of them and at least one found a change;
//   - the maximum-likelihood estimator for irregular intervals
//     (EstimateIrregular) over Recent, its pseudo-checks weighted by
//     DefaultPriorWeight;
//   - the estimator for regular intervals (EstimateRegular) from Visits,
//     Changes and Elapsed, for a page stored without a window;
//   - the prior, ln 2 / DefaultPriorInterval, for a page without checks.
func Estimate(p Page) Rate {
	if len(p.Recent) > 0 {
		if n, x, total, ok := lastModifiedChecks(p.Recent); ok {
			return EstimateLastModified(n, x, total, DefaultLimits)
		}
		return EstimateIrregularWeighted(p.Recent, DefaultLimits, DefaultPriorWeight)
	}
	if p.Visits > 1 && p.Elapsed > 0 {
		n := p.Visits - 1
		return EstimateRegular(n, p.Changes, p.Elapsed/time.Duration(n), DefaultLimits)
	}
	return EstimateIrregular(nil, DefaultLimits)
}

// lastModifiedChecks returns the counts of the Last-Modified estimator
// over checks (n checks, x of them changes, total the sum of their
// Modified terms) and whether Estimate uses it: every check had a
// consistent Last-Modified, there are at least DefaultLastModifiedChecks
// of them and at least one found a change.
func lastModifiedChecks(checks []Check) (n, x int, total time.Duration, ok bool) {
	for _, c := range checks {
		if c.Modified <= 0 || c.Elapsed <= 0 {
			return 0, 0, 0, false
		}
		n++
		if c.Changed {
			x++
		}
		total += c.Modified
	}
	return n, x, total, n >= DefaultLastModifiedChecks && x > 0
}

// usesLastModified reports whether Estimate estimates from checks with
// the Last-Modified estimator.
func usesLastModified(checks []Check) bool {
	_, _, _, ok := lastModifiedChecks(checks)
	return ok
}

// EstimateRegular is Cho and Garcia-Molina's estimator for checks at a
// regular interval: n checks, x of which found a change,
//
//	λ̂ = −ln((n − x + 0.5) / (n + 0.5)) / interval.
//
// The halves keep it finite when every check found a change. The result is
// bounded by lim (zero fields take DefaultLimits); x is clamped to [0, n].
func EstimateRegular(n, x int, interval time.Duration, lim Limits) Rate {
	lim = lim.orDefault()
	if interval <= 0 {
		return lim.Max
	}
	n = max(n, 0)
	x = min(max(x, 0), n)
	r := -math.Log((float64(n-x)+0.5)/(float64(n)+0.5)) / days(interval)
	return lim.Clamp(Rate(r))
}

// EstimateLastModified is Cho and Garcia-Molina's estimator for an origin
// whose Last-Modified is reliable ("Estimating frequency of change", 2003):
// n checks, x of which found a change, and total, the sum over the checks
// of the time from the last modification to the fetch for a check that
// found a change and of the interval for one that did not (the sum of
// Check.Modified). With that information the naive estimate x/total is
// already consistent; the bias-reduced form used here is
//
//	λ̂ = ((x − 1) − x / (n·ln(1 − x/n))) / total.
//
// The result is bounded by lim (zero fields take DefaultLimits).
func EstimateLastModified(n, x int, total time.Duration, lim Limits) Rate {
	lim = lim.orDefault()
	n = max(n, 0)
	x = min(max(x, 0), n)
	if x == 0 {
		return lim.Min
	}
	if total <= 0 {
		return lim.Max
	}
	corr := 0.0 // x/(n ln(1-x/n)) → 0 as x → n
	if x < n {
		p := float64(x) / float64(n)
		corr = p / math.Log1p(-p)
	}
	return lim.Clamp(Rate((float64(x) - 1 - corr) / days(total)))
}

// EstimateIrregular is the maximum-likelihood change rate from checks at
// irregular intervals. A check of length t that found a change has
// likelihood 1 − e^(−λt), one that did not e^(−λt), so the estimate solves
//
//	Σ_changed t / (e^(λt) − 1) = Σ_unchanged t.
//
// A change found at a co-change chance c (Check.CoChance: the fetch came
// because the page's siblings had changed) may be theirs, not the page's:
// its likelihood is 1 − (1 − c)e^(−λt), and its term
// t(1 − c)/(e^(λt) − 1 + c), with c read as 0 below 0.1 and at most 0.95.
// Without it a section's release, found on the siblings a day after it,
// would read as pages that change daily.
//
// The sums are smoothed with one pseudo-check of each kind whose length is
// the mean observed interval (DefaultPriorInterval when there are none),
// which keeps the root finite when every check, or none, found a change.
// The root is found by safeguarded Newton iteration on ln λ (bisection
// when a step leaves the bracket) and bounded by lim (zero fields take
// DefaultLimits). Checks with Elapsed <= 0 are ignored.
func EstimateIrregular(checks []Check, lim Limits) Rate {
	return estimateIrregular(checks, lim, 1, true)
}

// EstimateObserved is the change rate of p from its checks alone: the
// maximum-likelihood estimate of EstimateIrregular without the smoothing
// pseudo-checks (DefaultLimits.Min when no check found a change), or
// Estimate(p) when that is lower (every check found a change; a page
// without checks) or comes from the Last-Modified estimator (which has no
// prior; the lower of two noisy estimates would be biased low). The prior
// keeps a page's own estimate from being abandoned on little evidence, but
// it pulls the estimate of a page that never changes up to about one
// change per observed time; what the baseline spends on a page follows
// what its checks found, so BaselineRate is computed from this estimate.
// It reads every change as the page's own, whatever its Check.CoChance:
// the baseline has no co-change, and its spend is what it would fetch of
// the changes found.
func EstimateObserved(p Page) Rate { return observedWith(p, Estimate(p)) }

// observedWith is EstimateObserved given est, Estimate(p).
func observedWith(p Page, est Rate) Rate {
	if len(p.Recent) == 0 || usesLastModified(p.Recent) {
		return est
	}
	// The baseline's estimate reads every change as the page's own: a
	// crawler without co-change would have fetched the page on its own
	// schedule.
	for _, c := range p.Recent {
		if c.Changed && coEvidence(c.CoChance) > 0 {
			est = estimateIrregular(p.Recent, DefaultLimits, DefaultPriorWeight, false)
			break
		}
	}
	// Every check found a change: the likelihood has no maximum, and the
	// smoothed estimate is the better bound.
	return min(est, estimateIrregular(p.Recent, DefaultLimits, 0, false))
}

// minCoChance and maxCoChance bound the co-change chance a change is
// read at. Below minCoChance it is read as none: a model that found its
// source's pages changing together by chance (pages that change alone)
// gives chances of a few percent, and reading those would bias every
// page's rate down. Up to maxCoChance: a change found at any co-change
// chance says a little of the page's own rate.
const (
	minCoChance = 0.1
	maxCoChance = 0.95
)

// coEvidence is the co-change chance c as the estimators read it: 0 below
// minCoChance (and when not a number), at most maxCoChance.
func coEvidence(c float64) float64 {
	if !(c > minCoChance) {
		return 0
	}
	return min(c, maxCoChance)
}

// EstimateIrregularWeighted is EstimateIrregular with each smoothing
// pseudo-check weighted by prior (1: EstimateIrregular; 0: none, the plain
// maximum-likelihood estimate, bounded by lim; negative counts as 0).
// Estimate uses DefaultPriorWeight.
func EstimateIrregularWeighted(checks []Check, lim Limits, prior float64) Rate {
	return estimateIrregular(checks, lim, max(prior, 0), true)
}

// estimateIrregular is EstimateIrregular with the pseudo-checks weighted
// by prior (1: one of each kind; 0: none), reading the checks' CoChance
// when readCo is set (else every change as the page's own).
func estimateIrregular(checks []Check, lim Limits, prior float64, readCo bool) Rate {
	lim = lim.orDefault()
	var (
		n, x       int
		sumC, sumU float64
	)
	for _, c := range checks {
		if c.Elapsed <= 0 {
			continue
		}
		t := days(c.Elapsed)
		n++
		if c.Changed {
			x++
			sumC += t
		} else {
			sumU += t
		}
	}
	mean := days(DefaultPriorInterval)
	if n > 0 {
		mean = (sumC + sumU) / float64(n)
	}
	target := sumU + prior*mean // Σ_unchanged t, with the pseudo-check
	// phi(λ) = Σ_changed t/(e^(λt)−1) − target is decreasing in λ.
	phi := func(lam float64) (v, dv float64) {
		add := func(t, c float64) {
			y := lam * t
			var e, em float64 // e^y and e^y − 1
			if y < 0.5 {
				em = math.Expm1(y)
				e = em + 1
			} else {
				e = math.Exp(y)
				em = e - 1
			}
			if math.IsInf(e, 1) {
				return // both terms vanish
			}
			// A change found at co-change chance c: its likelihood is
			// 1 − (1 − c)e^(−λt), whose score is t(1 − c)/(e^(λt) − 1 + c).
			d := em + c
			v += t * (1 - c) / d
			// d/dλ t(1−c)/(e^(λt)−1+c) = −t²(1−c) e^(λt)/(e^(λt)−1+c)²
			dv -= t * t * (1 - c) * e / (d * d)
		}
		if prior > 0 {
			add(mean, 0)
			v, dv = v*prior, dv*prior
		}
		for _, c := range checks {
			if c.Elapsed > 0 && c.Changed {
				co := 0.0
				if readCo {
					co = coEvidence(c.CoChance)
				}
				add(days(c.Elapsed), co)
			}
		}
		return v - target, dv
	}
	lo, hi := math.Log(float64(lim.Min)), math.Log(float64(lim.Max))
	if v, _ := phi(float64(lim.Min)); !(v > 0) {
		return lim.Min
	}
	if v, _ := phi(float64(lim.Max)); !(v < 0) {
		return lim.Max
	}
	// Exact for equal intervals: ln((n+2)/(n−x+1)) / mean.
	z := math.Log(math.Log(float64(n+2)/float64(n-x+1)) / mean)
	if !(z > lo && z < hi) {
		z = (lo + hi) / 2
	}
	for range 100 {
		lam := math.Exp(z)
		v, dv := phi(lam)
		if v == 0 {
			break
		}
		if v > 0 {
			lo = z
		} else {
			hi = z
		}
		step := -v / (lam * dv) // Newton on z = ln λ: dφ/dz = λ·dφ/dλ
		next := z + step
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if math.Abs(next-z) < 1e-10 || hi-lo < 1e-10 {
			z = next
			break
		}
		z = next
	}
	return lim.Clamp(Rate(math.Exp(z)))
}
