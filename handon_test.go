package recrawl_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/statetest"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// readCounter counts the row reads of a state: due queue pages,
// planning pages and whole live-row pages.
type readCounter struct {
	testStore
	mu               sync.Mutex
	due, plan, whole int
}

func (s *readCounter) Due(ctx context.Context, source string, now time.Time, after crawlstate.Key, limit int) ([]crawlstate.Row, error) {
	s.mu.Lock()
	s.due++
	s.mu.Unlock()
	return s.testStore.Due(ctx, source, now, after, limit)
}

func (s *readCounter) PlanRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	s.mu.Lock()
	s.plan++
	s.mu.Unlock()
	return s.testStore.PlanRows(ctx, source, after, limit)
}

func (s *readCounter) LiveRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	s.mu.Lock()
	s.whole++
	s.mu.Unlock()
	return s.testStore.LiveRows(ctx, source, after, limit)
}

// reads returns the counts since the last call.
func (s *readCounter) reads() (due, plan, whole int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	due, plan, whole = s.due, s.plan, s.whole
	s.due, s.plan, s.whole = 0, 0, 0
	return due, plan, whole
}

// planOnly is a state that lists rows for planning but not whole: every
// run reads its due rows from the due queue.
type planOnly struct {
	statetest.Full
	pl crawlstate.PlanLister
}

func (s planOnly) PlanRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	return s.pl.PlanRows(ctx, source, after, limit)
}

// handOnSide is one of two identical sites and engines; the first one's
// state can list rows whole, the second one's cannot.
type handOnSide struct {
	clk    *clock.Fake
	site   *testsite.Site
	reads  *readCounter
	eng    *recrawl.Engine
	src    discover.Source
	events []string // "outcome url" of every due URL, in the order of the run
}

func newHandOnSide(t *testing.T, pages int, sched schedule.Scheduler, whole bool) *handOnSide {
	t.Helper()
	s := &handOnSide{clk: clock.NewAutoFake(start)}
	s.site = testsite.New(testsite.Options{Pages: pages, Clock: s.clk, Host: "docs.example"})
	t.Cleanup(s.site.Close)
	st := openState(t, filepath.Join(t.TempDir(), "state.sqlite"))
	t.Cleanup(func() { st.Close() })
	s.reads = &readCounter{testStore: st}
	var state crawlstate.State = s.reads
	if !whole {
		state = planOnly{Full: s.reads, pl: s.reads}
	}
	s.eng = mustEngine(t, recrawl.Config{
		State: state, Clock: s.clk, HTTPClient: s.site.Client(), Workers: 1, BatchSize: 8,
		Scheduler: sched,
		Limits:    limits(func(l *recrawl.Limits) { l.HostConcurrency = 1 }),
		Observer: func(ev recrawl.Event) {
			if ev.Outcome != "" {
				s.events = append(s.events, fmt.Sprint(ev.Outcome, " ", ev.URL))
			}
		},
	})
	s.src = discover.Sitemap{URL: s.site.SitemapURL()}
	return s
}

func (s *handOnSide) run(t *testing.T) *recrawl.Report {
	t.Helper()
	s.events = nil
	rep, err := s.eng.Run(context.Background(), s.src)
	require.NoError(t, err)
	reconcile(t, rep)
	return rep
}

// runBoth runs both sides and requires the same outcome: the same report
// counts, the same URL outcomes (in the same order, for a run of 304s:
// one worker fetches the due rows one by one), the same rows stored.
func runBoth(t *testing.T, a, b *handOnSide) *recrawl.Report {
	t.Helper()
	ra, rb := a.run(t), b.run(t)
	for _, r := range []*recrawl.Report{ra, rb} {
		r.StartedAt, r.FinishedAt = time.Time{}, time.Time{}
	}
	require.Equal(t, rb, ra)
	if ra.Bodies > 0 {
		// Pages with a body finish in the order extraction gets to them.
		slices.Sort(a.events)
		slices.Sort(b.events)
	}
	require.Equal(t, b.events, a.events)
	for _, u := range a.site.PageURLs() {
		want, err := b.reads.Get(context.Background(), b.src.Name(), u)
		require.NoError(t, err)
		got, err := a.reads.Get(context.Background(), a.src.Name(), u)
		require.NoError(t, err)
		require.Equal(t, want, got, u)
	}
	return ra
}

// A run whose discovery changes no row (the sitemap answers 304, nothing
// is missing) reads each due row once: planning reads the rows whole and
// hands the due ones to the fetch stage, which does not read the due
// queue. The run is the same as one that reads the due queue. A run whose
// discovery changes rows reads the due queue, and so does the next run of
// the source, until one changes nothing again.
func TestDueRowsReadOnceWhenDiscoveryChangesNothing(t *testing.T) {
	forPlanners(t, testDueRowsReadOnce)
}

