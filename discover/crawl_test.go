package discover_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

func page(n int) string { return fmt.Sprintf("/docs/page-%04d", n) }

// chain makes each listed page link only to the next one.
func chain(site *testsite.Site, pages ...int) {
	for i, n := range pages {
		var links []string
		if i+1 < len(pages) {
			links = []string{page(pages[i+1])}
		}
		site.Update(page(n), func(p *testsite.Page) { p.Links = links })
	}
}

// deniedError is what a robots-aware transport returns for a disallowed
// URL: a refusal before sending, not a network error.
type deniedError struct{ url string }

func (e *deniedError) Error() string { return "robots.txt disallows " + e.url }

// denyTransport refuses requests for some paths, like the engine's polite
// transport does for robots.txt, and records the page marker each request
// carried in its context.
type denyTransport struct {
	base    http.RoundTripper
	deny    map[string]bool
	mu      sync.Mutex
	markers map[string]any
}

func (d *denyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	if d.markers == nil {
		d.markers = map[string]any{}
	}
	d.markers[r.URL.Path] = r.Context().Value(pageKey{})
	d.mu.Unlock()
	if d.deny[r.URL.Path] {
		return nil, &deniedError{url: r.URL.String()}
	}
	return d.base.RoundTrip(r)
}

func denyingClient(site *testsite.Site, deny ...string) (*http.Client, *denyTransport) {
	tr := &denyTransport{base: site.Client().Transport, deny: map[string]bool{}}
	for _, p := range deny {
		tr.deny[p] = true
	}
	return &http.Client{Transport: tr}, tr
}

func TestCrawlWholeSite(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 20})
	defer site.Close()
	src := discover.Crawl{URL: site.PageURL(page(1))}
	require.Equal(t, site.PageURL(page(1)), src.Name())
	require.Equal(t, site.PageURL(page(1)), src.EntryURL())

	links, err := run(t, src, discover.Env{Client: site.Client(), MaxDepth: 10})
	require.NoError(t, err)
	reqs := site.Requests()
	require.Equal(t, urlsOf(site, links), paths(reqs), "one link per request, in request order")
	want := []string{"/docs/"}
	for i := 1; i <= 20; i++ {
		want = append(want, page(i))
	}
	got := paths(reqs)
	sort.Strings(got)
	require.Equal(t, want, got, "every page once, the /docs/ nav link, never / (off path)")
	require.Equal(t, []string{page(1), "/docs/", page(2), page(3), page(4), page(5), page(6)}, paths(reqs)[:7], "breadth-first")
	depth := map[string]int{}
	for _, l := range links {
		depth[strings.TrimPrefix(l.URL, site.URL())] = l.Depth
		require.Empty(t, l.Via)
		require.Empty(t, l.Skip)
	}
	require.Equal(t, map[string]int{page(1): 0, "/docs/": 1, page(3): 1, page(6): 2, page(12): 3, page(17): 5, page(19): 6}, map[string]int{
		page(1): depth[page(1)], "/docs/": depth["/docs/"], page(3): depth[page(3)], page(6): depth[page(6)],
		page(12): depth[page(12)], page(17): depth[page(17)], page(19): depth[page(19)],
	})
	for _, r := range reqs {
		require.Equal(t, "Go-http-client/1.1", r.UserAgent, "colly's user agent is not sent")
		require.False(t, r.Conditional())
	}
}

