package discover_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// pdfBody and pngBody start like real files.
var (
	pdfBody = []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
	pngBody = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"), make([]byte, 32)...)
)

const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
<item><link>https://news.example/1</link></item><item><link>https://news.example/2</link></item></channel></rss>`

func TestDetect(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 4})
	defer site.Close()
	site.Serve("/maps/pages.xml", "application/xml", urlset(site, "/a", "/b"))
	site.Serve("/maps/index", "text/xml", index(site, "/maps/pages.xml", "/maps/pages.xml.gz", "/x.xml"))
	site.Serve("/maps/pages.xml.gz", "application/octet-stream", gzipped(urlset(site, "/a", "/b", "/c")))
	site.Serve("/feed", "application/rss+xml", []byte(rss))
	site.Serve("/urls.txt", "text/plain", []byte("# generated\n"+site.URL()+"/a\n"+site.URL()+"/b\n"))
	site.Serve("/docs/overview.md", "text/markdown", []byte("# Overview\n\n- [Intro](intro.md)\n- [API](https://api.example/)\n"))
	site.Serve("/plain/llms.txt", "text/plain", []byte("https://x.example/a\nhttps://x.example/b\n"))
	site.Serve("/html/llms.txt", "text/html; charset=utf-8", []byte("<!doctype html><html><head><title>Docs</title></head><body><h1>Docs</h1></body></html>"))
	site.Serve("/site/sitemap", "text/html", []byte("<html><body><p>Our sitemap moved.</p></body></html>"))
	site.Add("/docs/sitemap.xml", "old", "")
	site.Add("/welcome", "Welcome", "<p>Landing page</p>")
	site.Redirect("/docs/sitemap.xml", "/welcome")
	site.Serve("/docs/manual.pdf", "application/pdf", pdfBody)
	site.Serve("/img/logo.png", "image/png", pngBody)
	site.Serve("/api/pages", "application/json", []byte(`{"pages": ["https://x.example/a"]}`))
	site.Serve("/empty", "text/plain", nil)
	site.Serve("/note.xml", "application/xml", []byte(`<?xml version="1.0"?><note><to>you</to></note>`))
	site.Serve("/readme", "text/plain", []byte("Nothing to see here.\nJust text.\n"))

	const override = "; set EntryFormat to sitemap, llms.txt or page to override"
	tests := []struct {
		path   string
		format discover.Format
		links  int
		err    string // with {site} for the site's URL
	}{
		{path: "/maps/pages.xml", format: discover.FormatSitemap, links: 2},
		{path: "/maps/index", format: discover.FormatSitemap, links: 3},
		{path: "/maps/pages.xml.gz", format: discover.FormatSitemap, links: 3},
		{path: "/feed", format: discover.FormatSitemap, links: 2},
		{path: "/urls.txt", format: discover.FormatSitemap, links: 2},
		{path: "/sitemap.xml", format: discover.FormatSitemap, links: 6}, // 4 pages, /docs/sitemap.xml, /welcome
		{path: "/llms.txt", format: discover.FormatLLMsTxt, links: 6},
		{path: "/docs/overview.md", format: discover.FormatLLMsTxt, links: 2},
		{path: "/plain/llms.txt", format: discover.FormatSitemap, links: 2}, // the body decides
		{path: "/docs/page-0001", format: discover.FormatPage, links: 3},    // /docs/, page 2, page 3
		{path: "/welcome", format: discover.FormatPage, links: 2},           // scope /: the nav's Home and Docs
		{path: "/html/llms.txt", err: "discover: entry point {site}/html/llms.txt: the URL names an llms.txt file, but the document is an HTML page (text/html; charset=utf-8)" + override},
		{path: "/docs/sitemap.xml", err: "discover: entry point {site}/docs/sitemap.xml (redirected to {site}/welcome): the URL names a sitemap, but the document is an HTML page (text/html; charset=utf-8)" + override},
		{path: "/site/sitemap", err: "discover: entry point {site}/site/sitemap: the URL names a sitemap, but the document is an HTML page (text/html; charset=utf-8)" + override},
		{path: "/docs/manual.pdf", err: "discover: entry point {site}/docs/manual.pdf: the document is application/pdf, which is neither a sitemap, an llms.txt file nor an HTML page" + override},
		{path: "/img/logo.png", err: "discover: entry point {site}/img/logo.png: the document is image/png, which is neither a sitemap, an llms.txt file nor an HTML page" + override},
		{path: "/api/pages", err: "discover: entry point {site}/api/pages: the document is application/json, which is neither a sitemap, an llms.txt file nor an HTML page" + override},
		{path: "/empty", err: "discover: entry point {site}/empty: the document is empty" + override},
		{path: "/note.xml", err: "discover: entry point {site}/note.xml: the document is XML with the root element <note> (text/xml; charset=utf-8), which is neither a sitemap, an llms.txt file nor an HTML page" + override},
		{path: "/readme", err: "discover: entry point {site}/readme: the document is plain text without a Markdown H1 title or URL lines (text/plain; charset=utf-8), which is neither a sitemap, an llms.txt file nor an HTML page" + override},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			site.ResetLog()
			d, err := discover.Detect(context.Background(), site.Client(), site.URL()+tc.path)
			require.Equal(t, 1, site.Count(func(r testsite.Request) bool { return r.Path != "/docs/sitemap.xml" }), "one request")
			if tc.err != "" {
				var fe *discover.FormatError
				require.ErrorAs(t, err, &fe)
				require.Equal(t, strings.ReplaceAll(tc.err, "{site}", site.URL()), err.Error())
				require.Equal(t, site.URL()+tc.path, fe.URL)
				require.NotEmpty(t, fe.Detected)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.format, d.Format)
			require.Equal(t, tc.links, d.Links)
			require.Equal(t, site.URL()+tc.path, d.URL)
			require.NotEmpty(t, d.MIME)
		})
	}

	_, err := discover.Detect(context.Background(), site.Client(), site.URL()+"/missing")
	var fe *discover.FetchError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, http.StatusNotFound, fe.Status)
	_, err = discover.Detect(context.Background(), nil, site.URL())
	require.ErrorIs(t, err, discover.ErrNoClient)
}

