package testsite_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/internal/testsite"
)

func get(t *testing.T, s *testsite.Site, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL()+path, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := s.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestConditionalRequests(t *testing.T) {
	clk := clock.NewFake(testsite.DefaultStart)
	s := testsite.New(testsite.Options{Pages: 3, Clock: clk})
	defer s.Close()
	path := s.Paths()[0]

	resp, body := get(t, s, path, nil)
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, string(body), "<h1>Page 1</h1>")
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	require.NotEmpty(t, etag)
	require.NotEmpty(t, lm)

	resp, _ = get(t, s, path, map[string]string{"If-None-Match": etag})
	require.Equal(t, 304, resp.StatusCode)
	resp, _ = get(t, s, path, map[string]string{"If-Modified-Since": lm})
	require.Equal(t, 304, resp.StatusCode)
	// If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
	resp, _ = get(t, s, path, map[string]string{"If-None-Match": `"other"`, "If-Modified-Since": lm})
	require.Equal(t, 200, resp.StatusCode)

	clk.Advance(time.Hour)
	s.Edit(path)
	resp, body = get(t, s, path, map[string]string{"If-None-Match": etag})
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, string(body), "revision 2")
	require.NotEqual(t, etag, resp.Header.Get("ETag"))
	resp, _ = get(t, s, path, map[string]string{"If-Modified-Since": lm})
	require.Equal(t, 200, resp.StatusCode)

	log := s.Requests()
	require.Len(t, log, 6)
	require.Equal(t, etag, log[1].IfNoneMatch)
	require.Equal(t, 304, log[1].Status)
	require.True(t, log[1].Conditional())
	require.False(t, log[0].Conditional())
}

func TestValidatorsCanBeSwitchedOff(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1, NoETag: true, NoLastModified: true})
	defer s.Close()
	resp, _ := get(t, s, s.Paths()[0], map[string]string{"If-None-Match": "*"})
	require.Equal(t, 200, resp.StatusCode)
	require.Empty(t, resp.Header.Get("ETag"))
	require.Empty(t, resp.Header.Get("Last-Modified"))
}

func TestVolatileBlockChangesEveryRequest(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1, Volatile: true, NoETag: true, NoLastModified: true})
	defer s.Close()
	_, a := get(t, s, s.Paths()[0], nil)
	_, b := get(t, s, s.Paths()[0], nil)
	require.NotEqual(t, a, b)
	require.Contains(t, string(a), "csrf_token=")
	strip := func(x []byte) string { return string(x[:bytes.Index(x, []byte("Rendered at"))]) }
	require.Equal(t, strip(a), strip(b), "only the volatile block differs")
}

func TestSitemapForms(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 5, SitemapSplit: 2, SitemapGzip: true})
	defer s.Close()
	require.True(t, strings.HasSuffix(s.SitemapURL(), "/sitemap.xml.gz"))
	resp, body := get(t, s, "/sitemap.xml.gz", nil)
	require.Equal(t, 200, resp.StatusCode)
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	idx, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(string(idx), "<sitemap>"))
	require.Contains(t, string(idx), "/sitemap-3.xml.gz")

	_, body = get(t, s, "/sitemap-3.xml.gz", nil)
	zr, err = gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	child, _ := io.ReadAll(zr)
	require.Equal(t, 1, strings.Count(string(child), "<url>"))
	require.Contains(t, string(child), "<lastmod>")

	resp, _ = get(t, s, "/sitemap-4.xml.gz", nil)
	require.Equal(t, 404, resp.StatusCode)

	// The sitemap has its own validator.
	resp, _ = get(t, s, "/sitemap.xml.gz", nil)
	resp2, _ := get(t, s, "/sitemap.xml.gz", map[string]string{"If-None-Match": resp.Header.Get("ETag")})
	require.Equal(t, 304, resp2.StatusCode)
}

func TestSitemapMembershipAndLLMs(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 3, NoLastMod: true})
	defer s.Close()
	gone := s.Paths()[1]
	s.RemoveFromSitemap(gone)
	_, body := get(t, s, "/sitemap.xml", nil)
	require.NotContains(t, string(body), gone)
	require.NotContains(t, string(body), "<lastmod>")
	require.Len(t, s.PageURLs(), 2)
	_, llms := get(t, s, "/llms.txt", nil)
	require.True(t, strings.HasPrefix(string(llms), "# Example Docs"))
	require.NotContains(t, string(llms), gone)
	require.Contains(t, string(llms), "("+s.Paths()[0]+")")
	resp, _ := get(t, s, gone, nil)
	require.Equal(t, 200, resp.StatusCode, "a page removed from the sitemap is still served")
}

