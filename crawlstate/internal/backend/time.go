package backend

import (
	"math"
	"time"
)

// The SQL stores keep an instant as int64 Unix nanoseconds: it
// round-trips exactly and comes back in UTC, and instants outside the
// years 1678 to 2262 are clamped to that range.
const (
	// ZeroTime is how the zero time.Time is stored: below every real
	// instant, so a zero NextCheck ("due now") sorts first.
	ZeroTime = math.MinInt64
	// Never is the next check of an excluded row, the largest instant
	// stored: no due query reaches it.
	Never = math.MaxInt64
)

// Bounds of the instants int64 nanoseconds can hold (ZeroTime excluded).
var (
	minTime = time.Unix(0, math.MinInt64+1)
	maxTime = time.Unix(0, math.MaxInt64)
)

// EncTime stores t as Unix nanoseconds, clamping to the int64 range.
func EncTime(t time.Time) int64 {
	switch {
	case t.IsZero():
		return ZeroTime
	case t.Before(minTime):
		return minTime.UnixNano()
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// DecTime is the inverse of EncTime; times come back in UTC.
func DecTime(ns int64) time.Time {
	if ns == ZeroTime {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