func TestFormatErrorExpected(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	site.Serve("/html/llms-full.txt", "text/html", []byte("<html><body>x</body></html>"))
	site.Serve("/data/sitemap-2.xml.gz", "text/html", []byte("<!DOCTYPE html><p>gone</p>"))
	site.Serve("/data/file.bin", "application/octet-stream", []byte{0, 1, 2, 3, 0xff, 0xfe, 0})
	for path, want := range map[string]discover.Format{"/html/llms-full.txt": discover.FormatLLMsTxt, "/data/sitemap-2.xml.gz": discover.FormatSitemap, "/data/file.bin": ""} {
		_, err := discover.Detect(context.Background(), site.Client(), site.URL()+path)
		var fe *discover.FormatError
		require.ErrorAs(t, err, &fe, path)
		require.Equal(t, want, fe.Expected, path)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]discover.Format{
		"": "", "sitemap": discover.FormatSitemap, " Sitemap ": discover.FormatSitemap, "llms.txt": discover.FormatLLMsTxt,
		"LLMS": discover.FormatLLMsTxt, "llmstxt": discover.FormatLLMsTxt, "page": discover.FormatPage, "crawl": discover.FormatPage,
	} {
		got, err := discover.ParseFormat(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := discover.ParseFormat("rss")
	require.EqualError(t, err, `discover: unknown EntryFormat "rss": use sitemap, llms.txt or page, or leave it empty to detect`)
	require.Equal(t, "llms.txt", discover.FormatLLMsTxt.String())
}

func TestEntry(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 4})
	defer site.Close()
	env := discover.Env{Client: site.Client()}

	t.Run("sitemap: the detection answer is read, no second request", func(t *testing.T) {
		site.ResetLog()
		links, err := run(t, discover.Entry{URL: site.SitemapURL()}, env)
		require.NoError(t, err)
		require.Equal(t, site.PageURLs(), func() []string {
			out := make([]string, len(links))
			for i, l := range links {
				out[i] = l.URL
				require.Equal(t, site.SitemapURL(), l.Via)
			}
			return out
		}())
		require.Equal(t, []string{"/sitemap.xml"}, paths(site.Requests()))
	})
	t.Run("llms.txt: one request", func(t *testing.T) {
		site.ResetLog()
		links, err := run(t, discover.Entry{URL: site.LLMsURL()}, env)
		require.NoError(t, err)
		require.Len(t, links, 4)
		require.Equal(t, site.LLMsURL(), links[0].Via)
		require.Equal(t, []string{"/llms.txt"}, paths(site.Requests()))
	})
	t.Run("page: the detection answer is the crawl's start page", func(t *testing.T) {
		site.ResetLog()
		links, err := run(t, discover.Entry{URL: site.PageURL(page(1))}, env)
		require.NoError(t, err)
		require.Equal(t, []string{page(1), "/docs/", page(2), page(3), page(4)}, urlsOf(site, links))
		require.Equal(t, []string{page(1), "/docs/", page(2), page(3), page(4)}, paths(site.Requests()), "the start page once")
	})
	t.Run("mismatch", func(t *testing.T) {
		site.Serve("/html/llms.txt", "text/html", []byte("<!doctype html><html><body><a href='/docs/page-0002'>x</a></body></html>"))
		_, err := run(t, discover.Entry{URL: site.URL() + "/html/llms.txt"}, env)
		var fe *discover.FormatError
		require.ErrorAs(t, err, &fe)
		require.ErrorContains(t, err, "set EntryFormat to sitemap, llms.txt or page to override")
	})
	t.Run("override", func(t *testing.T) {
		// A body that is an llms.txt file and a text sitemap at once: the
		// detection picks llms.txt, the override forces the sitemap.
		u := site.Serve("/both.txt", "text/plain", []byte("# Links\n\n- [One](/docs/page-0001)\n\n"+site.PageURL(page(2))+"\n"))
		links, err := run(t, discover.Entry{URL: u}, env)
		require.NoError(t, err)
		require.Equal(t, []string{page(1)}, urlsOf(site, links))
		links, err = run(t, discover.Entry{URL: u, Format: discover.FormatSitemap}, env)
		require.NoError(t, err)
		require.Len(t, links, 2)
		require.Equal(t, page(2), strings.TrimPrefix(links[1].URL, site.URL()))
		require.Equal(t, discover.SkipInvalid, links[0].Skip, "a line that is not a URL is counted as skipped")

		// An HTML page at a sitemap URL is refused, unless EntryFormat says page.
		site.Serve("/docs/sitemap", "text/html", []byte("<html><body><a href='page-0003'>3</a></body></html>"))
		_, err = run(t, discover.Entry{URL: site.URL() + "/docs/sitemap"}, env)
		var fe *discover.FormatError
		require.ErrorAs(t, err, &fe)
		site.ResetLog()
		links, err = run(t, discover.Entry{URL: site.URL() + "/docs/sitemap", Format: "crawl"}, env)
		require.NoError(t, err)
		require.Equal(t, []string{"/docs/sitemap", page(3), "/docs/", page(4)}, urlsOf(site, links))
		require.Equal(t, urlsOf(site, links), paths(site.Requests()), "no detection request: the crawl's own comes first")

		_, err = run(t, discover.Entry{URL: u, Format: "feed"}, env)
		require.ErrorContains(t, err, `unknown EntryFormat "feed"`)
	})
	t.Run("Detect", func(t *testing.T) {
		site.ResetLog()
		f, err := discover.Entry{URL: site.LLMsURL()}.Detect(context.Background(), env)
		require.NoError(t, err)
		require.Equal(t, discover.FormatLLMsTxt, f)
		require.Len(t, site.Requests(), 1)
		site.ResetLog()
		f, err = discover.Entry{URL: site.LLMsURL(), Format: "page"}.Detect(context.Background(), env)
		require.NoError(t, err)
		require.Equal(t, discover.FormatPage, f)
		require.Empty(t, site.Requests(), "an override needs no request")
		_, err = discover.Entry{URL: site.URL() + "/html/llms.txt"}.Detect(context.Background(), env)
		var fe *discover.FormatError
		require.ErrorAs(t, err, &fe)
		_, err = discover.Entry{URL: site.LLMsURL()}.Detect(context.Background(), discover.Env{})
		require.ErrorIs(t, err, discover.ErrNoClient)
	})
	t.Run("names", func(t *testing.T) {
		e := discover.Entry{URL: site.SitemapURL()}
		require.Equal(t, site.SitemapURL(), e.Name())
		require.Equal(t, site.SitemapURL(), e.EntryURL())
		e.SourceName = "docs"
		require.Equal(t, "docs", e.Name())
	})
}

