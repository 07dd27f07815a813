// Package retry holds the two small pieces every HTTP client of recrawl
// shares: reading a Retry-After header and a capped exponential backoff
// with full jitter.
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

// Backoff returns the wait before retry n (1 for the first retry): a
// uniformly random duration in [0, min(ceiling, base·2ⁿ)] (full jitter).
func Backoff(n int, base, ceiling time.Duration) time.Duration {
	d := ceiling
	if n >= 0 && n < 62 && base > 0 && base<<n > 0 && base<<n < ceiling {
		d = base << n
	}
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}
