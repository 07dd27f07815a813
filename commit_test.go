package recrawl_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/internal/testsite"
)

// countingState counts the write transactions of page outcomes, holds
// each Record a little (a slow disk, so results queue up behind it) and
// can fail the results of chosen URLs.
type countingState struct {
	testStore
	hold time.Duration

	mu        sync.Mutex
	records   int // Record calls
	results   int // results recorded
	logEvents int // LogEvents calls
	fail      map[string]bool
}

func (s *countingState) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	s.mu.Lock()
	s.records++
	bad := false
	for _, r := range results {
		bad = bad || s.fail[r.URL]
	}
	s.mu.Unlock()
	time.Sleep(s.hold)
	if bad {
		return errors.New("disk I/O error")
	}
	if err := s.testStore.Record(ctx, source, results); err != nil {
		return err
	}
	s.mu.Lock()
	s.results += len(results)
	s.mu.Unlock()
	return nil
}

func (s *countingState) LogEvents(ctx context.Context, source string, events []crawlstate.StageEvent) error {
	s.mu.Lock()
	s.logEvents++
	s.mu.Unlock()
	return s.testStore.LogEvents(ctx, source, events)
}

func TestOutcomesAreCommittedInBatchesWithTheirEvents(t *testing.T) {
	const pages = 120
	f := newFixture(t, testsite.Options{Pages: pages}, recrawl.Config{})
	// The last pages answer late, so the run is never over before the
	// cancel: without them a fast machine fetched every page before the
	// first transaction, which then committed all of them.
	for _, p := range f.site.Paths()[pages-8:] {
		f.site.Slow(p, 300*time.Millisecond)
	}
	db := openState(t, filepath.Join(t.TempDir(), "counted.sqlite"))
	t.Cleanup(func() { db.Close() })
	cs := &countingState{testStore: db, hold: 2 * time.Millisecond, fail: map[string]bool{}}
	var events []recrawl.Event
	f.state = db
	f.eng = mustEngine(t, recrawl.Config{State: cs, Clock: f.clk, Workers: 8, Limits: limits(func(l *recrawl.Limits) { l.HostConcurrency = 8 }),
		Observer: func(ev recrawl.Event) { events = append(events, ev) }})
	rep := f.run()
	require.Equal(t, pages, rep.New)
	require.Equal(t, pages, cs.results)
	require.Zero(t, cs.logEvents, "stage events go in the results' transactions")
	require.Len(t, events, pages)
	for i, ev := range events {
		require.Equal(t, i+1, ev.Done, "outcomes are reported in commit order")
	}
	evs, err := db.Events(context.Background(), f.src.Name(), f.site.PageURL(f.site.Paths()[0]), time.Time{})
	require.NoError(t, err)
	var stages []string
	for _, e := range evs {
		stages = append(stages, e.Stage)
	}
	require.Equal(t, []string{recrawl.StageFetch, recrawl.StageExtract, recrawl.StageCommit}, stages)

	// Every page due again, all answer 304: nothing waits for their
	// commits, so they queue up behind a transaction and share the next.
	cs.mu.Lock()
	cs.records, cs.results, cs.hold = 0, 0, 10*time.Millisecond
	cs.mu.Unlock()
	f.clk.Advance(400 * 24 * time.Hour)
	rep = f.run()
	require.Equal(t, pages, rep.NotModified)
	require.Equal(t, pages, cs.results)
	require.Less(t, cs.records, pages/4, "a transaction carries many 304s")
	require.Zero(t, cs.logEvents)
	evs, err = db.Events(context.Background(), f.src.Name(), f.site.PageURL(f.site.Paths()[0]), rep.StartedAt)
	require.NoError(t, err)
	require.Len(t, evs, 1, "a 304 stores one event row: its fetch, in the transaction of its row")
	require.Equal(t, recrawl.StageFetch, evs[0].Stage)
	require.Equal(t, "HTTP 304", evs[0].Detail)
	require.True(t, evs[0].OK)

	// Again; one result's commit fails:
	// only that page fails, and it is backed off.
	cs.mu.Lock()
	cs.fail[f.site.PageURL(f.site.Paths()[7])], cs.records, cs.results = true, 0, 0
	cs.mu.Unlock()
	f.clk.Advance(400 * 24 * time.Hour)
	rep = f.run()
	require.Equal(t, pages-1, rep.Unchanged)
	require.Equal(t, pages-1, rep.NotModified, "the failed page counts as failed, not as a 304")
	require.Equal(t, 1, rep.Failed[recrawl.StageCommit])
	require.Equal(t, pages-1, cs.results)
	row := f.row(f.site.Paths()[7])
	require.Equal(t, recrawl.FailureBackoff, row.NextCheck.Sub(row.LastFailure), "the failed page is retried after the backoff")
	require.Contains(t, row.LastError, "commit: disk I/O error")
	require.Equal(t, 2, f.row(f.site.Paths()[7]).Visits, "its third 304 was not recorded")
	require.Equal(t, 3, f.row(f.site.Paths()[8]).Visits, "its batch neighbours' were")
}

