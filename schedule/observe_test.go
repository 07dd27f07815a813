package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestObserveFirstFetchStartsAfresh(t *testing.T) {
	old := schedule.Page{Visits: 9, Changes: 4, Elapsed: time.Hour, Recent: []schedule.Check{{Elapsed: time.Hour}},
		Interval: 3 * time.Hour, Weight: 2}
	lm := t0.Add(-48 * time.Hour)
	p := schedule.Observe(old, schedule.Observation{At: t0, First: true, LastModified: lm})
	require.Equal(t, 1, p.Visits)
	require.Equal(t, 0, p.Changes)
	require.Zero(t, p.Elapsed)
	require.Empty(t, p.Recent)
	require.Equal(t, t0, p.LastFetched)
	require.Equal(t, lm, p.LastChanged)
	require.Equal(t, lm, p.LastModified)
	require.Equal(t, schedule.EstimateIrregular(nil, schedule.DefaultLimits), p.ChangeRate)
	require.Equal(t, 3*time.Hour, p.Interval, "Observe leaves Interval to the scheduler")
	require.Equal(t, 2.0, p.Weight)
}

func TestObserveAccumulates(t *testing.T) {
	p := schedule.Observe(schedule.Page{}, schedule.Observation{At: t0, First: true})
	p = schedule.Observe(p, schedule.Observation{At: t0.Add(6 * time.Hour), Changed: true})
	p = schedule.Observe(p, schedule.Observation{At: t0.Add(30 * time.Hour)})
	require.Equal(t, 3, p.Visits)
	require.Equal(t, 1, p.Changes)
	require.Equal(t, 30*time.Hour, p.Elapsed)
	require.Equal(t, []schedule.Check{{Elapsed: 6 * time.Hour, Changed: true}, {Elapsed: 24 * time.Hour}}, p.Recent)
	require.Equal(t, t0.Add(6*time.Hour), p.LastChanged)
	require.Equal(t, schedule.EstimateIrregularWeighted(p.Recent, schedule.DefaultLimits, schedule.DefaultPriorWeight), p.ChangeRate)
}

func TestObserveWindowAndAliasing(t *testing.T) {
	p := schedule.Observe(schedule.Page{}, schedule.Observation{At: t0, First: true})
	at := t0
	for i := range schedule.DefaultWindow + 10 {
		at = at.Add(time.Duration(i+1) * time.Minute)
		p = schedule.Observe(p, schedule.Observation{At: at, Changed: i%3 == 0})
	}
	require.Len(t, p.Recent, schedule.DefaultWindow)
	require.Equal(t, time.Duration(schedule.DefaultWindow+10)*time.Minute, p.Recent[len(p.Recent)-1].Elapsed, "newest last")
	require.Equal(t, 11*time.Minute, p.Recent[0].Elapsed, "oldest dropped first")

	before := append([]schedule.Check(nil), p.Recent...)
	a := schedule.Observe(p, schedule.Observation{At: at.Add(time.Hour), Changed: true})
	b := schedule.Observe(p, schedule.Observation{At: at.Add(2 * time.Hour)})
	require.Equal(t, before, p.Recent, "the input window is never modified")
	require.True(t, a.Recent[len(a.Recent)-1].Changed)
	require.False(t, b.Recent[len(b.Recent)-1].Changed)
}

func TestObserveIgnoresFetchesNotAfterTheLast(t *testing.T) {
	p := schedule.Observe(schedule.Page{}, schedule.Observation{At: t0, First: true})
	q := schedule.Observe(p, schedule.Observation{At: t0, Changed: true})
	require.Equal(t, p.Visits, q.Visits)
	require.Empty(t, q.Recent)
	q = schedule.Observe(p, schedule.Observation{At: t0.Add(-time.Hour), Changed: true})
	require.Equal(t, p.Visits, q.Visits)
	require.Equal(t, t0, q.LastFetched)
}

// A Last-Modified counts only when it agrees with the content comparison.
func TestObserveLastModifiedConsistency(t *testing.T) {
	prev := t0
	at := t0.Add(24 * time.Hour)
	base := schedule.Observe(schedule.Page{}, schedule.Observation{At: prev, First: true})
	tests := []struct {
		name         string
		changed      bool
		lm           time.Time
		wantModified time.Duration
		wantChanged  time.Time // LastChanged after the fetch
	}{
		{"change with a Last-Modified after the previous fetch", true, at.Add(-5 * time.Hour), 5 * time.Hour, at.Add(-5 * time.Hour)},
		{"no change, Last-Modified before the previous fetch", false, prev.Add(-time.Hour), 24 * time.Hour, prev},
		{"no change but Last-Modified moved (dynamic page)", false, at, 0, prev},
		{"change but Last-Modified predates the previous fetch", true, prev.Add(-time.Hour), 0, at},
		{"change without Last-Modified", true, time.Time{}, 0, at},
		{"Last-Modified from the future is ignored", true, at.Add(time.Hour), 0, at},
		{"small clock skew is forgiven", true, at.Add(10 * time.Second), time.Nanosecond, at},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := schedule.Observe(base, schedule.Observation{At: at, Changed: tc.changed, LastModified: tc.lm})
			require.Len(t, p.Recent, 1)
			require.Equal(t, tc.wantModified, p.Recent[0].Modified)
			require.Equal(t, tc.wantChanged, p.LastChanged)
		})
	}
}
