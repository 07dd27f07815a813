package discover_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/recrawl/recrawl/crawlstate"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

func urlset(site *testsite.Site, paths ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		if !strings.Contains(p, "://") {
			p = site.URL() + p
		}
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>\n", p)
	}
	b.WriteString("</urlset>\n")
	return []byte(b.String())
}

// index is a sitemap index; children are "path" or "path@lastmod".
func index(site *testsite.Site, children ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, c := range children {
		path, lastmod, _ := strings.Cut(c, "@")
		fmt.Fprintf(&b, "<sitemap><loc>%s%s</loc>", site.URL(), path)
		if lastmod != "" {
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", lastmod)
		}
		b.WriteString("</sitemap>\n")
	}
	b.WriteString("</sitemapindex>\n")
	return []byte(b.String())
}

func statuses(reqs []testsite.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		c := ""
		if r.Conditional() {
			c = " conditional"
		}
		out[i] = fmt.Sprintf("%s %d%s", r.Path, r.Status, c)
	}
	return out
}

func TestSitemapConditionalRequests(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 6})
	defer site.Close()
	store := newMemStore()
	env := store.incremental(site.Client())
	src := discover.Sitemap{URL: site.SitemapURL()}

	links, err := run(t, src, env)
	require.NoError(t, err)
	require.Len(t, links, 6)
	for _, l := range links {
		require.Equal(t, site.SitemapURL(), l.Via)
		require.Equal(t, testsite.DefaultStart, l.LastMod)
	}
	first := store.docs[site.SitemapURL()]
	require.NotEmpty(t, first.ETag)
	require.Equal(t, crawlstate.Document{URL: site.SitemapURL(), ETag: first.ETag, Entries: 6, NewestLastMod: testsite.DefaultStart}, first)
	require.Equal(t, []string{"/sitemap.xml 200"}, statuses(site.Requests()))
	require.Empty(t, store.takeUnchanged())

	// Unchanged: a conditional request, a 304, OnUnchanged, nothing yielded.
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Empty(t, links)
	require.Equal(t, []string{site.SitemapURL()}, store.takeUnchanged())
	reqs := site.Requests()
	require.Equal(t, []string{"/sitemap.xml 304 conditional"}, statuses(reqs))
	require.Equal(t, first.ETag, reqs[0].IfNoneMatch)
	require.Equal(t, first, store.docs[site.SitemapURL()], "a 304 leaves the stored state")

	// An edit moves a lastmod: the sitemap answers 200 and is read again.
	site.Edit("/docs/page-0003")
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Len(t, links, 6)
	require.Empty(t, store.takeUnchanged())
	require.Equal(t, []string{"/sitemap.xml 200 conditional"}, statuses(site.Requests()))
	after := store.docs[site.SitemapURL()]
	require.Equal(t, 6, after.Entries)
	require.Equal(t, testsite.DefaultStart.Add(time.Second), after.NewestLastMod, "the engine's cheap check compares this")
	require.NotEqual(t, first.ETag, after.ETag)

	// Without OnUnchanged the request is unconditional, and still stored.
	site.ResetLog()
	links, err = run(t, src, discover.Env{Client: site.Client(), Documents: store})
	require.NoError(t, err)
	require.Len(t, links, 6)
	require.Equal(t, []string{"/sitemap.xml 200"}, statuses(site.Requests()))
	require.Equal(t, 3, store.puts, "one per 200, none for the 304")
}

