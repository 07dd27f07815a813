package schedule

import "time"

// Bounded is the optional ability of a Scheduler to name the longest
// interval it ever returns. The engine uses it as the cap of a failing
// page's backoff; a Scheduler without it is taken to be bounded by
// DefaultMaxInterval.
type Bounded interface {
	MaxInterval() time.Duration
}

// MaxInterval implements Bounded.
func (h Halving) MaxInterval() time.Duration { return h.withDefaults().Max }

// MaxInterval implements Bounded.
func (o Optimal) MaxInterval() time.Duration { return o.withDefaults().Max }

// MaxInterval implements Bounded.
func (n Nutch) MaxInterval() time.Duration { return n.withDefaults().Max }

// MaxInterval implements Bounded: a uniform policy's only interval.
func (u Uniform) MaxInterval() time.Duration { return u.Next(Page{}, Observation{}) }

// MaxIntervalOf returns s's longest interval: s.MaxInterval() when s is
// Bounded, else DefaultMaxInterval.
func MaxIntervalOf(s Scheduler) time.Duration {
	if b, ok := s.(Bounded); ok {
		if m := b.MaxInterval(); m > 0 {
			return m
		}
	}
	return DefaultMaxInterval
}
