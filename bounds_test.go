package recrawl_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// Every request the engine makes is bounded by Limits.RequestTimeout,
// body included: a server that trickles one byte per second holds no run.
func TestEveryRequestIsBoundedByTheRequestTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tests := []struct {
		name    string
		source  func(s *testsite.Site) discover.Source
		trickle func(s *testsite.Site) string // the path that trickles
		check   func(t *testing.T, rep *recrawl.Report, err error)
	}{
		{
			name:    "robots.txt",
			source:  func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} },
			trickle: func(*testsite.Site) string { return "/robots.txt" },
			check: func(t *testing.T, _ *recrawl.Report, err error) {
				require.ErrorIs(t, err, fetch.ErrRobotsUnavailable)
			},
		},
		{
			name:    "sitemap",
			source:  func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} },
			trickle: func(*testsite.Site) string { return "/sitemap.xml" },
			check: func(t *testing.T, rep *recrawl.Report, err error) {
				var de *recrawl.DiscoveryError
				require.ErrorAs(t, err, &de)
				require.True(t, rep.Incomplete)
			},
		},
		{
			name: "child sitemap",
			source: func(s *testsite.Site) discover.Source {
				return discover.Sitemap{URL: s.Serve("/index.xml", "application/xml", []byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>`+s.SitemapURL()+`</loc></sitemap></sitemapindex>`))}
			},
			trickle: func(*testsite.Site) string { return "/sitemap.xml" },
			check: func(t *testing.T, rep *recrawl.Report, err error) {
				var de *recrawl.DiscoveryError
				require.ErrorAs(t, err, &de)
			},
		},
		{
			name:    "llms.txt",
			source:  func(s *testsite.Site) discover.Source { return discover.LLMsTxt{URL: s.LLMsURL()} },
			trickle: func(*testsite.Site) string { return "/llms.txt" },
			check: func(t *testing.T, rep *recrawl.Report, err error) {
				var de *recrawl.DiscoveryError
				require.ErrorAs(t, err, &de)
			},
		},
		{
			name:    "entry document",
			source:  func(s *testsite.Site) discover.Source { return discover.Entry{URL: s.SitemapURL()} },
			trickle: func(*testsite.Site) string { return "/sitemap.xml" },
			check: func(t *testing.T, rep *recrawl.Report, err error) {
				var de *recrawl.DiscoveryError
				require.ErrorAs(t, err, &de)
			},
		},
		{
			name:    "crawled page",
			source:  func(s *testsite.Site) discover.Source { return discover.Crawl{URL: s.PageURL(s.Paths()[0])} },
			trickle: func(s *testsite.Site) string { return s.Paths()[1] },
			check: func(t *testing.T, rep *recrawl.Report, err error) {
				require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
				require.Equal(t, 3, rep.New, "the other pages of the crawl")
			},
		},
		{
			name:    "page",
			source:  func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} },
			trickle: func(s *testsite.Site) string { return s.Paths()[2] },
			check: func(t *testing.T, rep *recrawl.Report, err error) {
				require.NoError(t, err)
				require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
				require.Equal(t, 3, rep.New)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var failure error
			f := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{
				Limits: limits(func(l *recrawl.Limits) { l.RequestTimeout = timeout }),
				Observer: func(ev recrawl.Event) {
					if ev.Outcome == recrawl.OutcomeFailed {
						failure = ev.Err
					}
				},
			})
			for _, p := range f.site.Paths() {
				f.site.Update(p, func(pg *testsite.Page) { pg.InLLMs = true })
			}
			f.src = tc.source(f.site)
			path := tc.trickle(f.site)
			f.site.Trickle(path, time.Second)
			// Without a bound the run would last as long as the server
			// likes; the test's own deadline is far above the 3 attempts
			// of 300 ms a page may take.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			began := time.Now()
			rep, err := f.eng.Run(ctx, f.src)
			took := time.Since(began)
			require.NoError(t, ctx.Err(), "the run was held by the trickling %s", path)
			require.Less(t, took, 10*time.Second)
			require.NotNil(t, rep)
			tc.check(t, rep, err)
			if failure == nil {
				failure = err
			}
			require.ErrorIs(t, failure, fetch.ErrTimeout, "the error says the request timed out: %v", failure)
			var te *fetch.TimeoutError
			require.ErrorAs(t, failure, &te)
			require.Equal(t, timeout, te.After)
		})
	}
}

// pacedFixture is an engine on a manual clock that a ticker advances to
// the next pending timer after realWait of real time, so every pacing wait
// lasts realWait in real time and its full length on the clock.
func pacedFixture(t *testing.T, pages int, l recrawl.Limits, realWait time.Duration) (*testsite.Site, *recrawl.Engine, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(start)
	site := testsite.New(testsite.Options{Pages: pages, Clock: clk})
	t.Cleanup(site.Close)
	st := openState(t, filepath.Join(t.TempDir(), "state.sqlite"))
	t.Cleanup(func() { st.Close() })
	eng, err := recrawl.New(recrawl.Config{State: st, Clock: clk, Limits: &l, Workers: 2, Scheduler: schedule.DefaultHalving})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for clk.BlockUntil(ctx, 1) == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(realWait):
			}
			clk.AdvanceToNext()
		}
	}()
	return site, eng, clk
}

// The request timeout bounds the request, not the wait for its pacing
// slot: with a delay longer than the timeout every page is still sent and
// succeeds (issue 12, defect 4: WEB_REQUEST_DELAY_MS=3000 with
// WEB_REQUEST_TIMEOUT_MS=2000 sent 0 of 6 pages; a Crawl-delay capped at
// 60 s failed every page unsent).
func TestPacingWaitDoesNotCountAgainstTheRequestTimeout(t *testing.T) {
	tests := []struct {
		name   string
		delay  time.Duration
		robots string
		gap    time.Duration
	}{
		{"request delay above the timeout", 3 * time.Second, "", 3 * time.Second},
		{"crawl-delay capped at 60 s", 0, "User-agent: *\nCrawl-delay: 100000\n", time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := recrawl.DefaultLimits()
			l.RequestDelay = tc.delay
			l.RequestTimeout = 500 * time.Millisecond
			// Each pacing wait lasts 700 ms of real time: longer than the
			// timeout, so a timeout that counted it would fail the page.
			site, eng, _ := pacedFixture(t, 3, l, 700*time.Millisecond)
			if tc.robots != "" {
				site.SetRobots(tc.robots, 200)
			}
			rep, err := eng.Run(context.Background(), discover.Sitemap{URL: site.SitemapURL()})
			require.NoError(t, err)
			require.Equal(t, 3, rep.New, "every page was sent and succeeded")
			require.Zero(t, rep.FailedTotal())
			require.Len(t, site.PageRequests(), 3)
			reqs := site.Requests()
			sort.Slice(reqs, func(i, j int) bool { return reqs[i].At.Before(reqs[j].At) })
			for i := 1; i < len(reqs); i++ {
				if reqs[i-1].Path == "/robots.txt" && tc.robots != "" {
					continue // the rules that set the delay arrived with it
				}
				require.GreaterOrEqual(t, reqs[i].At.Sub(reqs[i-1].At), tc.gap, "%s after %s", reqs[i].Path, reqs[i-1].Path)
			}
		})
	}
}
