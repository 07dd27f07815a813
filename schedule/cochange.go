package schedule

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// ClusterOf returns the co-change cluster of a page: the directory of its
// URL or path, up to and including the last slash before any query or
// fragment ("https://h/docs/guide/a?x" is in "https://h/docs/guide/").
// Pages of one documentation section share a directory, and a release
// rewrites many of them at once.
func ClusterOf(url string) string {
	if i := strings.IndexAny(url, "?#"); i >= 0 {
		url = url[:i]
	}
	return url[:strings.LastIndexByte(url, '/')+1]
}

// CoChange learns which pages change together, so that changes found on
// a page's siblings raise the chance that it changed too. Pages are
// grouped in clusters by URL directory (ClusterOf), and every fetch of a
// page that was fetched before is handed to Check. What the siblings of
// a page showed since its last fetch is their excess: the changes found
// by their fetches that came entirely after it, less what those fetches'
// own change rates predict, in units of its noise (√(predicted + 1)). A
// release that rewrote part of a section shows as a large excess; pages
// that change alone show none beyond noise. The model measures, from its
// pages' joint history, how much more often fetches made at each level of
// excess found a change than their own rates predict: the co-change
// chance x of a cluster at that level. Clusters with little evidence take
// their source's value, and a source without evidence has none, so a site
// whose pages change alone is left as it is. At the highest level (an
// excess of 3 or more) the burst is a release, and the share of its
// checks that found a change beyond prediction tells how much of the
// cluster it rewrote: the chance is that share, pulled towards x by a few
// checks' weight.
//
// The model also reads the opposite: a page whose siblings' checks since
// its last fetch found, together, fewer changes than their own rates
// predict (by at least coCleanZ times the noise), on a source whose pages
// change together, is less likely to have changed than its own rate
// says: its section had no release since. How much less is measured, by
// bin of own chance, from the source's fetches: changes found over
// changes predicted in such clean clusters against the same ratio for
// the other unexposed fetches. Discount gives that share.
//
// Chance gives a page's co-change chance now; a Planner's RunPlan reads it
// from Page.CoChange (Index folds it into the chance that the page
// changed). A CoChange is safe for concurrent use.
type CoChange struct {
	cluster  func(url string) string
	mu       sync.Mutex
	clusters map[string]*coCluster
	src      coTable // every cluster's evidence together
	// touched holds the clusters with a detection since the last call of
	// Touched.
	touched map[string]struct{}
	learned bool // Learned
	// held, while holding, keeps the fetches Check is handed for Release.
	holding bool
	held    []coHeld
	// clean and plain count, by bin of own chance, the unexposed fetches
	// made when their siblings' checks were clean and the others.
	clean, plain [coBins]coRatio
}

// coRatio counts fetches, the changes they found and the changes their
// own rates predicted.
type coRatio struct{ n, changed, predicted float64 }

// add counts one fetch of own chance p, keeping at most most fetches.
func (r *coRatio) add(changed bool, p, most float64) {
	r.n++
	r.predicted += p
	if changed {
		r.changed++
	}
	if r.n > most {
		k := most / r.n
		r.n *= k
		r.changed *= k
		r.predicted *= k
	}
}

// ratio is the changes found over those predicted, starting from one
// with coCleanPrior predicted changes.
func (r coRatio) ratio() float64 {
	return (r.changed + coCleanPrior) / (r.predicted + coCleanPrior)
}

// coCleanZ is the excess, in units of its noise, at or below which the
// checks of a page's siblings since its last fetch are clean; coCleanPrior
// is the weight, in predicted changes, of the prior that clean checks mean
// nothing.
const (
	coCleanZ     = -1
	coCleanPrior = 5
)

// coHeld is a fetch Check held.
type coHeld struct {
	url string
	p   Page
	obs Observation
}

// coBuckets is how many levels of excess the model tells apart: below
// 0.5, 0.5 to 1.5, 1.5 to 3, and 3 or more.
const coBuckets = 4

func coBucket(z float64) int {
	switch {
	case z < 0.5:
		return 0
	case z < 1.5:
		return 1
	case z < 3:
		return 2
	}
	return 3
}

