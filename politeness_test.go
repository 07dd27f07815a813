package recrawl_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

func limits(mod func(*recrawl.Limits)) *recrawl.Limits {
	l := recrawl.DefaultLimits()
	l.RequestDelay = 0
	mod(&l)
	return &l
}

func robotsRequests(s *testsite.Site) int {
	return s.Count(func(r testsite.Request) bool { return r.Path == "/robots.txt" })
}

func TestRobotsNotFoundMeansNoRestrictions(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 5}, recrawl.Config{})
	f.site.SetRobots("", http.StatusNotFound)
	rep := f.run()
	require.Equal(t, 5, rep.New)
	require.Equal(t, 1, robotsRequests(f.site), "robots.txt is fetched once per host")
}

func TestRobotsUnavailableFailsTheRunAndLeavesStateAlone(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusInternalServerError} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 5}, recrawl.Config{})
			f.site.SetRobots("", status)
			_, err := f.eng.Run(context.Background(), f.src)
			require.ErrorIs(t, err, fetch.ErrRobotsUnavailable)
			var re *fetch.RobotsError
			require.ErrorAs(t, err, &re)
			require.Equal(t, status, re.Status)
			require.Contains(t, err.Error(), "robots.txt")
			total, _, err := f.state.Count(context.Background(), f.src.Name())
			require.NoError(t, err)
			require.Zero(t, total, "nothing was discovered or stored")
			require.Equal(t, []string{"/robots.txt"}, paths(f.site.Requests()), "only robots.txt was requested")
		})
	}
}

func TestRobotsUnreachableFailsTheRun(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 2}, recrawl.Config{})
	f.site.Close() // connection refused
	_, err := f.eng.Run(context.Background(), f.src)
	require.ErrorIs(t, err, fetch.ErrRobotsUnavailable)
}

func paths(reqs []testsite.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Path)
	}
	return out
}

func TestRobotsDeniedURLsAreSkippedUnrequested(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 6}, recrawl.Config{UserAgent: "recrawl-test/2.0"})
	denied := f.site.Paths()[1]
	f.site.SetRobots("User-agent: *\nDisallow: /\n\nUser-agent: recrawl-test\nDisallow: "+denied+"$\n", 200)
	rep := f.run()
	require.Equal(t, 1, rep.Skipped[recrawl.SkipRobots])
	require.Equal(t, 5, rep.New)
	require.Equal(t, 5, rep.Requests)
	for _, r := range f.site.Requests() {
		require.NotEqual(t, denied, r.Path, "a denied URL is never requested")
		require.Equal(t, "recrawl-test/2.0", r.UserAgent)
	}
}

func TestRespectRobotsOff(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{Limits: limits(func(l *recrawl.Limits) { l.RespectRobots = false })})
	f.site.SetRobots("User-agent: *\nDisallow: /\n", 503)
	rep := f.run()
	require.Equal(t, 3, rep.New)
	require.Zero(t, robotsRequests(f.site))
}

func TestCrawlDelaySpacesRequestsOnTheClock(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 6}, recrawl.Config{
		Workers: 4,
		Limits:  limits(func(l *recrawl.Limits) { l.RequestDelay = 100 * time.Millisecond }),
	})
	f.site.SetRobots("User-agent: *\nCrawl-delay: 2\n", 200)
	f.run()
	reqs := f.site.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].At.Before(reqs[j].At) })
	require.Len(t, reqs, 8, "robots.txt, the sitemap, six pages")
	for i := 1; i < len(reqs); i++ {
		gap := reqs[i].At.Sub(reqs[i-1].At)
		if reqs[i-1].Path == "/robots.txt" {
			continue // the robots.txt request precedes the rules that set the delay
		}
		require.GreaterOrEqual(t, gap, 2*time.Second, "%s came %s after %s", reqs[i].Path, gap, reqs[i-1].Path)
	}
}

