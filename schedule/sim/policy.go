package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// Known is a page as the simulated crawler knows it. It is a handle into
// the running simulation, valid during the call it is passed to.
type Known struct{ p *state }

// Page returns the crawler's statistics of the page (read-only).
func (k Known) Page() *schedule.Page { return &k.p.sched }

// Due returns when the page is next due.
func (k Known) Due() time.Time { return Epoch.Add(k.p.due) }

// TrueRate returns the page's real content change rate: for oracles only.
func (k Known) TrueRate() schedule.Rate { return k.p.t.rate }

// Policy is a scheduling strategy under test. The simulator calls Plan at
// the start of every crawler run, Priority when more pages are due than the
// run may fetch, and Advance after every fetch. A Policy value serves one
// simulation at a time.
type Policy interface {
	// Name labels the policy in reports.
	Name() string
	// Plan prepares a run at now. budget is the fetch budget per day (0:
	// unconstrained); pages are the live pages the crawler knows.
	Plan(now time.Time, budget schedule.Rate, pages []Known)
	// Priority ranks a due page: higher is fetched first.
	Priority(k Known, now time.Time) float64
	// Advance returns the page after obs, as schedule.Advance does: the
	// statistics updated and Interval set to the time until the page is
	// due again (k.Page() is the state before obs).
	Advance(k Known, obs schedule.Observation) schedule.Page
}

// Maker returns a fresh Policy.
type Maker func() Policy

// overdue ranks by how long a page has been due: the oldest first.
func overdue(k Known, now time.Time) float64 { return float64(now.Sub(k.Due())) }

// scheduled adapts a fixed schedule.Scheduler that ranks by age.
type scheduled struct {
	name string
	s    schedule.Scheduler
}

func (s scheduled) Name() string                            { return s.name }
func (s scheduled) Plan(time.Time, schedule.Rate, []Known)  {}
func (s scheduled) Priority(k Known, now time.Time) float64 { return overdue(k, now) }
func (s scheduled) Advance(k Known, o schedule.Observation) schedule.Page {
	return schedule.Advance(s.s, *k.Page(), o)
}

// Halving is the seeds' baseline, schedule.DefaultHalving; due pages are
// taken oldest first.
func Halving() Policy { return scheduled{"Halving", schedule.DefaultHalving} }

// Nutch is schedule.DefaultNutch; due pages are taken oldest first.
func Nutch() Policy { return scheduled{"Nutch", schedule.DefaultNutch} }

// uniform revisits every known page at budget-derived intervals.
type uniform struct{ u schedule.Uniform }

// Uniform revisits every page at the interval that spends the budget
// (schedule.UniformFor), re-derived each run from the number of live pages
// known; due pages are taken oldest first.
func Uniform() Policy { return &uniform{} }

func (u *uniform) Name() string { return "Uniform" }
func (u *uniform) Plan(_ time.Time, budget schedule.Rate, pages []Known) {
	u.u = schedule.UniformFor(budget, len(pages))
}
func (u *uniform) Priority(k Known, now time.Time) float64 { return overdue(k, now) }
func (u *uniform) Advance(k Known, o schedule.Observation) schedule.Page {
	return schedule.Advance(u.u, *k.Page(), o)
}

// optimal plans with estimated (or, as oracle, true) rates.
type optimal struct {
	o      schedule.Optimal
	oracle bool
	inputs []schedule.PlanInput
}

// Optimal is schedule.Optimal with estimated rates: re-planned at every
// run from the pages' ChangeRate; due pages are taken in order of
// schedule.Gain.
func Optimal() Policy { return &optimal{} }

// Oracle is schedule.Optimal given every page's true change rate from its
// first fetch: no estimation, no exploration. It bounds what estimation
// can reach.
func Oracle() Policy { return &optimal{oracle: true} }

func (o *optimal) Name() string {
	if o.oracle {
		return "Optimal (true rates)"
	}
	return "Optimal (estimated)"
}