// coBins is how many bins of a fetch's own chance of a change (from its
// page's rate) the model keeps apart, so that fetches exposed to an excess
// are compared with unexposed fetches of pages as likely to change.
const coBins = 5

func coBin(p float64) int {
	switch {
	case p < 0.05:
		return 0
	case p < 0.15:
		return 1
	case p < 0.35:
		return 2
	case p < 0.65:
		return 3
	}
	return 4
}

// coBinMid is a bin's typical chance: the prior of its rate of changes.
var coBinMid = [coBins]float64{0.025, 0.1, 0.25, 0.5, 0.8}

// Evidence bounds: a cluster counts at most coClusterMemory fetches per
// level and bin and the source coSourceMemory, so that a site whose
// structure changes is relearned; a cluster keeps its coChecks most recent
// fetches, none made DefaultMaxInterval before the newest.
const (
	coClusterMemory = 200
	coSourceMemory  = 2000
	coChecks        = 4096
	// coScan is how many of a cluster's most recent checks an exposure
	// looks at.
	coScan = 1024
	// coClusterPrior and coSourcePrior are the pseudo-fetches a
	// cluster's rate of changes starts from (its source's) and a
	// source's (its bin's typical chance).
	coClusterPrior = 30
	coSourcePrior  = 10
)

// coTable counts fetches and the changes they found, by level of excess
// and bin of their own chance.
type coTable [coBuckets][coBins]coCount

type coCount struct{ n, changed float64 }

func (t *coTable) add(b, bin int, changed bool, w, most float64) {
	if !(w > 0) {
		return
	}
	c := &t[b][bin]
	c.n += w
	if changed {
		c.changed += w
	}
	if c.n > most {
		k := most / c.n
		c.n *= k
		c.changed *= k
	}
}

type coCluster struct {
	checks []coCheck // in the order they were made
	tab    coTable
	// memo holds the exposures computed since the last check was added,
	// by the time of the page's last fetch (pages fetched in one run
	// share it).
	memo map[int64]coExposure
}

type coExposure struct {
	level int
	share float64
	burst coBurst
	clean bool
}

// coBurst is what the checks of an exposure's window found: changes, the
// changes their own rates predicted, and checks.
type coBurst struct{ found, predicted, checks float64 }

// share is the burst's estimate of the share of the cluster's pages its
// release changed: the changes found beyond those predicted, over the
// checks not predicted to find one (their weight).
func (b coBurst) share() (est, weight float64) {
	weight = max(b.checks-b.predicted, 0)
	if weight > 0 {
		est = min(max((b.found-b.predicted)/weight, 0), 1)
	}
	return est, weight
}

// coCheck is one fetch: when it was made (Unix nanoseconds), whether it
// found a change and the chance its page's rate gave one.
type coCheck struct {
	from, at int64
	changed  bool
	p        float64
}

// NewCoChange returns a model without evidence that groups pages with
// cluster (nil: ClusterOf, the URL's directory); a page cluster puts in
// "" is in no cluster: no evidence and no chance.
func NewCoChange(cluster func(url string) string) *CoChange {
	if cluster == nil {
		cluster = ClusterOf
	}
	return &CoChange{cluster: cluster, clusters: map[string]*coCluster{}, touched: map[string]struct{}{}}
}

// Check records a fetch of the page at url: p is the page before the
// fetch, obs its outcome. A first fetch (or one of a page never fetched)
// is no evidence.
func (m *CoChange) Check(url string, p Page, obs Observation) {
	if obs.First || p.LastFetched.IsZero() || !obs.At.After(p.LastFetched) {
		return
	}
	m.mu.Lock()
	if m.holding {
		p.Recent = nil // the model reads none of them
		m.held = append(m.held, coHeld{url, p, obs})
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	m.check(url, p, obs)
}

// Hold makes Check keep the fetches it is handed, without learning from
// them, until Release. A crawler that fetches a wave of pages at once,
// from several goroutines, holds them so that what it ranks by during the
// wave does not depend on the order the fetches finished in, and learns
// them all between waves.
func (m *CoChange) Hold() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.holding = true
	m.mu.Unlock()
}