// forPlanners runs test with both kinds of planner: one whose plan
// limits and ranks the run (the due rows are dispatched by rank) and one
// whose plan does not (they are dispatched in the due queue's order).
func forPlanners(t *testing.T, test func(t *testing.T, sched schedule.Scheduler)) {
	for _, tc := range []struct {
		name  string
		sched schedule.Scheduler
	}{{"ranked", schedule.Index{}}, {"in-order", schedule.Optimal{Multiplier: 0.15}}} {
		t.Run(tc.name, func(t *testing.T) {
			test(t, tc.sched)
		})
	}
}

func testDueRowsReadOnce(t *testing.T, sched schedule.Scheduler) {
	const pages = 30
	a, b := newHandOnSide(t, pages, sched, true), newHandOnSide(t, pages, sched, false)
	both := func() *recrawl.Report {
		a.clk.Advance(400 * 24 * time.Hour) // every row due
		b.clk.Advance(400 * 24 * time.Hour)
		return runBoth(t, a, b)
	}
	require.Equal(t, pages, runBoth(t, a, b).New)
	due, plan, whole := a.reads.reads()
	require.Equal(t, 1, whole, "an empty state: one empty page")
	require.Zero(t, plan)
	require.Positive(t, due, "the new rows are read from the due queue")

	rep := both()
	require.Equal(t, pages, rep.NotModified)
	due, plan, whole = a.reads.reads()
	require.Zero(t, whole, "the first run listed every URL anew: the next one reads the due queue")
	require.Positive(t, due)
	require.Positive(t, plan)

	for range 2 {
		rep = both()
		require.Equal(t, pages, rep.NotModified)
		require.Equal(t, pages, rep.Due)
		due, plan, whole = a.reads.reads()
		require.Zero(t, due, "the due rows were handed on")
		require.Zero(t, plan)
		require.Equal(t, pages/8+1, whole, "every live row read once, 8 at a time")
	}

	// A new page: the sitemap changes, the rows read before discovery
	// are stale, and the due queue is read; the new page is fetched in
	// the same run.
	for _, s := range []*handOnSide{a, b} {
		s.site.Add("/docs/new-page", "New", "<p>A page added to the site.</p>")
	}
	rep = both()
	require.Equal(t, 1, rep.New)
	require.Equal(t, pages, rep.NotModified)
	due, _, whole = a.reads.reads()
	require.Positive(t, whole)
	require.Positive(t, due, "discovery changed rows: the due queue is read")

	rep = both()
	require.Equal(t, pages+1, rep.NotModified)
	due, plan, whole = a.reads.reads()
	require.Zero(t, whole, "the last run's discovery changed rows: planning reads the planning columns")
	require.Positive(t, due)
	require.Positive(t, plan)

	rep = both()
	require.Equal(t, pages+1, rep.NotModified)
	due, _, whole = a.reads.reads()
	require.Zero(t, due)
	require.Positive(t, whole)
}

// When few of the rows are due, planning reads the rest of them through
// their planning columns and the fetch stage reads the due queue: reading
// every row whole would cost more than reading the few due rows again.
func TestFewDueRowsAreReadFromTheDueQueue(t *testing.T) {
	forPlanners(t, testFewDueRows)
}

func testFewDueRows(t *testing.T, sched schedule.Scheduler) {
	const pages = 40
	a, b := newHandOnSide(t, pages, sched, true), newHandOnSide(t, pages, sched, false)
	runBoth(t, a, b)
	for range 2 {
		a.clk.Advance(400 * 24 * time.Hour)
		b.clk.Advance(400 * 24 * time.Hour)
		runBoth(t, a, b)
	}
	a.reads.reads()

	// Move both clocks to the fifth of the rows' next checks: about
	// one row in eight is due.
	rows, err := a.reads.Due(context.Background(), a.src.Name(), a.clk.Now().Add(400*24*time.Hour), crawlstate.Key{}, pages)
	require.NoError(t, err)
	require.Len(t, rows, pages)
	next := make([]time.Time, len(rows))
	for i, r := range rows {
		next[i] = r.NextCheck
	}
	slices.SortFunc(next, time.Time.Compare)
	require.True(t, next[4].Before(next[pages-1]), "the rows fall due at different times")
	step := next[4].Sub(a.clk.Now())
	a.clk.Advance(step)
	b.clk.Advance(step)
	a.reads.reads()

	rep := runBoth(t, a, b)
	require.Less(t, rep.Due, pages/4)
	require.Positive(t, rep.Due)
	due, plan, whole := a.reads.reads()
	require.Equal(t, 1, whole, "the first page of rows shows that few are due")
	require.Positive(t, plan, "the rest is read for planning alone")
	require.Positive(t, due, "the due rows are read from the due queue")
}
