package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

// hybridEnv is a test site, the fake Geonode API in front of it, a direct
// fetcher whose transport can block the site (as a WAF that refuses our
// address but not Geonode's proxies), and the Hybrid over both.
type hybridEnv struct {
	site   *testsite.Site
	api    *fakegeonode.Server
	remote *geonode.Client
	waf    *waf
	direct *fetch.HTTP
}

// waf sits in the direct fetcher's transport.
type waf struct {
	mode  atomic.Value // "", "403", "challenge", "error"
	calls atomic.Int64
}

const challengePage = `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper" role="main">
<noscript>Enable JavaScript and cookies to continue</noscript></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "example.com",cType: 'managed'};
var a = document.createElement('script');a.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8';
document.getElementsByTagName('head')[0].appendChild(a);}());</script></body></html>`

func (w *waf) RoundTrip(r *http.Request) (*http.Response, error) {
	w.calls.Add(1)
	mode, _ := w.mode.Load().(string)
	answer := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/html; charset=UTF-8"}, "Server": {"cloudflare"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r, ContentLength: int64(len(body))}
	}
	switch mode {
	case "403":
		return answer(http.StatusForbidden, "<h1>Forbidden</h1>"), nil
	case "challenge":
		return answer(http.StatusOK, challengePage), nil
	case "error":
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func newHybridEnv(t testing.TB, pages int) *hybridEnv {
	t.Helper()
	site := testsite.New(testsite.Options{Pages: pages})
	t.Cleanup(site.Close)
	api := fakegeonode.New(fakegeonode.Options{})
	t.Cleanup(api.Close)
	remote, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()), geonode.WithClock(clock.NewAutoFake(testsite.DefaultStart)))
	require.NoError(t, err)
	w := &waf{}
	return &hybridEnv{site: site, api: api, remote: remote, waf: w,
		direct: &fetch.HTTP{Client: &http.Client{Transport: w}, MaxAttempts: 1}}
}

func (e *hybridEnv) hybrid() *fetch.Hybrid { return &fetch.Hybrid{Direct: e.direct, Remote: e.remote} }

// pass fetches every page once with the stored validators, stores the new
// ones, and returns the Billed total.
func pass(t *testing.T, h fetch.Fetcher, e *hybridEnv, stored map[string]fetch.Request) int {
	t.Helper()
	billed := 0
	for _, u := range e.site.PageURLs() {
		req, ok := stored[u]
		if !ok {
			req = fetch.Request{URL: u}
		}
		resp, err := h.Fetch(context.Background(), req)
		require.NoError(t, err, u)
		billed += resp.Billed
		if resp.NotModified() {
			require.Zero(t, resp.Billed)
			continue
		}
		require.Equal(t, 200, resp.Status)
		require.Equal(t, geonode.ContentTypeMarkdown, resp.ContentType, "the body came from Geonode")
		require.NotEmpty(t, resp.ETag, "the origin's validators survive the remote body")
		require.NotEmpty(t, resp.LastModified)
		stored[u] = fetch.Request{URL: u, ETag: resp.ETag, LastModified: resp.LastModified}
	}
	return billed
}

func TestHybridBillsOnlyChanges(t *testing.T) {
	e := newHybridEnv(t, 20)
	h := e.hybrid()
	stored := map[string]fetch.Request{}

	require.Equal(t, 20, pass(t, h, e, stored), "first pass: every page is new")
	require.Equal(t, 20, e.api.Billed())

	// The validators stored are the origin's own.
	first := e.site.PageURLs()[0]
	plain, err := (&fetch.HTTP{}).Fetch(context.Background(), fetch.Request{URL: first})
	require.NoError(t, err)
	require.Equal(t, plain.ETag, stored[first].ETag)
	require.Equal(t, plain.LastModified, stored[first].LastModified)

	e.api.ResetLog()
	require.Zero(t, pass(t, h, e, stored), "unchanged site: no Geonode request billed")
	require.Equal(t, 20, e.api.Billed())
	require.Empty(t, e.api.Requests(), "Geonode was not even called")

	paths := e.site.Paths()
	e.site.Edit(paths[3])
	e.site.Edit(paths[11])
	require.Equal(t, 2, pass(t, h, e, stored), "two edits: two billed requests")
	require.Equal(t, 2, e.api.Count("POST", "/v1/extract"), "Remote called once per changed page")
	require.Equal(t, 22, e.api.Billed())
	resp, err := h.Fetch(context.Background(), stored[e.site.PageURL(paths[3])])
	require.NoError(t, err)
	require.True(t, resp.NotModified(), "the new validators were stored")
}

