package sim

import (
	"math"
	"slices"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// Result is what one policy achieved on one world, or the mean over
// several worlds, over the measured days (after the warm-up). Counts are
// float64 so that means stay exact.
type Result struct {
	// Policy is the policy's name.
	Policy string
	// Budget is the fetch budget per day the policy had (0: none).
	Budget schedule.Rate
	// Freshness is the time-averaged fraction of live pages whose stored
	// copy is current (a page not yet fetched has no current copy), each
	// page weighted by its class's Weight.
	Freshness float64
	// MeanAge and P95Age describe age over live pages and time: the time
	// since the stored copy became stale, 0 while it is fresh.
	MeanAge, P95Age time.Duration
	// DetectionLatency is the mean time from a content change to the fetch
	// that detected it.
	DetectionLatency time.Duration
	// Fetches counts every request; Wasted those of live, already fetched
	// pages that found no real change.
	Fetches, Wasted float64
	// Alerts counts fetches the crawler reported as changed (with the
	// content fingerprint: the real changes detected).
	Alerts float64
	// Deletions counts known pages that died; DeletionsNoticed those a
	// fetch found gone, after DeletionLatency on average.
	Deletions, DeletionsNoticed float64
	DeletionLatency             time.Duration
	// VolatilePages counts live, fetched pages with volatile markup at the
	// end; VolatileAlerts the alerts they raised; VolatileInterval is the
	// mean interval they were last given and VolatileCollapsed counts those
	// whose interval had collapsed to CollapseInterval or less.
	VolatilePages, VolatileAlerts float64
	VolatileInterval              time.Duration
	VolatileCollapsed             float64
	// Classes breaks freshness and fetches down by the mix's classes, in
	// the mix's order.
	Classes []ClassResult
	// Sitemaps breaks freshness and fetches down by the pages' sitemap
	// source (no lastmod, honest lastmod, generated lastmod), for a mix
	// with sitemap lastmods; nil otherwise.
	Sitemaps []ClassResult
	// ReleaseStale is the release staleness, for a mix with releases: the
	// page-hours (in the measured window) that pages stayed stale after a
	// release changed them, until the fetch that saw it; each stale period
	// that a release began counts once.
	ReleaseStale float64
}

// ClassResult is a Result restricted to one class of the mix.
type ClassResult struct {
	// Name is the class name.
	Name string
	// Share is the class's share of live page-time.
	Share float64
	// Freshness is the class's time-averaged freshness.
	Freshness float64
	// Fetches counts the requests spent on the class.
	Fetches float64
	// Rate and Estimated are the mean true change rate of the class's
	// live pages at the end and the mean of their estimates (changes per
	// day).
	Rate, Estimated float64
	// Interval is the mean interval the class's live pages were last given.
	Interval time.Duration
}

// CollapseInterval is the interval at or below which a page with volatile
// markup counts as collapsed: twice the one-hour floor of Halving and
// Optimal.
const CollapseInterval = 2 * time.Hour

// state is one page during one simulation.
type state struct {
	t       *truth
	id      int
	sched   schedule.Page
	due     time.Duration
	heap    int // index in the due heap, -1 when not in it
	known   int // index in the known list, -1 when not in it
	next    int // first change not yet seen by the crawler
	fetched bool
	seen    bool // discovered by the crawler

	// The sitemap's listing, for a crawler that reads it.
	listed    time.Duration // the lastmod listed at the latest run
	hasListed bool
	smNext    int  // first change not yet in the honest lastmod
	bumped    bool // a moved lastmod made the page due
	forced    bool // this wave fetches it outside the limit
	trust     *schedule.LastModTrust
	path      string // the page's URL path (World.path)
	w         *World
}

// staleRelease reports whether the page's current stale period (from
// staleSince) began with a release of its section.
func (s *state) staleRelease() bool {
	return s.fetched && s.next < len(s.t.release) && s.t.release[s.next]
}

// staleSince is when the stored copy stopped being current: the birth for
// a page not fetched yet, else the first change after the last fetch.
func (s *state) staleSince() time.Duration {
	if !s.fetched {
		return s.t.birth
	}
	if s.next < len(s.t.changes) {
		return s.t.changes[s.next]
	}
	return never
}

// period is a stale period as seen in the measured window: the age runs
// from A0 to L hours while it is measured.
type period struct{ a0, l float64 }

type runner struct {
	w      *World
	pol    Policy
	budget schedule.Rate
	pages  []state
	heap   []*state
	known  []Known
	res    Result
	// accumulators over the measured window
	live, staleSum, ageSum float64 // hours, weighted hours, hours²
	wlive                  float64 // weighted hours
	periods                []period
	latSum, latN           float64
	delLatSum              float64
	classes                []classAcc
	sitemaps               [smModes]classAcc
	trust                  [smModes]schedule.LastModTrust
	use                    Trust
}

type classAcc struct {
	live, stale, fetches, rate, est, iv, n float64
}

// Run simulates the crawler with policy p on world w under a fetch budget
// per day (0: unconstrained). The budget is a token bucket: every run adds
// budget·Cadence/Day fetches. During the warm-up unused fetches carry over
// up to one day's budget or one run's, whichever is more, and the bucket
// starts full; when measurement starts it is emptied, and from then on
// unused fetches carry over without limit, so that the measured runs
// together spend at most budget·Cadence/Day each on average (see BudgetOf)
// and a policy whose runs spend unevenly is not clipped run by run. A
// policy with a Limit() int method caps each run further. When more pages
// are due than the bucket allows, the run takes them in p's priority order
// and the rest stay due. Only the days after the warm-up are measured.
func Run(w *World, p Policy, budget schedule.Rate) Result {
	if u, ok := p.(interface{ Uncapped() bool }); ok && u.Uncapped() {
		budget = 0 // the policy's own budget alone: its spend as it is
	}
	r := &runner{w: w, pol: p, budget: budget, pages: make([]state, len(w.pages)), use: trustOf(p)}
	r.res = Result{Policy: p.Name(), Budget: budget}
	if m, ok := p.(mixAware); ok {
		m.knowMix(w.cfg.Mix)
	}
	r.classes = make([]classAcc, len(w.cfg.Mix.Classes))
	for i := range r.pages {
		r.pages[i] = state{t: &w.pages[i], id: i, heap: -1, known: -1}
		r.pages[i].trust = &r.trust[w.pages[i].sm]
		r.pages[i].path = w.path(i)
		r.pages[i].w = w
	}
	cfg := w.cfg
	perRun := float64(budget) * float64(cfg.Cadence) / float64(schedule.Day)
	// During the warm-up the bucket holds one day's budget or one run's,
	// whichever is more. It is emptied when measurement starts and then
	// holds whatever is left, so that the measured runs spend at most
	// budget·Cadence/Day each on average (see BudgetOf).
	bucket := max(float64(budget), perRun)
	tokens := bucket
	measuring := false
	born := 0
	var batch []*state
	var prio []float64
	var order []int
	for run := 0; ; run++ {
		now := time.Duration(run) * cfg.Cadence
		if now > w.horizon {
			break
		}
		at := Epoch.Add(now)
		for born < len(r.pages) && r.pages[born].t.birth <= now {
			s := &r.pages[born]
			born++
			if s.t.death <= now {
				continue // lived and died between two runs: never known
			}
			s.due = s.t.birth
			s.seen = true
			r.push(s)
			s.known = len(r.known)
			r.known = append(r.known, Known{s})
		}
		if !measuring && r.measured(now) {
			measuring, tokens, bucket = true, 0, math.Inf(1)
		}
		if budget > 0 {
			tokens = min(tokens+perRun, bucket)
		}
		if r.use != TrustNone && (cfg.Mix.SitemapHonest > 0 || cfg.Mix.SitemapGenerated > 0) {
			r.discover(now)
		}
		if run%cfg.PlanEvery == 0 {
			p.Plan(at, budget, r.known)
		}
		tokensLeft := math.MaxInt
		if budget > 0 {
			tokensLeft = int(tokens)
		}
		batch = batch[:0]
		fixed := r.use == TrustHint || r.use == TrustAuthoritative
		for len(r.heap) > 0 && r.heap[0].due <= now {
			batch = append(batch, r.pop())
		}
		limitLeft := math.MaxInt
		if l, ok := p.(limiter); ok && l.Limit() >= 0 {
			limitLeft = l.Limit()
		}
		ex, extends := p.(extender)
		fo, forces := p.(forcer)
		// Waves: each spends a share of what is left of the run's limit
		// on the pages then ranked highest, so that the changes a wave
		// finds make their siblings worth a look, and its moved lastmods
		// tell whether the rest are worth fetching, within the same run.
		waves := 1
		if extends && limitLeft < math.MaxInt {
			waves = max(ex.Waves(), 1)
		}
		var rest []*state
		done := 0
		for wave := range waves {
			if extends {
				batch = r.extra(batch, ex, at)
			}
			// Pages never fetched, and the pages a moved lastmod made due
			// that the trust forces, are fetched outside the limit and
			// first, as in the engine.
			forcedN := 0
			for _, s := range batch {
				s.forced = !s.fetched || (fixed && s.bumped) || (forces && s.bumped && fo.Forced(Known{s}))
				if s.forced {
					forcedN++
				}
			}
			allowed := tokensLeft
			if limitLeft < math.MaxInt {
				allowed = min(allowed, limitLeft+forcedN)
			}
			take := allowed
			if wave < waves-1 {
				take = min(allowed, forcedN+int(math.Ceil(ex.FirstWave()*float64(max(limitLeft, 0)))))
			}
			batch, rest, prio, order = r.choose(batch, take, at, prio, order)
			ranked := 0
			for _, s := range batch {
				if !s.forced {
					ranked++
				}
				r.fetch(s, now)
			}
			done += len(batch)
			if tokensLeft < math.MaxInt {
				tokensLeft -= len(batch)
			}
			if limitLeft < math.MaxInt {
				limitLeft -= ranked
			}
			batch, rest = rest, nil
			if tokensLeft <= 0 {
				break
			}
		}
		rest = batch
		for _, s := range rest {
			r.push(s) // still due
		}
		tokens -= float64(done)
	}
	r.finish()
	return r.res
}

// extender is a Policy that ranks pages not yet due with the due ones: at
// the start of a run, and again before each of its later waves of
// fetches, Extra names the known pages worth ranking (the siblings of
// pages found changed). A run has Waves waves; each but the last spends
// FirstWave of what is left of the run's limit, and the last the rest,
// each on what is then worth most.
type extender interface {
	Extra(now time.Time) []Known
	FirstWave() float64
	Waves() int
}

// forcer is a Policy that fetches some of the pages a moved lastmod made
// due outside the run's limit (a learned trust's Force, and its Sample):
// Forced is asked once per wave of every such page.
type forcer interface{ Forced(k Known) bool }

// extra adds to batch the pages ex names that are waiting in the heap,
// not fetched at now.
func (r *runner) extra(batch []*state, ex extender, now time.Time) []*state {
	for _, k := range ex.Extra(now) {
		s := k.p
		if s.heap < 0 || !s.fetched || s.sched.LastFetched.Equal(now) {
			continue // in the batch already, never fetched or just fetched
		}
		r.remove(s)
		batch = append(batch, s)
	}
	return batch
}

// choose returns the allowed pages of batch ranked highest by the policy
// and the rest (forced pages first); all of batch when it holds no more
// than allowed.
func (r *runner) choose(batch []*state, allowed int, at time.Time, prio []float64, order []int) (kept, rest []*state, _ []float64, _ []int) {
	allowed = max(allowed, 0)
	if len(batch) <= allowed {
		return batch, nil, prio, order
	}
	p := r.pol
	prio, order = prio[:0], order[:0]
	for i, s := range batch {
		prio = append(prio, p.Priority(Known{s}, at))
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int {
		// Forced pages come first (among them, the policy's order).
		if fa, fb := batch[a].forced, batch[b].forced; fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		switch {
		case prio[a] > prio[b]:
			return -1
		case prio[a] < prio[b]:
			return 1
		}
		return batch[a].id - batch[b].id
	})
	kept = make([]*state, 0, allowed)
	rest = make([]*state, 0, len(batch)-allowed)
	for i, j := range order {
		if i < allowed {
			kept = append(kept, batch[j])
		} else {
			rest = append(rest, batch[j])
		}
	}
	return kept, rest, prio, order
}

// discover lists the live known pages' sitemap lastmods at now: a listed
// lastmod that differs from the one listed before makes a fetched page
// due now (bumped), as the engine's discovery does.
func (r *runner) discover(now time.Duration) {
	for _, k := range r.known {
		s := k.p
		t := s.t
		if t.sm == smNone || t.death <= now {
			continue // no lastmod, or no longer listed
		}
		var lm time.Duration
		switch t.sm {
		case smHonest:
			for s.smNext < len(t.changes) && t.changes[s.smNext] <= now {
				s.smNext++
			}
			lm = t.birth
			if s.smNext > 0 {
				lm = t.changes[s.smNext-1]
			}
		case smGenerated:
			lm = now
		}
		if s.hasListed && lm != s.listed && s.fetched && !s.bumped {
			s.bumped = true
			if s.due > now && s.heap >= 0 {
				s.due = now
				r.up(s.heap)
			}
		}
		s.listed, s.hasListed = lm, true
	}
}

// Sitemap returns what the page's sitemap says since its last fetch, with
// its source's trust as measured so far; the zero hint when the crawler
// does not read sitemaps or the page's entry has no lastmod.
func (k Known) Sitemap() schedule.SitemapHint {
	s := k.p
	if !s.hasListed || s.t.sm == smNone {
		return schedule.SitemapHint{}
	}
	return schedule.SitemapHint{
		Listed: true,
		Moved:  s.fetched && Epoch.Add(s.listed).After(s.sched.LastFetched),
		Trust:  s.trust.Decayed(schedule.DefaultTrustMemory),
	}
}

// Path returns the page's URL path: its section's directory, then its own
// name (/docs/s012/p000345).
func (k Known) Path() string { return k.p.path }

// Source returns the page's sitemap source: 0 (no lastmod), 1 (honest
// lastmod) or 2 (generated lastmod).
func (k Known) Source() int { return int(k.p.t.sm) }

// limiter is a Policy that caps how many due pages a run fetches, after
// its Plan of that run (negative: no cap); pages never fetched are
// outside the cap, as in the engine.
type limiter interface{ Limit() int }

// measured reports whether an event at d falls in the measured window.
func (r *runner) measured(d time.Duration) bool { return d >= r.w.from }

// fetch simulates one request for s at now.
func (r *runner) fetch(s *state, now time.Duration) {
	t := s.t
	in := r.measured(now)
	if in {
		r.res.Fetches++
		r.classes[t.class].fetches++
		r.sitemaps[t.sm].fetches++
	}
	if t.death <= now {
		if r.measured(t.death) {
			r.res.DeletionsNoticed++
			r.delLatSum += hours(now - t.death)
		}
		r.forget(s)
		return
	}
	if since := s.staleSince(); since <= now {
		r.stale(t, since, now, s.staleRelease())
	}
	at := Epoch.Add(now)
	obs := schedule.Observation{At: at, First: !s.fetched}
	real := false
	for s.next < len(t.changes) && t.changes[s.next] <= now {
		if s.fetched {
			if in {
				r.latSum += hours(now - t.changes[s.next])
				r.latN++
			}
			real = true
		}
		s.next++
	}
	switch t.lm {
	case lmReliable:
		lm := t.birth
		if s.next > 0 {
			lm = t.changes[s.next-1]
		}
		obs.LastModified = Epoch.Add(lm)
	case lmDynamic:
		obs.LastModified = at
	}
	if s.fetched {
		obs.Changed = real || (r.w.cfg.RawHash && t.volatile)
		if in && !real {
			r.res.Wasted++
		}
		if in && obs.Changed {
			r.res.Alerts++
			if t.volatile {
				r.res.VolatileAlerts++
			}
		}
	}
	if s.fetched && s.hasListed && t.sm != smNone {
		// The source's trust: did the listed lastmod move with the
		// content?
		s.trust.Add(Epoch.Add(s.listed).After(s.sched.LastFetched), real)
	}
	s.sched.Weight = t.weight
	s.sched = r.pol.Advance(Known{s}, obs)
	s.bumped = false
	iv := s.sched.Interval
	if iv <= 0 {
		panic("sim: policy " + r.pol.Name() + " returned a non-positive interval")
	}
	s.fetched = true
	s.due = now + min(iv, never-now) // saturate instead of wrapping
	r.push(s)
}

// stale records the stale period [since, end) of page t, clipped to the
// measured window; release says a release began it.
func (r *runner) stale(t *truth, since, end time.Duration, release bool) {
	class := t.class
	start := max(since, r.w.from)
	if end <= start {
		return
	}
	a0, l := hours(start-since), hours(end-since)
	if release {
		r.res.ReleaseStale += l - a0
	}
	r.staleSum += t.importance() * (l - a0)
	r.classes[class].stale += l - a0
	r.sitemaps[t.sm].stale += l - a0
	r.ageSum += (l*l - a0*a0) / 2
	r.periods = append(r.periods, period{a0, l})
}

// forget removes a page found gone from the crawler's view.
func (r *runner) forget(s *state) {
	if i := s.known; i >= 0 {
		last := len(r.known) - 1
		r.known[i] = r.known[last]
		r.known[i].p.known = i
		r.known = r.known[:last]
		s.known = -1
	}
}

// finish closes every open stale period at death or horizon and fills in
// the result.
func (r *runner) finish() {
	from, horizon := r.w.from, r.w.horizon
	for i := range r.pages {
		s := &r.pages[i]
		t := s.t
		end := min(t.death, horizon)
		start := max(t.birth, from)
		if end > start {
			r.live += hours(end - start)
			r.wlive += t.importance() * hours(end-start)
			r.classes[t.class].live += hours(end - start)
			r.sitemaps[t.sm].live += hours(end - start)
		}
		if since := s.staleSince(); since < end {
			r.stale(t, max(since, t.birth), end, s.staleRelease())
		}
		if t.death <= horizon && r.measured(t.death) && s.seen {
			r.res.Deletions++
		}
		if t.death > horizon && s.fetched {
			ca := &r.classes[t.class]
			ca.n++
			ca.rate += float64(t.rate)
			ca.est += float64(s.sched.ChangeRate)
			ca.iv += float64(s.sched.Interval)
			if t.volatile {
				r.res.VolatilePages++
				r.res.VolatileInterval += s.sched.Interval
				if s.sched.Interval <= CollapseInterval {
					r.res.VolatileCollapsed++
				}
			}
		}
	}
	if r.res.VolatilePages > 0 {
		r.res.VolatileInterval = time.Duration(float64(r.res.VolatileInterval) / r.res.VolatilePages)
	}
	for i, ca := range r.classes {
		cr := ClassResult{Name: r.w.cfg.Mix.Classes[i].Name, Fetches: ca.fetches}
		if r.live > 0 {
			cr.Share = ca.live / r.live
		}
		if ca.live > 0 {
			cr.Freshness = 1 - ca.stale/ca.live
		}
		if ca.n > 0 {
			cr.Rate, cr.Estimated = ca.rate/ca.n, ca.est/ca.n
			cr.Interval = time.Duration(ca.iv / ca.n)
		}
		r.res.Classes = append(r.res.Classes, cr)
	}
	if m := r.w.cfg.Mix; m.SitemapHonest > 0 || m.SitemapGenerated > 0 {
		for i, ca := range r.sitemaps {
			cr := ClassResult{Name: smNames[i], Fetches: ca.fetches}
			if r.live > 0 {
				cr.Share = ca.live / r.live
			}
			if ca.live > 0 {
				cr.Freshness = 1 - ca.stale/ca.live
			}
			r.res.Sitemaps = append(r.res.Sitemaps, cr)
		}
	}
	if r.live > 0 {
		r.res.Freshness = 1 - r.staleSum/r.wlive
		r.res.MeanAge = fromHours(r.ageSum / r.live)
		r.res.P95Age = fromHours(quantileAge(r.periods, 0.05*r.live))
	}
	if r.latN > 0 {
		r.res.DetectionLatency = fromHours(r.latSum / r.latN)
	}
	if r.res.DeletionsNoticed > 0 {
		r.res.DeletionLatency = fromHours(r.delLatSum / r.res.DeletionsNoticed)
	}
}

// quantileAge returns the age a at which the page-time spent older than a,
// Σ max(0, L − max(a, A0)) over the stale periods, equals tail (during a
// measured period the age runs uniformly from A0 to L). It is 0 when the
// pages are stale for less than tail in total.
func quantileAge(periods []period, tail float64) float64 {
	older := func(a float64) float64 {
		var s float64
		for _, p := range periods {
			s += max(0, p.l-max(a, p.a0))
		}
		return s
	}
	if older(0) <= tail {
		return 0
	}
	lo, hi := 0.0, 0.0
	for _, p := range periods {
		hi = max(hi, p.l)
	}
	for range 60 {
		mid := (lo + hi) / 2
		if older(mid) > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func hours(d time.Duration) float64 { return d.Hours() }

func fromHours(h float64) time.Duration {
	if math.IsNaN(h) || h < 0 {
		return 0
	}
	return time.Duration(h * float64(time.Hour))
}

// The due heap: a binary min-heap on (due, id).

func less(a, b *state) bool {
	if a.due != b.due {
		return a.due < b.due
	}
	return a.id < b.id
}

func (r *runner) push(s *state) {
	s.heap = len(r.heap)
	r.heap = append(r.heap, s)
	r.up(s.heap)
}

// remove takes s out of the heap.
func (r *runner) remove(s *state) {
	i := s.heap
	last := len(r.heap) - 1
	if i != last {
		r.heap[i] = r.heap[last]
		r.heap[i].heap = i
	}
	r.heap = r.heap[:last]
	s.heap = -1
	if i < last {
		r.down(i)
		r.up(i)
	}
}

func (r *runner) pop() *state {
	h := r.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[0].heap = 0
	r.heap = h[:last]
	if last > 0 {
		r.down(0)
	}
	top.heap = -1
	return top
}

func (r *runner) up(i int) {
	h := r.heap
	for i > 0 {
		parent := (i - 1) / 2
		if !less(h[i], h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		h[i].heap, h[parent].heap = i, parent
		i = parent
	}
}

func (r *runner) down(i int) {
	h := r.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if rr := l + 1; rr < n && less(h[rr], h[l]) {
			m = rr
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].heap, h[m].heap = i, m
		i = m
	}
}
