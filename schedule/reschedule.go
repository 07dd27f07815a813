package schedule

import (
	"math"
	"strconv"
	"time"
)

// Outcome is how one attempt to fetch a page ended, as a Rescheduler sees
// it.
type Outcome struct {
	// URL is the page's identity (its normalized URL): decorators that
	// depend on the page (jitter, weight, co-change) key on it.
	URL string
	// At is when the attempt ended.
	At time.Time
	// Kind says which of the fields below apply.
	Kind OutcomeKind
	// Observation is the fetch's outcome, for Fetched.
	Observation Observation
	// Failures counts the page's consecutive failures before this one,
	// and Permanent says this failure will not go away by retrying soon
	// (a 403, a script-rendered page), for Failed.
	Failures  int
	Permanent bool
	// Document is the discovery document that lists the page (a sitemap
	// file; "" when none does), and LastMod the lastmod it lists (zero
	// when none): what sitemap decorators read.
	Document string
	LastMod  time.Time
}

// OutcomeKind is the kind of an Outcome.
type OutcomeKind uint8

// The kinds of outcome.
const (
	// Fetched: a definitive answer (a 200 or a 304), with an Observation.
	Fetched OutcomeKind = iota
	// Gone: the origin answered 404 or 410; the page is a tombstone and
	// leaves the due queue, so its next check does not matter.
	Gone
	// Failed: a failure the page is retried after (a 5xx, a timeout, a
	// failing later stage).
	Failed
)

// Decision is what a Rescheduler decided: the page with its statistics
// updated (and Interval set) and when it is next due. A crawler stores
// exactly this.
type Decision struct {
	Page Page
	Next time.Time
}

// Rescheduler decides a page's next check after each outcome. It is the
// one place a crawler asks: the 200, 304, gone and failure paths all call
// Reschedule, and what it returns is what the crawler stores.
//
// Reschedulers compose as http.RoundTripper wrappers do: a decorator (Jitter,
// Backoff, Hint, Weigh, Learn) holds the next Rescheduler, changes the page
// on the way in or the Decision on the way out, and leaves the rest to it;
// Base turns a Scheduler into the innermost one. Chain builds the chain a
// crawler uses. Implementations must be safe for concurrent use and must
// never return a Next before the outcome's At for a Fetched or Failed
// outcome.
type Rescheduler interface {
	Reschedule(p Page, o Outcome) Decision
}

// ReschedulerFunc adapts a function to a Rescheduler.
type ReschedulerFunc func(p Page, o Outcome) Decision

// Reschedule implements Rescheduler.
func (f ReschedulerFunc) Reschedule(p Page, o Outcome) Decision { return f(p, o) }

// Advancer is the optional ability of a Scheduler to fold an observation
// into a page and choose its interval in one step (Advance), estimating
// the page's rate once instead of twice.
type Advancer interface {
	Advance(p Page, obs Observation) Page
}

// Advance returns p after the fetch obs: its statistics folded in by
// Observe and Interval set to s.Next(p, obs), never below one nanosecond.
// The next check is due at obs.At + Interval. A Scheduler that is an
// Advancer does both itself.
func Advance(s Scheduler, p Page, obs Observation) Page {
	var q Page
	if a, ok := s.(Advancer); ok {
		q = a.Advance(p, obs)
	} else {
		iv := s.Next(p, obs)
		q = Observe(p, obs)
		q.Interval = iv
	}
	q.Interval = max(q.Interval, 1)
	return q
}

// Base is the innermost Rescheduler: a Fetched outcome is Advance'd by
// Scheduler and due an Interval after it; a Failed or Gone one leaves the
// page as it is, due at once (Backoff, outside it, spaces failures).
type Base struct{ Scheduler Scheduler }

// Reschedule implements Rescheduler.
func (b Base) Reschedule(p Page, o Outcome) Decision {
	if o.Kind != Fetched {
		return Decision{Page: p, Next: o.At}
	}
	q := Advance(b.Scheduler, p, o.Observation)
	return Decision{Page: q, Next: o.Observation.At.Add(q.Interval)}
}

// DefaultFailureBackoff is Backoff's wait after a page's first transient
// failure.
const DefaultFailureBackoff = time.Hour

// Backoff spaces a failing page's attempts: a Failed outcome waits First
// (DefaultFailureBackoff when zero) doubled per earlier consecutive
// failure, a permanent one the longest wait at once, both at most Max;
// other outcomes go to Next.
type Backoff struct {
	Next  Rescheduler
	First time.Duration
	Max   time.Duration
}

// Reschedule implements Rescheduler.
func (b Backoff) Reschedule(p Page, o Outcome) Decision {
	if o.Kind != Failed {
		return b.Next.Reschedule(p, o)
	}
	return Decision{Page: p, Next: o.At.Add(b.Wait(o.Failures, o.Permanent))}
}

// Wait is the wait after a failure that follows failures consecutive
// ones.
func (b Backoff) Wait(failures int, permanent bool) time.Duration {
	bound := b.Max
	if bound <= 0 {
		bound = DefaultMaxInterval
	}
	if permanent {
		return bound
	}
	wait := b.First
	if wait <= 0 {
		wait = DefaultFailureBackoff
	}
	for i := 0; i < failures && wait < bound; i++ {
		wait *= 2
	}
	return min(wait, bound)
}

// Jitter moves a Fetched page's next check earlier by up to Fraction of
// its interval, by an amount fixed by the URL and the page's visits
// before the fetch, so that pages found together do not fall due together
// for ever; never less than a second after the fetch.
type Jitter struct {
	Next     Rescheduler
	Fraction float64
}