func TestEntryConditional(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 4})
	defer site.Close()
	store := newMemStore()
	env := store.incremental(site.Client())

	for _, u := range []string{site.SitemapURL(), site.Serve("/v1/llms.txt", "text/plain", []byte("# Docs\n\n- [A](/docs/page-0001)\n"))} {
		site.ResetLog()
		links, err := run(t, discover.Entry{URL: u}, env)
		require.NoError(t, err)
		require.NotEmpty(t, links)
		require.NotEmpty(t, store.docs[u].ETag)
		require.Len(t, site.Requests(), 1)

		site.ResetLog()
		links, err = run(t, discover.Entry{URL: u}, env)
		require.NoError(t, err)
		require.Empty(t, links)
		require.Equal(t, []string{u}, store.takeUnchanged())
		reqs := site.Requests()
		require.Len(t, reqs, 1)
		require.True(t, reqs[0].Conditional())
		require.Equal(t, http.StatusNotModified, reqs[0].Status)
	}

	broken := errors.New("state is gone")
	store.err = broken
	_, err := run(t, discover.Entry{URL: site.SitemapURL()}, env)
	require.ErrorIs(t, err, broken)
	_, err = run(t, discover.Entry{URL: site.SitemapURL()}, discover.Env{})
	require.ErrorIs(t, err, discover.ErrNoClient)
}