// Release learns the fetches held since Hold, in the order of their time
// and URL, and stops holding.
func (m *CoChange) Release() {
	if m == nil {
		return
	}
	m.mu.Lock()
	held := m.held
	m.held, m.holding = nil, false
	m.mu.Unlock()
	slices.SortFunc(held, func(a, b coHeld) int {
		if c := a.obs.At.Compare(b.obs.At); c != 0 {
			return c
		}
		return strings.Compare(a.url, b.url)
	})
	for _, h := range held {
		m.check(h.url, h.p, h.obs)
	}
}

// check is Check without holding.
func (m *CoChange) check(url string, p Page, obs Observation) {
	key := m.cluster(url)
	if key == "" {
		return
	}
	from, at := p.LastFetched.UnixNano(), obs.At.UnixNano()
	pc := changeChance(p.ChangeRate, obs.At.Sub(p.LastFetched))
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clusters[key]
	if c == nil {
		c = &coCluster{}
		m.clusters[key] = c
	}
	// Only checks made before this one count: those of the same instant
	// (one run's, on a clock that stands still) would count in the order
	// the fetches happened to finish.
	b, share, _, clean := c.scan(from, at)
	bin := coBin(pc)
	if clean {
		m.clean[bin].add(obs.Changed, pc, coSourceMemory)
	} else if b == 0 {
		m.plain[bin].add(obs.Changed, pc, coSourceMemory)
	}
	if b > 0 {
		// A fetch counts as exposed in proportion to the share of the
		// release time after its page's previous fetch, the rest of it as
		// unexposed.
		c.tab.add(b, bin, obs.Changed, share, coClusterMemory)
		m.src.add(b, bin, obs.Changed, share, coSourceMemory)
		b, share = 0, 1-share
	} else {
		share = 1
	}
	c.tab.add(b, bin, obs.Changed, share, coClusterMemory)
	m.src.add(b, bin, obs.Changed, share, coSourceMemory)
	c.add(coCheck{from: from, at: at, changed: obs.Changed, p: pc})
	m.learn()
	if obs.Changed {
		m.touched[key] = struct{}{}
	}
}

// add keeps ch among the cluster's checks, forgetting the oldest beyond
// coChecks and those made DefaultMaxInterval before the newest.
func (c *coCluster) add(ch coCheck) {
	i := len(c.checks)
	for i > 0 && c.checks[i-1].at > ch.at {
		i-- // checks arrive nearly in order: a short walk back
	}
	c.checks = slices.Insert(c.checks, i, ch)
	clear(c.memo)
	if len(c.checks) < coChecks+coChecks/8 {
		return
	}
	newest := c.checks[len(c.checks)-1].at
	drop := len(c.checks) - coChecks
	for drop < len(c.checks) && c.checks[drop].at < newest-int64(DefaultMaxInterval) {
		drop++
	}
	c.checks = slices.Delete(c.checks, 0, drop)
}

// exposure describes what a page last fetched at from is exposed to: the
// level of the largest excess of the cluster's checks made after any time
// t ≥ from, (found − predicted)/√(predicted + 1) over the checks made
// after t (a release shows as a burst of changes found since it, however
// long ago from is), and the share of the burst's likely release time
// that lies after from: the changes of the burst happened after the
// latest start and before the earliest end of the intervals that found
// them, and a page fetched in between may have seen the release already.
// Only the coScan most recent checks are looked at. clean reports that
// no window shows an excess (level 0) and that all the checks together
// show a deficit of at least coCleanZ.
func (c *coCluster) exposure(from int64) (level int, share float64, burst coBurst, clean bool) {
	if e, ok := c.memo[from]; ok {
		return e.level, e.share, e.burst, e.clean
	}
	level, share, burst, clean = c.scan(from, math.MaxInt64)
	if c.memo == nil {
		c.memo = map[int64]coExposure{}
	}
	c.memo[from] = coExposure{level, share, burst, clean}
	return level, share, burst, clean
}

