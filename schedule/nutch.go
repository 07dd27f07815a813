package schedule

import (
	"math"
	"time"
)

// Nutch is Apache Nutch's AdaptiveFetchSchedule: a change multiplies the
// interval by 1−DecRate, no change by 1+IncRate; with sync-delta the next
// check is pulled earlier by SyncDeltaRate times the time since the last
// known modification (delta), and the interval is never shorter than delta.
// Intervals stay within [Min, Max]. Zero fields take Nutch's defaults
// (NutchStart, NutchMinInterval, ...).
//
// Nutch keeps its interval apart from the next fetch time; here Page.Interval
// holds the time to the next check (what Next returned), and Next recovers
// Nutch's interval from it as Interval + SyncDeltaRate·(LastFetched −
// LastChanged), using the statistics Observe maintains. The last known
// modification is Page.LastChanged: a consistent Last-Modified, or the time
// of the fetch that found the change.
type Nutch struct {
	Start         time.Duration // interval after the first fetch (default NutchStart)
	Min           time.Duration // shortest interval (default NutchMinInterval)
	Max           time.Duration // longest interval (default NutchMaxInterval)
	IncRate       float64       // growth on no change (default NutchIncRate)
	DecRate       float64       // shrink on a change (default NutchDecRate)
	SyncDeltaRate float64       // share of delta to pull forward (default NutchSyncDeltaRate)
	NoSyncDelta   bool          // turn sync-delta off
}

// DefaultNutch holds Nutch's defaults: 30 days to start, 1 minute to 365
// days, ×1.4 on no change, ×0.8 on a change, sync-delta 0.3.
var DefaultNutch = Nutch{
	Start: NutchStart, Min: NutchMinInterval, Max: NutchMaxInterval,
	IncRate: NutchIncRate, DecRate: NutchDecRate, SyncDeltaRate: NutchSyncDeltaRate,
}

func (n Nutch) withDefaults() Nutch {
	d := DefaultNutch
	d.NoSyncDelta = n.NoSyncDelta
	if n.Start > 0 {
		d.Start = n.Start
	}
	if n.Min > 0 {
		d.Min = n.Min
	}
	if n.Max > 0 {
		d.Max = n.Max
	}
	if n.IncRate > 0 && !math.IsInf(n.IncRate, 0) {
		d.IncRate = n.IncRate
	}
	if n.DecRate > 0 && n.DecRate < 1 {
		d.DecRate = n.DecRate
	}
	if n.SyncDeltaRate > 0 && n.SyncDeltaRate < 1 {
		d.SyncDeltaRate = n.SyncDeltaRate
	}
	if d.Max < d.Min {
		d.Max = d.Min
	}
	return d
}

// Next implements Scheduler.
func (n Nutch) Next(p Page, obs Observation) time.Duration {
	n = n.withDefaults()
	if obs.First || p.Interval <= 0 || p.LastFetched.IsZero() {
		return clamp(n.Start, n.Min, n.Max)
	}
	sync := n.SyncDeltaRate
	if n.NoSyncDelta {
		sync = 0
	}
	modPrev := p.LastChanged
	if modPrev.IsZero() || modPrev.After(p.LastFetched) {
		modPrev = p.LastFetched
	}
	interval := float64(p.Interval) + sync*float64(p.LastFetched.Sub(modPrev))
	mod := modPrev
	if obs.Changed {
		interval *= 1 - n.DecRate
		mod = changedAt(p, obs)
	} else {
		interval *= 1 + n.IncRate
	}
	delta := 0.0
	if obs.At.After(mod) {
		delta = float64(obs.At.Sub(mod))
	}
	if sync > 0 && delta > interval {
		interval = delta
	}
	interval = math.Min(math.Max(interval, float64(n.Min)), float64(n.Max))
	next := interval - sync*delta // the check is pulled forward by sync·delta
	if !(next >= float64(n.Min)) {
		next = float64(n.Min) // never in the past
	}
	return toDuration(next)
}

// Name returns "nutch".
func (Nutch) Name() string { return "nutch" }
