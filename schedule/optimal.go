package schedule

import (
	"math"
	"time"
)

// Optimal spends a fetch budget where it buys the most freshness (Cho and
// Garcia-Molina, "Synchronizing a database to improve freshness", 2000).
// With change rates λᵢ and importance weights wᵢ it chooses revisit rates
// fᵢ that maximise Σ wᵢ·F(λᵢ, fᵢ) subject to Σ fᵢ = Budget (see
// Freshness). At the optimum every page's marginal freshness equals one
// price, the Lagrange multiplier μ:
//
//	wᵢ·∂F/∂f(λᵢ, fᵢ) = μ,  i.e.  1 − (1 + r)e^(−r) = μλᵢ/wᵢ with r = λᵢ/fᵢ.
//
// A page with μλᵢ/wᵢ >= 1 (it changes faster than the budget can follow)
// has optimal rate zero; such pages, and every other, are kept between
// Every(Max) and Every(Min), so a page is still looked at every Max and a
// deletion or a shift in its rate is noticed.
//
// The optimum depends on the other pages only through μ. Plan finds μ for
// the whole site at the start of a run; Next then needs only μ and the
// page's own statistics, so it is a per-page computation that agrees with
// the plan. Set Multiplier from the latest Plan:
//
//	opt.Multiplier = opt.Plan(inputs).Multiplier
//
// A new page's estimate starts from a prior (see Estimate) and sharpens with
// every check. While it has fewer than ExploreChecks checks, a page the plan
// would leave at the floor is instead put on the exploration schedule
// (interval ExploreFactor/λ̂, the most informative check), so that a page is
// not abandoned as changing too fast on the strength of one or two checks.
//
// Optimal is a value; it is safe for concurrent use. Zero fields take the
// defaults in defaults.go.
type Optimal struct {
	// Budget is the fetch rate for all pages together, in fetches per day.
	// Plan solves for it; when it is zero Plan evaluates the rates at
	// Multiplier instead.
	Budget Rate
	// Multiplier is μ, the price of one fetch per day in units of weighted
	// freshness, normally copied from the latest Plan. Zero means
	// DefaultMultiplier.
	Multiplier float64
	// Min and Max bound every interval (defaults DefaultMinInterval and
	// DefaultMaxInterval). Max is the floor visit of pages not worth
	// following.
	Min, Max time.Duration
	// ExploreChecks is how many checks a page needs before it may be left
	// at the floor (default DefaultExploreChecks; negative: no
	// exploration).
	ExploreChecks int
}

// PlanInput is one page as Plan sees it.
type PlanInput struct {
	// ChangeRate is the page's change rate λ, usually Page.ChangeRate.
	// Values outside DefaultLimits are clamped.
	ChangeRate Rate
	// Weight is the page's importance; zero means DefaultWeight.
	Weight float64
	// Fixed, when positive and finite, is a rate the page is fetched at
	// whatever the plan says (a page the host pins to its own schedule): it
	// counts against the budget and is returned unchanged.
	Fixed Rate
	// LastFetched is when the page was last fetched; zero if never. Index
	// ranks by it; Optimal ignores it.
	LastFetched time.Time
	// Observed is the change rate BaselineRate prices the page at, usually
	// EstimateObserved; zero means ChangeRate.
	Observed Rate
	// Age is the time since the page's first fetch, for BaselineRate (a
	// young page costs the baseline more); negative: settled.
	Age time.Duration
}

// Input returns InputOf(p): every policy plans the same input.
func (o Optimal) Input(p Page) PlanInput { return InputOf(p) }

// InputOf returns the PlanInput of p, a page as a Planner sees it: its
// estimated rate (Estimate when ChangeRate is unset), weight, last fetch,
// observed rate (EstimateObserved, with ChangeRate taken as Estimate's)
// and age at its last fetch (Elapsed). A page on the exploration schedule
// is planned at its estimated rate like any other; its extra checks are
// few and end after ExploreChecks checks.
func InputOf(p Page) PlanInput {
	in := PlanInput{ChangeRate: p.ChangeRate, Weight: p.Weight, LastFetched: p.LastFetched, Age: p.Elapsed}
	if !(in.ChangeRate > 0) {
		in.ChangeRate = Estimate(p)
	}
	// The cached estimate is Estimate(p) (Observe keeps it so): the
	// observed rate needs only the unsmoothed estimate beside it.
	in.Observed = observedWith(p, in.ChangeRate)
	return in
}

// explore returns the exploration interval for estimate lam.
func (o Optimal) explore(lam Rate) time.Duration {
	return clampInterval(scale(DefaultLimits.Clamp(lam).Interval(), ExploreFactor), o.Min, o.Max)
}

func fixedRate(in PlanInput) (float64, bool) {
	f := float64(in.Fixed)
	return f, f > 0 && !math.IsInf(f, 1)
}

// Plan is the optimal allocation of a budget.
type Plan struct {
	// Multiplier is μ, to be copied into Optimal.Multiplier.
	Multiplier float64
	// Rates holds the revisit rate of every input page, in input order.
	Rates []Rate
	// Total is Σ Rates. It equals the budget unless the budget is below
	// every page at Every(Max) (all pages get that floor) or above every
	// page at Every(Min) (all get that cap).
	Total Rate
}

