package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// Config describes one simulated site and crawler. Zero fields take the
// defaults named on each field.
type Config struct {
	// Mix is the population of pages (default MixA).
	Mix Mix
	// Pages is the number of pages at the start (default 10000).
	Pages int
	// Days is the measured horizon (default 180).
	Days int
	// Warmup is how many days the crawler runs before measurement starts,
	// so that the table shows the policies' steady state rather than the
	// first crawl of a new site (default 0: measure from the start).
	Warmup int
	// Seed makes the world reproducible.
	Seed uint64
	// Cadence is the time between crawler runs (default one hour).
	Cadence time.Duration
	// Turnover is the weekly rate of page births and of page deaths, as a
	// fraction of Pages (default 0.01; negative: none).
	Turnover float64
	// RawHash makes the crawler compare raw bytes instead of the content
	// fingerprint, so volatile markup reads as a change; it exists to show
	// what the fingerprint prevents.
	RawHash bool
	// PlanEvery re-plans every PlanEvery runs (default 1: every run).
	PlanEvery int
}

// Epoch is the virtual time at which every simulation starts.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (c Config) withDefaults() (Config, error) {
	if c.Mix.Classes == nil {
		c.Mix = MixA
	}
	if c.Pages == 0 {
		c.Pages = 10000
	}
	if c.Days == 0 {
		c.Days = 180
	}
	if c.Cadence == 0 {
		c.Cadence = time.Hour
	}
	if c.Turnover == 0 {
		c.Turnover = 0.01
	}
	if c.Turnover < 0 {
		c.Turnover = 0
	}
	if c.PlanEvery <= 0 {
		c.PlanEvery = 1
	}
	var total float64
	for _, cl := range c.Mix.Classes {
		if !(cl.Share >= 0) || !(cl.Rate >= 0) || math.IsInf(float64(cl.Rate), 0) || !(cl.Sigma >= 0) {
			return c, fmt.Errorf("sim: mix %q class %q: share, rate and sigma must be finite and >= 0", c.Mix.Name, cl.Name)
		}
		total += cl.Share
	}
	switch {
	case c.Pages < 0 || c.Days < 0 || c.Warmup < 0 || c.Cadence < 0:
		return c, errors.New("sim: Pages, Days, Warmup and Cadence must not be negative")
	case !(total > 0) || math.IsInf(total, 0):
		return c, fmt.Errorf("sim: mix %q has no pages: class shares add up to %v", c.Mix.Name, total)
	case c.Cadence > schedule.Day*time.Duration(max(c.Days, 1)):
		return c, fmt.Errorf("sim: cadence %v is longer than the horizon of %d days", c.Cadence, c.Days)
	}
	return c, nil
}

// lmMode is what Last-Modified a page's origin sends.
type lmMode uint8

const (
	lmNone     lmMode = iota // no Last-Modified
	lmReliable               // time of the last content change
	lmDynamic                // the fetch time
)

// smMode is what lastmod a page's sitemap entry carries; it is also the
// page's sitemap source.
type smMode uint8

const (
	smNone      smMode = iota // no lastmod
	smHonest                  // the time of the last content change
	smGenerated               // the sitemap's generation time
	smModes
)

// smNames names the sitemap modes in results.
var smNames = [smModes]string{"no lastmod", "honest lastmod", "generated lastmod"}

// truth is one page of the world as it really is.
type truth struct {
	birth, death time.Duration // offsets from Epoch; death = never when >= horizon
	rate         schedule.Rate // content change rate
	weight       float64       // importance (1 unless the class says otherwise)
	class        int
	volatile     bool
	lm           lmMode
	sm           smMode
	changes      []time.Duration // content changes in (birth, min(death, horizon)], sorted
	release      []bool          // release[i]: changes[i] came with a release of the page's section (nil: none did)
	section      int             // the page's section (its URL path's directory)
}

// World is a generated site: every page's birth, death and change times.
// It is read-only once built, so one World serves every policy of a
// comparison, which is what makes the comparison fair.
type World struct {
	cfg      Config
	from     time.Duration // start of measurement (end of the warm-up)
	horizon  time.Duration // end of the simulation
	pages    []truth       // initial pages first, then births in birth order
	sections int           // how many sections the pages sit in
	releases int           // release events over the whole simulation
	// bySection holds each section's releases in time order.
	bySection [][]releaseEvent
}