func TestSitemapIndexChildrenConditional(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 12, SitemapSplit: 5})
	defer site.Close()
	store := newMemStore()
	env := store.incremental(site.Client())
	env.TrustLastMod = true // the index gives no lastmod: nothing may be trusted
	src := discover.Sitemap{URL: site.SitemapURL()}
	child := func(n int) string { return fmt.Sprintf("%s/sitemap-%d.xml", site.URL(), n) }

	links, err := run(t, src, env)
	require.NoError(t, err)
	require.Len(t, links, 12)
	for i, l := range links {
		require.Equal(t, child(i/5+1), l.Via, l.URL)
		require.Equal(t, 1, l.Depth)
	}
	require.Equal(t, []string{"/sitemap.xml 200", "/sitemap-1.xml 200", "/sitemap-2.xml 200", "/sitemap-3.xml 200"}, statuses(site.Requests()))
	idx := store.docs[site.SitemapURL()]
	require.Equal(t, crawlstate.Document{URL: site.SitemapURL(), Entries: 3}, idx, "an index keeps no validators")
	for n, entries := range map[int]int{1: 5, 2: 5, 3: 2} {
		d := store.docs[child(n)]
		require.Equal(t, entries, d.Entries)
		require.NotEmpty(t, d.ETag)
		require.Equal(t, testsite.DefaultStart, d.NewestLastMod)
	}

	// Unchanged: the index is read again, every child answers 304.
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Empty(t, links)
	require.Equal(t, []string{child(1), child(2), child(3)}, store.takeUnchanged())
	require.Equal(t, []string{"/sitemap.xml 200", "/sitemap-1.xml 304 conditional", "/sitemap-2.xml 304 conditional", "/sitemap-3.xml 304 conditional"}, statuses(site.Requests()))

	// A page of the second child changed: only that child is read.
	site.Edit("/docs/page-0007")
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Equal(t, []string{"/docs/page-0006", "/docs/page-0007", "/docs/page-0008", "/docs/page-0009", "/docs/page-0010"}, urlsOf(site, links))
	for _, l := range links {
		require.Equal(t, child(2), l.Via)
	}
	require.Equal(t, []string{child(1), child(3)}, store.takeUnchanged())
	require.Equal(t, []string{"/sitemap.xml 200", "/sitemap-1.xml 304 conditional", "/sitemap-2.xml 200 conditional", "/sitemap-3.xml 304 conditional"}, statuses(site.Requests()))
}

func TestSitemapTrustLastMod(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	site.Serve("/c1.xml", "application/xml", urlset(site, "/a", "/b"))
	site.Serve("/c2.xml", "application/xml", urlset(site, "/c"))
	idxURL := site.Serve("/idx.xml", "application/xml", index(site, "/c1.xml@2026-01-01", "/c2.xml@2026-01-02"))
	c1, c2 := site.URL()+"/c1.xml", site.URL()+"/c2.xml"
	store := newMemStore()
	env := store.incremental(site.Client())
	env.TrustLastMod = true
	src := discover.Sitemap{URL: idxURL}

	links, err := run(t, src, env)
	require.NoError(t, err)
	require.Equal(t, []string{"/a", "/b", "/c"}, urlsOf(site, links))
	require.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), store.docs[c1].ListedLastMod)
	require.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), store.docs[c2].ListedLastMod)
	require.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), store.docs[idxURL].NewestLastMod)

	// The index lists the same lastmods: the children are not requested.
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Empty(t, links)
	require.Equal(t, []string{c1, c2}, store.takeUnchanged())
	require.Equal(t, []string{"/idx.xml 200"}, statuses(site.Requests()))

	// Without TrustLastMod they are requested, conditionally.
	site.ResetLog()
	plain := store.incremental(site.Client())
	links, err = run(t, src, plain)
	require.NoError(t, err)
	require.Empty(t, links)
	require.Equal(t, []string{c1, c2}, store.takeUnchanged())
	require.Equal(t, []string{"/idx.xml 200", "/c1.xml 304 conditional", "/c2.xml 304 conditional"}, statuses(site.Requests()))

	// c2's lastmod moved but its content did not: a 304, and the new
	// lastmod is remembered, so the next run trusts it again.
	site.Serve("/idx.xml", "application/xml", index(site, "/c1.xml@2026-01-01", "/c2.xml@2026-01-03"))
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Empty(t, links)
	require.Equal(t, []string{c1, c2}, store.takeUnchanged())
	require.Equal(t, []string{"/idx.xml 200", "/c2.xml 304 conditional"}, statuses(site.Requests()))
	require.Equal(t, time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), store.docs[c2].ListedLastMod)
	site.ResetLog()
	_, err = run(t, src, env)
	require.NoError(t, err)
	require.Equal(t, []string{"/idx.xml 200"}, statuses(site.Requests()))
	store.takeUnchanged()

	// c2 really changed: it is read and its entries yielded.
	site.Serve("/c2.xml", "application/xml", urlset(site, "/c", "/d"))
	site.Serve("/idx.xml", "application/xml", index(site, "/c1.xml@2026-01-01", "/c2.xml@2026-01-04"))
	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Equal(t, []string{"/c", "/d"}, urlsOf(site, links))
	require.Equal(t, c2, links[0].Via)
	require.Equal(t, []string{c1}, store.takeUnchanged())
	require.Equal(t, []string{"/idx.xml 200", "/c2.xml 200 conditional"}, statuses(site.Requests()))
	require.Equal(t, 2, store.docs[c2].Entries)
}

