package schedule

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
	"time"
)

// Run describes one crawler run of a source, as a Planner sees it.
type Run struct {
	// Start is when the run started.
	Start time.Time
	// Previous is when the source's previous run started; zero for the
	// first run.
	Previous time.Time
	// Cadence is the source's measured time between runs (from its
	// recorded run starts); zero when not known yet.
	Cadence time.Duration
}

// elapsed is the time the run's budget covers: since the previous run,
// else one cadence, else one day; at most max.
func (r Run) elapsed(most time.Duration) time.Duration {
	d := r.Cadence
	if !r.Previous.IsZero() && r.Start.After(r.Previous) {
		d = r.Start.Sub(r.Previous)
	}
	if d <= 0 {
		d = Day
	}
	return min(d, most)
}

// Planner is a Scheduler that plans each run: a crawler finds it by type
// assertion, calls PlanRun once at the start of every run with every live
// page, and uses the returned RunPlan as the run's scheduler. A Planner
// must be safe for concurrent use.
type Planner interface {
	Scheduler
	// PlanRun plans the run r over pages, the PlanInput of every live page
	// of the source (LastFetched set). It must not keep pages.
	PlanRun(r Run, pages []PlanInput) RunPlan
}

// RunPlan is the scheduler of one planned run. The crawler fetches every
// due page never fetched, then at most Limit of the other due pages
// (negative: all of them), highest Priority first, and reschedules each
// fetched page with Next. A RunPlan must be safe for concurrent use.
type RunPlan interface {
	Scheduler
	// Priority ranks a due page at the run's start: higher is fetched
	// first.
	Priority(p Page) float64
	// Limit is how many pages fetched before the run may fetch; negative
	// means no limit.
	Limit() int
}

// Index is the budgeted index policy, the engine's default. At every run
// it fetches the due pages in decreasing order of the Lagrangian index of
// Cho and Garcia-Molina made for a crawler that only fetches at its runs
// (PriorityOf),
//
//	I = w·gRuns(λ̂τ, λ̂C)/λ̂,  gRuns(r, c) = 1 − e^(−r)·(1 + r·(1 − e^(−c))/c),
//
// (w the page's weight, λ̂ its estimated change rate, τ the time since its
// last fetch, C the source's cadence: the price at which fetching now and
// one run later are worth the same; w·g(λ̂τ)/λ̂, g(r) = 1 − (1 + r)e^(−r),
// as C → 0), up to the run's budget. Pages never fetched come first and
// outside the limit (the baseline fetches them at once too); pages not
// fetched for Floor come next, within the budget unless they alone
// exceed it (the baseline's spend counts a visit of every slow page at
// its own cap, so a floor visit on top of it would be counted twice: on a
// site of many pages that never change, that cost 6–8% more fetches than
// the baseline's). Pages that reach the floor together (found in one run,
// never changing) are spread over the runs before it: a run fetches ahead
// of the floor, within its share, what the next runs' shares could not
// hold, so that they do not all go on top of one run's budget (Next makes
// such a page due a sixth of the floor early, when that is at least two
// runs). A page whose Sitemap hint lists a lastmod is ranked by the chance
// of a change that the hint gives (SitemapHint, LastModTrust.Posterior)
// instead of 1 − e^(−λ̂τ), and falls due when that chance, with the
// lastmod unmoved, is worth a fetch.
//
// The budget is Budget fetches per day, a run's share being the budget
// times the time since the previous run; or, when Budget is zero, what the
// Baseline policy would fetch of the same pages since the previous run at
// the source's cadence (BaselineFetches; BaselineRate per day for the
// price). Pages never fetched are fetched on top of that budget, as the
// baseline would fetch them.
//
// Next schedules a page to fall due when its index reaches Candidates
// times the price μ at which the pages' optimal revisit rates (Optimal)
// spend the budget, so that the due queue holds the pages worth ranking. Index is a
// value, safe for concurrent use; zero fields take the defaults.
type Index struct {
	// Budget is the fetch rate for all pages together, in fetches per day;
	// zero means the Baseline's spend at the source's cadence.
	Budget Rate
	// Baseline is the policy whose spend is the default budget (default
	// DefaultHalving).
	Baseline Halving
	// Floor is the longest time a page goes without a fetch (default
	// DefaultMaxInterval, 30 days).
	Floor time.Duration
	// Min is the shortest interval Next returns (default
	// DefaultMinInterval).
	Min time.Duration
	// Candidates is the share of the run's price at which a page falls due
	// (default DefaultCandidates).
	Candidates float64
}

// planSample is how many pages, at most, PlanRun prices a run on.
const planSample = 1 << 16

// DefaultCandidates is Index.Candidates by default: a page falls due when
// its index reaches half the price μ.
const DefaultCandidates = 0.5