// Interval returns the revisit interval of input page i.
func (p Plan) Interval(i int) time.Duration { return p.Rates[i].Interval() }

func (o Optimal) withDefaults() Optimal {
	if o.Min <= 0 {
		o.Min = DefaultMinInterval
	}
	if o.Max <= 0 {
		o.Max = DefaultMaxInterval
	}
	if o.Max < o.Min {
		o.Max = o.Min
	}
	switch {
	case math.IsInf(o.Multiplier, 1):
		o.Multiplier = math.MaxFloat64
	case !(o.Multiplier > 0):
		o.Multiplier = DefaultMultiplier
	}
	if o.ExploreChecks == 0 {
		o.ExploreChecks = DefaultExploreChecks
	}
	return o
}

// bounds returns the rate bounds fmin = Every(Max), fmax = Every(Min).
func (o Optimal) bounds() (fmin, fmax float64) {
	return float64(Every(o.Max)), float64(Every(o.Min))
}

// rate is the optimal revisit rate at ln μ = lnMu for a page with change
// rate lam and ln(λ/w) = lnK, clamped to [fmin, fmax], and d ln f / d ln μ
// (zero when clamped).
func (t *invTable) rate(lam, lnK, lnMu, fmin, fmax float64) (f, dlnf float64) {
	lz := lnMu + lnK
	if !(lz < 0) {
		return fmin, 0 // marginal gain at f → 0 is below μ
	}
	r, slope := t.inv(lz)
	f = lam / r
	switch {
	case !(f > fmin):
		return fmin, 0
	case f >= fmax:
		return fmax, 0
	}
	return f, -slope
}

// Revisit returns the optimal revisit rate, at o.Multiplier, of a page with
// change rate lambda and importance weight, within [Every(Max), Every(Min)].
func (o Optimal) Revisit(lambda Rate, weight float64) Rate {
	o = o.withDefaults()
	fmin, fmax := o.bounds()
	lam := float64(DefaultLimits.Clamp(lambda))
	f, _ := tables().rate(lam, math.Log(lam/weightOf(weight)), math.Log(o.Multiplier), fmin, fmax)
	return Rate(f)
}

// Plan solves the budget problem for pages: it finds the multiplier μ at
// which the optimal rates, plus the Fixed rates, add up to Budget and
// returns μ with every page's rate. With Budget zero it returns the rates
// at Multiplier.
//
// The search is a safeguarded Newton iteration on ln μ (bisection when a
// step leaves the bracket), warm-started from Multiplier; each iteration is
// one O(n) pass with a table lookup per page, so re-planning with the
// previous μ takes a few passes.
func (o Optimal) Plan(pages []PlanInput) Plan {
	o = o.withDefaults()
	n := len(pages)
	plan := Plan{Multiplier: o.Multiplier, Rates: make([]Rate, n)}
	if n == 0 {
		return plan
	}
	fmin, fmax := o.bounds()
	t := tables()
	budget := float64(o.Budget)
	// The free pages' λ and ln(λ/w), and where their rates go.
	lam := make([]float64, 0, 2*n)
	slot := make([]int32, 0, n)
	for i, p := range pages {
		if f, ok := fixedRate(p); ok {
			plan.Rates[i] = p.Fixed
			budget -= f
			continue
		}
		l := float64(DefaultLimits.Clamp(p.ChangeRate))
		lam = append(lam, l, math.Log(l/weightOf(p.Weight)))
		slot = append(slot, int32(i))
	}
	free := float64(len(slot))
	// eval writes every free page's rate at ln μ and returns their sum and
	// its derivative with respect to ln μ.
	last := math.NaN() // the ln μ of the rates in plan.Rates
	eval := func(lnMu float64) (sum, dsum float64) {
		last = lnMu
		for j, i := range slot {
			f, d := t.rate(lam[2*j], lam[2*j+1], lnMu, fmin, fmax)
			plan.Rates[i] = Rate(f)
			sum += f
			dsum += f * d
		}
		return sum, dsum
	}
	lnMu := math.Log(o.Multiplier)
	switch {
	case o.Budget == 0 || math.IsNaN(budget) || free == 0:
		// price mode: rates at the given multiplier
	case !(budget > fmin*free):
		lnMu = math.Log(math.MaxFloat64) // every page at the floor
	case budget >= fmax*free:
		lnMu = math.Log(math.SmallestNonzeroFloat64) // every page at the cap
	default:
		var lo, hi float64
		var ok bool
		lnMu, lo, hi, ok = solveMultiplier(eval, budget, lnMu)
		if !ok && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
			// The sum jumps between lo and hi: give the pages that jump
			// the share of their two rates that meets the budget, as the
			// exact μ between lo and hi would.
			sLo, _ := eval(lo)
			below := append([]Rate(nil), plan.Rates...)
			sHi, _ := eval(hi)
			if a := (sLo - budget) / (sLo - sHi); sLo > sHi && a >= 0 && a <= 1 {
				for i, r := range below {
					plan.Rates[i] = r + Rate(a)*(plan.Rates[i]-r)
				}
			}
			lnMu = hi
		}
	}
	plan.Multiplier = min(max(math.Exp(lnMu), math.SmallestNonzeroFloat64), math.MaxFloat64)
	if lnMu != last {
		eval(lnMu)
	}
	var total float64
	for _, f := range plan.Rates {
		total += float64(f)
	}
	plan.Total = Rate(total)
	return plan
}

