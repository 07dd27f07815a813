// Package retry holds the small pieces every retry loop of recrawl shares:
// reading a Retry-After header and a capped exponential backoff (Exp),
// with full jitter (Backoff) or half of it (HalfJitter).
package retry

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxSeconds bounds delay-seconds before they become a Duration (a year).
const maxSeconds = int64(365 * 24 * time.Hour / time.Second)

// After reads a Retry-After value: delay-seconds, or an HTTP date in any
// of the three forms http.ParseTime accepts. ok is false when the value is
// absent, negative or malformed. A date in the past is 0. When limit > 0
// the wait is capped at limit, so a hostile header cannot park a caller
// for days.
func After(v string, now time.Time, limit time.Duration) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		d = time.Duration(min(secs, maxSeconds)) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = max(t.Sub(now), 0)
	} else {
		return 0, false
	}
	if limit > 0 {
		d = min(d, limit)
	}
	return d, true
}

// Exp returns base·2ⁿ capped at ceiling: the wait before retry n of a
// capped exponential backoff, before any jitter. It is ceiling when base·2ⁿ
// would overflow, n is negative or base is not positive, and never below 0.
func Exp(n int, base, ceiling time.Duration) time.Duration {
	d := ceiling
	if n >= 0 && n < 62 && base > 0 && base<<n > 0 && base<<n < ceiling {
		d = base << n
	}
	return max(d, 0)
}

// Backoff returns the wait before retry n (1 for the first retry): a
// uniformly random duration in [0, Exp(n, base, ceiling)] (full jitter).
func Backoff(n int, base, ceiling time.Duration) time.Duration {
	d := Exp(n, base, ceiling)
	if d == 0 {
		return 0
	}
	return rand.N(d + 1)
}

// HalfJitter returns a uniformly random duration in [d/2, d] for
// d = Exp(n, base, ceiling) ("equal jitter"): callers spread out as with
// Backoff but always wait at least half the exponential step.
func HalfJitter(n int, base, ceiling time.Duration) time.Duration {
	d := Exp(n, base, ceiling)
	half := d / 2
	return half + rand.N(d-half+1)
}