// scan is exposure over the checks made before before.
func (c *coCluster) scan(from, before int64) (level int, share float64, burst coBurst, clean bool) {
	best := math.Inf(-1)
	var f, p, k float64
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // of the checks scanned
	blo, bhi := lo, hi                                   // of the best window
	for i, n := len(c.checks)-1, 0; i >= 0 && n < coScan && c.checks[i].at > from; i, n = i-1, n+1 {
		ch := c.checks[i]
		if ch.at >= before {
			continue
		}
		if ch.changed {
			f++
			lo, hi = max(lo, ch.from), ch.at // walking back: the earliest end so far
		}
		p += ch.p
		k++
		if z := (f - p) / math.Sqrt(p+1); z > best {
			best, blo, bhi = z, lo, hi
			burst = coBurst{found: f, predicted: p, checks: k}
		}
	}
	if best == math.Inf(-1) {
		return 0, 0, coBurst{}, false
	}
	level = coBucket(best)
	clean = level == 0 && (f-p)/math.Sqrt(p+1) <= coCleanZ
	switch {
	case bhi <= blo || from <= blo:
		share = 1
	case from >= bhi:
		share = 0
	default:
		share = float64(bhi-from) / float64(bhi-blo)
	}
	return level, share, burst, clean
}

// Chance returns the co-change chance of the page at url: the chance that
// what its siblings showed since its last fetch means it changed, beyond
// what its own rate says. It is 0 for a page never fetched, one in a
// cluster whose pages change alone, and every page of a source whose
// pages have not been found to change together (Learned).
func (m *CoChange) Chance(url string, p Page, now time.Time) float64 {
	return m.chance(url, p, now, 1)
}

// Attributable returns the co-change chance a change found on the page at
// url now is read at by the rate estimators (Check.CoChance): Chance when
// its siblings' excess since its last fetch is at least 1.5 times its
// noise, else 0. A site whose pages change alone shows smaller excesses
// by chance, and a chance learned from them there would bias its pages'
// rates down; a release shows more.
func (m *CoChange) Attributable(url string, p Page, now time.Time) float64 {
	return m.chance(url, p, now, coAttributable)
}

// exposureOf is what the page p of cluster key is exposed to (see
// coCluster.exposure), and its cluster; ok is false for a page of no
// cluster, of a cluster without checks, or of a source that has not
// learned co-change. The caller holds m.mu.
func (m *CoChange) exposureOf(key string, p Page) (c *coCluster, e coExposure, ok bool) {
	c = m.clusters[key]
	if key == "" || !m.learned || c == nil || len(c.checks) == 0 {
		return nil, coExposure{}, false
	}
	e.level, e.share, e.burst, e.clean = c.exposure(p.LastFetched.UnixNano())
	return c, e, true
}

// coAttributable is the lowest level of excess Attributable reads: 1.5
// to 3 times its noise.
const coAttributable = 2

// chance is Chance at levels of excess from least up.
func (m *CoChange) chance(url string, p Page, now time.Time, least int) float64 {
	if m == nil || p.LastFetched.IsZero() {
		return 0
	}
	key := m.cluster(url)
	m.mu.Lock()
	defer m.mu.Unlock()
	c, e, ok := m.exposureOf(key, p)
	if !ok || e.level < least {
		return 0
	}
	b, share, burst := e.level, e.share, e.burst
	x := m.x(c, b, coBin(changeChance(p.ChangeRate, now.Sub(p.LastFetched))))
	if b == coBuckets-1 {
		// A burst far beyond noise is a release: the share of the cluster
		// it rewrote is read from the burst itself, pulled towards what
		// the level's bursts have meant.
		est, w := burst.share()
		x = (w*est + coBurstPrior*x) / (w + coBurstPrior)
	}
	return share * x
}

// Discount returns the share of the page at url's own chance of a change
// that its siblings' clean checks since its last fetch take away
// (Page.CoDiscount): one less the ratio of changes found to changes
// predicted of the source's fetches made in such clean clusters, over the
// same ratio of its other unexposed fetches, in the bin of the page's own
// chance now. It is 0 for a page never fetched, one whose siblings were
// not checked clean since, and every page of a source whose pages have
// not been found to change together (Learned).
func (m *CoChange) Discount(url string, p Page, now time.Time) float64 {
	if m == nil || p.LastFetched.IsZero() {
		return 0
	}
	key := m.cluster(url)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, e, ok := m.exposureOf(key, p); !ok || !e.clean {
		return 0
	}
	bin := coBin(changeChance(p.ChangeRate, now.Sub(p.LastFetched)))
	return max(1-m.clean[bin].ratio()/m.plain[bin].ratio(), 0)
}

