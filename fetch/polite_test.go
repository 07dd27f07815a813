package fetch_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

func politeClient(p *fetch.Polite) *http.Client { return &http.Client{Transport: p} }

func TestPoliteRobotsPolicy(t *testing.T) {
	tests := []struct {
		name      string
		robots    string
		status    int
		wantErr   bool
		wantAllow bool
	}{
		{"404 means no restrictions", "", http.StatusNotFound, false, true},
		{"403 means no restrictions", "", http.StatusForbidden, false, true},
		{"rules are obeyed", "User-agent: *\nDisallow: /docs/\n", 200, false, false},
		{"other agents' rules do not apply", "User-agent: otherbot\nDisallow: /\n", 200, false, true},
		{"our group applies", "User-agent: *\nDisallow: /\n\nUser-agent: recrawl-test\nAllow: /\n", 200, false, true},
		{"503 fails", "", http.StatusServiceUnavailable, true, false},
		{"500 fails", "", http.StatusInternalServerError, true, false},
		{"429 fails", "", http.StatusTooManyRequests, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testsite.Options{Pages: 2})
			s.SetRobots(tc.robots, tc.status)
			p := &fetch.Polite{UserAgent: "recrawl-test/1.0", Clock: clock.NewAutoFake(time.Now())}
			u := s.PageURL(s.Paths()[0])
			allowed, err := p.Allowed(context.Background(), u)
			if tc.wantErr {
				require.ErrorIs(t, err, fetch.ErrRobotsUnavailable)
				var re *fetch.RobotsError
				require.ErrorAs(t, err, &re)
				require.Equal(t, tc.status, re.Status)
				require.Contains(t, err.Error(), "robots.txt")
				_, err = politeClient(p).Get(u)
				require.ErrorIs(t, err, fetch.ErrRobotsUnavailable, "no page request while the rules are unknown")
				require.Zero(t, len(s.PageRequests()))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantAllow, allowed)
			resp, err := politeClient(p).Get(u)
			if tc.wantAllow {
				require.NoError(t, err)
				resp.Body.Close()
				require.Len(t, s.PageRequests(), 1)
			} else {
				require.ErrorIs(t, err, fetch.ErrDenied)
				require.Empty(t, s.PageRequests(), "a denied URL is never requested")
			}
		})
	}
}

func TestPoliteFetchesRobotsOncePerTTL(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 5})
	clk := clock.NewAutoFake(time.Now())
	p := &fetch.Polite{Clock: clk}
	c := politeClient(p)
	var wg sync.WaitGroup
	for _, path := range s.Paths() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(s.PageURL(path))
			require.NoError(t, err)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	robotsCount := func() int {
		return s.Count(func(r testsite.Request) bool { return r.Path == "/robots.txt" })
	}
	require.Equal(t, 1, robotsCount(), "concurrent first requests share one robots.txt fetch")
	clk.Advance(23 * time.Hour)
	resp, err := c.Get(s.PageURL(s.Paths()[0]))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 1, robotsCount())
	clk.Advance(2 * time.Hour)
	resp, err = c.Get(s.PageURL(s.Paths()[0]))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 2, robotsCount(), "the cache expires after 24 h")
	require.Equal(t, 2, p.RobotsFetches(s.URL()+"/"))
}

func TestPoliteFollowsRobotsRedirects(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	other := newSite(t, testsite.Options{Pages: 1})
	other.SetRobots("User-agent: *\nDisallow: /docs/\n", 200)
	s.RedirectRobots(other.URL() + "/robots.txt")
	p := &fetch.Polite{Clock: clock.NewAutoFake(time.Now())}
	allowed, err := p.Allowed(context.Background(), s.PageURL(s.Paths()[0]))
	require.NoError(t, err)
	require.False(t, allowed, "rules are read from the redirect target")

	// A redirect loop past five hops means robots.txt is unavailable.
	loop := newSite(t, testsite.Options{Pages: 1})
	loop.RedirectRobots("/robots.txt")
	p = &fetch.Polite{Clock: clock.NewAutoFake(time.Now())}
	allowed, err = p.Allowed(context.Background(), loop.PageURL(loop.Paths()[0]))
	require.NoError(t, err)
	require.True(t, allowed)
	require.Equal(t, 5, loop.Count(func(r testsite.Request) bool { return r.Path == "/robots.txt" }))
}

func TestPolitePacing(t *testing.T) {
	tests := []struct {
		name       string
		robots     string
		delay      time.Duration
		maxCrawl   time.Duration
		wantSpaced time.Duration
	}{
		{"request delay", "", 100 * time.Millisecond, 0, 100 * time.Millisecond},
		{"crawl-delay raises the delay", "User-agent: *\nCrawl-delay: 2\n", 100 * time.Millisecond, 0, 2 * time.Second},
		{"crawl-delay never lowers it", "User-agent: *\nCrawl-delay: 0.05\n", time.Second, 0, time.Second},
		{"crawl-delay is capped", "User-agent: *\nCrawl-delay: 86400\n", 0, 3 * time.Second, 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewAutoFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s := newSite(t, testsite.Options{Pages: 6, Clock: clk})
			if tc.robots != "" {
				s.SetRobots(tc.robots, 200)
			}
			p := &fetch.Polite{Delay: tc.delay, MaxCrawlDelay: tc.maxCrawl, Clock: clk}
			f := &fetch.HTTP{Client: politeClient(p), Clock: clk}
			var wg sync.WaitGroup
			for _, path := range s.Paths() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.Fetch(context.Background(), fetch.Request{URL: s.PageURL(path)})
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			reqs := s.PageRequests()
			require.Len(t, reqs, 6)
			sort.Slice(reqs, func(i, j int) bool { return reqs[i].At.Before(reqs[j].At) })
			for i := 1; i < len(reqs); i++ {
				gap := reqs[i].At.Sub(reqs[i-1].At)
				require.GreaterOrEqual(t, gap, tc.wantSpaced, "request %d came %s after the previous one", i, gap)
			}
		})
	}
}

func TestPoliteHostsAreIndependentAndPerHostConcurrencyHolds(t *testing.T) {
	a := newSite(t, testsite.Options{Pages: 3})
	b := newSite(t, testsite.Options{Pages: 3})
	a.Slow(a.Paths()[0], 200*time.Millisecond)
	p := &fetch.Polite{Clock: clock.NewAutoFake(time.Now()), PerHost: 1}
	c := politeClient(p)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := c.Get(a.PageURL(a.Paths()[0]))
		require.NoError(t, err)
		resp.Body.Close()
	}()
	time.Sleep(20 * time.Millisecond) // let the slow request take host a's slot
	resp, err := c.Get(b.PageURL(b.Paths()[0]))
	require.NoError(t, err, "host b does not wait for host a")
	resp.Body.Close()
	select {
	case <-done:
		t.Fatal("host b's request should finish while host a's slow request is still running")
	default:
	}
	<-done
}

func TestIgnoreRobots(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	s.SetRobots("", http.StatusServiceUnavailable)
	p := &fetch.Polite{IgnoreRobots: true, Clock: clock.NewAutoFake(time.Now())}
	resp, err := politeClient(p).Get(s.PageURL(s.Paths()[0]))
	require.NoError(t, err)
	resp.Body.Close()
	require.Zero(t, s.Count(func(r testsite.Request) bool { return strings.HasSuffix(r.Path, "robots.txt") }))
}
