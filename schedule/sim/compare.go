package sim

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/recrawl/recrawl/schedule"
)

// Compare runs every policy on seeds worlds (cfg with Seed, Seed+1, ...)
// and returns each policy's mean result, in the order of makers. The first
// policy is the reference: it runs unconstrained, and every other policy
// gets its fetch count as budget, spread evenly over the measured days
// (BudgetOf), so no policy can spend more than the reference did.
func Compare(cfg Config, seeds int, makers []Maker) ([]Result, error) {
	if len(makers) == 0 {
		return nil, fmt.Errorf("sim: no policies to compare")
	}
	seeds = max(seeds, 1)
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	// Worlds run in parallel; results are summed in seed order, so the
	// means do not depend on scheduling.
	perSeed := make([][]Result, seeds)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c := cfg
			c.Seed = cfg.Seed + uint64(i)
			w, err := NewWorld(c)
			if err != nil {
				return // cannot happen: cfg was validated above
			}
			rs := make([]Result, len(makers))
			rs[0] = Run(w, makers[0](), 0)
			budget := BudgetOf(w.cfg, rs[0].Fetches)
			for j, m := range makers[1:] {
				rs[j+1] = Run(w, m(), budget)
			}
			perSeed[i] = rs
		}()
	}
	wg.Wait()
	sums := make([]Result, len(makers))
	for _, rs := range perSeed {
		for j, r := range rs {
			add(&sums[j], r)
		}
	}
	for i := range sums {
		scaleResult(&sums[i], 1/float64(seeds))
	}
	return sums, nil
}

// BudgetOf is the budget per day at which the measured runs of cfg can
// spend fetches and no more: fetches divided by the measured runs (those
// at or after the warm-up and up to the horizon) times the cadence in
// days, since the token bucket is emptied when measurement starts and
// each run adds budget·Cadence/Day.
func BudgetOf(cfg Config, fetches float64) schedule.Rate {
	cfg, _ = cfg.withDefaults()
	from := time.Duration(cfg.Warmup) * schedule.Day
	horizon := from + time.Duration(cfg.Days)*schedule.Day
	first := (from + cfg.Cadence - 1) / cfg.Cadence // first run index at or after from
	runs := float64(horizon/cfg.Cadence - first + 1)
	return schedule.Rate(fetches / (runs * float64(cfg.Cadence) / float64(schedule.Day)))
}

func add(sum *Result, r Result) {
	sum.Policy = r.Policy
	sum.Budget += r.Budget
	sum.Freshness += r.Freshness
	sum.MeanAge += r.MeanAge
	sum.P95Age += r.P95Age
	sum.DetectionLatency += r.DetectionLatency
	sum.Fetches += r.Fetches
	sum.Wasted += r.Wasted
	sum.Alerts += r.Alerts
	sum.Deletions += r.Deletions
	sum.DeletionsNoticed += r.DeletionsNoticed
	sum.DeletionLatency += r.DeletionLatency
	sum.VolatilePages += r.VolatilePages
	sum.VolatileAlerts += r.VolatileAlerts
	sum.VolatileInterval += r.VolatileInterval
	sum.VolatileCollapsed += r.VolatileCollapsed
	sum.ReleaseStale += r.ReleaseStale
	if sum.Classes == nil {
		sum.Classes = make([]ClassResult, len(r.Classes))
	}
	if sum.Sitemaps == nil && r.Sitemaps != nil {
		sum.Sitemaps = make([]ClassResult, len(r.Sitemaps))
	}
	for i, c := range r.Sitemaps {
		s := &sum.Sitemaps[i]
		s.Name = c.Name
		s.Share += c.Share
		s.Freshness += c.Freshness
		s.Fetches += c.Fetches
	}
	for i, c := range r.Classes {
		s := &sum.Classes[i]
		s.Name = c.Name
		s.Share += c.Share
		s.Freshness += c.Freshness
		s.Fetches += c.Fetches
		s.Rate += c.Rate
		s.Estimated += c.Estimated
		s.Interval += c.Interval
	}
}

