package recrawl_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

// Limits.BlockPrivate refuses a loopback site at dial time: the run fails
// with a *fetch.PrivateAddressError naming the address, and the site gets
// no request at all. (Tests run on loopback only; the classification of
// other addresses is fetch's TestPrivateClass.)
func TestBlockPrivateRefusesALoopbackSite(t *testing.T) {
	tests := []struct {
		name   string
		robots bool
		source func(s *testsite.Site) discover.Source
	}{
		{"robots.txt first", true, func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} }},
		{"sitemap", false, func(s *testsite.Site) discover.Source { return discover.Sitemap{URL: s.SitemapURL()} }},
		{"crawl", false, func(s *testsite.Site) discover.Source { return discover.Crawl{URL: s.PageURL(s.Paths()[0])} }},
		{"entry", false, func(s *testsite.Site) discover.Source { return discover.Entry{URL: s.LLMsURL()} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
			var failure error
			f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, HTTPClient: f.site.Client(),
				Limits: limits(func(l *recrawl.Limits) { l.BlockPrivate = true; l.RespectRobots = tc.robots }),
				Observer: func(ev recrawl.Event) {
					if ev.Outcome == recrawl.OutcomeFailed {
						failure = ev.Err
					}
				}})
			rep, err := f.eng.Run(context.Background(), tc.source(f.site))
			require.NotNil(t, rep)
			if err == nil {
				// A crawl's start page fails at the fetch stage.
				require.Equal(t, 1, rep.Failed[recrawl.StageFetch])
				err = failure
			}
			require.ErrorIs(t, err, fetch.ErrPrivateAddress)
			var pe *fetch.PrivateAddressError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, "127.0.0.1", pe.Addr.String())
			require.Equal(t, "loopback", pe.Class)
			require.Contains(t, err.Error(), "127.0.0.1")
			require.Contains(t, err.Error(), recrawl.EnvBlockPrivate)
			require.Empty(t, f.site.Requests(), "nothing reached the site")
			require.Zero(t, rep.Requests, "a refused dial sent no request")
			require.Zero(t, rep.New)
		})
	}
}

// Off by default: the same site is crawled.
func TestBlockPrivateIsOffByDefault(t *testing.T) {
	require.False(t, recrawl.DefaultLimits().BlockPrivate)
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{})
	require.Equal(t, 3, f.run().New)
}

func TestBlockPrivateNeedsAnHTTPTransport(t *testing.T) {
	f := newFixture(t, testsite.Options{Pages: 1}, recrawl.Config{})
	_, err := recrawl.New(recrawl.Config{State: f.state, HTTPClient: &http.Client{Transport: roundTripperFunc(nil)},
		Limits: limits(func(l *recrawl.Limits) { l.BlockPrivate = true })})
	var ce *recrawl.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, err.Error(), "BlockPrivate needs HTTPClient's transport to be an *http.Transport")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A request whose connection is refused at dial time never reached the
// site: Report.Requests does not count it (f.run checks it against the
// site's log), and it takes nothing from the page budget. Here every other
// dial after the sitemap's is refused (a host that drops connections), so
// pages take refused attempts besides the sent ones; with MaxPages equal
// to the page count every page is still requested.
func TestRefusedDialsAreNotRequests(t *testing.T) {
	const pages = 5
	f := newFixture(t, testsite.Options{Pages: pages}, recrawl.Config{})
	tr := f.site.Client().Transport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true // every request dials
	var dials, refused atomic.Int64
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if n := dials.Add(1); n > 1 && n%2 == 0 {
			refused.Add(1)
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		return d.DialContext(ctx, network, addr)
	}
	f.eng = mustEngine(t, recrawl.Config{State: f.state, Clock: f.clk, HTTPClient: &http.Client{Transport: tr},
		Limits: limits(func(l *recrawl.Limits) { l.MaxPages = pages; l.RespectRobots = false })})
	rep := f.run()
	require.Empty(t, rep.StoppedBy, "refused dials took nothing from the budget")
	require.Equal(t, pages, rep.Fetched, "every page was requested")
	require.Equal(t, pages, rep.New+rep.FailedTotal())
	require.GreaterOrEqual(t, refused.Load(), int64(pages-1))
	require.EqualValues(t, dials.Load()-1-refused.Load(), rep.Requests, "the dials that went through, less the sitemap's")
}