func TestHybridGoneNeedsNoRemote(t *testing.T) {
	e := newHybridEnv(t, 3)
	e.site.Delete(e.site.Paths()[0], http.StatusGone)
	resp, err := e.hybrid().Fetch(context.Background(), fetch.Request{URL: e.site.PageURL(e.site.Paths()[0])})
	require.NoError(t, err)
	require.True(t, resp.Gone())
	require.Zero(t, resp.Billed)
	require.Empty(t, e.api.Requests())
}

func TestHybridBlockedHostFallsBack(t *testing.T) {
	for _, mode := range []string{"403", "challenge"} {
		t.Run(mode, func(t *testing.T) {
			e := newHybridEnv(t, 5)
			e.waf.mode.Store(mode)
			h := e.hybrid()
			urls := e.site.PageURLs()

			resp, err := h.Fetch(context.Background(), fetch.Request{URL: urls[0]})
			require.NoError(t, err)
			require.Equal(t, 200, resp.Status)
			require.Contains(t, string(resp.Body), "This is page 1", "the page came through Geonode")
			require.Equal(t, 1, resp.Billed)
			require.Equal(t, 2, resp.Attempts, "one direct and one remote request")
			require.Equal(t, []string{strings.TrimPrefix(e.site.URL(), "http://")}, h.BlockedHosts())

			// Later requests for the host skip the direct attempt, and the
			// validators travel through Geonode.
			for _, u := range urls[1:] {
				resp, err := h.Fetch(context.Background(), fetch.Request{URL: u, ETag: `"old"`})
				require.NoError(t, err)
				require.Equal(t, 200, resp.Status)
			}
			require.EqualValues(t, 1, e.waf.calls.Load(), "only the first request went direct")
			require.Equal(t, 5, e.api.Billed())
			sent := e.api.Requests()
			require.Contains(t, string(sent[len(sent)-1].Body), `"If-None-Match":"\"old\""`)
		})
	}
}

func TestHybridBlockTTL(t *testing.T) {
	e := newHybridEnv(t, 2)
	clk := clock.NewFake(testsite.DefaultStart)
	h := &fetch.Hybrid{Direct: e.direct, Remote: e.remote, BlockTTL: time.Hour, Clock: clk}
	u := e.site.PageURLs()[0]
	e.waf.mode.Store("403")
	_, err := h.Fetch(context.Background(), fetch.Request{URL: u})
	require.NoError(t, err)
	require.Len(t, h.BlockedHosts(), 1)

	e.waf.mode.Store("")
	clk.Advance(59 * time.Minute)
	_, err = h.Fetch(context.Background(), fetch.Request{URL: u})
	require.NoError(t, err)
	require.EqualValues(t, 1, e.waf.calls.Load(), "still blocked")

	clk.Advance(time.Minute)
	require.Empty(t, h.BlockedHosts())
	resp, err := h.Fetch(context.Background(), fetch.Request{URL: u})
	require.NoError(t, err)
	require.EqualValues(t, 2, e.waf.calls.Load(), "the TTL expired: direct again")
	require.NotEmpty(t, resp.ETag)
}

