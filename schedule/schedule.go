// Package schedule decides when a page is looked at again.
//
// A Scheduler turns what is known about a page (its current interval and
// change history) and what the latest fetch revealed into the interval until
// the next check. Halving is the baseline policy of the original guides:
// halve the interval on a real change, stretch it by half otherwise.
//
// A crawler decides a page's next check in one place: a Rescheduler chain
// built once per run (Chain), the scheduler innermost (Base) and
// decorators around it as http.RoundTripper wrappers are (Weigh, Hint,
// Learn, Jitter, Pin, Backoff). The 200, 304, gone and failure paths all
// call its Reschedule, and what the chain returns is what the crawler
// stores. Discovery only makes pages candidates (a moved sitemap lastmod,
// a page missing from its listing, a revived tombstone are due at once);
// which candidates a run fetches is the run plan's (Planner, RunPlan,
// Index), and what a fetch means for the next check is the chain's.
//
// Pages change together as well as alone: a release rewrites part of a
// documentation section at once. CoChange learns, from the pages' joint
// history, how much a change found on a page of a URL directory says of
// its siblings, and Index ranks them by it (Page.CoChange); siblings
// checked clean since a page's fetch lower its chance (Page.CoDiscount).
package schedule

import "time"

// Page is what the scheduler knows about one page when it decides.
type Page struct {
	// Interval is the revisit interval chosen last time; zero for a page
	// that was never fetched.
	Interval time.Duration
	// LastFetched is when the page was last fetched; zero if never.
	LastFetched time.Time
	// Visits counts completed fetches before this one.
	Visits int
	// Changes counts fetches before this one that found a real change.
	Changes int

	// The fields below are the observation statistics of the rate
	// estimators. Observe maintains them; a caller stores them with the row
	// and hands them back unchanged. Zero values are valid (a page without
	// history).

	// LastChanged is when the content last changed as far as is known: the
	// Last-Modified of the fetch that found the change when that value is
	// consistent with it, otherwise that fetch's time.
	LastChanged time.Time
	// Elapsed is the sum of the intervals between consecutive fetches
	// (Visits-1 of them).
	Elapsed time.Duration
	// Recent holds the latest checks, oldest first, at most
	// DefaultWindow of them. Observe never modifies a Recent slice it was
	// given; it returns a new one.
	Recent []Check
	// LastModified is the origin's Last-Modified from the latest fetch;
	// zero when the origin sent none.
	LastModified time.Time
	// ChangeRate is the change rate Estimate derived from these
	// statistics, cached by Observe; zero before the first fetch.
	ChangeRate Rate
	// Weight is the page's importance in the freshness objective; zero
	// (or a negative or non-finite value) means DefaultWeight. It is
	// bounded to [1e-9, 1e9].
	Weight float64
	// Sitemap is what the page's sitemap says since LastFetched; the
	// zero value says nothing. The Index policy reads it; a crawler sets
	// it from its listing each time, Observe keeps it as it is.
	Sitemap SitemapHint
	// CoChange is the chance that changes found on the page's siblings
	// since its last fetch changed it too (CoChange.Chance); zero says
	// nothing. The Index policy folds it into the chance that the page
	// changed; a crawler sets it each time, Observe keeps it as it is.
	CoChange float64
	// CoDiscount is the share of the page's own chance of a change that
	// its siblings' checks since its last fetch take away
	// (CoChange.Discount): they found fewer changes than their rates
	// predict, and the model measured that pages in such clusters then
	// change less often than their own rates predict. Zero says nothing; values
	// are read within [0, 1]. The Index policy scales the page's chance
	// by 1 − CoDiscount; a crawler sets it each time, Observe keeps it as
	// it is.
	CoDiscount float64
}

// Observation is the outcome of one fetch.
type Observation struct {
	// At is when the fetch completed.
	At time.Time
	// First is true for the first successful fetch of a page: there was no
	// stored content to compare with.
	First bool
	// Changed is true when the content differs from the stored copy after
	// volatile blocks were stripped. A 304 is never a change.
	Changed bool
	// LastModified is the Last-Modified the origin sent with this fetch
	// (for a 304, the stored value); zero when there is none. Observe uses
	// it only when it agrees with Changed.
	LastModified time.Time
}

// Scheduler chooses revisit intervals. Implementations must be safe for
// concurrent use and must never return an interval <= 0.
type Scheduler interface {
	// Next returns the interval until the page is due again after obs.
	Next(p Page, obs Observation) time.Duration
}

// Halving is the baseline adaptive policy: a new page starts at Start; a
// real change halves the interval (never below Min); no change, including a
// 304, multiplies it by Grow (never above Max). Zero fields take the
// defaults of DefaultHalving.
type Halving struct {
	Start time.Duration // interval after the first fetch (default 24h)
	Min   time.Duration // floor (default 1h)
	Max   time.Duration // cap (default 30 days)
	Grow  float64       // factor on no change (default 1.5)
}

// DefaultHalving holds the guide's values: 1 day to start, 1 hour floor,
// 30 days cap, ×1.5 when nothing changed.
var DefaultHalving = Halving{Start: 24 * time.Hour, Min: time.Hour, Max: 30 * 24 * time.Hour, Grow: 1.5}

// Next implements Scheduler.
func (h Halving) Next(p Page, obs Observation) time.Duration {
	h = h.withDefaults()
	cur := p.Interval
	if obs.First || cur <= 0 {
		return clamp(h.Start, h.Min, h.Max)
	}
	if obs.Changed {
		return clamp(cur/2, h.Min, h.Max)
	}
	return clamp(time.Duration(float64(cur)*h.Grow), h.Min, h.Max)
}

func (h Halving) withDefaults() Halving {
	d := DefaultHalving
	if h.Start > 0 {
		d.Start = h.Start
	}
	if h.Min > 0 {
		d.Min = h.Min
	}
	if h.Max > 0 {
		d.Max = h.Max
	}
	if h.Grow > 0 {
		d.Grow = h.Grow
	}
	if d.Max < d.Min {
		d.Max = d.Min
	}
	return d
}

func clamp(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		return lo
	}
	if d > hi {
		return hi
	}
	return d
}

// Name returns "halving".
func (Halving) Name() string { return "halving" }