func TestCrawlCaps(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 20})
	defer site.Close()
	src := discover.Crawl{URL: site.PageURL(page(1))}
	tests := []struct {
		name     string
		env      discover.Env
		requests []string
		limit    *discover.LimitError
	}{
		{"depth 1", discover.Env{MaxDepth: 1}, []string{page(1), "/docs/", page(2), page(3)}, &discover.LimitError{Limit: "max_depth", Value: 1}},
		{"depth 2", discover.Env{MaxDepth: 2}, []string{page(1), "/docs/", page(2), page(3), page(4), page(5), page(6)}, &discover.LimitError{Limit: "max_depth", Value: 2}},
		{"default depth 5 cuts page 19", discover.Env{}, nil, &discover.LimitError{Limit: "max_depth", Value: 5}},
		{"pages 3", discover.Env{MaxDocuments: 3}, []string{page(1), "/docs/", page(2)}, &discover.LimitError{Limit: "max_pages", Value: 3}},
		{"pages 21: exactly enough", discover.Env{MaxDocuments: 21, MaxDepth: 10}, nil, nil},
		{"pages 20: one short", discover.Env{MaxDocuments: 20, MaxDepth: 10}, nil, &discover.LimitError{Limit: "max_pages", Value: 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			site.ResetLog()
			tc.env.Client = site.Client()
			links, err := run(t, src, tc.env)
			if tc.limit == nil {
				require.NoError(t, err)
			} else {
				var le *discover.LimitError
				require.ErrorAs(t, err, &le)
				require.Equal(t, *tc.limit, *le)
			}
			got := paths(site.Requests())
			require.Equal(t, got, urlsOf(site, links))
			if tc.requests != nil {
				require.Equal(t, tc.requests, got)
			}
			switch tc.name {
			case "default depth 5 cuts page 19":
				require.Len(t, got, 20)
				require.NotContains(t, got, page(19))
			case "pages 21: exactly enough":
				require.Len(t, got, 21)
			case "pages 20: one short":
				require.Len(t, got, 20)
			}
		})
	}
}

func TestCrawlScope(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	other := testsite.New(testsite.Options{Pages: 1})
	defer other.Close()
	html := []byte("<html><body><p>elsewhere</p></body></html>")
	site.Serve("/blog/post", "text/html", html)
	site.Serve("/docsearch", "text/html", html)
	site.Serve("/docs/guide/intro", "text/html", html)
	site.SetContent(page(1), fmt.Sprintf(`<p><a href="/blog/post">blog</a> <a href="/docsearch">search</a>
<a href="guide/intro">nested, relative</a> <a href="/docs">section without slash</a>
<a href="%s">other host</a> <a href="mailto:a@b.example">mail</a> <a href="#top">top</a>
<a href="javascript:void(0)">js</a> <a href="ftp://x.example/docs/f">ftp</a></p>`, other.PageURL(page(1))))

	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client()})
	require.NoError(t, err)
	require.Equal(t, []string{page(1), "/docs/", "/docs/guide/intro", page(2), page(3)}, paths(site.Requests()),
		"/docs and /docs/ are one page, requested as first spelled")
	require.Equal(t, paths(site.Requests()), urlsOf(site, links))
	require.Empty(t, other.Requests(), "the other host is never contacted")
}

func TestCrawlScopeFollowsEntryRedirect(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	site.Serve("/about", "text/html", []byte("<html><body>about</body></html>"))
	site.SetContent(page(1), `<p><a href="/about">about</a></p>`)
	start := site.Add("/guide", "Guide", "")
	site.Redirect("/guide", page(1))

	links, err := run(t, discover.Crawl{URL: start}, discover.Env{Client: site.Client()})
	require.NoError(t, err)
	// /guide alone would scope the crawl to "/", the whole host; its final
	// URL scopes it to /docs/: neither "/" (the nav's Home) nor /about.
	require.Equal(t, []string{"/guide", "/docs/", page(2), page(3)}, urlsOf(site, links))
	require.Equal(t, []string{"/guide", page(1), "/docs/", page(2), page(3)}, paths(site.Requests()), "the redirect target is not requested again")
}

func TestCrawlDedupesNormalizedVariants(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	site.SetContent(page(1), `<p><a href="/docs/page-0002?utm_source=x">tracked</a> <a href="/docs/page-0002#top">anchor</a>
<a href="./page-0002">dot</a> <a href="http://`+strings.TrimPrefix(site.URL(), "http://")+`/docs/page-0002">absolute</a></p>`)

	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client()})
	require.NoError(t, err)
	n := 0
	for _, r := range site.Requests() {
		require.NotContains(t, r.Path, "utm_source")
		if r.Path == page(2) {
			n++
		}
	}
	require.Equal(t, 1, n, "four spellings, one request")
	require.Equal(t, []string{page(1), "/docs/", page(2), page(3)}, urlsOf(site, links))
}