func TestDeleteRedirectAndFaults(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 3})
	defer s.Close()
	p := s.Paths()
	s.Delete(p[0], http.StatusGone)
	s.Redirect(p[1], p[2])
	s.Fail(p[2], http.StatusServiceUnavailable, 1, "7")

	resp, _ := get(t, s, p[0], nil)
	require.Equal(t, 410, resp.StatusCode)
	resp, _ = get(t, s, p[1], nil)
	require.Equal(t, 301, resp.StatusCode)
	require.Equal(t, p[2], resp.Header.Get("Location"))
	resp, _ = get(t, s, p[2], nil)
	require.Equal(t, 503, resp.StatusCode)
	require.Equal(t, "7", resp.Header.Get("Retry-After"))
	resp, _ = get(t, s, p[2], nil)
	require.Equal(t, 200, resp.StatusCode, "the fault is used up")
	require.Len(t, s.PageRequests(), 4)
}

func TestRobotsAndHugeAndRaw(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1})
	defer s.Close()
	_, body := get(t, s, "/robots.txt", nil)
	require.Contains(t, string(body), "Sitemap: "+s.SitemapURL())
	s.SetRobots("", http.StatusServiceUnavailable)
	resp, _ := get(t, s, "/robots.txt", nil)
	require.Equal(t, 503, resp.StatusCode)

	s.Huge("/big", 3<<20)
	_, body = get(t, s, "/big", nil)
	require.Len(t, body, 3<<20)

	u := s.AddRaw("/app", "text/html", []byte(testsite.ScriptOnlyHTML))
	require.Equal(t, s.URL()+"/app", u)
	resp, body = get(t, s, "/app", nil)
	require.Equal(t, "text/html", resp.Header.Get("Content-Type"))
	require.Contains(t, string(body), `<div id="root"></div>`)
}

func TestServeDocument(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1})
	defer s.Close()
	u := s.Serve("/nested/index.xml", "application/xml", []byte("<sitemapindex/>"))
	require.Equal(t, s.URL()+"/nested/index.xml", u)
	resp, body := get(t, s, "/nested/index.xml", nil)
	require.Equal(t, "application/xml", resp.Header.Get("Content-Type"))
	require.Equal(t, "<sitemapindex/>", string(body))
	_, sm := get(t, s, "/sitemap.xml", nil)
	require.NotContains(t, string(sm), "nested", "documents are not listed")
}

func TestListen(t *testing.T) {
	s, err := testsite.Listen("127.0.0.1:0", testsite.Options{Pages: 2})
	require.NoError(t, err)
	defer s.Close()
	resp, body := get(t, s, s.Paths()[1], nil)
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, string(body), "<h1>Page 2</h1>")

	// The address is taken now: a second site cannot listen on it.
	_, err = testsite.Listen(strings.TrimPrefix(s.URL(), "http://"), testsite.Options{})
	require.ErrorContains(t, err, "testsite: listen on")
}

func TestDocsChromePagesWeighLikeRealDocs(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 30, Words: 2000, DocsChrome: true})
	defer s.Close()
	for _, path := range s.Paths() {
		_, body := get(t, s, path, nil)
		require.Greater(t, len(body), 20<<10, path)
		require.Less(t, len(body), 60<<10, path)
		require.Contains(t, string(body), `sidebar-link"`)
	}
}

func TestDocsChromePagesAreMaterialForMkDocs(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 3, Words: 400, DocsChrome: true})
	defer s.Close()
	for _, path := range s.Paths() {
		_, body := get(t, s, path, nil)
		require.Contains(t, string(body), `<meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.5.39">`)
		doc, err := extract.FromHTML(body, s.PageURL(path))
		require.NoError(t, err)
		// The mkdocs-material rule converts the article alone: the page
		// title first, no sidebar, no edit button, no footer.
		page, _ := s.Page(path)
		require.True(t, strings.HasPrefix(doc.Markdown, "# "+page.Title+"\n"), doc.Markdown[:min(len(doc.Markdown), 200)])
		require.NotContains(t, doc.Markdown, "page-0150", "the sidebar's last link")
		require.NotContains(t, doc.Markdown, "Edit")
		require.NotContains(t, doc.Markdown, "All rights reserved")
	}
}

func TestTouchMovesValidatorsNotContent(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 2})
	defer s.Close()
	path := s.Paths()[0]
	resp, before := get(t, s, path, nil)
	etag := resp.Header.Get("ETag")
	s.Touch(path)
	resp, after := get(t, s, path, map[string]string{"If-None-Match": etag})
	require.Equal(t, http.StatusOK, resp.StatusCode, "the ETag moved")
	require.NotEqual(t, etag, resp.Header.Get("ETag"))
	require.Equal(t, string(before), string(after), "the body did not")
}