// Reschedule implements Rescheduler.
func (j Jitter) Reschedule(p Page, o Outcome) Decision {
	d := j.Next.Reschedule(p, o)
	if o.Kind != Fetched {
		return d
	}
	at := o.Observation.At
	wait := d.Next.Sub(at)
	if j.Fraction > 0 {
		u := float64(jitterHash(o.URL, p.Visits)>>11) / (1 << 53) // uniform in [0, 1)
		wait -= time.Duration(float64(wait) * j.Fraction * u)
	}
	d.Next = at.Add(max(wait, time.Second))
	return d
}

// jitterHash is FNV-1a (64 bits) of url, a zero byte and visits in
// decimal, without an allocation.
func jitterHash(url string, visits int) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(url); i++ {
		h = (h ^ uint64(url[i])) * prime
	}
	h *= prime // the zero byte: h ^ 0 == h
	var buf [20]byte
	for _, c := range strconv.AppendInt(buf[:0], int64(visits), 10) {
		h = (h ^ uint64(c)) * prime
	}
	return h
}

// Weigh sets the page's Weight from Weight(url) before the rest of the
// chain decides, when it reports ok (a value that is not positive and
// finite is the default weight); nil Weight changes nothing.
type Weigh struct {
	Next   Rescheduler
	Weight func(url string) (w float64, ok bool)
}

// Reschedule implements Rescheduler.
func (w Weigh) Reschedule(p Page, o Outcome) Decision {
	if w.Weight != nil {
		if v, ok := w.Weight(o.URL); ok {
			if !(v > 0) || math.IsInf(v, 0) {
				v = 0 // the default weight
			}
			p.Weight = v
		}
	}
	return w.Next.Reschedule(p, o)
}

// Hint sets the page's sitemap hint from Sitemap(p, o) before the rest of
// the chain decides, so that the policy weighs the page's lastmod by its
// source's trust; nil Sitemap changes nothing.
type Hint struct {
	Next    Rescheduler
	Sitemap func(p Page, o Outcome) SitemapHint
}

// Reschedule implements Rescheduler.
func (h Hint) Reschedule(p Page, o Outcome) Decision {
	if h.Sitemap != nil {
		p.Sitemap = h.Sitemap(p, o)
	}
	return h.Next.Reschedule(p, o)
}

// Learn hands every Fetched outcome to a co-change model (CoChange.Check)
// before the rest of the chain decides, so that the pages' siblings are
// ranked by what it found, and sets the page's CoChange to the chance
// the model attributes to its siblings before the fetch
// (CoChange.Attributable), so that the check it adds (Observe) keeps it as
// its CoChance; a nil Model changes nothing.
type Learn struct {
	Next  Rescheduler
	Model *CoChange
}

// Reschedule implements Rescheduler.
func (l Learn) Reschedule(p Page, o Outcome) Decision {
	if l.Model != nil && o.Kind == Fetched {
		p.CoChange = l.Model.Attributable(o.URL, p, o.At)
		l.Model.Check(o.URL, p, o.Observation)
	}
	return l.Next.Reschedule(p, o)
}

// Pin sets the next check of a Fetched page from Until(o, d) when it
// returns ok (a crawler that trusts a sitemap's lastmods outright pins a
// listed page to its lastmod's next move); other outcomes go to Next.
type Pin struct {
	Next  Rescheduler
	Until func(o Outcome, d Decision) (time.Time, bool)
}

// Reschedule implements Rescheduler.
func (pn Pin) Reschedule(p Page, o Outcome) Decision {
	d := pn.Next.Reschedule(p, o)
	if o.Kind == Fetched && pn.Until != nil {
		if t, ok := pn.Until(o, d); ok {
			d.Next = t
		}
	}
	return d
}

// ChainOptions are the decorators Chain puts around a Scheduler; zero
// fields leave theirs out.
type ChainOptions struct {
	Jitter  float64                                       // Jitter's Fraction
	Backoff time.Duration                                 // Backoff's First (DefaultFailureBackoff when zero)
	Weight  func(url string) (float64, bool)              // Weigh's Weight
	Sitemap func(p Page, o Outcome) SitemapHint           // Hint's Sitemap
	Model   *CoChange                                     // Learn's Model
	Pin     func(o Outcome, d Decision) (time.Time, bool) // Pin's Until
}

// Chain returns the Rescheduler a crawler uses for s, from the outside
// in: Backoff (bounded by MaxIntervalOf(s)), Pin, Jitter, Learn, Hint,
// Weigh, Base. Pages are weighed and hinted before the model and the
// policy see them; jitter moves the policy's choice; a pin overrides it;
// failures never reach the policy.
func Chain(s Scheduler, o ChainOptions) Rescheduler {
	var r Rescheduler = Base{Scheduler: s}
	if o.Weight != nil {
		r = Weigh{Next: r, Weight: o.Weight}
	}
	if o.Sitemap != nil {
		r = Hint{Next: r, Sitemap: o.Sitemap}
	}
	if o.Model != nil {
		r = Learn{Next: r, Model: o.Model}
	}
	if o.Jitter > 0 {
		r = Jitter{Next: r, Fraction: o.Jitter}
	}
	if o.Pin != nil {
		r = Pin{Next: r, Until: o.Pin}
	}
	return Backoff{Next: r, First: o.Backoff, Max: MaxIntervalOf(s)}
}