func TestCrawlRobotsDenial(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	chain(site, 1, 2, 3)
	client, _ := denyingClient(site, page(2))

	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: client})
	require.NoError(t, err, "a denial is no failure")
	require.Equal(t, []string{page(1), "/docs/", page(2)}, urlsOf(site, links), "the denied page was yielded before its request")
	require.Equal(t, []string{page(1), "/docs/"}, paths(site.Requests()), "no request for it, none for page 3 behind it")

	// A denied request does not count against MaxDocuments.
	site.Update(page(1), func(p *testsite.Page) { p.Links = []string{page(2), page(3)} })
	site.ResetLog()
	links, err = run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: client, MaxDocuments: 3})
	require.NoError(t, err)
	require.Equal(t, []string{page(1), "/docs/", page(2), page(3)}, urlsOf(site, links))
	require.Equal(t, []string{page(1), "/docs/", page(3)}, paths(site.Requests()))

	// With a PageHandler the denial reaches Handle as the transport error.
	h := newHandlerDouble()
	site.ResetLog()
	_, err = run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: client, Pages: h})
	require.NoError(t, err)
	var denied *deniedError
	var found bool
	for _, p := range h.handled {
		if p.URL == site.PageURL(page(2)) {
			found = true
			require.ErrorAs(t, p.Err, &denied)
			require.Zero(t, p.Status)
			require.Nil(t, p.Body)
		}
	}
	require.True(t, found)
}

func TestCrawlPageHandlerConditional(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 6})
	defer site.Close()
	client, tr := denyingClient(site)
	h := newHandlerDouble()
	env := discover.Env{Client: client, Pages: h}
	src := discover.Crawl{URL: site.PageURL(page(1))}
	all := []string{page(1), "/docs/", page(2), page(3), page(4), page(5), page(6)}

	links, err := run(t, src, env)
	require.NoError(t, err)
	require.Equal(t, all, urlsOf(site, links))
	require.Equal(t, urlsOf(site, links), func() []string {
		out := make([]string, len(h.prepared))
		for i, u := range h.prepared {
			out[i] = strings.TrimPrefix(u, site.URL())
		}
		return out
	}(), "Prepare before each yield")
	require.Equal(t, all, paths(site.Requests()))
	for _, r := range site.Requests() {
		require.False(t, r.Conditional())
		require.Equal(t, site.URL()+r.Path, tr.markers[r.Path], "the request carried Prepare's context")
	}
	require.Equal(t, http.StatusNotFound, h.statuses(site)["/docs/"])

	// Second run: known pages are requested conditionally; 304s continue
	// the crawl from the handler's stored links.
	site.Edit(page(4))
	site.ResetLog()
	h.reset()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Equal(t, all, urlsOf(site, links))
	require.Equal(t, []string{
		page(1) + " 304 conditional", "/docs/ 404", page(2) + " 304 conditional", page(3) + " 304 conditional",
		page(4) + " 200 conditional", page(5) + " 304 conditional", page(6) + " 304 conditional",
	}, statuses(site.Requests()))
	st := h.statuses(site)
	require.Equal(t, http.StatusNotModified, st[page(1)])
	require.Equal(t, http.StatusOK, st[page(4)])
	for _, p := range h.handled {
		if p.Status == http.StatusNotModified {
			require.Empty(t, p.Body)
		}
	}
}

func TestCrawlPrepareSkip(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	chain(site, 1, 2, 3)
	h := newHandlerDouble()
	h.skip[site.PageURL(page(2))] = "duplicate"
	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client(), Pages: h})
	require.NoError(t, err)
	require.Equal(t, []string{page(1), "/docs/", page(2)}, urlsOf(site, links))
	require.Equal(t, "duplicate", links[2].Skip)
	require.Equal(t, []string{page(1), "/docs/"}, paths(site.Requests()), "a skipped page is not requested and its links are unknown")
}

// limitHandler ends the crawl from Handle, as the engine does at its cap.
type limitHandler struct {
	*handlerDouble
	after int
}

func (l *limitHandler) Handle(ctx context.Context, p discover.CrawledPage) ([]string, error) {
	links, _ := l.handlerDouble.Handle(ctx, p)
	if len(l.handled) >= l.after {
		return nil, &discover.LimitError{Limit: "max_pages", Value: l.after}
	}
	return links, nil
}

