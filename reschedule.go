package recrawl

import (
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/schedule"
)

// newChain builds the run's one rescheduling path from its scheduler:
// schedule.Chain with the engine's jitter and failure backoff, the
// weights of Config.Weight or the sitemap's priorities, the sitemap hint
// of learned trust, the co-change model, and the pin of authoritative
// trust. Every outcome path (a 200, a 304, a 404, a failure) asks it
// through reschedule, and what it returns is what the state stores.
func (r *run) newChain(sched schedule.Scheduler) schedule.Rescheduler {
	e := r.e
	o := schedule.ChainOptions{
		Jitter:  e.cfg.Jitter,
		Backoff: FailureBackoff,
		Sitemap: func(p schedule.Page, o schedule.Outcome) schedule.SitemapHint {
			return r.hint(p, o.Document, o.LastMod)
		},
		Model: r.co,
	}
	if e.cfg.Weight != nil || e.cfg.SitemapPriority {
		o.Weight = r.weight
	}
	if e.cfg.SitemapTrust == TrustAuthoritative {
		o.Pin = func(o schedule.Outcome, _ schedule.Decision) (time.Time, bool) {
			if o.Document == "" {
				return time.Time{}, false
			}
			if o.LastMod.IsZero() {
				return o.At, true // no lastmod to trust: refetched every run
			}
			return o.At.Add(authoritativeWait), true // only a moved lastmod brings it back
		}
	}
	return schedule.Chain(sched, o)
}

// reschedule asks the run's chain what row's outcome o means for its
// next check.
func (r *run) reschedule(row crawlstate.Row, o schedule.Outcome) schedule.Decision {
	o.URL, o.Document, o.LastMod = row.URL, row.ListedIn, r.lastMod(row)
	return r.chain.Reschedule(pageOf(row), o)
}

// ranked is row as the run's plan ranks it: weighed and hinted as the
// chain would, with its co-change chance.
func (r *run) ranked(row crawlstate.Row) schedule.Page {
	p := pageOf(row)
	if w, ok := r.weight(row.URL); ok {
		p.Weight = sanitizedWeight(w)
	}
	p.Sitemap = r.hint(p, row.ListedIn, r.lastMod(row))
	p.CoChange = r.co.Chance(row.URL, p, r.start)
	return p
}

// weight is the weight of url: Config.Weight's when set, else the
// sitemap priority's of this run (SitemapPriority); ok is false when
// neither says (the page keeps the weight stored at its last fetch).
func (r *run) weight(url string) (float64, bool) {
	if r.e.cfg.Weight != nil {
		return r.e.cfg.Weight(url), true
	}
	if !r.e.cfg.SitemapPriority {
		return 0, false
	}
	r.prioMu.Lock()
	w, ok := r.priorities[url]
	r.prioMu.Unlock()
	return w, ok
}

// authoritativeWait is the next check of a row whose sitemap lastmod is
// trusted: in effect never, unless the lastmod moves.
const authoritativeWait = 10 * 365 * 24 * time.Hour

// lastMod is the sitemap lastmod of row the run believes: zero for none,
// and for one after the run's start by more than schedule's clock skew (a
// date in the future would read as moved after every fetch).
func (r *run) lastMod(row crawlstate.Row) time.Time {
	if row.SitemapLastMod.After(r.start.Add(schedule.DefaultClockSkew)) {
		return time.Time{}
	}
	return row.SitemapLastMod
}

// moved reports whether row's believed sitemap lastmod moved after its
// last fetch.
func (r *run) moved(row crawlstate.Row) bool {
	lm := r.lastMod(row)
	return !lm.IsZero() && row.ContentHash != "" && lm.After(row.LastFetched)
}