// releaseEvent is one release of a section: when, and the share of the
// section's live pages it changed.
type releaseEvent struct {
	at    time.Duration
	share float64
}

// NewWorld generates the world of cfg. It is deterministic in cfg.
func NewWorld(cfg Config) (*World, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed_c0de_0f_f1e5))
	w := &World{cfg: cfg, from: time.Duration(cfg.Warmup) * schedule.Day}
	w.horizon = w.from + time.Duration(cfg.Days)*schedule.Day
	var total float64
	for _, cl := range cfg.Mix.Classes {
		total += cl.Share
	}
	perDay := cfg.Turnover / 7 // deaths per page per day, and births per initial page per day
	newPage := func(birth time.Duration) truth {
		u := rng.Float64() * total
		ci := len(cfg.Mix.Classes) - 1
		for i, cl := range cfg.Mix.Classes {
			if u < cl.Share {
				ci = i
				break
			}
			u -= cl.Share
		}
		cl := cfg.Mix.Classes[ci]
		t := truth{birth: birth, death: never, class: ci, volatile: cl.Volatile, rate: cl.Rate, weight: 1}
		if cl.Weight > 0 && !math.IsInf(cl.Weight, 0) {
			t.weight = cl.Weight
		}
		if cl.Sigma > 0 && cl.Rate > 0 {
			t.rate = cl.Rate * schedule.Rate(math.Exp(cl.Sigma*rng.NormFloat64()))
		}
		switch {
		case cl.Volatile:
			t.lm = lmDynamic
		case rng.Float64() < cfg.Mix.ReliableLastModified:
			t.lm = lmReliable
		}
		if h, g := cfg.Mix.SitemapHonest, cfg.Mix.SitemapGenerated; h > 0 || g > 0 {
			switch u := rng.Float64(); {
			case u < h:
				t.sm = smHonest
			case u < h+g:
				t.sm = smGenerated
			}
		}
		if perDay > 0 {
			t.death = birth + expDuration(rng, perDay)
		}
		end := min(t.death, w.horizon)
		if t.rate > 0 {
			for at := birth + expDuration(rng, float64(t.rate)); at <= end; at += expDuration(rng, float64(t.rate)) {
				t.changes = append(t.changes, at)
			}
		}
		return t
	}
	for range cfg.Pages {
		w.pages = append(w.pages, newPage(0))
	}
	if perDay > 0 && cfg.Pages > 0 {
		rate := perDay * float64(cfg.Pages) // births per day
		for at := expDuration(rng, rate); at < w.horizon; at += expDuration(rng, rate) {
			w.pages = append(w.pages, newPage(at))
		}
	}
	// Sections and releases draw from a stream of their own, so that the
	// worlds of mixes without releases are what they were before sections.
	w.section(rand.New(rand.NewPCG(cfg.Seed, 0x5ec7_10e5_b0b5)))
	return w, nil
}

// layout is the section sizes of a mix without releases.
var layout = Releases{MinSize: 10, MaxSize: 400}

