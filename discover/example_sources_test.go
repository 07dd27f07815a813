package discover_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
)

func ExampleLLMsTxt() {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()

	src := discover.LLMsTxt{URL: site.LLMsURL()}
	err := src.Discover(context.Background(), discover.Env{Client: site.Client()}, func(l discover.Link) error {
		fmt.Println(strings.TrimPrefix(l.URL, site.URL()), "via", strings.TrimPrefix(l.Via, site.URL()))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// /docs/page-0001 via /llms.txt
	// /docs/page-0002 via /llms.txt
	// /docs/page-0003 via /llms.txt
}

func ExampleCrawl() {
	site := testsite.New(testsite.Options{Pages: 10})
	defer site.Close()

	src := discover.Crawl{URL: site.PageURL("/docs/page-0001")}
	env := discover.Env{Client: site.Client(), MaxDepth: 1}
	err := src.Discover(context.Background(), env, func(l discover.Link) error {
		fmt.Println(l.Depth, strings.TrimPrefix(l.URL, site.URL()))
		return nil
	})
	var limit *discover.LimitError
	if errors.As(err, &limit) {
		fmt.Println("stopped at", limit.Limit)
	}
	// Output:
	// 0 /docs/page-0001
	// 1 /docs/
	// 1 /docs/page-0002
	// 1 /docs/page-0003
	// stopped at max_depth
}

func ExampleDetect() {
	site := testsite.New(testsite.Options{Pages: 5})
	defer site.Close()
	site.Serve("/docs/sitemap.xml", "text/html", []byte("<!doctype html><html><body>Welcome!</body></html>"))

	for _, u := range []string{site.SitemapURL(), site.LLMsURL(), site.PageURL("/docs/page-0001"), site.URL() + "/docs/sitemap.xml"} {
		d, err := discover.Detect(context.Background(), site.Client(), u)
		if err != nil {
			fmt.Println(strings.ReplaceAll(err.Error(), site.URL(), "https://docs.example"))
			continue
		}
		fmt.Printf("%s: %s with %d links\n", strings.TrimPrefix(u, site.URL()), d.Format, d.Links)
	}
	// Output:
	// /sitemap.xml: sitemap with 5 links
	// /llms.txt: llms.txt with 5 links
	// /docs/page-0001: page with 3 links
	// discover: entry point https://docs.example/docs/sitemap.xml: the URL names a sitemap, but the document is an HTML page (text/html; charset=utf-8); set EntryFormat to sitemap, llms.txt or page to override
}

func ExampleEntry() {
	site := testsite.New(testsite.Options{Pages: 5, SitemapSplit: 2})
	defer site.Close()

	src := discover.Entry{URL: site.SitemapURL()}
	f, err := src.Detect(context.Background(), discover.Env{Client: site.Client()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("format:", f)

	site.ResetLog()
	n := 0
	err = src.Discover(context.Background(), discover.Env{Client: site.Client()}, func(discover.Link) error {
		n++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("links:", n, "requests:", len(site.Requests()))

	// EntryFormat overrides detection: the same URL read as a page to crawl.
	src.Format = discover.FormatPage
	err = src.Discover(context.Background(), discover.Env{Client: site.Client()}, func(l discover.Link) error {
		fmt.Println("crawled", strings.TrimPrefix(l.URL, site.URL()))
		return nil
	})
	fmt.Println(err)
	// Output:
	// format: sitemap
	// links: 5 requests: 4
	// crawled /sitemap.xml
	// <nil>
}

func ExampleSitemap() {
	site := testsite.New(testsite.Options{Pages: 3, SitemapSplit: 2})
	defer site.Close()

	src := discover.Sitemap{URL: site.SitemapURL()}
	err := src.Discover(context.Background(), discover.Env{Client: site.Client()}, func(l discover.Link) error {
		fmt.Println(strings.TrimPrefix(l.URL, site.URL()), "depth", l.Depth, "via", strings.TrimPrefix(l.Via, site.URL()))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// /docs/page-0001 depth 1 via /sitemap-1.xml
	// /docs/page-0002 depth 1 via /sitemap-1.xml
	// /docs/page-0003 depth 1 via /sitemap-2.xml
}

func ExampleParseFormat() {
	for _, s := range []string{"sitemap", "LLMS.TXT", "crawl", "", "feed"} {
		f, err := discover.ParseFormat(s)
		fmt.Printf("%q %v\n", f, err)
	}
	// Output:
	// "sitemap" <nil>
	// "llms.txt" <nil>
	// "page" <nil>
	// "" <nil>
	// "" discover: unknown EntryFormat "feed": use sitemap, llms.txt or page, or leave it empty to detect
}

func ExampleNotDocumentPath() {
	for _, u := range []string{
		"https://docs.example.com/guide/install.html",
		"https://docs.example.com/guide/",
		"https://docs.example.com/_images/architecture.png",
		"https://docs.example.com/_sources/install.rst.txt",
		"https://docs.example.com/notebooks/tour.ipynb",
	} {
		fmt.Println(discover.NotDocumentPath(u), u)
	}
	// Output:
	// false https://docs.example.com/guide/install.html
	// false https://docs.example.com/guide/
	// true https://docs.example.com/_images/architecture.png
	// true https://docs.example.com/_sources/install.rst.txt
	// true https://docs.example.com/notebooks/tour.ipynb
}