func TestCancelledRunReportsOnlyCommittedOutcomes(t *testing.T) {
	const pages = 80
	f := newFixture(t, testsite.Options{Pages: pages}, recrawl.Config{})
	// The last pages answer late, so the run is never over before the
	// cancel: without them a fast machine fetched every page before the
	// first transaction, which then committed all of them.
	for _, p := range f.site.Paths()[pages-8:] {
		f.site.Slow(p, 300*time.Millisecond)
	}
	db := openState(t, filepath.Join(t.TempDir(), "counted.sqlite"))
	t.Cleanup(func() { db.Close() })
	cs := &countingState{testStore: db, hold: 3 * time.Millisecond, fail: map[string]bool{}}
	f.state = db
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	f.eng = mustEngine(t, recrawl.Config{State: cs, Clock: f.clk, Workers: 8, Limits: limits(func(l *recrawl.Limits) { l.HostConcurrency = 8 }),
		Observer: func(recrawl.Event) {
			if seen++; seen == pages/4 {
				cancel() // a crash, as far as the queued results are concerned
			}
		}})
	rep, err := f.eng.Run(ctx, f.src)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, rep.New, pages)
	stored := 0
	for _, path := range f.site.Paths() {
		row := f.row(path)
		if row.Visits > 0 {
			stored++
			continue
		}
		require.True(t, row.NextCheck.IsZero(), "%s: an outcome not committed leaves the row due", path)
	}
	require.Equal(t, rep.New, stored, "the report counts exactly the committed outcomes")

	// A request the cancelled run had written may reach the site later (on
	// one core, much later): let the site take in what the run sent, so
	// that the next run's log holds the next run's requests alone.
	for deadline := time.Now().Add(5 * time.Second); len(f.site.PageRequests()) < rep.Requests && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	rep = f.run()
	require.Equal(t, pages-stored, rep.New, "the next run fetches the rest")
}

func TestFetchingGoesOnWhileExtractionWorks(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 12}, recrawl.Config{})
	first := make(chan struct{}, 1)
	var stalled atomic.Bool
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, Workers: 1, Limits: limits(func(*recrawl.Limits) {}),
		OnContent: func(ctx context.Context, c recrawl.Content) error {
			select {
			case first <- struct{}{}: // the first page blocks its extractor...
			default:
				return nil
			}
			// ...while the one fetch worker fetches the next pages.
			deadline := time.Now().Add(10 * time.Second)
			for len(f.site.PageRequests()) < 3 {
				if time.Now().After(deadline) {
					stalled.Store(true)
					return errors.New("no page was fetched while a page was being extracted")
				}
				time.Sleep(time.Millisecond)
			}
			return nil
		}})
	rep := f.run()
	require.False(t, stalled.Load(), "no page was fetched while a page was being extracted")
	require.Equal(t, 12, rep.New, "%+v", rep.Failed)
}