func TestHybridDoesNotBypassOtherDirectErrors(t *testing.T) {
	e := newHybridEnv(t, 2)
	e.waf.mode.Store("error")
	_, err := e.hybrid().Fetch(context.Background(), fetch.Request{URL: e.site.PageURLs()[0]})
	require.ErrorContains(t, err, "connection reset")
	require.Empty(t, e.api.Requests(), "a transport error (or a robots refusal) is not a reason to pay for Geonode")

	e.waf.mode.Store("")
	small := &fetch.Hybrid{Direct: &fetch.HTTP{MaxBytes: 10}, Remote: e.remote}
	_, err = small.Fetch(context.Background(), fetch.Request{URL: e.site.PageURLs()[0]})
	require.ErrorIs(t, err, fetch.ErrTooLarge)
	require.Empty(t, e.api.Requests())

	// robots.txt forbids the page: Geonode is not a way around it.
	e.site.SetRobots("User-agent: *\nDisallow: /docs/\n", 0)
	polite := &fetch.Hybrid{Direct: &fetch.HTTP{Client: &http.Client{Transport: &fetch.Polite{}}}, Remote: e.remote}
	_, err = polite.Fetch(context.Background(), fetch.Request{URL: e.site.PageURLs()[0]})
	require.ErrorIs(t, err, fetch.ErrDenied)
	require.Empty(t, e.api.Requests())
	require.Empty(t, polite.BlockedHosts())

	_, err = (&fetch.Hybrid{Direct: e.direct}).Fetch(context.Background(), fetch.Request{URL: "http://x/"})
	require.ErrorIs(t, err, fetch.ErrHybridConfig)
}

func TestHybridRemoteFatalErrorPropagates(t *testing.T) {
	e := newHybridEnv(t, 2)
	e.api.SetBalance(0)
	_, err := e.hybrid().Fetch(context.Background(), fetch.Request{URL: e.site.PageURLs()[0]})
	require.ErrorIs(t, err, geonode.ErrPaymentRequired)
	require.True(t, geonode.IsFatal(err))
}

func TestHybridDirectBody(t *testing.T) {
	e := newHybridEnv(t, 3)
	h := &fetch.Hybrid{Direct: e.direct, Remote: e.remote, DirectBody: true}
	resp, err := h.Fetch(context.Background(), fetch.Request{URL: e.site.PageURLs()[0]})
	require.NoError(t, err)
	require.Contains(t, resp.ContentType, "text/html")
	require.Zero(t, resp.Billed)
	require.Empty(t, e.api.Requests())

	e.waf.mode.Store("challenge")
	resp, err = h.Fetch(context.Background(), fetch.Request{URL: e.site.PageURLs()[1]})
	require.NoError(t, err)
	require.Equal(t, geonode.ContentTypeMarkdown, resp.ContentType, "a blocked host still goes through Remote")
	require.Equal(t, 1, resp.Billed)
}

func TestHybridConcurrent(t *testing.T) {
	open := newHybridEnv(t, 30)
	shut := testsite.New(testsite.Options{Pages: 30})
	t.Cleanup(shut.Close)
	shutHost := strings.TrimPrefix(shut.URL(), "http://")
	// One WAF-protected host, one open host, the same Hybrid.
	sel := &selectiveWAF{blockHost: shutHost}
	h := &fetch.Hybrid{Direct: &fetch.HTTP{Client: &http.Client{Transport: sel}, MaxAttempts: 1}, Remote: open.remote}

	urls := append(open.site.PageURLs(), shut.PageURLs()...)
	var wg sync.WaitGroup
	var billed atomic.Int64
	jobs := make(chan string)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range jobs {
				resp, err := h.Fetch(context.Background(), fetch.Request{URL: u})
				if err != nil {
					t.Error(err)
					continue
				}
				billed.Add(int64(resp.Billed))
			}
		}()
	}
	for _, u := range urls {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
	require.EqualValues(t, 60, billed.Load())
	require.Equal(t, []string{shutHost}, h.BlockedHosts())
	require.LessOrEqual(t, sel.blockedCalls.Load(), int64(8), "at most one direct attempt per worker before the block was recorded")
}

type selectiveWAF struct {
	blockHost    string
	blockedCalls atomic.Int64
}