func (o *optimal) Plan(_ time.Time, budget schedule.Rate, pages []Known) {
	o.o.Budget = budget
	o.inputs = o.inputs[:0]
	// As the engine does: no page can be fetched more often than the
	// crawler runs, so the shortest interval seen between two fetches of a
	// page bounds every interval of the plan.
	var cadence time.Duration
	for _, k := range pages {
		for _, c := range k.Page().Recent {
			if c.Elapsed > 0 && (cadence == 0 || c.Elapsed < cadence) {
				cadence = c.Elapsed
			}
		}
	}
	if cadence > schedule.DefaultMinInterval {
		o.o.Min = min(cadence*9/10, schedule.DefaultMaxInterval/2)
	}
	for _, k := range pages {
		if o.oracle {
			o.inputs = append(o.inputs, schedule.PlanInput{ChangeRate: k.TrueRate(), Weight: k.Page().Weight})
		} else {
			o.inputs = append(o.inputs, o.o.Input(*k.Page()))
		}
	}
	o.o.Multiplier = o.o.Plan(o.inputs).Multiplier
}

func (o *optimal) Priority(k Known, now time.Time) float64 {
	p := *k.Page()
	if o.oracle {
		p.ChangeRate = schedule.DefaultLimits.Clamp(k.TrueRate())
	}
	return schedule.Gain(p, now)
}

func (o *optimal) Advance(k Known, obs schedule.Observation) schedule.Page {
	if !o.oracle {
		return schedule.Advance(o.o, *k.Page(), obs)
	}
	p := schedule.Observe(*k.Page(), obs)
	p.Interval = o.o.Revisit(k.TrueRate(), p.Weight).Interval()
	return p
}

// Policies returns the makers of the policies compared by Compare, the
// reference (Halving) first.
func Policies() []Maker {
	return []Maker{Halving, Nutch, Uniform, Optimal, Oracle, Default}
}

// index runs a schedule.Planner as the engine does: PlanRun at the start
// of every run with every known page and the cadence measured from the
// run starts, the RunPlan's Limit and Priority for the due pages, its
// Next after each fetch.
type index struct {
	name   string
	trust  Trust
	p      schedule.Planner
	plan   schedule.RunPlan
	starts []time.Time // the latest run starts, oldest first
	inputs []schedule.PlanInput
	// cache holds each page's PlanInput by page id, valid while the page's
	// LastFetched is the one it was made at (a page's statistics change
	// only when it is fetched): planning a run then estimates only the
	// pages fetched since the previous run.
	cache  []cachedInput
	own    bool // the policy sets its own budget: ignore the simulator's
	oracle bool // rank and plan with the pages' true change rates
	free   bool // not capped by the simulator's budget (Uncapped)
	// co, when set, is the co-change model the policy learns from every
	// fetch (schedule.CoChange), as the engine's default does; members
	// lists the known pages of each cluster and hot the clusters whose
	// pages may have a co-change chance.
	co      *schedule.CoChange
	members map[string][]Known
	hot     map[string]struct{}
	now     time.Time // the current run's start
	// rankMoved ranks the pages a moved lastmod made due with the rest
	// (the default before Verdict): none is forced.
	rankMoved bool
	// sampled counts, per sitemap source, the moved rows this run
	// fetched for its lastmod sample.
	sampled map[int]int
	// rebuild learns the model afresh at every run from the pages'
	// histories (schedule.CoChangeBuilder), as the engine does.
	rebuild bool
	// releases, for the release oracle, gives the chance that the
	// releases of the page's section since a time changed it.
	releases func(k Known, since, now time.Time) float64
}

// coWaves and coFirstWave are the engine's waves: a run with co-change
// spreads its limit over coWaves waves, each but the last spending
// coFirstWave of what is left, each ranked again with what the earlier
// ones found.
const (
	coWaves     = 4
	coFirstWave = 0.5
)

// Forced implements forcer: with learned trust, a page a moved lastmod
// made due is fetched outside the limit when its source's verdict
// (schedule.LastModTrust.Verdict) is Force, or while its Sample is not
// full, as the engine fetches it.
func (x *index) Forced(k Known) bool {
	if x.trust != TrustLearned || x.rankMoved || !k.p.hasListed || k.p.t.sm == smNone {
		return false
	}
	t := k.p.trust.Decayed(schedule.DefaultTrustMemory)
	switch t.Verdict(schedule.DefaultLastModSample) {
	case schedule.Force:
		return true
	case schedule.Sample:
		src := k.Source()
		if x.sampled == nil {
			x.sampled = map[int]int{}
		}
		if float64(x.sampled[src])+t.MovedChanged+t.MovedSame < schedule.DefaultLastModSample {
			x.sampled[src]++
			return true
		}
	}
	return false
}