func TestCrawlHandlerErrorStops(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 6})
	defer site.Close()
	h := &limitHandler{handlerDouble: newHandlerDouble(), after: 2}
	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client(), Pages: h})
	var le *discover.LimitError
	require.ErrorAs(t, err, &le)
	require.Equal(t, discover.LimitError{Limit: "max_pages", Value: 2}, *le)
	require.Len(t, links, 2)
	require.Len(t, site.Requests(), 2)
}

func gzipped(b []byte) []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

func TestCrawlRefusedBodies(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	site.Huge("/docs/huge", 8<<10)
	site.Serve("/docs/bomb.xml.gz", "application/gzip", gzipped(make([]byte, 16<<20)))
	site.Serve("/docs/archive", "application/x-gzip", gzipped([]byte("<html><a href='/docs/hidden'>x</a></html>")))
	site.Serve("/docs/latin", "text/html; charset=iso-8859-1", []byte("<html><body><p>caf\xe9 cr\xe8me</p></body></html>"))
	site.SetContent(page(1), `<p><a href="/docs/huge">huge</a> <a href="/docs/bomb.xml.gz">bomb</a> <a href="/docs/archive">archive</a> <a href="/docs/latin">latin</a></p>`)
	h := newHandlerDouble()
	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client(), Pages: h, MaxPageBytes: 4 << 10})
	require.NoError(t, err, "refused bodies are no failures")
	require.Equal(t, []string{page(1), "/docs/", "/docs/huge", "/docs/archive", "/docs/latin"}, urlsOf(site, links), "a .xml.gz link is not a page: not requested")
	// The log is in order of completed answers, and the server goroutine
	// of the huge answer (cut short by the client) may log it late.
	require.Eventually(t, func() bool { return len(site.Requests()) == len(links) }, 5*time.Second, 5*time.Millisecond)
	require.ElementsMatch(t, urlsOf(site, links), paths(site.Requests()), "each was requested and counts")
	byPath := map[string]discover.CrawledPage{}
	for _, p := range h.handled {
		byPath[strings.TrimPrefix(p.URL, site.URL())] = p
	}
	require.ErrorIs(t, byPath["/docs/huge"].Err, discover.ErrTooLarge)
	archive := byPath["/docs/archive"]
	require.NoError(t, archive.Err, "an answer that is not HTML is no failure")
	require.Equal(t, http.StatusOK, archive.Status)
	require.Equal(t, "application/x-gzip", archive.ContentType, "Handle learns what it is")
	require.Empty(t, archive.Body, "its body is not read")
	latin := byPath["/docs/latin"]
	require.NoError(t, latin.Err)
	require.Contains(t, string(latin.Body), "café crème", "colly converted the body to UTF-8")
	require.Equal(t, "text/html; charset=utf-8", latin.ContentType)
	require.Equal(t, "text/html; charset=utf-8", latin.Header.Get("Content-Type"))
	entry := byPath[page(1)]
	require.Equal(t, http.StatusOK, entry.Status)
	require.NotEmpty(t, entry.Header.Get("ETag"), "the answer's headers reach Handle")
	require.Equal(t, site.PageURL(page(1)), entry.FinalURL)
}

func TestCrawlFailuresLeaveListingIncomplete(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 6})
	defer site.Close()
	site.Fail(page(2), http.StatusServiceUnavailable, 1, "")
	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client()})
	require.ErrorContains(t, err, "1 of 7 pages failed")
	var fe *discover.FetchError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, discover.FetchError{URL: site.PageURL(page(2)), Status: 503}, *fe)
	require.Equal(t, []string{page(1), "/docs/", page(2), page(3), page(4), page(5), page(6)}, urlsOf(site, links), "the rest is crawled")
}

func TestCrawlCancel(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 6})
	defer site.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := discover.Crawl{URL: site.PageURL(page(1))}.Discover(ctx, discover.Env{Client: site.Client()}, func(discover.Link) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, []string{page(1), "/docs/"}, paths(site.Requests()))

	stop := errors.New("stop")
	err = discover.Crawl{URL: site.PageURL(page(1))}.Discover(context.Background(), discover.Env{Client: site.Client()}, func(discover.Link) error { return stop })
	require.ErrorIs(t, err, stop)
}