func (s *selectiveWAF) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == s.blockHost {
		s.blockedCalls.Add(1)
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestIsChallenge(t *testing.T) {
	big := "<html><body>" + strings.Repeat("<p>how we handle /cdn-cgi/challenge-platform/ in our docs</p>", 5000) + "</body></html>"
	tests := []struct {
		name string
		resp *fetch.Response
		want bool
	}{
		{"cloudflare managed challenge", &fetch.Response{Status: 200, ContentType: "text/html; charset=UTF-8", Body: []byte(challengePage)}, true},
		{"cf-mitigated header", &fetch.Response{Status: 200, Header: http.Header{"Cf-Mitigated": {"challenge"}}}, true},
		{"attention required", &fetch.Response{Status: 200, ContentType: "text/html", Body: []byte("<html><head><title>Attention Required! | Cloudflare</title></head></html>")}, true},
		{"datadome", &fetch.Response{Status: 200, Body: []byte(`<html><script src="https://ct.captcha-delivery.com/c.js"></script></html>`)}, true},
		{"ordinary page", &fetch.Response{Status: 200, ContentType: "text/html", Body: []byte("<html><title>Docs</title><p>Just a moment, please read on.</p></html>")}, false},
		{"a long page that mentions a marker", &fetch.Response{Status: 200, ContentType: "text/html", Body: []byte(big)}, false},
		{"markdown about challenges", &fetch.Response{Status: 200, ContentType: "text/markdown", Body: []byte("<title>Just a moment...</title>")}, false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, fetch.IsChallenge(tc.resp))
		})
	}
}

func ExampleHybrid() {
	site := testsite.New(testsite.Options{Pages: 10})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{})
	defer api.Close()
	remote, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()))
	if err != nil {
		log.Fatal(err)
	}
	h := &fetch.Hybrid{Direct: &fetch.HTTP{}, Remote: remote}

	ctx := context.Background()
	stored := map[string]fetch.Request{}
	run := func() (billed int) {
		for _, u := range site.PageURLs() {
			req, ok := stored[u]
			if !ok {
				req = fetch.Request{URL: u}
			}
			resp, err := h.Fetch(ctx, req)
			if err != nil {
				log.Fatal(err)
			}
			if !resp.NotModified() {
				stored[u] = fetch.Request{URL: u, ETag: resp.ETag, LastModified: resp.LastModified}
			}
			billed += resp.Billed
		}
		return billed
	}
	fmt.Println("first pass billed:", run())
	fmt.Println("unchanged site billed:", run())
	site.Edit("/docs/page-0004")
	fmt.Println("one edit billed:", run())
	// Output:
	// first pass billed: 10
	// unchanged site billed: 0
	// one edit billed: 1
}

// BenchmarkIsChallenge scans an ordinary 100 KB HTML page (the common case:
// no marker, every marker tried).
func BenchmarkIsChallenge(b *testing.B) {
	body := []byte("<html><head><title>Docs</title></head><body>" + strings.Repeat("<p>Some ordinary documentation text.</p>\n", 2500) + "</body></html>")
	r := &fetch.Response{Status: 200, ContentType: "text/html; charset=utf-8", Body: body}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if fetch.IsChallenge(r) {
			b.Fatal("false positive")
		}
	}
}

// BenchmarkHybridNotModified measures the unchanged-page path: one direct
// conditional request answered 304 on loopback, no remote call.
func BenchmarkHybridNotModified(b *testing.B) {
	e := newHybridEnv(b, 1)
	h := e.hybrid()
	u := e.site.PageURLs()[0]
	first, err := h.Fetch(context.Background(), fetch.Request{URL: u})
	if err != nil {
		b.Fatal(err)
	}
	req := fetch.Request{URL: u, ETag: first.ETag, LastModified: first.LastModified}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := h.Fetch(context.Background(), req)
		if err != nil || !resp.NotModified() {
			b.Fatal(err)
		}
	}
}