func TestSitemapCapsAndStructure(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 12, SitemapSplit: 5})
	defer site.Close()
	client := site.Client()

	t.Run("max_pages", func(t *testing.T) {
		site.ResetLog()
		links, err := run(t, discover.Sitemap{URL: site.SitemapURL()}, discover.Env{Client: client, MaxDocuments: 2})
		var le *discover.LimitError
		require.ErrorAs(t, err, &le)
		require.Equal(t, discover.LimitError{Limit: "max_pages", Value: 2}, *le)
		require.Len(t, links, 5)
		require.Equal(t, []string{"/sitemap.xml", "/sitemap-1.xml"}, paths(site.Requests()))
	})
	t.Run("max_depth", func(t *testing.T) {
		top := site.Serve("/nest/top.xml", "application/xml", index(site, "/nest/mid.xml"))
		site.Serve("/nest/mid.xml", "application/xml", index(site, "/nest/leaf.xml"))
		site.Serve("/nest/leaf.xml", "application/xml", urlset(site, "/x"))
		site.ResetLog()
		links, err := run(t, discover.Sitemap{URL: top}, discover.Env{Client: client, MaxDepth: 1})
		var le *discover.LimitError
		require.ErrorAs(t, err, &le)
		require.Equal(t, "max_depth", le.Limit)
		require.Empty(t, links)
		require.Equal(t, []string{"/nest/top.xml", "/nest/mid.xml"}, paths(site.Requests()))

		links, err = run(t, discover.Sitemap{URL: top}, discover.Env{Client: client, MaxDepth: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"/x"}, urlsOf(site, links))
		require.Equal(t, 2, links[0].Depth)
	})
	t.Run("off-host, cycle and breadth-first", func(t *testing.T) {
		site.Serve("/cyc/a.xml", "application/xml", urlset(site, "/p1", "https://other.example/p2"))
		site.Serve("/cyc/b.xml", "application/xml", urlset(site, "/p3"))
		top := site.Serve("/cyc/top.xml", "application/xml", index(site, "/cyc/top.xml", "/cyc/a.xml", "/cyc/b.xml", "/cyc/a.xml"))
		site.ResetLog()
		links, err := run(t, discover.Sitemap{URL: top}, discover.Env{Client: client})
		require.NoError(t, err)
		require.Equal(t, []string{"/p1", "https://other.example/p2", "/p3"}, urlsOf(site, links))
		require.Equal(t, []string{"", discover.SkipOffHost, ""}, []string{links[0].Skip, links[1].Skip, links[2].Skip})
		require.Equal(t, []string{"/cyc/top.xml", "/cyc/a.xml", "/cyc/b.xml"}, paths(site.Requests()))
	})
	t.Run("unreadable child", func(t *testing.T) {
		top := site.Serve("/bad/top.xml", "application/xml", index(site, "/bad/missing.xml", "/bad/ok.xml"))
		site.Serve("/bad/ok.xml", "application/xml", urlset(site, "/ok"))
		links, err := run(t, discover.Sitemap{URL: top}, discover.Env{Client: client})
		require.ErrorContains(t, err, "1 of 3 sitemaps incomplete")
		var fe *discover.FetchError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, http.StatusNotFound, fe.Status)
		require.Equal(t, []string{"/ok"}, urlsOf(site, links))
	})
	t.Run("unreadable entry", func(t *testing.T) {
		_, err := run(t, discover.Sitemap{URL: site.URL() + "/nothing.xml"}, discover.Env{Client: client})
		var fe *discover.FetchError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, discover.FetchError{URL: site.URL() + "/nothing.xml", Status: 404}, *fe)
		_, err = run(t, discover.Sitemap{URL: site.SitemapURL()}, discover.Env{})
		require.ErrorIs(t, err, discover.ErrNoClient)
	})
}

func TestSitemapHookErrors(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	src := discover.Sitemap{URL: site.SitemapURL()}

	store := newMemStore()
	broken := errors.New("state is gone")
	store.err = broken
	_, err := run(t, src, store.incremental(site.Client()))
	require.ErrorIs(t, err, broken)

	store = newMemStore()
	_, err = run(t, src, store.incremental(site.Client()))
	require.NoError(t, err)
	env := store.incremental(site.Client())
	env.OnUnchanged = func(context.Context, string) error { return broken }
	_, err = run(t, src, env)
	require.ErrorIs(t, err, broken)

	stop := errors.New("stop")
	n := 0
	err = src.Discover(context.Background(), discover.Env{Client: site.Client()}, func(discover.Link) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
}