// section puts the pages in sections and, for a mix with releases, adds
// each section's release bursts to its pages' changes.
func (w *World) section(rng *rand.Rand) {
	rel := w.cfg.Mix.Releases
	lay := layout
	if rel != nil {
		lay = *rel
	}
	lo, hi := max(lay.MinSize, 1), max(lay.MaxSize, lay.MinSize, 1)
	logUniform := func(a, b float64) float64 {
		if b <= a {
			return a
		}
		return math.Exp(math.Log(a) + rng.Float64()*(math.Log(b)-math.Log(a)))
	}
	initial := w.cfg.Pages
	var members [][]int
	for i := 0; i < initial; {
		n := int(math.Round(logUniform(float64(lo), float64(hi))))
		n = min(max(n, 1), initial-i)
		ids := make([]int, n)
		for j := range ids {
			ids[j] = i + j
			w.pages[i+j].section = len(members)
		}
		members = append(members, ids)
		i += n
	}
	if len(members) == 0 {
		members = append(members, nil)
	}
	for i := initial; i < len(w.pages); i++ {
		// A page born later joins the section of a random initial page:
		// sections grow in proportion to their size.
		sec := 0
		if initial > 0 {
			sec = w.pages[rng.IntN(initial)].section
		}
		w.pages[i].section = sec
		members[sec] = append(members[sec], i)
	}
	w.sections = len(members)
	if rel == nil {
		return
	}
	var alive []int
	w.bySection = make([][]releaseEvent, len(members))
	for sec, ids := range members {
		rate := logUniform(float64(rel.MinRate), float64(rel.MaxRate))
		if !(rate > 0) {
			continue
		}
		for at := expDuration(rng, rate); at <= w.horizon; at += expDuration(rng, rate) {
			w.releases++
			alive = alive[:0]
			for _, id := range ids {
				if t := &w.pages[id]; t.birth < at && at <= t.death {
					alive = append(alive, id)
				}
			}
			share := rel.MinShare + rng.Float64()*(rel.MaxShare-rel.MinShare)
			w.bySection[sec] = append(w.bySection[sec], releaseEvent{at, share})
			k := int(math.Round(share * float64(len(alive))))
			rng.Shuffle(len(alive), func(a, b int) { alive[a], alive[b] = alive[b], alive[a] })
			for _, id := range alive[:min(k, len(alive))] {
				t := &w.pages[id]
				t.changes = append(t.changes, at)
				if t.release == nil {
					t.release = make([]bool, len(t.changes)-1, len(t.changes))
				}
				t.release = append(t.release, true)
			}
		}
	}
	for i := range w.pages {
		t := &w.pages[i]
		if t.release == nil {
			continue
		}
		for len(t.release) < len(t.changes) {
			t.release = append(t.release, false)
		}
		idx := make([]int, len(t.changes))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(t.changes[a], t.changes[b]) })
		cs, rs := make([]time.Duration, len(idx)), make([]bool, len(idx))
		for j, k := range idx {
			cs[j], rs[j] = t.changes[k], t.release[k]
		}
		t.changes, t.release = cs, rs
	}
}

// Sections returns how many sections the world's pages sit in.
func (w *World) Sections() int { return w.sections }

// Releases returns how many release events the world has.
func (w *World) Releases() int { return w.releases }

// path is page id's URL path: its section's directory and its own name.
func (w *World) path(id int) string {
	return fmt.Sprintf("/docs/s%03d/p%06d", w.pages[id].section, id)
}

// never is a time after every horizon.
const never = time.Duration(math.MaxInt64)

// expDuration draws an exponential waiting time for events at rate per day.
func expDuration(rng *rand.Rand, rate float64) time.Duration {
	d := rng.ExpFloat64() / rate * float64(schedule.Day)
	if d >= float64(never) {
		return never / 2
	}
	return max(time.Duration(d), 1)
}

// Config returns the configuration the world was built from, with defaults
// filled in.
func (w *World) Config() Config { return w.cfg }

// Pages returns the number of pages that ever exist in the world.
func (w *World) Pages() int { return len(w.pages) }

// importance is the page's weight, 1 when unset.
func (t *truth) importance() float64 {
	if t.weight > 0 {
		return t.weight
	}
	return 1
}

// PageTruth is one page of a World as it really is, for a harness that
// drives a real crawler through the same world (examples/enginefresh).
type PageTruth struct {
	// Path is the page's URL path (its section's directory, then its name).
	Path string
	// Birth and Death are offsets from Epoch; a Death at or after the
	// horizon means the page lives on.
	Birth, Death time.Duration
	// Changes are the page's content changes, sorted, and Release[i]
	// says whether Changes[i] came with a release of its section.
	Changes []time.Duration
	Release []bool
	// LastModified says the origin sends the time of the last change as
	// Last-Modified.
	LastModified bool
	// Sitemap is what the page's sitemap lists as its lastmod: "none",
	// "honest" or "generated".
	Sitemap string
}

// Truth returns page i of the world (0 ≤ i < Pages()); its slices are the
// world's own, to be read only.
func (w *World) Truth(i int) PageTruth {
	t := &w.pages[i]
	rel := t.release
	if rel == nil {
		rel = make([]bool, len(t.changes))
	}
	return PageTruth{
		Path: w.path(i), Birth: t.birth, Death: t.death, Changes: t.changes, Release: rel,
		LastModified: t.lm == lmReliable, Sitemap: [smModes]string{"none", "honest", "generated"}[t.sm],
	}
}
