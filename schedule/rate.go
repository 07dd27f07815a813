package schedule

import (
	"math"
	"time"
)

// Rate is a frequency in events per Day: a change rate λ or a revisit
// rate f.
type Rate float64

// Every returns the rate of an event that happens once every d. It returns
// 0 for d <= 0.
func Every(d time.Duration) Rate {
	if d <= 0 {
		return 0
	}
	return Rate(float64(Day) / float64(d))
}

// Interval returns the mean time between events, 1/r. A rate that is not
// positive (or NaN) never happens: the result is the longest Duration.
func (r Rate) Interval() time.Duration {
	if !(r > 0) {
		return maxDuration
	}
	d := float64(Day) / float64(r)
	if d >= float64(maxDuration) {
		return maxDuration
	}
	if d < 1 {
		return 1
	}
	return time.Duration(d)
}

// Limits bounds a change-rate estimate. Zero fields take DefaultLimits.
type Limits struct {
	Min Rate // lowest estimate (default DefaultMinRate)
	Max Rate // highest estimate (default DefaultMaxRate)
}

func (l Limits) orDefault() Limits {
	if !(l.Min > 0) || math.IsInf(float64(l.Min), 0) {
		l.Min = DefaultMinRate
	}
	if !(l.Max > 0) || math.IsInf(float64(l.Max), 0) {
		l.Max = DefaultMaxRate
	}
	if l.Max < l.Min {
		l.Max = l.Min
	}
	return l
}

// Clamp returns r bounded to the limits; NaN becomes the lower bound.
func (l Limits) Clamp(r Rate) Rate {
	l = l.orDefault()
	switch {
	case !(r >= l.Min): // also NaN
		return l.Min
	case r > l.Max:
		return l.Max
	}
	return r
}

// days converts a duration into days.
func days(d time.Duration) float64 { return float64(d) / float64(Day) }

// weightOf returns w bounded to [1e-9, 1e9], or DefaultWeight when w is
// not a positive finite number.
func weightOf(w float64) float64 {
	if !(w > 0) || math.IsInf(w, 0) {
		return DefaultWeight
	}
	return min(max(w, 1e-9), 1e9)
}

func clampInterval(d, lo, hi time.Duration) time.Duration {
	if hi < lo {
		hi = lo
	}
	return clamp(d, lo, hi)
}