func TestRequestDelayWithoutCrawlDelay(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{
		Workers: 4,
		Limits:  limits(func(l *recrawl.Limits) { l.RequestDelay = 250 * time.Millisecond }),
	})
	f.run()
	reqs := f.site.Requests()
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].At.Before(reqs[j].At) })
	for i := 1; i < len(reqs); i++ {
		require.GreaterOrEqual(t, reqs[i].At.Sub(reqs[i-1].At), 250*time.Millisecond)
	}
}

func TestMaxPagesStopsTheRunAsASuccess(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 50}, recrawl.Config{
		Workers: 4,
		Limits:  limits(func(l *recrawl.Limits) { l.MaxPages = 10 }),
	})
	f.site.Delete(f.site.Paths()[0], http.StatusNotFound) // a 404 counts too
	rep := f.run()
	require.Equal(t, recrawl.StopMaxPages, rep.StoppedBy)
	require.Len(t, f.site.PageRequests(), 10, "exactly the cap")
	require.Equal(t, 10, rep.Requests)
	require.Equal(t, 10, rep.Fetched)
	require.Equal(t, 40, rep.Skipped[recrawl.SkipMaxPages])
	require.Equal(t, 50, rep.Due)

	// The rest stays due: the next runs continue where this one stopped.
	rep = f.run()
	require.Equal(t, 40, rep.Due)
	require.Len(t, f.site.PageRequests(), 10)
	for range 3 {
		rep = f.run()
	}
	require.Equal(t, 10, rep.Due)
	require.Empty(t, rep.StoppedBy, "the last run fits under the cap")
}

func TestMaxPagesCountsRetriesButNotDeniedURLs(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 8}, recrawl.Config{
		Workers: 1,
		Limits:  limits(func(l *recrawl.Limits) { l.MaxPages = 5 }),
	})
	paths := f.site.Paths()
	f.site.SetRobots("User-agent: *\nDisallow: "+paths[0]+"\nDisallow: "+paths[1]+"\n", 200)
	f.site.Fail(paths[2], http.StatusServiceUnavailable, 2, "1") // two retries, then 200
	rep := f.run()
	require.Equal(t, 2, rep.Skipped[recrawl.SkipRobots])
	require.Len(t, f.site.PageRequests(), 5, "three requests for the flaky page, two for the others")
	require.Equal(t, recrawl.StopMaxPages, rep.StoppedBy)
}

func TestOversizedBodyIsCutAndFails(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 2}, recrawl.Config{Limits: limits(func(l *recrawl.Limits) { l.MaxBytes = 64 << 10 })})
	big := f.site.Paths()[0]
	f.site.Huge(big, 64<<20)
	var failure error
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, Limits: limits(func(l *recrawl.Limits) { l.MaxBytes = 64 << 10 }),
		Observer: func(ev recrawl.Event) {
			if ev.Outcome == recrawl.OutcomeFailed {
				failure = ev.Err
			}
		}})
	rep := f.run()
	require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
	require.ErrorIs(t, failure, fetch.ErrTooLarge)
	require.Contains(t, f.row(big).LastError, "fetch: ")
	require.Contains(t, f.row(big).LastError, "too large")
	require.Eventually(t, func() bool {
		for _, r := range f.site.Requests() {
			if r.Path == big {
				return r.Bytes < 64<<20
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "the body was cut off, not read to the end")
}

func mustEngine(t *testing.T, cfg recrawl.Config) *recrawl.Engine {
	t.Helper()
	e, err := recrawl.New(cfg)
	require.NoError(t, err)
	return e
}

func TestMaxDepthStopsNestedSitemaps(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 4}, recrawl.Config{Limits: limits(func(l *recrawl.Limits) { l.MaxDepth = 1 })})
	base := f.site.URL()
	// index (depth 0) → index (depth 1) → urlset (depth 2, beyond the cap)
	f.site.Serve("/deep.xml", "application/xml", []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+base+f.site.Paths()[3]+`</loc></url></urlset>`))
	f.site.Serve("/mid.xml", "application/xml", []byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>`+base+`/deep.xml</loc></sitemap></sitemapindex>`))
	top := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>` + base + `/mid.xml</loc></sitemap><sitemap><loc>` + base + `/sitemap.xml</loc></sitemap></sitemapindex>`
	f.src = discover.Sitemap{URL: f.site.Serve("/top.xml", "application/xml", []byte(top))}
	rep := f.run()
	require.Equal(t, recrawl.StopMaxDepth, rep.StoppedBy)
	require.True(t, rep.Incomplete)
	require.Equal(t, 4, rep.New, "what was reached is processed")
	require.Zero(t, f.site.Count(func(r testsite.Request) bool { return strings.HasSuffix(r.Path, "/deep.xml") }))
}