// FirstWave implements extender.
func (x *index) FirstWave() float64 { return coFirstWave }

// Waves implements extender: one wave for a policy without co-change
// or a learned trust.
func (x *index) Waves() int {
	if x.co == nil && x.releases == nil && (x.trust != TrustLearned || x.rankMoved) {
		return 1
	}
	return coWaves
}

// Extra implements extender: the known pages of clusters with changes
// found whose co-change chance is positive.
func (x *index) Extra(now time.Time) []Known {
	if x.co == nil {
		return nil
	}
	var out []Known
	for _, key := range x.co.Touched() {
		x.hot[key] = struct{}{}
	}
	if x.releases != nil {
		for key := range x.members {
			x.hot[key] = struct{}{}
		}
	}
	for key := range x.hot {
		any := false
		for _, k := range x.members[key] {
			if p := x.page(k); p.CoChange > 0 {
				any = true
				if w, ok := x.plan.(interface{ Worth(schedule.Page) bool }); !ok || w.Worth(p) {
					out = append(out, k)
				}
			}
		}
		if !any {
			delete(x.hot, key)
		}
	}
	return out
}

// DefaultRebuilt is Default learning its co-change model afresh at every
// run from the pages' stored histories, as the engine does (the simulator's
// Default keeps one model over the whole simulation, which is faster).
func DefaultRebuilt() Policy {
	return &index{name: "Default (rebuilt)", trust: TrustLearned, p: schedule.Index{}, own: true, co: schedule.NewCoChange(nil), rebuild: true}
}

// ReleaseOracle is Default told every release as it happens: a page's
// co-change chance is the chance that the releases of its section since
// its last fetch changed it (the releases' true shares), not what the
// model learned. It bounds what learning co-change can reach.
func ReleaseOracle() Policy {
	x := &index{name: "Default (release oracle)", trust: TrustLearned, p: schedule.Index{}, own: true, co: schedule.NewCoChange(nil)}
	x.releases = func(k Known, since, now time.Time) float64 {
		w := k.p.w
		evs := w.bySection[k.p.t.section]
		from, to := since.Sub(Epoch), now.Sub(Epoch)
		i, _ := slices.BinarySearchFunc(evs, from+1, func(e releaseEvent, t time.Duration) int { return cmp.Compare(e.at, t) })
		unchanged := 1.0
		for ; i < len(evs) && evs[i].at <= to; i++ {
			unchanged *= 1 - evs[i].share
		}
		return 1 - unchanged
	}
	return x
}

// Uncapped reports whether the simulator runs the policy without its
// budget: the policy's own budget alone decides what it spends.
func (x *index) Uncapped() bool { return x.free }

// DefaultUncapped is Default not capped at the simulator's budget: what
// the engine's default spends on its own estimate of the baseline's spend.
func DefaultUncapped() Policy {
	return &index{name: "Default (uncapped)", trust: TrustLearned, p: schedule.Index{}, own: true, free: true, co: schedule.NewCoChange(nil)}
}

// Default is the engine's default policy, schedule.Index with no
// configured budget, learned sitemap trust (TrustLearned) and co-change
// (schedule.CoChange): each run spends what Halving would at the measured
// cadence, on the due pages of highest index and the siblings of pages
// found changed, in waves. The simulator's budget (Halving's
// measured spend in Compare) still caps it.
func Default() Policy { return DefaultWith("Default", TrustLearned) }

// DefaultWith is the engine's default policy with the sitemap trust t.
func DefaultWith(name string, t Trust) Policy {
	return &index{name: name, trust: t, p: schedule.Index{}, own: true, co: schedule.NewCoChange(nil)}
}

// DefaultPrevious is the default before co-change and forced lastmods:
// every page ranked on its own, and the pages a moved lastmod made due
// ranked with them by the chance their source's trust gives, in one wave.
func DefaultPrevious() Policy {
	return &index{name: "Default (previous)", trust: TrustLearned, p: schedule.Index{}, own: true, rankMoved: true}
}

// Trust is how a simulated crawler uses its sitemaps' lastmods, as the
// engine's Config.SitemapTrust.
type Trust int

const (
	// TrustNone ignores sitemaps (the policies that do not plan).
	TrustNone Trust = iota
	// TrustHint: a moved lastmod makes the page due, fetched first.
	TrustHint
	// TrustAuthoritative: a moved lastmod makes the page due, fetched
	// first; a page with a lastmod is due only then, one without is due
	// at every run.
	TrustAuthoritative
	// TrustLearned: a moved lastmod makes the page due, and it is ranked
	// by the chance of a change given its source's measured trust
	// (schedule.SitemapHint), as is every page with a lastmod.
	TrustLearned
)