func (x Index) withDefaults() Index {
	x.Baseline = x.Baseline.withDefaults()
	if x.Floor <= 0 {
		x.Floor = DefaultMaxInterval
	}
	if x.Min <= 0 {
		x.Min = DefaultMinInterval
	}
	x.Min = min(x.Min, x.Floor)
	if !(x.Candidates > 0) || x.Candidates > 1 {
		x.Candidates = DefaultCandidates
	}
	return x
}

// PriorityOf is the index of a page with change rate lam, weight w and
// time since the last fetch tau, for a crawler that runs every cadence:
// w·gRuns(λτ, λC)/λ, the price μ at which revisiting every τ and every
// τ + C are worth the same,
//
//	gRuns(r, c) = 1 − e^(−r)·(1 + r·(1 − e^(−c))/c).
//
// A cadence <= 0 (fetches at any time) gives w·g(λτ)/λ,
// g(r) = 1 − (1 + r)e^(−r), the index of Cho and Garcia-Molina.
func PriorityOf(lam Rate, w float64, tau, cadence time.Duration) float64 {
	l := float64(DefaultLimits.Clamp(lam))
	if tau <= 0 {
		return 0
	}
	return weightOf(w) * gRuns(l*days(tau), l*discreteCadence(cadence)) / l
}

// forced ranks above every index: never fetched first, then the pages past
// the floor, longest first.
func forcedPriority(last time.Time, now time.Time, floor time.Duration) (float64, bool) {
	if last.IsZero() {
		return math.Inf(1), true
	}
	if tau := now.Sub(last); tau >= floor {
		return 1e300 * min(days(tau)/days(floor), 1e7), true
	}
	return 0, false
}

// Next implements Scheduler without a plan: the interval at which the
// page's index reaches the default multiplier, within [Min, Floor]. A
// crawler that plans uses the RunPlan of PlanRun instead.
func (x Index) Next(p Page, obs Observation) time.Duration {
	return IndexPlan{x: x.withDefaults(), mu: DefaultMultiplier}.Next(p, obs)
}

// PlanRun implements Planner: it sets the run's budget and finds the price
// μ at which the pages' optimal revisit rates (Optimal.Plan, between the
// cadence and Floor) spend the budget. It costs a few passes over pages.
func (x Index) PlanRun(r Run, pages []PlanInput) RunPlan {
	x = x.withDefaults()
	// The price depends on the pages only through their distribution: on
	// a large site it is found on an even sample of them.
	sample, scale := pages, 1.0
	if n := len(pages); n > planSample {
		stride := n / planSample
		sample = make([]PlanInput, 0, n/stride+1)
		for i := 0; i < n; i += stride {
			sample = append(sample, pages[i])
		}
		scale = float64(n) / float64(len(sample))
	}
	rate := x.Budget
	var share float64
	if rate > 0 {
		share = float64(rate) * days(r.elapsed(x.Floor))
	} else {
		prev := r.Previous
		if !prev.IsZero() && r.Start.Sub(prev) > x.Floor {
			prev = r.Start.Add(-x.Floor)
		}
		if len(sample) == len(pages) {
			share, rate = baselineSpend(x.Baseline, pages, r.Cadence, prev, r.Start, true) // one pass for both
		} else {
			rate = BaselineRate(x.Baseline, sample, r.Cadence, r.Start) * Rate(scale)
			share = BaselineFetches(x.Baseline, pages, r.Cadence, prev, r.Start)
		}
	}
	// runPhase rounds the share without bias.
	plan := IndexPlan{x: x, now: r.Start, cadence: discreteCadence(r.Cadence), limit: int(share + runPhase(r.Start))}
	runShare := plan.limit
	plan.lead = floorLead(x.Floor, r.Cadence)
	floor, soon := 0, []time.Duration(nil)
	for _, p := range pages {
		if p.LastFetched.IsZero() {
			continue // fetched outside the limit
		}
		if _, ok := forcedPriority(p.LastFetched, r.Start, x.Floor); ok {
			floor++
		} else if tau := r.Start.Sub(p.LastFetched); plan.lead > 0 && tau >= x.Floor-plan.lead {
			soon = append(soon, tau)
		}
	}
	// The pages past the floor are fetched within the budget, or above it
	// when they alone exceed it (a source not crawled for longer than the
	// floor): every page is fetched at least every Floor.
	plan.limit = max(plan.limit, floor)
	plan.early = earlyFloor(soon, floor, runShare, x.Floor, r.Cadence)
	plan.mu = DefaultMultiplier // nothing to price yet (a first run)
	if len(pages) > 0 && rate > 0 {
		o := Optimal{Budget: rate / Rate(scale), Min: max(x.Min, r.Cadence), Max: x.Floor, ExploreChecks: -1}
		plan.mu = o.Plan(sample).Multiplier
	}
	return plan
}