func TestHostConcurrencyBoundsParallelRequests(t *testing.T) {
	for _, tc := range []struct{ concurrency, workers int }{{0, 8}, {1, 8}, {4, 8}, {4, 2}} {
		t.Run(fmt.Sprintf("%d connections, %d workers", tc.concurrency, tc.workers), func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 24}, recrawl.Config{
				Workers: tc.workers,
				Limits:  limits(func(l *recrawl.Limits) { l.HostConcurrency = tc.concurrency }),
			})
			f.site.Slow("*", 30*time.Millisecond) // requests overlap whenever the client lets them
			rep := f.run()
			require.Equal(t, 24, rep.New)
			want := min(max(tc.concurrency, 1), tc.workers)
			got := f.site.MaxInFlight()
			require.LessOrEqual(t, got, want, "never more parallel requests than allowed")
			if want > 1 {
				require.Greater(t, got, 1, "requests do run in parallel")
			}
		})
	}
}

// startLog records when each page request leaves the polite transport.
type startLog struct {
	base   http.RoundTripper
	mu     sync.Mutex
	starts []time.Time
}

func (l *startLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, "/docs/") {
		l.mu.Lock()
		l.starts = append(l.starts, time.Now())
		l.mu.Unlock()
	}
	return l.base.RoundTrip(req)
}

func TestHostConcurrencyKeepsPacingBetweenStarts(t *testing.T) {
	const pages = 8
	for _, tc := range []struct {
		name   string
		robots string
		delay  time.Duration // the spacing expected
	}{
		{"request delay", "", 60 * time.Millisecond},
		{"crawl-delay raises it", "User-agent: *\nCrawl-delay: 0.12\n", 120 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			starts := &startLog{base: http.DefaultTransport}
			f := newFixture(t, testsite.Options{Pages: pages}, recrawl.Config{
				Workers:    8,
				Clock:      clock.Real(), // pacing sleeps for real: starts are wall-clock times
				HTTPClient: &http.Client{Transport: starts},
				Limits: limits(func(l *recrawl.Limits) {
					l.RequestDelay = 60 * time.Millisecond
					l.HostConcurrency = 4
				}),
			})
			if tc.robots != "" {
				f.site.SetRobots(tc.robots, 200)
			}
			f.site.Slow("*", 300*time.Millisecond) // answers overlap: four connections are busy at once
			rep := f.run()
			require.Equal(t, pages, rep.New)
			require.Len(t, starts.starts, pages)
			sort.Slice(starts.starts, func(i, j int) bool { return starts.starts[i].Before(starts.starts[j]) })
			// A start recorded late (a loaded machine) shortens the gap
			// after it, so starts are measured from the first one, with
			// room for its lateness.
			for i := 1; i < pages; i++ {
				since := starts.starts[i].Sub(starts.starts[0])
				require.GreaterOrEqual(t, since, time.Duration(i)*tc.delay-30*time.Millisecond, "request %d started %s after the first", i, since)
			}
			require.Greater(t, f.site.MaxInFlight(), 1, "slow answers overlap")
		})
	}
}
