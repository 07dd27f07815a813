package schedule

import "time"

// Advance returns p after the fetch obs: its statistics folded in by
// Observe and Interval set to s.Next(p, obs), never below one nanosecond.
// The next check is due at obs.At + Interval. Advance is what a crawler
// stores after each fetch; for Optimal it estimates the rate once instead of
// twice.
func Advance(s Scheduler, p Page, obs Observation) Page {
	var iv time.Duration
	var q Page
	switch o := s.(type) {
	case Optimal:
		q = Observe(p, obs)
		iv = o.withDefaults().next(q)
	case *Optimal:
		q = Observe(p, obs)
		iv = o.withDefaults().next(q)
	case optimalRun:
		q = Observe(p, obs)
		iv = o.o.withDefaults().next(q)
	case IndexPlan:
		q = Observe(p, obs)
		iv = o.next(q)
	default:
		iv = s.Next(p, obs)
		q = Observe(p, obs)
	}
	q.Interval = max(iv, 1)
	return q
}
