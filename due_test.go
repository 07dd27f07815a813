package recrawl_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/internal/testsite"
)

// Report.Due is counted by the due walk, a page of Config.BatchSize rows
// at a time: every due row ends in one outcome, whether the run is
// limited or not, and Event.Due never lags behind Done.
func TestDueIsCountedByTheWalk(t *testing.T) {
	const pages = 7
	for _, tc := range []struct {
		name          string
		budget        int
		fetched, left int
		stoppedBy     string
	}{
		{"no limit", 0, pages, 0, ""},
		{"budget above the queue", pages + 3, pages, 0, ""},
		{"budget equal to the queue", pages, pages, 0, ""},
		{"budget below the queue", 3, 3, pages - 3, recrawl.StopBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var events []recrawl.Event
			f := newFixture(t, testsite.Options{Pages: pages}, recrawl.Config{
				BatchSize: 2, // four pages of due rows
				Budget:    tc.budget,
				Observer: func(ev recrawl.Event) {
					mu.Lock()
					events = append(events, ev)
					mu.Unlock()
				},
			})
			rep := f.run()
			require.Equal(t, pages, rep.Due)
			require.Equal(t, tc.fetched, rep.Fetched)
			require.Equal(t, tc.left, rep.Skipped[recrawl.SkipBudget])
			require.Equal(t, tc.stoppedBy, rep.StoppedBy)
			require.Len(t, events, pages, "one event per due row")
			for _, ev := range events {
				require.LessOrEqual(t, ev.Done, ev.Due, "%+v", ev)
				require.LessOrEqual(t, ev.Due, pages, "%+v", ev)
			}
			require.Equal(t, pages, events[len(events)-1].Done)

			// The next run finds nothing due but what the budget left.
			rep = f.run()
			require.Equal(t, tc.left, rep.Due)
		})
	}
}