// trustOf is how p uses sitemaps: a Policy with a SitemapTrust() Trust
// method reads them (the simulator lists their lastmods at every run and
// a moved one makes a page due); others do not.
func trustOf(p Policy) Trust {
	if x, ok := p.(interface{ SitemapTrust() Trust }); ok {
		return x.SitemapTrust()
	}
	return TrustNone
}

// SitemapTrust is how the policy uses sitemap lastmods.
func (x *index) SitemapTrust() Trust { return x.trust }

// Planned runs any schedule.Planner as the engine runs it; with own false
// the simulator's budget is given to it as its Budget when it is a
// schedule.Index.
func Planned(name string, p schedule.Planner) Policy { return &index{name: name, p: p, own: true} }

func (x *index) Name() string { return x.name }

// IndexAtBudget is schedule.Index given the simulator's budget (Halving's
// measured spend in Compare) as its Budget, with learned sitemap trust:
// the default's ranking without its estimate of the baseline's spend.
func IndexAtBudget() Policy {
	return &index{name: "Index (at budget)", trust: TrustLearned, p: schedule.Index{}}
}

// IndexOracle is IndexAtBudget given every page's true change rate from
// its first fetch: it bounds what the index can reach with estimated rates.
func IndexOracle() Policy {
	return &index{name: "Index (true rates)", trust: TrustLearned, p: schedule.Index{}, oracle: true}
}

func (x *index) Plan(now time.Time, budget schedule.Rate, pages []Known) {
	if !x.own {
		if ix, ok := x.p.(schedule.Index); ok {
			ix.Budget = budget
			x.p = ix
		}
	}
	const keep = 16
	x.now = now
	clear(x.sampled)
	x.starts = append(x.starts, now)
	if len(x.starts) > keep {
		x.starts = append(x.starts[:0], x.starts[len(x.starts)-keep:]...)
	}
	run := schedule.Run{Start: now, Cadence: schedule.Cadence(x.starts)}
	if n := len(x.starts); n > 1 {
		run.Previous = x.starts[n-2]
	}
	x.inputs = x.inputs[:0]
	for _, k := range pages {
		x.inputs = append(x.inputs, x.input(k))
	}
	x.plan = x.p.PlanRun(run, x.inputs)
	if x.co != nil {
		if x.hot == nil {
			x.hot = map[string]struct{}{}
		}
		clear(x.members)
		if x.members == nil {
			x.members = map[string][]Known{}
		}
		for _, k := range pages {
			key := schedule.ClusterOf(k.Path())
			x.members[key] = append(x.members[key], k)
		}
		if x.rebuild {
			// As the engine does: the model learned afresh from the
			// pages' stored histories, in URL order, at every run.
			sorted := slices.Clone(pages)
			slices.SortFunc(sorted, func(a, b Known) int { return cmp.Compare(a.Path(), b.Path()) })
			x.hot = map[string]struct{}{}
			b := schedule.NewCoChangeBuilder(now, nil, func(url string, _ schedule.Page, _ float64) {
				x.hot[schedule.ClusterOf(url)] = struct{}{}
			})
			for _, k := range sorted {
				b.Add(k.Path(), *k.Page())
			}
			x.co = b.Model()
		}
	}
}

// cachedInput is a page's PlanInput and whether it is set.
type cachedInput struct {
	in schedule.PlanInput
	ok bool
}

// input is the PlanInput of k, from the cache when the page was not
// fetched since it was made.
func (x *index) input(k Known) schedule.PlanInput {
	id := k.p.id
	if id >= len(x.cache) {
		x.cache = append(x.cache, make([]cachedInput, id+1-len(x.cache))...)
	}
	c := &x.cache[id]
	if c.ok && c.in.LastFetched.Equal(k.Page().LastFetched) {
		return c.in
	}
	in := schedule.Optimal{}.Input(x.page(k))
	if x.oracle && !k.Page().LastFetched.IsZero() {
		in.ChangeRate, in.Observed = k.TrueRate(), k.TrueRate()
	}
	*c = cachedInput{in: in, ok: true}
	return in
}