// scaleResult turns a sum into a mean.
func scaleResult(r *Result, k float64) {
	d := func(x time.Duration) time.Duration { return time.Duration(float64(x) * k) }
	r.Budget *= schedule.Rate(k)
	r.Freshness *= k
	r.MeanAge = d(r.MeanAge)
	r.P95Age = d(r.P95Age)
	r.DetectionLatency = d(r.DetectionLatency)
	r.Fetches *= k
	r.Wasted *= k
	r.Alerts *= k
	r.Deletions *= k
	r.DeletionsNoticed *= k
	r.DeletionLatency = d(r.DeletionLatency)
	r.VolatilePages *= k
	r.VolatileAlerts *= k
	r.VolatileInterval = d(r.VolatileInterval)
	r.VolatileCollapsed *= k
	r.ReleaseStale *= k
	for i := range r.Sitemaps {
		c := &r.Sitemaps[i]
		c.Share *= k
		c.Freshness *= k
		c.Fetches *= k
	}
	for i := range r.Classes {
		c := &r.Classes[i]
		c.Share *= k
		c.Freshness *= k
		c.Fetches *= k
		c.Rate *= k
		c.Estimated *= k
		c.Interval = d(c.Interval)
	}
}

// WriteClasses prints, for every result, the per-class breakdown:
// share of pages, freshness, share of fetches, true and estimated rate and
// the mean interval.
func WriteClasses(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy	class	pages	fresh	fetches	rate/day	estimate/day	interval h	")
	for _, r := range results {
		for _, c := range r.Classes {
			share := 0.0
			if r.Fetches > 0 {
				share = c.Fetches / r.Fetches
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.4f\t%.1f%%\t%.4f\t%.4f\t%.1f\t\n",
				r.Policy, c.Name, 100*c.Share, c.Freshness, 100*share, c.Rate, c.Estimated, c.Interval.Hours())
		}
	}
	return tw.Flush()
}

// WriteSitemaps prints, for every result of a mix with sitemap lastmods,
// the breakdown by sitemap source: share of pages, freshness and share of
// fetches.
func WriteSitemaps(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy	sitemap	pages	fresh	fetches	")
	for _, r := range results {
		for _, c := range r.Sitemaps {
			share := 0.0
			if r.Fetches > 0 {
				share = c.Fetches / r.Fetches
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.4f\t%.1f%%\t\n", r.Policy, c.Name, 100*c.Share, c.Freshness, 100*share)
		}
	}
	return tw.Flush()
}

// WriteTable prints results as an aligned text table. Ages and latencies
// are in hours; the volatile columns appear when some result has volatile
// pages.
func WriteTable(w io.Writer, results []Result) error {
	volatile, releases := false, false
	for _, r := range results {
		volatile = volatile || r.VolatilePages > 0
		releases = releases || r.ReleaseStale > 0
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\tfresh\tvs ref\tage h\tp95 age h\tdetect h\tfetches\tbudget/day\twasted\talerts\tdeleted\tnoticed\tdel. lat. h\t"
	if volatile {
		head += "volatile pages\tvolatile alerts\tvolatile iv h\tcollapsed\t"
	}
	if releases {
		head += "release stale h\tvs ref\t"
	}
	fmt.Fprintln(tw, head)
	h := func(d time.Duration) string { return fmt.Sprintf("%.1f", d.Hours()) }
	for _, r := range results {
		rel := "—"
		if len(results) > 0 && results[0].Freshness > 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*(r.Freshness/results[0].Freshness-1))
		}
		budget := "none"
		if r.Budget > 0 {
			budget = fmt.Sprintf("%.0f", float64(r.Budget))
		}
		line := fmt.Sprintf("%s\t%.4f\t%s\t%s\t%s\t%s\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t",
			r.Policy, r.Freshness, rel, h(r.MeanAge), h(r.P95Age), h(r.DetectionLatency),
			r.Fetches, budget, r.Wasted, r.Alerts, r.Deletions, r.DeletionsNoticed, h(r.DeletionLatency))
		if volatile {
			line += fmt.Sprintf("%.0f\t%.0f\t%s\t%.0f\t", r.VolatilePages, r.VolatileAlerts, h(r.VolatileInterval), r.VolatileCollapsed)
		}
		if releases {
			vs := "—"
			if results[0].ReleaseStale > 0 {
				vs = fmt.Sprintf("%.2f×", r.ReleaseStale/results[0].ReleaseStale)
			}
			line += fmt.Sprintf("%.0f\t%s\t", r.ReleaseStale, vs)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
