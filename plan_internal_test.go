package recrawl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/statetest"
	"github.com/recrawl/recrawl/internal/cputime"
	"github.com/recrawl/recrawl/schedule"
)

// planState returns a state holding n fetched rows of source, each with a
// full window of checks of one of mix A's rates.
func planState(tb testing.TB, n int, source string, t0 time.Time) planStore {
	tb.Helper()
	ctx := context.Background()
	st := openPlanState(tb, filepath.Join(tb.TempDir(), "state.sqlite"))
	rng := rand.New(rand.NewPCG(5, 5))
	for lo := 0; lo < n; lo += 5000 {
		var urls []crawlstate.Discovered
		var results []crawlstate.Result
		for i := lo; i < min(lo+5000, n); i++ {
			u := fmt.Sprintf("https://example.test/page/%d", i)
			urls = append(urls, crawlstate.Discovered{URL: u})
			lam := []float64{1, 0.25, 1.0 / 15, 1.0 / 60, 1.0 / 365}[i%5]
			recent := make([]crawlstate.Check, schedule.DefaultWindow)
			for j := range recent {
				el := time.Duration((0.5 + rng.Float64()) * float64(schedule.Day))
				recent[j] = crawlstate.Check{Elapsed: el, Changed: rng.Float64() < 1-math.Exp(-lam*el.Hours()/24)}
			}
			at := t0.Add(time.Duration(rng.Float64() * float64(10*schedule.Day)))
			results = append(results, crawlstate.Result{
				URL: u, At: at, Changed: true, ContentHash: fmt.Sprintf("h%d", i),
				Interval: schedule.Day, NextCheck: at.Add(schedule.Day),
				Stats: &crawlstate.Stats{Elapsed: 40 * schedule.Day, Recent: recent, ChangeRate: lam, LastChanged: at},
			})
		}
		if _, err := st.UpsertDiscovered(ctx, source, t0, urls); err != nil {
			tb.Fatal(err)
		}
		if err := st.Record(ctx, source, results); err != nil {
			tb.Fatal(err)
		}
	}
	return st
}

// planStore is the state of the planning tests: every ability the engine
// uses alone, the listers included (not crawlstate.Sharer). openPlanState
// opens one: SQLite with cgo, the memory store without.
type planStore interface {
	statetest.Full
	crawlstate.PlanLister
	crawlstate.LiveLister
}

// onlyState hides the optional abilities of a State the engine does not
// need (PlanLister, LiveLister).
type onlyState struct{ statetest.Full }

// Planning reads the rows the same through crawlstate.PlanLister as
// through the due queue: the same plan.
func TestPlanReadsThePlanningColumns(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	start := t0.Add(20 * schedule.Day)
	var plans []*schedule.IndexPlan
	for _, hide := range []bool{false, true} {
		st := planState(t, 700, "s", t0)
		defer st.Close()
		var state crawlstate.State = st
		if hide {
			state = onlyState{st}
		}
		_, lister := state.(crawlstate.PlanLister)
		require.Equal(t, !hide, lister)
		e, err := New(Config{State: state, Clock: clock.NewFake(t0), BatchSize: 64})
		require.NoError(t, err)
		for i := range 3 {
			s, err := e.plan(ctx, "s", start.Add(time.Duration(i)*time.Hour))
			require.NoError(t, err)
			if i == 2 {
				p := s.(schedule.IndexPlan)
				plans = append(plans, &p)
			}
		}
	}
	require.Positive(t, plans[0].Limit())
	require.Equal(t, plans[1].Limit(), plans[0].Limit())
	require.InEpsilon(t, plans[1].Multiplier(), plans[0].Multiplier(), 1e-9, "the same price (the rows come in another order)")
}

// Planning hands the due rows on to the due walk for a source of up to
// handOnRows live rows, the bound included (and the rest of the page that
// passes it), and not for a larger one. (A
// source of exactly handOnRows rows, 10,000, the size of the throughput
// benchmark's site, was read whole and then again through the due queue:
// the bound was checked after its last full page.)
func TestPlanHandsOnRowsUpToTheBound(t *testing.T) {
	if _, ok := openPlanState(t, filepath.Join(t.TempDir(), "probe.sqlite")).(crawlstate.LiveLister); !ok {
		t.Skip("the state lists no rows whole")
	}
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	start := t0.Add(20 * schedule.Day) // every row due
	for _, tc := range []struct {
		rows     int
		handedOn bool
	}{{handOnRows - 1, true}, {handOnRows, true}, {handOnRows + 501, false}} {
		st := planState(t, tc.rows, "s", t0)
		e, err := New(Config{State: st, Clock: clock.NewFake(t0), BatchSize: 500})
		require.NoError(t, err)
		var due []*crawlstate.Row
		_, err = e.planRun(ctx, "s", start, &due, true)
		require.NoError(t, err)
		if tc.handedOn {
			require.Len(t, due, tc.rows, "%d rows", tc.rows)
		} else {
			require.True(t, due == nil, "%d rows: %d handed on", tc.rows, len(due))
		}
		require.NoError(t, st.Close())
	}
}

// BenchmarkEnginePlan is the engine's planning step at the start of a run
// of the default scheduler over a source of 100,000 fetched pages, each
// with a full window of checks: the run's start recorded, every live row
// read from SQLite (through crawlstate.PlanLister, and through the due
// queue as for a State without it), and schedule.Index's PlanRun.
func BenchmarkEnginePlan(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	const source = "bench"
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	st := planState(b, n, source, t0)
	defer st.Close()
	start := t0.Add(20 * schedule.Day)
	for _, v := range []struct {
		name  string
		state crawlstate.State
	}{{"plan-rows", st}, {"due-queue", onlyState{st}}} {
		b.Run(v.name, func(b *testing.B) {
			e, err := New(Config{State: v.state, Clock: clock.NewFake(t0)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				start = start.Add(time.Hour)
				s, err := e.plan(ctx, source, start)
				if err != nil {
					b.Fatal(err)
				}
				if s.(schedule.RunPlan).Limit() <= 0 {
					b.Fatal("an empty plan")
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(n), "rows")
		})
	}
}