// floorLead is how long before the floor a page may be fetched to spread
// the floor visits of pages that reach it together (pages discovered in
// one run that never change reach it in one run, month after month): a
// sixth of the floor when that is at least two runs, else none.
func floorLead(floor, cadence time.Duration) time.Duration {
	lead := floor / 6
	if cadence <= 0 || lead < 2*cadence {
		return 0
	}
	return lead
}

// earlyFloor returns the time since the last fetch from which pages not
// yet past the floor are fetched in this run, within its share of the
// budget, so that the pages reaching the floor over the next runs fit in
// their shares; 0 when none need to. soon holds the time since the last
// fetch of the pages within the lead of the floor, floor counts those past
// it, share is the run's share of the budget. Pages are taken as late as
// possible: the k runs after this one take a share each, so this run
// fetches what reaches the floor by then beyond k shares, within its own
// share.
func earlyFloor(soon []time.Duration, floor, share int, fl, cadence time.Duration) time.Duration {
	room := share - floor
	if len(soon) == 0 || room <= 0 || cadence <= 0 {
		return 0
	}
	// Longest since their fetch first: the i-th page and those before it
	// reach the floor within k runs, which hold k·share (however short the
	// cadence, no array of runs is made).
	slices.SortFunc(soon, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	var need int64
	for i, tau := range soon {
		k := max(int64((fl-tau+cadence-1)/cadence), 1)
		need = max(need, int64(i+1)-k*int64(share))
	}
	if need <= 0 {
		return 0
	}
	return soon[min(need, int64(room))-1]
}

// runPhase is a number in [0, 1) fixed by the run's start, for rounding a
// run's share of the budget without bias.
func runPhase(t time.Time) float64 {
	h := fnv.New64a()
	var b [8]byte
	u := uint64(t.UnixNano())
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
	h.Write(b[:])
	return float64(h.Sum64()>>11) / (1 << 53)
}

// IndexPlan is the RunPlan of Index for one run.
type IndexPlan struct {
	x       Index
	now     time.Time
	cadence float64 // the source's cadence in days (0: continuous)
	mu      float64 // the run's price
	limit   int
	// lead is how long before the floor a page may fall due (floorLead);
	// early, when positive, the time since the last fetch from which a
	// page is fetched ahead of the floor in this run (earlyFloor).
	lead, early time.Duration
}

// discreteCadence is the cadence, in days, the index accounts for.
func discreteCadence(c time.Duration) float64 {
	if c <= 0 {
		return 0
	}
	return days(c)
}

// gRuns is g for a crawler that runs every c/λ: the index, times λ/w, of
// a page fetched at r = λτ rather than one run later,
//
//	gRuns(r, c) = 1 − e^(−r)·(1 + r·(1 − e^(−c))/c),
//
// the price at which revisiting every τ and every τ + C (both whole
// numbers of runs) are worth the same. It is g(r) as c → 0 and increases
// with r.
func gRuns(r, c float64) float64 {
	if c < 1e-6 {
		return g(r)
	}
	if r > 745 {
		return 1
	}
	a := -math.Expm1(-c) / c
	return -math.Expm1(-r) - r*a*math.Exp(-r)
}

// gRunsInv solves gRuns(r, c) = z for r; 0 for z <= 0, +Inf when no r
// reaches z.
func gRunsInv(z, c float64) float64 {
	if c < 1e-6 {
		return gInv(z)
	}
	switch {
	case !(z > 0):
		return 0
	case z >= 1:
		return math.Inf(1)
	}
	// gRuns(r, c) >= g(r): the root lies below gInv(z).
	lo, hi := 0.0, gInv(z)
	for range 60 {
		m := (lo + hi) / 2
		if gRuns(m, c) < z {
			lo = m
		} else {
			hi = m
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return hi
}

// Multiplier is the run's price μ: the multiplier of Optimal.Plan at the
// run's budget, the index at which a page is worth a fetch.
func (p IndexPlan) Multiplier() float64 { return p.mu }

// Limit implements RunPlan: the run's budget, the pages past the floor
// included, or those pages when they alone exceed it. Pages never fetched
// are not counted: a crawler fetches them all, first, outside the limit.
func (p IndexPlan) Limit() int { return max(p.limit, 0) }

// Priority implements RunPlan: +Inf for a page never fetched, above every
// index for a page past the floor and, below those, for a page this run
// fetches ahead of the floor (earlyFloor), else the index at the run's
// start.
func (p IndexPlan) Priority(q Page) float64 {
	if v, ok := forcedPriority(q.LastFetched, p.now, p.x.Floor); ok {
		return v
	}
	if tau := p.now.Sub(q.LastFetched); p.early > 0 && tau >= p.early {
		// Ahead of the floor, below the pages past it, above every index.
		return 1e300 * days(tau) / days(p.x.Floor)
	}
	lam := q.ChangeRate
	if !(lam > 0) {
		lam = Estimate(q)
	}
	tau := p.now.Sub(q.LastFetched)
	if tau <= 0 {
		return 0
	}
	l := float64(DefaultLimits.Clamp(lam))
	r := l * days(tau)
	if d := min(q.CoDiscount, 1); d > 0 {
		// The siblings' clean checks say the page is less likely to have
		// changed than its rate says.
		r = -math.Log1p(math.Expm1(-r) * (1 - d))
	}
	if q.Sitemap.Listed || q.CoChange > 0 {
		// The siblings' changes raise the chance that the page changed,
		// and the sitemap's word is evidence on that chance: a lastmod
		// the source's trust believes, unmoved, says the page did not
		// change, whatever its siblings did. The index is that of the
		// page whose chance, without them, is the same.
		r = -math.Log1p(-q.Sitemap.posteriorChance(-math.Expm1(-chanceRate(-math.Expm1(-r), q.CoChange))))
	}

	return weightOf(q.Weight) * gRuns(r, l*p.cadence) / l
}

// Worth reports whether a page that is not due yet is worth ranking with
// the due ones at the run's start: its index reaches the share of the
// run's price at which Next makes a page fall due (Candidates·μ). A
// crawler asks it of the siblings its co-change model exposed.
func (p IndexPlan) Worth(q Page) bool {
	return p.Priority(q) >= p.x.Candidates*p.mu
}

// chanceRate is λτ of a page whose chance of a change is 1 − (1 − c)(1 −
// co): c its own (or its sitemap's), co its co-change chance.
func chanceRate(c, co float64) float64 {
	co = min(max(co, 0), 1)
	return -math.Log1p(-c) - math.Log1p(-co)
}

// Next implements Scheduler: it folds obs into the page's statistics and
// returns the time until the page's index reaches Candidates·μ, within
// [Min, Floor] less the lead in which a page may be fetched ahead of the
// floor (floorLead); that longest interval for a page whose index never
// gets there (it changes faster than the budget can follow).
func (p IndexPlan) Next(q Page, obs Observation) time.Duration {
	return p.next(Observe(q, obs))
}

// Advance implements Advancer: Observe, then Next's interval for the
// updated page, with its rate estimated once.
func (p IndexPlan) Advance(q Page, obs Observation) Page {
	q = Observe(q, obs)
	q.Interval = p.next(q)
	return q
}

func (p IndexPlan) next(q Page) time.Duration {
	x := p.x
	lam := float64(DefaultLimits.Clamp(q.ChangeRate))
	z := x.Candidates * p.mu * lam / weightOf(q.Weight)
	if z >= 1 {
		return p.latest()
	}
	r := gRunsInv(z, lam*p.cadence)
	if q.Sitemap.Listed {
		// Until the lastmod moves, the chance of a change grows as the
		// unmoved posterior: the page falls due when that reaches the
		// chance of r (never, for a lastmod that has always moved with a
		// change).
		c := q.Sitemap.Trust.unmovedPrior(-math.Expm1(-r))
		if c >= 1 {
			return p.latest()
		}
		r = -math.Log1p(-c)
	}
	return clampInterval(toDuration(r/lam*float64(Day)), x.Min, p.latest())
}

// latest is the longest interval next returns: Floor, less the lead in
// which a page may be fetched ahead of it.
func (p IndexPlan) latest() time.Duration {
	return max(p.x.Floor-p.lead, p.x.Min)
}

// Cadence returns a source's cadence from the starts of its recent runs,
// in any order: the median gap between consecutive starts; zero with
// fewer than two starts.
func Cadence(starts []time.Time) time.Duration {
	if len(starts) < 2 {
		return 0
	}
	s := slices.Clone(starts)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	gaps := make([]time.Duration, 0, len(s)-1)
	for i := 1; i < len(s); i++ {
		if d := s[i].Sub(s[i-1]); d > 0 {
			gaps = append(gaps, d)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// Name returns "index".
func (Index) Name() string { return "index" }

// Name returns "index".
func (IndexPlan) Name() string { return "index" }

// MaxInterval implements Bounded: Floor.
func (x Index) MaxInterval() time.Duration { return x.withDefaults().Floor }

// MaxInterval implements Bounded: the policy's Floor.
func (p IndexPlan) MaxInterval() time.Duration { return p.x.withDefaults().Floor }