// coBurstPrior is the weight, in checks, of the co-change chance learned
// at the highest level of excess against a burst's own estimate of its
// release's share. Below that level a burst is read only through what its
// level learned: a small window that happens to start at a change shows a
// large share by chance alone, on sites whose pages change alone too.
const coBurstPrior = 4

// x is a cluster's co-change chance at level b for fetches of own chance
// in bin: how much more often such fetches found a change than unexposed
// ones (level 0) of the same bin, in the cluster's evidence pulled
// towards its source's.
func (m *CoChange) x(c *coCluster, b, bin int) float64 {
	if b == 0 {
		return 0
	}
	// The source's unexposed fetches of the bin start from its typical
	// chance, its exposed ones from its unexposed ones (no lift), and a
	// cluster from its source.
	s0 := m.src[0][bin]
	src0 := (s0.changed + coSourcePrior*coBinMid[bin]) / (s0.n + coSourcePrior)
	sb := m.src[b][bin]
	srcb := (sb.changed + coSourcePrior*src0) / (sb.n + coSourcePrior)
	rate := func(b int, src float64) float64 {
		k := c.tab[b][bin]
		return (k.changed + coClusterPrior*src) / (k.n + coClusterPrior)
	}
	r0, rb := rate(0, src0), rate(b, srcb)
	if r0 >= 1 {
		return 0
	}
	return min(max((rb-r0)/(1-r0), 0), 1)
}

// Learned reports whether the model has found that the source's pages
// change together: some level of exposure has changed its fetches more
// often than unexposed ones, by at least a few points. A crawler then
// spreads a run over waves, so that the changes one finds raise their
// siblings' chance within the run. A nil model has learned nothing.
func (m *CoChange) Learned() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.learned
}

// learn sets m.learned from the source's evidence.
func (m *CoChange) learn() {
	m.learned = false
	empty := &coCluster{}
	for b := 1; b < coBuckets; b++ {
		for bin := range coBins {
			if m.src[b][bin].n >= coLearnedFetches && m.x(empty, b, bin) >= coLearned {
				m.learned = true
				return
			}
		}
	}
}

// coLearned is the lift at which a source's pages are found to change
// together, in a cell of at least coLearnedFetches exposed fetches.
const (
	coLearned        = 0.05
	coLearnedFetches = 50
)

// Touched returns the clusters with a change found since its last call,
// in order, and forgets them.
func (m *CoChange) Touched() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.touched))
	for k := range m.touched {
		out = append(out, k)
		delete(m.touched, k)
	}
	slices.Sort(out)
	return out
}

// Value returns the co-change chances the model gives the pages of the
// cluster of url at each level of excess and each bin of their own
// chance, as Chance would (for reports and tests).
func (m *CoChange) Value(url string) [coBuckets][coBins]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clusters[m.cluster(url)]
	if c == nil {
		c = &coCluster{}
	}
	var out [coBuckets][coBins]float64
	for b := range out {
		for bin := range out[b] {
			out[b][bin] = m.x(c, b, bin)
		}
	}
	return out
}

// changeChance is the chance of a change in d at rate lam: 1 − e^(−λd).
func changeChance(lam Rate, d time.Duration) float64 {
	l := float64(DefaultLimits.Clamp(lam))
	return -math.Expm1(-l * days(d))
}

// CoChangeBuilder learns a CoChange from pages' histories, as a crawler
// that keeps no model between runs builds it at the start of each: every
// page's latest checks (the last coHistory of Page.Recent, dated back
// from LastFetched) are
// replayed into the model in the order they happened, cluster by cluster,
// each with the change rate the page's earlier checks gave it.
// Pages added in URL order (as a state lists them) are replayed as each
// cluster's URLs end, so that the builder holds one cluster at a time (of
// at most coReplay checks and coPages pages); pages in any other order are
// held until Model. The zero value is not usable: call NewCoChangeBuilder.
// A builder is not safe for concurrent use.
type CoChangeBuilder struct {
	m      *CoChange
	open   map[string]*coPending
	last   string
	sorted bool
	// exposed, when set, is told of every page the model gives a
	// co-change chance at now, once its cluster is replayed.
	exposed func(url string, p Page, chance float64)
	now     time.Time
}