// solveMultiplier finds x = ln μ with eval(x) = budget; eval is decreasing
// in x and returns the derivative as its second value. When the bracket
// [lo, hi] shrinks to nothing without meeting the budget, eval jumps there
// (pages whose rate falls off a cliff within float precision) and ok is
// false.
func solveMultiplier(eval func(float64) (float64, float64), budget, x float64) (root, lo, hi float64, ok bool) {
	lo, hi = math.Inf(-1), math.Inf(1)
	expand := 1.0
	prev := math.Inf(1)
	for range 300 {
		s, d := eval(x)
		diff := s - budget
		if math.Abs(diff) <= 1e-10*budget {
			return x, lo, hi, true
		}
		if diff > 0 {
			lo = x // too many fetches: raise the price
		} else {
			hi = x
		}
		if hi-lo <= 1e-13*(1+math.Abs(x)) {
			return x, lo, hi, false
		}
		next := math.NaN()
		if d < 0 && math.Abs(diff) < prev/2 || d < 0 && math.IsInf(prev, 1) {
			next = x - diff/d
		}
		prev = math.Abs(diff)
		if !(next > lo && next < hi) {
			switch {
			case math.IsInf(hi, 1):
				next = lo + expand
				expand *= 2
			case math.IsInf(lo, -1):
				next = hi - expand
				expand *= 2
			default:
				next = lo + (hi-lo)/2
				prev = math.Inf(1) // let Newton try again from the midpoint
			}
		}
		x = next
	}
	return x, lo, hi, false
}

// Next implements Scheduler: it folds obs into the page's statistics
// (Observe) and returns the interval of Revisit at the page's estimated
// rate, or the exploration interval if that is shorter and the page is
// still exploring and at the floor; always within [Min, Max].
func (o Optimal) Next(p Page, obs Observation) time.Duration {
	return o.withDefaults().next(Observe(p, obs))
}

// next is Next for a page whose statistics already include the fetch; o
// has its defaults.
// Advance implements Advancer: Observe, then the interval of the updated
// page, with its rate estimated once.
func (o Optimal) Advance(p Page, obs Observation) Page {
	q := Observe(p, obs)
	q.Interval = o.withDefaults().next(q)
	return q
}

func (o Optimal) next(q Page) time.Duration {
	iv := clampInterval(o.Revisit(q.ChangeRate, q.Weight).Interval(), o.Min, o.Max)
	if iv >= o.Max && checks(q) < o.ExploreChecks {
		iv = min(iv, o.explore(q.ChangeRate))
	}
	return iv
}

// scale multiplies d by k, saturating.
func scale(d time.Duration, k float64) time.Duration { return toDuration(float64(d) * k) }

// toDuration converts nanoseconds to a Duration, saturating at both ends
// (NaN becomes 0).
func toDuration(v float64) time.Duration {
	switch {
	case v >= float64(maxDuration):
		return maxDuration
	case v <= math.MinInt64:
		return math.MinInt64
	case math.IsNaN(v):
		return 0
	}
	return time.Duration(v)
}

// Name returns "optimal".
func (Optimal) Name() string { return "optimal" }

// PlanRun implements Planner: it solves the plan for the run (Plan) and
// returns o with the run's Multiplier. Without a Budget it spends what
// DefaultHalving would at the source's cadence (BaselineRate); without a
// Min the shortest interval is the cadence, since no page is fetched more
// often than the source runs. Due pages are ranked by Gain; the run has no
// limit (-1).
func (o Optimal) PlanRun(r Run, pages []PlanInput) RunPlan {
	if o.Min == 0 && r.Cadence > DefaultMinInterval {
		o.Min = min(r.Cadence*9/10, DefaultMaxInterval/2)
	}
	if len(pages) > 0 {
		if o.Budget <= 0 {
			o.Budget = BaselineRate(DefaultHalving, pages, r.Cadence, r.Start)
		}
		o.Multiplier = o.Plan(pages).Multiplier
	}
	return optimalRun{o: o, now: r.Start}
}

// optimalRun is the RunPlan of Optimal.
type optimalRun struct {
	o   Optimal
	now time.Time
}

func (p optimalRun) Next(q Page, obs Observation) time.Duration { return p.o.Next(q, obs) }

// Advance implements Advancer.
func (p optimalRun) Advance(q Page, obs Observation) Page { return p.o.Advance(q, obs) }
func (p optimalRun) Priority(q Page) float64              { return Gain(q, p.now) }
func (p optimalRun) Limit() int                           { return -1 }
func (p optimalRun) Name() string                         { return "optimal" }

// MaxInterval implements Bounded.
func (p optimalRun) MaxInterval() time.Duration { return p.o.MaxInterval() }
