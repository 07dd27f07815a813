package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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
}

// World is a generated site: every page's birth, death and change times.
// It is read-only once built, so one World serves every policy of a
// comparison, which is what makes the comparison fair.
type World struct {
	cfg     Config
	from    time.Duration // start of measurement (end of the warm-up)
	horizon time.Duration // end of the simulation
	pages   []truth       // initial pages first, then births in birth order
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
	return w, nil
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
