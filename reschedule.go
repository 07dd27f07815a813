package recrawl

import (
	"sync"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/schedule"
)

// scheduling is what a run decides of its pages' checks: its scheduler
// (the plan), the one rescheduling path every outcome takes, the
// source's co-change model and the weights of the sitemap's priorities.
// It is set up before the run fetches, and safe for concurrent use then.
type scheduling struct {
	cfg        *Config
	start      time.Time
	trust      *sourceTrust
	sched      schedule.Scheduler
	chain      schedule.Rescheduler // every outcome's next check
	co         *schedule.CoChange   // learned at planning; nil for a scheduler that does not plan
	priorities sync.Map             // weights from sitemap <priority> (float64), by normalized URL (SitemapPriority)
}

// newChain builds the run's one rescheduling path from its scheduler:
// schedule.Chain with the engine's jitter and failure backoff, the
// weights of Config.Weight or the sitemap's priorities, the sitemap hint
// of learned trust, the co-change model, and the pin of authoritative
// trust. Every outcome path (a 200, a 304, a 404, a failure) asks it
// through reschedule, and what it returns is what the state stores.
func (s *scheduling) newChain() schedule.Rescheduler {
	o := schedule.ChainOptions{
		Jitter:  s.cfg.Jitter,
		Backoff: FailureBackoff,
		Sitemap: func(p schedule.Page, o schedule.Outcome) schedule.SitemapHint {
			return s.trust.hint(p, o.Document, o.LastMod)
		},
		Model: s.co,
	}
	if s.cfg.Weight != nil || s.cfg.SitemapPriority {
		o.Weight = s.weight
	}
	if s.cfg.SitemapTrust == TrustAuthoritative {
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
	return schedule.Chain(s.sched, o)
}

// plan sets the run's plan up: its scheduler, co-change model and chain.
func (s *scheduling) plan(sched schedule.Scheduler, co *schedule.CoChange) {
	s.sched, s.co = sched, co
	s.chain = s.newChain()
}

// reschedule asks the run's chain what row's outcome o means for its
// next check.
func (s *scheduling) reschedule(row crawlstate.Row, o schedule.Outcome) schedule.Decision {
	o.URL, o.Document, o.LastMod = row.URL, row.ListedIn, s.trust.lastMod(row)
	return s.chain.Reschedule(pageOf(row), o)
}

// ranked is row as the run's plan ranks it: weighed and hinted as the
// chain would, with its co-change chance and discount.
func (s *scheduling) ranked(row crawlstate.Row) schedule.Page {
	p := pageOf(row)
	if w, ok := s.weight(row.URL); ok {
		p.Weight = sanitizedWeight(w)
	}
	p.Sitemap = s.trust.hint(p, row.ListedIn, s.trust.lastMod(row))
	p.CoChange = s.co.Chance(row.URL, p, s.start)
	p.CoDiscount = s.co.Discount(row.URL, p, s.start)
	return p
}

// weight is the weight of url: Config.Weight's when set, else the
// sitemap priority's of this run (SitemapPriority); ok is false when
// neither says (the page keeps the weight stored at its last fetch).
func (s *scheduling) weight(url string) (float64, bool) {
	if s.cfg.Weight != nil {
		return s.cfg.Weight(url), true
	}
	if !s.cfg.SitemapPriority {
		return 0, false
	}
	w, ok := s.priorities.Load(url)
	if !ok {
		return 0, false
	}
	return w.(float64), true
}

// setPriority keeps the weight a sitemap's priority gives url.
func (s *scheduling) setPriority(url string, priority float64) {
	s.priorities.Store(url, max(priority, 0.005)/0.5)
}

// authoritativeWait is the next check of a row whose sitemap lastmod is
// trusted: in effect never, unless the lastmod moves.
const authoritativeWait = 10 * 365 * 24 * time.Hour
