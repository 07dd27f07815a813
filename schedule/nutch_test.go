package schedule_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

func TestNutchSteps(t *testing.T) {
	day := schedule.Day
	fetched := t0
	tests := []struct {
		name string
		n    schedule.Nutch
		page schedule.Page
		obs  schedule.Observation
		want time.Duration
	}{
		{"first fetch: the default interval", schedule.Nutch{}, schedule.Page{},
			schedule.Observation{At: t0, First: true}, 30 * day},
		{"change: ×0.8, the check is not pulled forward", schedule.Nutch{},
			schedule.Page{Interval: 30 * day, LastFetched: fetched, LastChanged: fetched},
			schedule.Observation{At: fetched.Add(30 * day), Changed: true}, 24 * day},
		{"no change: ×1.4, pulled forward by 0.3·delta", schedule.Nutch{},
			schedule.Page{Interval: 24 * day, LastFetched: fetched, LastChanged: fetched},
			schedule.Observation{At: fetched.Add(24 * day)}, time.Duration((24*1.4 - 0.3*24) * float64(day))},
		{"no change without sync-delta", schedule.Nutch{NoSyncDelta: true},
			schedule.Page{Interval: 24 * day, LastFetched: fetched, LastChanged: fetched},
			schedule.Observation{At: fetched.Add(24 * day)}, time.Duration(24 * 1.4 * float64(day))},
		{"the interval is never shorter than delta", schedule.Nutch{},
			// Nutch's own interval is 2 + 0.3·60 = 20 days; ×1.4 = 28 < delta = 62.
			schedule.Page{Interval: 2 * day, LastFetched: fetched, LastChanged: fetched.Add(-60 * day)},
			schedule.Observation{At: fetched.Add(2 * day)}, time.Duration((62 - 0.3*62) * float64(day))},
		{"a change uses a consistent Last-Modified as the modification time", schedule.Nutch{},
			schedule.Page{Interval: 10 * day, LastFetched: fetched, LastChanged: fetched},
			schedule.Observation{At: fetched.Add(10 * day), Changed: true, LastModified: fetched.Add(6 * day)},
			time.Duration((8 - 0.3*4) * float64(day))},
		{"capped at Max", schedule.Nutch{Max: 40 * day},
			schedule.Page{Interval: 39 * day, LastFetched: fetched, LastChanged: fetched},
			schedule.Observation{At: fetched.Add(39 * day)}, time.Duration((40 - 0.3*39) * float64(day))},
		{"floored at Min", schedule.Nutch{Min: time.Hour},
			schedule.Page{Interval: time.Hour, LastFetched: fetched, LastChanged: fetched},
			schedule.Observation{At: fetched.Add(time.Hour), Changed: true}, time.Hour},
		{"never scheduled in the past: a long-unchanged page at Max", schedule.Nutch{},
			schedule.Page{Interval: 200 * day, LastFetched: fetched, LastChanged: fetched.Add(-3000 * day)},
			schedule.Observation{At: fetched.Add(200 * day)}, schedule.NutchMinInterval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, float64(tc.want), float64(tc.n.Next(tc.page, tc.obs)), float64(time.Millisecond))
		})
	}
}

// nutchReference is a direct model of Nutch's AdaptiveFetchSchedule state
// (interval, fetch time and modified time kept apart), to check that Nutch
// recovers the same schedule from what Page stores.
type nutchReference struct {
	interval float64 // ns
	modified time.Time
}

func (r *nutchReference) fetch(p schedule.Page, obs schedule.Observation) (next time.Time) {
	n := schedule.DefaultNutch
	if obs.First {
		r.interval = float64(n.Start)
		r.modified = schedule.Observe(p, obs).LastChanged
		return obs.At.Add(n.Start)
	}
	if obs.Changed {
		r.interval *= 1 - n.DecRate
		r.modified = schedule.Observe(p, obs).LastChanged
	} else {
		r.interval *= 1 + n.IncRate
	}
	delta := float64(obs.At.Sub(r.modified))
	if delta > r.interval {
		r.interval = delta
	}
	r.interval = min(max(r.interval, float64(n.Min)), float64(n.Max))
	return obs.At.Add(time.Duration(r.interval - n.SyncDeltaRate*delta))
}

func TestNutchMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for trial := range 50 {
		lam := []float64{0.02, 0.2, 1, 5}[trial%4]
		var ref nutchReference
		p := schedule.Page{}
		at := t0
		first := true
		for range 40 {
			obs := schedule.Observation{At: at, First: first}
			if !first {
				elapsed := at.Sub(p.LastFetched).Hours() / 24
				obs.Changed = rng.Float64() < -math.Expm1(-lam*elapsed)
			}
			first = false
			want := ref.fetch(p, obs)
			p = schedule.Advance(schedule.DefaultNutch, p, obs)
			require.InDelta(t, 0, float64(obs.At.Add(p.Interval).Sub(want)), float64(time.Microsecond), "trial %d", trial)
			// the crawler fetches at the due time or up to a day late
			at = obs.At.Add(p.Interval).Add(time.Duration(rng.Float64() * float64(schedule.Day)))
		}
	}
}

func TestUniform(t *testing.T) {
	require.Equal(t, schedule.DefaultUniformInterval, schedule.Uniform{}.Next(schedule.Page{}, schedule.Observation{}))
	require.Equal(t, 3*time.Hour, schedule.Uniform{Every: 3 * time.Hour}.Next(schedule.Page{}, schedule.Observation{Changed: true}))
	tests := []struct {
		name   string
		budget schedule.Rate
		pages  int
		want   time.Duration
	}{
		{"budget spread over pages", 100, 1000, 10 * schedule.Day},
		{"never below the one-hour floor", 1e6, 10, schedule.DefaultMinInterval},
		{"no budget: the default", 0, 10, schedule.DefaultUniformInterval},
		{"no pages: the default", 5, 0, schedule.DefaultUniformInterval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, schedule.UniformFor(tc.budget, tc.pages).Every)
		})
	}
}

func TestGain(t *testing.T) {
	fetched := schedule.Page{LastFetched: t0, ChangeRate: 1}
	require.InDelta(t, 1-1/math.E, schedule.Gain(fetched, t0.Add(schedule.Day)), 1e-9)
	require.Zero(t, schedule.Gain(fetched, t0))
	require.Zero(t, schedule.Gain(fetched, t0.Add(-time.Hour)))
	require.Equal(t, 3.0, schedule.Gain(schedule.Page{Weight: 3}, t0), "never fetched: the full weight")

	heavy := fetched
	heavy.Weight = 2
	require.InDelta(t, 2*schedule.Gain(fetched, t0.Add(time.Hour)), schedule.Gain(heavy, t0.Add(time.Hour)), 1e-12)

	// A fast page fetched an hour ago can outrank a slow page fetched a
	// week ago: ordering by gain is not ordering by age.
	fast := schedule.Page{LastFetched: t0.Add(-time.Hour), ChangeRate: 24}
	slow := schedule.Page{LastFetched: t0.Add(-7 * schedule.Day), ChangeRate: 0.01}
	require.Greater(t, schedule.Gain(fast, t0), schedule.Gain(slow, t0))

	// Without a cached rate, the estimate is used.
	raw := schedule.Page{LastFetched: t0, Recent: []schedule.Check{{Elapsed: schedule.Day, Changed: true}}}
	withRate := raw
	withRate.ChangeRate = schedule.Estimate(raw)
	require.Equal(t, schedule.Gain(withRate, t0.Add(schedule.Day)), schedule.Gain(raw, t0.Add(schedule.Day)))
}

func TestAdvance(t *testing.T) {
	obs := schedule.Observation{At: t0, First: true}
	p := schedule.Advance(schedule.DefaultHalving, schedule.Page{}, obs)
	require.Equal(t, schedule.Day, p.Interval)
	require.Equal(t, 1, p.Visits)
	require.Equal(t, t0, p.LastFetched)

	obs = schedule.Observation{At: t0.Add(schedule.Day), Changed: true}
	q := schedule.Advance(schedule.DefaultHalving, p, obs)
	require.Equal(t, schedule.DefaultHalving.Next(p, obs), q.Interval)
	require.Equal(t, 2, q.Visits)

	o := &schedule.Optimal{Multiplier: 0.2}
	require.Equal(t, o.Next(p, obs), schedule.Advance(o, p, obs).Interval)
}