// Limit is the run's fetch limit from the plan (0: none).
func (x *index) Limit() int { return x.plan.Limit() }

func (x *index) Priority(k Known, _ time.Time) float64 { return x.plan.Priority(x.page(k)) }

func (x *index) Advance(k Known, obs schedule.Observation) schedule.Page {
	var q schedule.Page
	if x.oracle {
		// The statistics as observed, the rate the truth; Next on the
		// observed page adds no second check (same time).
		q = schedule.Observe(x.page(k), obs)
		q.ChangeRate = schedule.DefaultLimits.Clamp(k.TrueRate())
		obs.First = false
		q.Interval = x.plan.Next(q, obs)
	} else {
		// As the engine's chain (schedule.Learn) does: the check keeps
		// the chance the model attributes to the page's siblings.
		pg := x.page(k)
		if x.co != nil && x.releases == nil {
			pg.CoChange = x.co.Attributable(k.Path(), pg, x.now)
		}
		q = schedule.Advance(x.plan, pg, obs)
	}
	if x.co != nil {
		x.co.Check(k.Path(), *k.Page(), obs)
	}
	if x.trust == TrustAuthoritative {
		if k.Sitemap().Listed {
			q.Interval = authoritativeWait // only a moved lastmod brings it back
		} else {
			q.Interval = 1 // no lastmod to trust: due at every run
		}
	}
	return q
}

// authoritativeWait is the engine's interval of a page whose lastmod is
// trusted: in effect never.
const authoritativeWait = 10 * 365 * 24 * time.Hour

// page is the page with its sitemap hint when the policy learns trust.
func (x *index) page(k Known) schedule.Page {
	p := *k.Page()
	if x.trust == TrustLearned {
		p.Sitemap = k.Sitemap()
	}
	if x.oracle && !p.LastFetched.IsZero() {
		p.ChangeRate = schedule.DefaultLimits.Clamp(k.TrueRate())
	}
	if x.co != nil {
		p.CoChange = x.co.Chance(k.Path(), p, x.now)
		p.CoDiscount = x.co.Discount(k.Path(), p, x.now)
	}
	if x.releases != nil && !p.LastFetched.IsZero() {
		p.CoChange, p.CoDiscount = x.releases(k, p.LastFetched, x.now), 0
	}
	return p
}

// keys names every policy of Policies by a short, stable key.
var keys = []struct {
	key  string
	name string
	make Maker
}{
	{"halving", "Halving", Halving},
	{"nutch", "Nutch", Nutch},
	{"uniform", "Uniform", Uniform},
	{"optimal", "Optimal (estimated)", Optimal},
	{"oracle", "Optimal (true rates)", Oracle},
	{"default", "Default", Default},
	{"default-hint", "Default (hint)", func() Policy { return DefaultWith("Default (hint)", TrustHint) }},
	{"default-authoritative", "Default (authoritative)", func() Policy { return DefaultWith("Default (authoritative)", TrustAuthoritative) }},
	{"default-ignore", "Default (ignore)", func() Policy { return DefaultWith("Default (ignore)", TrustNone) }},
	{"default-uncapped", "Default (uncapped)", DefaultUncapped},
	{"index-budget", "Index (at budget)", IndexAtBudget},
	{"index-oracle", "Index (true rates)", IndexOracle},
	{"index-bayes", "Index (Bayes, true mix)", IndexBayes},
	{"default-previous", "Default (previous)", DefaultPrevious},
	{"release-oracle", "Default (release oracle)", ReleaseOracle},
	{"default-rebuilt", "Default (rebuilt)", DefaultRebuilt},
}

// Key returns the short key of a policy name of Policies (halving,
// nutch, uniform, optimal, oracle, default); other names are lowercased
// with spaces as dashes.
func Key(name string) string {
	for _, k := range keys {
		if k.name == name {
			return k.key
		}
	}
	return strings.ReplaceAll(strings.ToLower(name), " ", "-")
}

// PolicyKeys lists the keys of Policies, in order.
func PolicyKeys() []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.key
	}
	return out
}

// PolicyByKey returns the maker of the policy with key k.
func PolicyByKey(k string) (Maker, error) {
	for _, p := range keys {
		if p.key == k {
			return p.make, nil
		}
	}
	return nil, fmt.Errorf("sim: unknown policy %q: use one of %s", k, strings.Join(PolicyKeys(), ", "))
}
