package crawlstate

import (
	"errors"
	"fmt"
	"math"
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
