package schedule

import (
	"math"
	"time"
)

// Check is one compared fetch: how long after the previous fetch it came
// and whether it found a real change.
type Check struct {
	// Elapsed is the time since the previous fetch (> 0).
	Elapsed time.Duration
	// Changed reports a real change since the previous fetch.
	Changed bool
	// Modified is this check's term of the Last-Modified estimator: for a
	// change, the time from the origin's Last-Modified to the fetch; for no
	// change, Elapsed. It is zero when the origin sent no Last-Modified or
	// one that contradicts the content comparison (it moved although the
	// content did not, or a change predates the previous fetch).
	Modified time.Duration
	// CoChance is the co-change chance the page had when it was fetched
	// (Page.CoChange, which a crawler's chain sets from
	// CoChange.Attributable): the chance that its siblings' release, not
	// its own rate, changed it. The estimators read a change found at a
	// high co-change chance as little evidence of the page's own rate.
	CoChance float64
}

// Observe folds the outcome of one fetch into the page's statistics and
// returns the updated page: Visits, Changes, LastFetched, LastChanged,
// Elapsed, Recent (a new slice, at most DefaultWindow checks),
// LastModified and ChangeRate. Interval and Weight are left as they are.
//
// A first fetch (obs.First, or a page never fetched) starts the statistics
// afresh. A fetch at or before LastFetched adds no check. The check added
// keeps the page's CoChange as its CoChance.
func Observe(p Page, obs Observation) Page {
	lm := believedLastModified(obs)
	if obs.First || p.LastFetched.IsZero() {
		p.Visits = 1
		p.Changes = 0
		p.Elapsed = 0
		p.Recent = nil
		p.LastChanged = obs.At
		if !lm.IsZero() {
			p.LastChanged = lm
		}
		p.LastFetched = obs.At
		p.LastModified = lm
		p.ChangeRate = Estimate(p)
		return p
	}
	el := obs.At.Sub(p.LastFetched)
	if el <= 0 {
		if !lm.IsZero() {
			p.LastModified = lm
		}
		return p
	}
	c := Check{Elapsed: el, Changed: obs.Changed}
	if co := p.CoChange; co > 0 && !math.IsInf(co, 1) {
		c.CoChance = min(co, 1)
	}
	if consistentLastModified(p, obs, lm) {
		c.Modified = el
		if obs.Changed {
			c.Modified = max(obs.At.Sub(lm), time.Nanosecond)
		}
	}
	p.Visits++
	if obs.Changed {
		p.Changes++
		p.LastChanged = changedAt(p, obs)
	}
	switch {
	case p.Elapsed < 0: // corrupt input: start the sum again
		p.Elapsed = el
	case p.Elapsed > maxDuration-el:
		p.Elapsed = maxDuration // saturate rather than wrap
	default:
		p.Elapsed += el
	}
	keep := min(len(p.Recent), DefaultWindow-1)
	recent := make([]Check, keep+1)
	copy(recent, p.Recent[len(p.Recent)-keep:])
	recent[keep] = c
	p.Recent = recent
	p.LastFetched = obs.At
	p.LastModified = lm
	p.ChangeRate = Estimate(p)
	return p
}

// checks returns how many compared fetches the estimate of p rests on.
func checks(p Page) int {
	if len(p.Recent) > 0 {
		return len(p.Recent)
	}
	return max(p.Visits-1, 0)
}

// believedLastModified returns obs.LastModified, moved back to obs.At when
// it lies at most DefaultClockSkew after it, zero when further.
func believedLastModified(obs Observation) time.Time {
	lm := obs.LastModified
	if !lm.IsZero() && lm.After(obs.At) {
		if lm.Sub(obs.At) > DefaultClockSkew {
			return time.Time{} // from the future: not believed
		}
		return obs.At
	}
	return lm
}

// consistentLastModified reports whether lm agrees with the content
// comparison of a fetch after p.LastFetched: it moved past the previous
// fetch exactly when the content changed.
func consistentLastModified(p Page, obs Observation, lm time.Time) bool {
	if lm.IsZero() {
		return false
	}
	return lm.After(p.LastFetched) == obs.Changed
}

// changedAt is when the change obs found happened, as far as is known: the
// consistent Last-Modified, or the fetch time.
func changedAt(p Page, obs Observation) time.Time {
	if lm := believedLastModified(obs); consistentLastModified(p, obs, lm) && obs.Changed {
		return lm
	}
	return obs.At
}
