package schedule

import (
	"math"
	"time"
)

// Uniform revisits every page at the same interval, whatever it observed.
// Cho and Garcia-Molina showed it beats revisiting in proportion to the
// change rate; it is the simplest policy that respects a budget.
type Uniform struct {
	// Every is the interval (default DefaultUniformInterval).
	Every time.Duration
}

// UniformFor returns the Uniform policy that spends budget fetches per day
// on pages pages: an interval of pages/budget days, at least
// DefaultMinInterval.
func UniformFor(budget Rate, pages int) Uniform {
	if pages <= 0 || !(budget > 0) {
		return Uniform{Every: DefaultUniformInterval}
	}
	d := float64(pages) / float64(budget) * float64(Day)
	if math.IsNaN(d) || d >= float64(maxDuration) {
		return Uniform{Every: maxDuration}
	}
	return Uniform{Every: max(time.Duration(d), DefaultMinInterval)}
}

// Next implements Scheduler.
func (u Uniform) Next(Page, Observation) time.Duration {
	if u.Every <= 0 {
		return DefaultUniformInterval
	}
	return u.Every
}

// Name returns "uniform".
func (Uniform) Name() string { return "uniform" }
