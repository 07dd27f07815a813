package recrawl_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// A failing page is not due again at the next run: a transient failure
// backs off from an hour, doubling up to the scheduler's longest
// interval; a permanent one waits that interval at once; a success resets
// the count.
func TestFailureBackoff(t *testing.T) {
	const maxInterval = 6 * time.Hour
	sched := schedule.Halving{Max: maxInterval}
	cases := []struct {
		name  string
		fail  func(s *testsite.Site, path string)
		waits []time.Duration // the backoff after each consecutive failure
	}{
		{"503", func(s *testsite.Site, p string) { s.Fail(p, http.StatusServiceUnavailable, 1000, "") },
			[]time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour, maxInterval, maxInterval}},
		{"429", func(s *testsite.Site, p string) { s.Fail(p, http.StatusTooManyRequests, 1000, "") },
			[]time.Duration{time.Hour, 2 * time.Hour, 4 * time.Hour}},
		{"403", func(s *testsite.Site, p string) { s.Fail(p, http.StatusForbidden, 1000, "") },
			[]time.Duration{maxInterval, maxInterval}},
		{"401", func(s *testsite.Site, p string) { s.Fail(p, http.StatusUnauthorized, 1000, "") },
			[]time.Duration{maxInterval}},
		{"script-rendered", func(s *testsite.Site, p string) {
			s.Update(p, func(pg *testsite.Page) { pg.Raw = []byte(testsite.ScriptOnlyHTML) })
			s.Edit(p) // a new revision: its ETag and lastmod move
		}, []time.Duration{maxInterval, maxInterval}},
		{"too many elements", func(s *testsite.Site, p string) {
			s.Update(p, func(pg *testsite.Page) {
				pg.Raw = []byte("<html><body>" + strings.Repeat("<b></b>", extract.DefaultMaxElements+1) + "</body></html>")
			})
			s.Edit(p)
		}, []time.Duration{maxInterval, maxInterval}},
		{"too large", func(s *testsite.Site, p string) { s.Huge(p, 64<<20) }, []time.Duration{maxInterval}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{Scheduler: sched,
				Limits: limits(func(l *recrawl.Limits) { l.MaxBytes = 1 << 20 })})
			f.run()
			path := f.site.Paths()[0]
			f.clk.Advance(25 * time.Hour)
			tc.fail(f.site, path)
			for i, wait := range tc.waits {
				if i > 0 {
					f.clk.Advance(tc.waits[i-1] - time.Minute)
					f.run()
					require.Zero(t, f.site.Count(func(r testsite.Request) bool { return r.Path == path }), "failure %d: not requested before its backoff ends", i)
					require.Equal(t, i, f.row(path).Failures)
					f.clk.Advance(time.Minute)
				}
				rep := f.run()
				require.Equal(t, 1, rep.FailedTotal(), "failure %d", i+1)
				require.Equal(t, 1, rep.RetriesDeferred)
				require.Positive(t, f.site.Count(func(r testsite.Request) bool { return r.Path == path }))
				row := f.row(path)
				require.Equal(t, i+1, row.Failures)
				require.Equal(t, wait, row.NextCheck.Sub(row.LastFailure), "failure %d backs off %v", i+1, wait)
			}
			// The page recovers: the next attempt succeeds and the count resets.
			f.site.Fail(path, http.StatusOK, 0, "")
			f.site.Update(path, func(pg *testsite.Page) { pg.Raw, pg.ContentType = nil, "" })
			f.site.Huge(path, 0)
			f.site.Edit(path)
			f.clk.Advance(tc.waits[len(tc.waits)-1])
			rep := f.run()
			require.Zero(t, rep.FailedTotal())
			require.Zero(t, rep.RetriesDeferred)
			row := f.row(path)
			require.Zero(t, row.Failures)
			require.Less(t, row.NextCheck.Sub(f.clk.Now()), maxInterval+time.Second)
			dl, err := f.eng.DeadLetters(context.Background(), f.src.Name())
			require.NoError(t, err)
			require.Empty(t, dl)
		})
	}
}