func TestCrawlBadEntry(t *testing.T) {
	_, err := run(t, discover.Crawl{URL: "docs.example.com/intro"}, discover.Env{Client: http.DefaultClient})
	var fe *discover.FetchError
	require.ErrorAs(t, err, &fe)
	require.ErrorContains(t, err, "absolute http(s) URL")
	_, err = run(t, discover.Crawl{URL: "https://docs.example.com/"}, discover.Env{})
	require.ErrorIs(t, err, discover.ErrNoClient)
}

// A crawl of a documentation build requests its pages only: images,
// archives, scripts, notebooks, fonts, feeds and _sources/ are not
// requested; a download only its Content-Type shows to be a file is
// requested, not read, and yields no links.
func TestCrawlRequestsOnlyDocuments(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 5})
	defer site.Close()
	assets := site.AddAssets()
	links, err := run(t, discover.Crawl{URL: site.PageURL(page(1))}, discover.Env{Client: site.Client()})
	require.NoError(t, err)
	want := []string{page(1), "/docs/", page(2), page(3), "/docs/download/dataset", page(4), page(5)}
	require.Equal(t, want, urlsOf(site, links))
	// The server may log the download, whose body the client did not
	// read, after later answers.
	require.Eventually(t, func() bool { return len(site.Requests()) == len(want) }, 5*time.Second, 5*time.Millisecond)
	require.ElementsMatch(t, want, paths(site.Requests()))
	for _, a := range assets {
		if a.Path != "/docs/download/dataset" {
			require.Zero(t, site.Count(func(r testsite.Request) bool { return r.Path == a.Path }), a.Path)
		}
	}
}

func TestNotDocumentPath(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://x.test/docs/", false},
		{"https://x.test/docs/intro", false},
		{"https://x.test/docs/intro.html", false},
		{"https://x.test/docs/v1.2/", false},
		{"https://x.test/docs/v1.2", false},
		{"https://x.test/docs/logo.PNG", true},
		{"https://x.test/docs/a.tar.gz", true},
		{"https://x.test/docs/tutorial.ipynb", true},
		{"https://x.test/docs/examples/plot.py", true},
		{"https://x.test/docs/_sources/intro.rst.txt", true},
		{"https://x.test/docs/_sources/", true},
		{"https://x.test/docs/_static/css/theme.css", true},
		{"https://x.test/docs/feed.xml?page=2", true},
		{"https://x.test/docs/index.atom", true},
		{"https://x.test/docs/font.woff2#x", true},
		{"https://x.test/docs/manual.pdf", true},
		{"/relative/clip.mp4", true},
	} {
		require.Equal(t, tc.want, discover.NotDocumentPath(tc.url), tc.url)
	}
}

func TestOnlyPrefix(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	site.Add("/docs/guide/a", "A", "<p>a</p>")
	site.Add("/docs/guidebook", "B", "<p>b</p>")
	site.Update(page(1), func(p *testsite.Page) { p.Links = append(p.Links, "/docs/guide/a", "/docs/guidebook") })
	env := discover.Env{Client: site.Client()}
	for _, tc := range []struct {
		name string
		src  discover.Source
		want []string // links yielded without Skip
	}{
		{"sitemap", discover.Sitemap{URL: site.SitemapURL(), Only: "/docs/guide/"}, []string{"/docs/guide/a"}},
		{"llms.txt", discover.LLMsTxt{URL: site.LLMsURL(), Only: "/docs/guide/"}, []string{"/docs/guide/a"}},
		{"crawl", discover.Crawl{URL: site.PageURL(page(1)), Only: "/docs/guide/"}, []string{page(1), "/docs/guide/a"}},
		{"plain prefix", discover.Sitemap{URL: site.SitemapURL(), Only: "/docs/guide"}, []string{"/docs/guide/a", "/docs/guidebook"}},
		{"entry", discover.Entry{URL: site.SitemapURL(), Only: "/docs/guide/"}, []string{"/docs/guide/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site.ResetLog()
			links, err := run(t, tc.src, env)
			require.NoError(t, err)
			var kept []discover.Link
			for _, l := range links {
				if l.Skip == "" {
					kept = append(kept, l)
				} else {
					require.Equal(t, discover.SkipOutOfScope, l.Skip)
				}
			}
			require.ElementsMatch(t, tc.want, urlsOf(site, kept))
		})
	}
}