// coReplay and coPages bound one cluster's history held by a builder: its
// most recent checks, and the pages it reports exposed.
const (
	coReplay = 4 * coChecks
	coPages  = 1 << 16
	// coHistory is how many of a page's latest checks a builder replays,
	// with a rate estimated from the checks before every coStep-th.
	coHistory = 16
	coStep    = 2
)

type coPending struct {
	checks []coReplayed
	pages  []coPage
}

type coReplayed struct {
	from, at int64
	changed  bool
	rate     Rate
}

type coPage struct {
	url string
	p   Page
}

// NewCoChangeBuilder returns a builder of a model that groups pages with
// cluster (nil: ClusterOf; another function holds every page until Model,
// since its clusters need not follow URL order). When exposed is not nil it is
// called, once a page's cluster is replayed, for every added page the
// model gives a positive co-change chance at now (a crawler ranks those
// pages with its due ones); the Page it gets has no Recent checks.
func NewCoChangeBuilder(now time.Time, cluster func(url string) string, exposed func(url string, p Page, chance float64)) *CoChangeBuilder {
	return &CoChangeBuilder{m: NewCoChange(cluster), open: map[string]*coPending{}, sorted: cluster == nil, exposed: exposed, now: now}
}

// Add adds a page's history. p's checks are copied.
func (b *CoChangeBuilder) Add(url string, p Page) {
	if p.LastFetched.IsZero() {
		return
	}
	if url < b.last {
		b.sorted = false
	}
	b.last = url
	key := b.m.cluster(url)
	if key == "" {
		return
	}
	if b.sorted && len(b.open) > 0 {
		var done []string
		for k := range b.open {
			if !strings.HasPrefix(url, k) {
				done = append(done, k) // every URL of k came before url
			}
		}
		slices.Sort(done)
		for _, k := range done {
			b.replay(k)
		}
	}
	c := b.open[key]
	if c == nil {
		c = &coPending{}
		b.open[key] = c
	}
	at := p.LastFetched
	// The rate the page had before a check, as the model would have seen
	// it: the estimate from the checks before it, taken every coStep
	// checks (an estimate costs a root search) and kept between.
	est, estAt := Rate(0), -1
	for i := len(p.Recent) - 1; i >= 0 && i >= len(p.Recent)-coHistory; i-- {
		ch := p.Recent[i]
		if ch.Elapsed <= 0 {
			break
		}
		from := at.Add(-ch.Elapsed)
		if k := i - i%coStep; k != estAt {
			est, estAt = Estimate(Page{Recent: p.Recent[:k]}), k
		}
		rate := est
		c.checks = append(c.checks, coReplayed{from: from.UnixNano(), at: at.UnixNano(), changed: ch.Changed, rate: rate})
		at = from
	}
	if len(c.checks) > 2*coReplay {
		slices.SortFunc(c.checks, func(x, y coReplayed) int { return cmp.Compare(y.at, x.at) })
		c.checks = c.checks[:coReplay]
	}
	if b.exposed != nil && len(c.pages) < coPages {
		q := p
		q.Recent = nil
		c.pages = append(c.pages, coPage{url: url, p: q})
	}
}

// replay feeds a pending cluster's checks to the model in the order they
// happened and reports its exposed pages.
func (b *CoChangeBuilder) replay(key string) {
	c := b.open[key]
	delete(b.open, key)
	slices.SortFunc(c.checks, func(x, y coReplayed) int { return cmp.Compare(x.at, y.at) })
	for _, r := range c.checks {
		b.m.Check(key, Page{LastFetched: time.Unix(0, r.from), ChangeRate: r.rate}, Observation{At: time.Unix(0, r.at), Changed: r.changed})
	}
	for _, pg := range c.pages {
		if ch := b.m.Chance(pg.url, pg.p, b.now); ch > 0 {
			b.exposed(pg.url, pg.p, ch)
		}
	}
}

// Model replays what is pending and returns the model; the builder is
// done.
func (b *CoChangeBuilder) Model() *CoChange {
	keys := make([]string, 0, len(b.open))
	for k := range b.open {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.replay(k)
	}
	b.m.Touched() // history is not news
	return b.m
}
