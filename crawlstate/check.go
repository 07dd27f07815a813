package crawlstate

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Check reports what makes r invalid for source under the Result contract,
// which every store checks for the whole batch before writing any of it:
// chunks with the same ordinal, an alert without ID or of another source,
// an event without stage, a NaN change rate or weight.
func (r *Result) Check(source string) error {
	if r.ReplaceChunks && !r.Gone {
		seen := make(map[int]struct{}, len(r.Chunks))
		for _, c := range r.Chunks {
			if _, dup := seen[c.Ordinal]; dup {
				return fmt.Errorf("two chunks have ordinal %d; ordinals must be distinct", c.Ordinal)
			}
			seen[c.Ordinal] = struct{}{}
		}
	}
	if a := r.Alert; a != nil {
		if a.ID == "" {
			return errors.New("the alert has an empty ID; set it to alert.ID(url, old hash, new hash)")
		}
		if a.Source != "" && a.Source != source {
			return fmt.Errorf("alert %s names source %q but is recorded for source %q", a.ID, a.Source, source)
		}
	}
	for i, e := range r.Events {
		if e.Stage == "" {
			return fmt.Errorf("events[%d] has an empty stage", i)
		}
	}
	if st := r.Stats; st != nil {
		if math.IsNaN(st.ChangeRate) || math.IsNaN(st.Weight) {
			return fmt.Errorf("the statistics have a NaN ChangeRate (%v) or Weight (%v); pass numbers", st.ChangeRate, st.Weight)
		}
	}
	return nil
}

// CheckLease reports what makes the arguments of a lock or a lease invalid
// (Lock, Refresh, Claim, Extend): an empty source or owner, a ttl that is
// not positive. Every store checks them so, naming every problem at once.
func CheckLease(source, owner string, ttl time.Duration) error {
	var problems []string
	if source == "" {
		problems = append(problems, "empty source name")
	}
	if owner == "" {
		problems = append(problems, "empty owner; pass an identity unique to this run")
	}
	if ttl <= 0 {
		problems = append(problems, fmt.Sprintf("ttl %v; it must be positive", ttl))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, ", "))
	}
	return nil
}

// CheckTrust reports what makes a delta and keep invalid for
// TrustStore.AddLastModTrust: a count that is negative or not finite, a
// keep that is not finite.
func CheckTrust(delta LastModCounts, keep float64) error {
	for _, v := range []float64{delta.MovedChanged, delta.MovedSame, delta.StillChanged, delta.StillSame} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("count %v; counts must be finite and not negative", v)
		}
	}
	if math.IsNaN(keep) || math.IsInf(keep, 0) {
		return fmt.Errorf("keep %v; it must be finite", keep)
	}
	return nil
}
