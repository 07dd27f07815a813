package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

// handWorld is a world of one page with known changes, to check the
// accounting against numbers worked out by hand.
func handWorld(changes []time.Duration, death time.Duration, days int) *World {
	cfg, err := Config{Mix: MixA, Pages: 1, Days: days, Turnover: -1}.withDefaults()
	if err != nil {
		panic(err)
	}
	w := &World{cfg: cfg, horizon: time.Duration(days) * schedule.Day}
	w.pages = []truth{{birth: 0, death: death, rate: 1, changes: changes}}
	return w
}

// A page fetched every 24 h (at 0, 24, 48, 72, 96 h) that changes at 10 h
// and 50 h is stale for [10, 24) and [50, 72): 36 of 96 hours.
func TestAccountingByHand(t *testing.T) {
	w := handWorld([]time.Duration{10 * time.Hour, 50 * time.Hour}, never, 4)
	r := Run(w, scheduled{"daily", schedule.Uniform{Every: 24 * time.Hour}}, 0)
	require.InDelta(t, 1-36.0/96, r.Freshness, 1e-12)
	require.InDelta(t, (14.0*14/2+22.0*22/2)/96, r.MeanAge.Hours(), 1e-9)
	// 5% of 96 h = 4.8 h of page-time older than a: 22 − a = 4.8.
	require.InDelta(t, 17.2, r.P95Age.Hours(), 1e-6)
	require.InDelta(t, 18.0, r.DetectionLatency.Hours(), 1e-9)
	require.Equal(t, 5.0, r.Fetches)
	require.Equal(t, 2.0, r.Wasted, "fetches at 24 h and 72 h found changes; 48 h and 96 h did not")
	require.Equal(t, 2.0, r.Alerts)
	require.Zero(t, r.Deletions)
}

// The same page dying at 60 h: it is live for 60 h, stale for [10, 24) and
// [50, 60); the fetch at 72 h notices the deletion 12 h late.
func TestAccountingDeath(t *testing.T) {
	w := handWorld([]time.Duration{10 * time.Hour, 50 * time.Hour}, 60*time.Hour, 4)
	r := Run(w, scheduled{"daily", schedule.Uniform{Every: 24 * time.Hour}}, 0)
	require.InDelta(t, 1-24.0/60, r.Freshness, 1e-12)
	require.Equal(t, 1.0, r.Deletions)
	require.Equal(t, 1.0, r.DeletionsNoticed)
	require.InDelta(t, 12.0, r.DeletionLatency.Hours(), 1e-9)
	require.Equal(t, 4.0, r.Fetches, "0, 24, 48 and the 72 h fetch that found it gone")
}

// A warm-up excludes its days from every figure.
func TestAccountingWarmup(t *testing.T) {
	w := handWorld([]time.Duration{10 * time.Hour, 50 * time.Hour}, never, 2)
	w.from, w.horizon = 2*schedule.Day, 4*schedule.Day // measure [48 h, 96 h]
	r := Run(w, scheduled{"daily", schedule.Uniform{Every: 24 * time.Hour}}, 0)
	require.InDelta(t, 1-22.0/48, r.Freshness, 1e-12)
	require.InDelta(t, 22.0*22/2/48, r.MeanAge.Hours(), 1e-9)
	require.Equal(t, 3.0, r.Fetches, "48, 72 and 96 h")
	require.Equal(t, 1.0, r.Alerts)
}

func TestQuantileAge(t *testing.T) {
	require.Zero(t, quantileAge(nil, 1))
	require.Zero(t, quantileAge([]period{{0, 1}}, 5), "stale less than the tail in total")
	require.InDelta(t, 8, quantileAge([]period{{0, 10}, {0, 4}}, 2), 1e-9)
	require.InDelta(t, 3, quantileAge([]period{{0, 10}, {0, 4}}, 8), 1e-9) // (10−a)+(4−a) = 8
	require.InDelta(t, 8, quantileAge([]period{{6, 10}}, 2), 1e-9, "measured ages run from A0")
	require.InDelta(t, 1, quantileAge([]period{{6, 10}, {0, 1}}, 4), 1e-9, "no measured age lies below A0")
}

// The due heap pops in (due, id) order.
func TestHeapOrder(t *testing.T) {
	r := &runner{}
	dues := []time.Duration{5, 1, 4, 1, 9, 0, 3}
	states := make([]state, len(dues))
	for i, d := range dues {
		states[i] = state{id: i, due: d}
		r.push(&states[i])
	}
	var got []int
	for len(r.heap) > 0 {
		got = append(got, r.pop().id)
	}
	require.Equal(t, []int{5, 1, 3, 6, 2, 0, 4}, got)
}