func TestMaxInFlightCountsParallelPageRequests(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 3})
	defer s.Close()
	s.Slow("*", 100*time.Millisecond)
	done := make(chan struct{})
	for _, path := range s.Paths() {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := s.Client().Get(s.URL() + path)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	for range s.Paths() {
		<-done
	}
	require.Equal(t, 3, s.MaxInFlight())
	s.ResetLog()
	require.Zero(t, s.MaxInFlight())
	get(t, s, "/robots.txt", nil)
	require.Zero(t, s.MaxInFlight(), "robots.txt is not a page")
}

func TestMove(t *testing.T) {
	a := testsite.New(testsite.Options{Pages: 1})
	defer a.Close()
	b := testsite.New(testsite.Options{Pages: 1})
	defer b.Close()
	a.Move("/sitemap.xml", b.SitemapURL())
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(a.SitemapURL())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	require.Equal(t, b.SitemapURL(), resp.Header.Get("Location"))
	a.Move("/sitemap.xml", "")
	resp, err = c.Get(a.SitemapURL())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// With Options.Host every URL the site serves or reports names that host,
// and Client reaches the site through it.
func TestHost(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 2, Host: "docs.example.test"})
	defer s.Close()
	require.Equal(t, "http://docs.example.test", s.URL())
	require.Equal(t, "http://docs.example.test/sitemap.xml", s.SitemapURL())
	resp, body := get(t, s, "/sitemap.xml", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "<loc>http://docs.example.test"+s.Paths()[0]+"</loc>")
	require.NotContains(t, string(body), "127.0.0.1")
	_, body = get(t, s, "/robots.txt", nil)
	require.Contains(t, string(body), "Sitemap: http://docs.example.test/sitemap.xml")
	resp, _ = get(t, s, s.Paths()[1], nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, s.PageRequests(), 1)
}

// A request that arrived before ResetLog is not logged after it, even when
// its handler finishes later (a client reads a body sent with its length
// before the handler that wrote it returns).
func TestResetLogForgetsRequestsInFlight(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 2})
	defer s.Close()
	slow, quick := s.Paths()[0], s.Paths()[1]
	s.Slow(slow, 300*time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := s.Client().Get(s.URL() + slow)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	require.Eventually(t, func() bool { return s.InFlight() == 1 }, 5*time.Second, time.Millisecond, "the slow request arrives")
	s.ResetLog()
	<-done
	get(t, s, quick, nil)
	got := s.Requests()
	require.Len(t, got, 1, "only the request that arrived after the reset")
	require.Equal(t, quick, got[0].Path)
}

// A request whose whole body a client has read is in the log: the site
// logs a page sent with its Content-Length before the write that
// completes it, not when its handler returns later.
func TestRequestLoggedBeforeItsBodyIsComplete(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 3, DocsChrome: true})
	defer s.Close()
	for i := range 300 {
		resp, body := get(t, s, s.Paths()[i%3], nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, strconv.Itoa(len(body)), resp.Header.Get("Content-Length"))
		got := s.Requests()
		require.Len(t, got, i+1, "request %d", i)
		require.Equal(t, len(body), got[i].Bytes)
	}
}

// Sections put consecutive pages in directories of their own, and an
// edit of a sectioned page changes its content.
func TestSections(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 10, Sections: 3})
	defer s.Close()
	paths := s.Paths()
	require.Equal(t, "/docs/s00/page-0001", paths[0])
	require.Equal(t, "/docs/s02/page-0010", paths[9])
	before, _ := s.Page(paths[4])
	s.Edit(paths[4])
	after, _ := s.Page(paths[4])
	require.NotEqual(t, before.Content, after.Content)
	require.Contains(t, after.Content, "page 5, revision 2")
}

// A page's ListedLastMod replaces its sitemap lastmod: none, the time
// the sitemap is served, or a text listed as it is.
func TestListedLastMod(t *testing.T) {
	clk := clock.NewFake(testsite.DefaultStart)
	s := testsite.New(testsite.Options{Pages: 3, Clock: clk})
	defer s.Close()
	paths := s.Paths()
	s.Update(paths[0], func(p *testsite.Page) { p.ListedLastMod = testsite.ListNone })
	s.Update(paths[1], func(p *testsite.Page) { p.ListedLastMod = testsite.ListGenerated })
	s.Update(paths[2], func(p *testsite.Page) { p.ListedLastMod = "not a <date>" })
	clk.Advance(time.Hour)
	resp, err := s.Client().Get(s.SitemapURL())
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "<loc>"+s.URL()+paths[0]+"</loc></url>")
	require.Contains(t, string(body), "<lastmod>"+testsite.DefaultStart.Add(time.Hour).Format(time.RFC3339)+"</lastmod>")
	require.Contains(t, string(body), "<lastmod>not a &lt;date&gt;</lastmod>")
}
