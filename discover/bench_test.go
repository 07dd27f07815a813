package discover_test

import (
	"context"
	"testing"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

// BenchmarkDetect measures one detection of each format over loopback.
func BenchmarkDetect(b *testing.B) {
	site := testsite.New(testsite.Options{Pages: 200})
	defer site.Close()
	for _, tc := range []struct{ name, url string }{
		{"sitemap", site.SitemapURL()},
		{"llms.txt", site.LLMsURL()},
		{"page", site.PageURL("/docs/page-0001")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := discover.Detect(context.Background(), site.Client(), tc.url); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCrawl crawls a 100-page site over loopback, extracting links
// with colly; the metric that matters is pages/s.
func BenchmarkCrawl(b *testing.B) {
	site := testsite.New(testsite.Options{Pages: 100})
	defer site.Close()
	env := discover.Env{Client: site.Client(), MaxDepth: 100}
	src := discover.Crawl{URL: site.PageURL("/docs/page-0001")}
	b.ReportAllocs()
	pages := 0
	for b.Loop() {
		err := src.Discover(context.Background(), env, func(discover.Link) error { pages++; return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}

// BenchmarkSitemapConditional is a run whose 20 child sitemaps all answer
// 304: the cost of an unchanged incremental discovery.
func BenchmarkSitemapConditional(b *testing.B) {
	site := testsite.New(testsite.Options{Pages: 1000, SitemapSplit: 50})
	defer site.Close()
	store := newMemStore()
	env := store.incremental(site.Client())
	src := discover.Sitemap{URL: site.SitemapURL()}
	yield := func(discover.Link) error { return nil }
	if err := src.Discover(context.Background(), env, yield); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := src.Discover(context.Background(), env, yield); err != nil {
			b.Fatal(err)
		}
		store.takeUnchanged()
	}
}
