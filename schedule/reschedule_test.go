package schedule_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

func fetched(at time.Time, changed bool) schedule.Outcome {
	return schedule.Outcome{URL: "https://h/a", At: at, Kind: schedule.Fetched, Observation: schedule.Observation{At: at, Changed: changed}}
}

// The chain's decorators, each on its own and together: what the chain
// returns is the page and the next check a crawler stores.
func TestChain(t *testing.T) {
	page := schedule.Page{Interval: 24 * time.Hour, LastFetched: t0.Add(-24 * time.Hour), Visits: 3}
	at := t0
	cases := []struct {
		name string
		opts schedule.ChainOptions
		p    schedule.Page
		o    schedule.Outcome
		next time.Duration // after at
		iv   time.Duration // the stored interval; 0: not checked
	}{
		{"base: Halving grows the interval", schedule.ChainOptions{}, page, fetched(at, false), 36 * time.Hour, 36 * time.Hour},
		{"base: a change halves it", schedule.ChainOptions{}, page, fetched(at, true), 12 * time.Hour, 12 * time.Hour},
		{"first failure: the backoff", schedule.ChainOptions{}, page, schedule.Outcome{URL: "u", At: at, Kind: schedule.Failed}, time.Hour, 24 * time.Hour},
		{"third failure: doubled twice", schedule.ChainOptions{}, page, schedule.Outcome{URL: "u", At: at, Kind: schedule.Failed, Failures: 2}, 4 * time.Hour, 0},
		{"a permanent failure: the longest interval", schedule.ChainOptions{}, page, schedule.Outcome{URL: "u", At: at, Kind: schedule.Failed, Permanent: true}, 30 * 24 * time.Hour, 0},
		{"many failures: capped", schedule.ChainOptions{Backoff: 2 * time.Hour}, page, schedule.Outcome{URL: "u", At: at, Kind: schedule.Failed, Failures: 60}, 30 * 24 * time.Hour, 0},
		{"gone: due at once, left as it was", schedule.ChainOptions{}, page, schedule.Outcome{URL: "u", At: at, Kind: schedule.Gone}, 0, 24 * time.Hour},
		{"a pin overrides", schedule.ChainOptions{Pin: func(o schedule.Outcome, _ schedule.Decision) (time.Time, bool) { return o.At.Add(time.Minute), true }}, page, fetched(at, false), time.Minute, 36 * time.Hour},
		{"a pin that declines", schedule.ChainOptions{Pin: func(schedule.Outcome, schedule.Decision) (time.Time, bool) { return time.Time{}, false }}, page, fetched(at, false), 36 * time.Hour, 36 * time.Hour},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := schedule.Chain(schedule.DefaultHalving, tc.opts).Reschedule(tc.p, tc.o)
			require.Equal(t, at.Add(tc.next), d.Next)
			if tc.iv > 0 {
				require.Equal(t, tc.iv, d.Page.Interval)
			}
		})
	}
}

// Jitter moves the next check earlier by up to its fraction, the same for
// the same URL and visits, never below a second.
func TestChainJitter(t *testing.T) {
	c := schedule.Chain(schedule.DefaultHalving, schedule.ChainOptions{Jitter: 0.2})
	page := schedule.Page{Interval: 24 * time.Hour, LastFetched: t0.Add(-24 * time.Hour), Visits: 3}
	seen := map[time.Time]bool{}
	for i := range 50 {
		o := fetched(t0, false)
		o.URL = fmt.Sprintf("https://h/p%d", i)
		d := c.Reschedule(page, o)
		require.LessOrEqual(t, d.Next.Sub(t0), 36*time.Hour)
		require.GreaterOrEqual(t, d.Next.Sub(t0), time.Duration(0.8*float64(36*time.Hour)))
		require.Equal(t, d.Next, c.Reschedule(page, o).Next, "the same URL, the same jitter")
		seen[d.Next] = true
	}
	require.Greater(t, len(seen), 40, "spread")
	tiny := schedule.Chain(schedule.Uniform{Every: time.Millisecond}, schedule.ChainOptions{Jitter: 0.9})
	require.Equal(t, t0.Add(time.Second), tiny.Reschedule(page, fetched(t0, false)).Next)
}

// Weigh and Hint set the page before the policy sees it; Learn hands the
// fetch to the co-change model.
func TestChainDecoratesThePage(t *testing.T) {
	var seen schedule.Page
	spy := schedule.ReschedulerFunc(func(p schedule.Page, o schedule.Outcome) schedule.Decision {
		seen = p
		return schedule.Decision{Page: p, Next: o.At.Add(time.Hour)}
	})
	hint := schedule.SitemapHint{Listed: true, Moved: true}
	var r schedule.Rescheduler = schedule.Hint{Next: spy, Sitemap: func(schedule.Page, schedule.Outcome) schedule.SitemapHint { return hint }}
	r = schedule.Weigh{Next: r, Weight: func(string) (float64, bool) { return 3, true }}
	r.Reschedule(schedule.Page{}, fetched(t0, false))
	require.Equal(t, 3.0, seen.Weight)
	require.Equal(t, hint, seen.Sitemap)
	schedule.Weigh{Next: spy, Weight: func(string) (float64, bool) { return -1, true }}.Reschedule(schedule.Page{Weight: 5}, fetched(t0, false))
	require.Zero(t, seen.Weight, "a weight that is not positive is the default")
	schedule.Weigh{Next: spy, Weight: func(string) (float64, bool) { return 0, false }}.Reschedule(schedule.Page{Weight: 5}, fetched(t0, false))
	require.Equal(t, 5.0, seen.Weight, "no weight: the page keeps its own")

	m := schedule.NewCoChange(nil)
	l := schedule.Learn{Next: spy, Model: m}
	l.Reschedule(schedule.Page{LastFetched: t0.Add(-time.Hour)}, fetched(t0, true))
	require.Equal(t, []string{"https://h/"}, m.Touched(), "the fetch's change reached the model")
}

// Advance uses a scheduler's Advancer ability, and gives the same page as
// Next and Observe do separately.
func TestAdvanceAdvancer(t *testing.T) {
	p := schedule.Page{Interval: 24 * time.Hour, LastFetched: t0.Add(-48 * time.Hour), Visits: 5, Changes: 2}
	obs := schedule.Observation{At: t0, Changed: true}
	for _, s := range []schedule.Scheduler{schedule.Optimal{}, &schedule.Optimal{}, schedule.Index{}, schedule.DefaultHalving} {
		got := schedule.Advance(s, p, obs)
		want := schedule.Observe(p, obs)
		want.Interval = s.Next(p, obs)
		require.Equal(t, want, got, "%T", s)
	}
}

func ExampleChain() {
	chain := schedule.Chain(schedule.DefaultHalving, schedule.ChainOptions{Jitter: 0})
	page := schedule.Page{Interval: 24 * time.Hour, LastFetched: t0.Add(-24 * time.Hour), Visits: 1}
	d := chain.Reschedule(page, schedule.Outcome{URL: "https://docs.example.com/a", At: t0, Kind: schedule.Fetched, Observation: schedule.Observation{At: t0}})
	fmt.Println(d.Page.Interval, d.Next.Sub(t0))
	f := chain.Reschedule(page, schedule.Outcome{URL: "https://docs.example.com/a", At: t0, Kind: schedule.Failed, Failures: 1})
	fmt.Println(f.Next.Sub(t0))
	// Output:
	// 36h0m0s 36h0m0s
	// 2h0m0s
}
